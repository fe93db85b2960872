//! Hugging Face `tokenizer.json` vocabularies, parsed with serde_json.
//!
//! Two ways of spelling bytes are read, told apart by the tokenizer's decoder (and
//! pre-tokenizer):
//!
//! - **byte-level** (GPT-2, Llama-3, Qwen): every byte is one printable character of GPT-2's
//!   byte-to-unicode map (`Ġ` is a space, `Ċ` a line feed); a token is its characters mapped
//!   back to bytes;
//! - **SentencePiece** (Llama-2, Mistral): `▁` is a space, `<0xNN>` a raw byte when the model
//!   has byte fallback, and every other character its UTF-8 bytes. The decoder's `Strip` of a
//!   leading space (the first token of a text) is an engine's business and not applied: a
//!   token's bytes are what it adds to the text.
//!
//! Model types `BPE` (vocabulary an object of token to id) and `Unigram` (a list of
//! `[token, score]`, ids in order) are read. Added tokens marked `special` are special tokens
//! (also when the model's vocabulary spells the same id); other added tokens are normal tokens
//! with their content's bytes. A token spelled as the empty string is a hole (`masks.md`), not
//! an error. The model's `unk_token` is special (it stands for no text). A model token whose
//! spelling is not bytes (a byte-level vocabulary holding its special tokens as written, with
//! characters outside the byte map) is an error only when no added token gives its id a
//! meaning: an added special token over it makes it special, as the tokenizer does.
//! EOS: the ids or names the caller gives, else `eos_token` of a `tokenizer_config.json`
//! beside the file, else none.

use std::path::Path;

use serde_json::Value;

use super::{VocabBuilder, VocabError, VocabErrorKind, Vocabulary};

/// An EOS token named by the caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EosSpec {
    /// By id.
    Id(u32),
    /// By the special token's content, such as `<|eot_id|>`.
    Name(String),
}

/// How a tokenizer spells bytes in its tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Spelling {
    ByteLevel,
    SentencePiece { byte_fallback: bool },
}

fn not_tokenizer(message: impl Into<String>) -> VocabError {
    VocabError::new(VocabErrorKind::NotTokenizerJson, message)
}

/// GPT-2's byte-to-unicode map, inverted: the byte each map character stands for.
fn byte_level_table() -> [Option<u8>; 324] {
    let mut table = [None; 324];
    let mut extra = 0u32;
    for byte in 0..=255u8 {
        let printable = matches!(byte, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
        let code = if printable {
            u32::from(byte)
        } else {
            extra += 1;
            255 + extra
        };
        table[code as usize] = Some(byte);
    }
    table
}

fn byte_level_bytes(token: &str, table: &[Option<u8>; 324]) -> Result<Vec<u8>, VocabError> {
    token
        .chars()
        .map(|c| {
            table.get(c as usize).copied().flatten().ok_or_else(|| {
                VocabError::new(
                    VocabErrorKind::BadToken,
                    format!("byte-level token {token:?} has {c:?}, outside the byte map"),
                )
            })
        })
        .collect()
}

fn sentencepiece_bytes(token: &str, byte_fallback: bool) -> Vec<u8> {
    if byte_fallback {
        if let Some(hex) = token.strip_prefix("<0x").and_then(|t| t.strip_suffix('>')) {
            if hex.len() == 2 {
                if let Ok(byte) = u8::from_str_radix(hex, 16) {
                    return vec![byte];
                }
            }
        }
    }
    token.replace('\u{2581}', " ").into_bytes()
}

/// Whether `value` (a decoder or pre-tokenizer) is, or is a sequence holding, one of `types`.
fn has_type(value: &Value, types: &[&str]) -> bool {
    let Some(kind) = value.get("type").and_then(Value::as_str) else {
        return false;
    };
    if types.contains(&kind) {
        return true;
    }
    ["decoders", "pretokenizers"].iter().any(|field| {
        value
            .get(field)
            .and_then(Value::as_array)
            .is_some_and(|items| items.iter().any(|item| has_type(item, types)))
    })
}

fn spelling(json: &Value, model: &Value) -> Result<Spelling, VocabError> {
    let decoder = json.get("decoder").unwrap_or(&Value::Null);
    let pre = json.get("pre_tokenizer").unwrap_or(&Value::Null);
    if has_type(decoder, &["ByteLevel"]) || has_type(pre, &["ByteLevel"]) {
        return Ok(Spelling::ByteLevel);
    }
    let byte_fallback = model.get("byte_fallback").and_then(Value::as_bool) == Some(true)
        || has_type(decoder, &["ByteFallback"]);
    let metaspace = has_type(decoder, &["Metaspace", "Replace", "ByteFallback"])
        || has_type(pre, &["Metaspace"]);
    if metaspace || byte_fallback {
        return Ok(Spelling::SentencePiece { byte_fallback });
    }
    Err(VocabError::new(
        VocabErrorKind::UnknownModel,
        "the tokenizer is neither byte-level (a ByteLevel decoder or pre-tokenizer) nor \
         SentencePiece-style (Metaspace, Replace of U+2581, ByteFallback)",
    ))
}

fn id_of(value: &Value, what: &str) -> Result<u32, VocabError> {
    value
        .as_u64()
        .and_then(|id| u32::try_from(id).ok())
        .ok_or_else(|| {
            VocabError::new(
                VocabErrorKind::IdOutOfRange,
                format!("{what}: id {value} is not a token id"),
            )
        })
}

/// The vocabulary of a `tokenizer.json`'s text, EOS as `eos` names it.
pub fn from_json_text(text: &str, eos: &[EosSpec]) -> Result<Vocabulary, VocabError> {
    let json: Value =
        serde_json::from_str(text).map_err(|e| not_tokenizer(format!("not JSON: {e}")))?;
    let model = json
        .get("model")
        .filter(|m| m.is_object())
        .ok_or_else(|| not_tokenizer("no `model` object"))?;
    let model_type = model.get("type").and_then(Value::as_str);
    let spelling = spelling(&json, model)?;
    let table = byte_level_table();
    let spell = |token: &str| -> Result<Vec<u8>, VocabError> {
        match spelling {
            Spelling::ByteLevel => byte_level_bytes(token, &table),
            Spelling::SentencePiece { byte_fallback } => {
                Ok(sentencepiece_bytes(token, byte_fallback))
            }
        }
    };
    let mut builder = VocabBuilder::new();
    let vocab = model
        .get("vocab")
        .ok_or_else(|| not_tokenizer("the model has no `vocab`"))?;
    // Model tokens whose spelling is no bytes (a special token written into a byte-level
    // vocabulary with characters outside the byte map, as DeepSeek's `<｜begin▁of▁sentence｜>`
    // at id 0): an error only if no added token gives the id its meaning.
    let mut unspelled: Vec<(u32, VocabError)> = Vec::new();
    let mut model_token = |builder: &mut VocabBuilder, id: u32, token: &str| {
        let twice = || {
            VocabError::new(
                VocabErrorKind::DuplicateId,
                format!("token id {id} is given twice (one of them {token:?})"),
            )
        };
        if unspelled.iter().any(|&(u, _)| u == id) {
            return Err(twice());
        }
        match spell(token) {
            Ok(bytes) => builder.token(id, bytes),
            Err(_) if builder.is_given(id) => Err(twice()),
            Err(e) => {
                unspelled.push((id, e));
                Ok(())
            }
        }
    };
    match (model_type, vocab) {
        (Some("BPE") | None, Value::Object(map)) => {
            for (token, id) in map {
                let id = id_of(id, token)?;
                model_token(&mut builder, id, token)?;
            }
        }
        (Some("Unigram") | None, Value::Array(pieces)) => {
            for (id, piece) in pieces.iter().enumerate() {
                let token = piece.get(0).and_then(Value::as_str).ok_or_else(|| {
                    not_tokenizer(format!("Unigram piece {id} is not [token, score]"))
                })?;
                model_token(&mut builder, id as u32, token)?;
            }
        }
        (Some(other), _) => {
            return Err(VocabError::new(
                VocabErrorKind::UnknownModel,
                format!("model type {other:?} (this reads BPE and Unigram)"),
            ))
        }
        (None, _) => return Err(not_tokenizer("the model's `vocab` is not a map or a list")),
    }
    if let Some(unk) = model.get("unk_token").and_then(Value::as_str) {
        unk_special(&mut builder, model, unk, &spell, &unspelled)?;
    }
    let added = match json.get("added_tokens") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(items)) => &items[..],
        Some(_) => return Err(not_tokenizer("`added_tokens` is not a list")),
    };
    for item in added {
        let id = id_of(item.get("id").unwrap_or(&Value::Null), "added token")?;
        let content = item
            .get("content")
            .and_then(Value::as_str)
            .ok_or_else(|| not_tokenizer(format!("added token {id} has no `content`")))?;
        let special = item.get("special").and_then(Value::as_bool) == Some(true);
        if special {
            builder.make_special(id, content.to_owned())?;
        } else {
            let bytes = content.as_bytes().to_vec();
            // The model's vocabulary may spell the same token at the same id.
            let same = match builder.normal_bytes(id) {
                Some(existing) if existing == bytes => true,
                Some(_) => {
                    return Err(VocabError::new(
                        VocabErrorKind::DuplicateId,
                        format!(
                            "added token {content:?} has id {id}, which the model's \
                             vocabulary gives another token"
                        ),
                    ))
                }
                None => false,
            };
            if !same {
                builder.token(id, bytes)?;
            }
        }
    }
    if let Some((_, e)) = unspelled.into_iter().find(|(id, _)| !builder.is_given(*id)) {
        return Err(e);
    }
    for spec in eos {
        let id = match spec {
            EosSpec::Id(id) => *id,
            EosSpec::Name(name) => builder.special_id(name).ok_or_else(|| {
                VocabError::new(
                    VocabErrorKind::UnknownEos,
                    format!("no special token is named {name:?}"),
                )
            })?,
        };
        builder.eos(id);
    }
    builder.build()
}

/// Marks the model's unknown token as special: it stands for no bytes of the text.
fn unk_special(
    builder: &mut VocabBuilder,
    model: &Value,
    unk: &str,
    spell: &dyn Fn(&str) -> Result<Vec<u8>, VocabError>,
    unspelled: &[(u32, VocabError)],
) -> Result<(), VocabError> {
    let id = match model.get("vocab") {
        Some(Value::Object(map)) => map.get(unk).and_then(Value::as_u64),
        _ => model.get("unk_id").and_then(Value::as_u64),
    };
    if let Some(id) = id.and_then(|id| u32::try_from(id).ok()) {
        let is_unk = match spell(unk) {
            Ok(bytes) => builder.normal_bytes(id) == Some(&bytes[..]),
            // Spelled with characters outside the byte map: the id is that unspelled token.
            Err(_) => unspelled.iter().any(|&(u, _)| u == id),
        };
        if is_unk {
            builder.make_special(id, unk.to_owned())?;
        }
    }
    Ok(())
}

/// The `eos_token` of a `tokenizer_config.json`'s text: a string, or an object with `content`.
pub fn config_eos(text: &str) -> Result<Option<String>, VocabError> {
    let json: Value = serde_json::from_str(text)
        .map_err(|e| not_tokenizer(format!("tokenizer_config.json is not JSON: {e}")))?;
    Ok(match json.get("eos_token") {
        Some(Value::String(name)) => Some(name.clone()),
        Some(other) => other
            .get("content")
            .and_then(Value::as_str)
            .map(str::to_owned),
        None => None,
    })
}

/// The vocabulary of the `tokenizer.json` at `path`. With no `eos` given, the EOS token is
/// `eos_token` of a `tokenizer_config.json` in the same folder, if there is one.
pub fn from_file(path: &Path, eos: &[EosSpec]) -> Result<Vocabulary, VocabError> {
    let read = |path: &Path| {
        std::fs::read_to_string(path)
            .map_err(|e| VocabError::new(VocabErrorKind::Io, format!("{}: {e}", path.display())))
    };
    let text = read(path)?;
    let mut eos = eos.to_vec();
    if eos.is_empty() {
        let config = path.with_file_name("tokenizer_config.json");
        if config.is_file() {
            if let Some(name) = config_eos(&read(&config)?)? {
                eos.push(EosSpec::Name(name));
            }
        }
    }
    from_json_text(&text, &eos)
}
