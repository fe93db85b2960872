//! tiktoken vocabularies: `cl100k_base` and `o200k_base` built in, and `.tiktoken` rank files.
//!
//! A rank file has one token a line: its bytes in standard base64, a space, and its id (the
//! rank; a line with no bytes, ` 5`, makes its rank a hole, as `masks.md` has an empty
//! string). The built-in encodings come from `tiktoken-rs`, which embeds OpenAI's rank files;
//! their ids are read back from its encoder one by one, with the special tokens it defines
//! (`<|endoftext|>` is EOS). Ids neither defines are holes (`o200k_base` has 200,019 ids with
//! 199,998 and 200,000–200,017 unused; `cl100k_base` 100,277 with 100,256 and
//! 100,261–100,275). The built-ins carry an [`Encoder`] (`tiktoken-rs`'s BPE, special
//! names encoded as text).
//!
//! A rank file names no special tokens (tiktoken defines them in code, beside the file), nor
//! its split pattern. [`from_rank_file`] takes them from the caller; [`from_path`], the loader
//! behind a path given to the CLI, C and Python, decides them so (`masks.md`: a rank file's
//! EOS is `<|endoftext|>`):
//!
//! 1. a file whose ranks are exactly a built-in encoding's (OpenAI's own
//!    `cl100k_base.tiktoken` or `o200k_base.tiktoken`: the same bytes at every rank) is that
//!    encoding, with its special tokens, holes, EOS and BPE: by path or by name, one
//!    vocabulary;
//! 2. otherwise, a rank whose bytes are `<|endoftext|>` is that special token, the EOS;
//! 3. otherwise `<|endoftext|>` is added as a special EOS token: at the one id below the last
//!    rank that no line gives, when exactly one is missing (`p50k_base`'s ranks skip 50,256,
//!    its `<|endoftext|>`), else at the first id past the ranks, where GPT-2, `r50k_base` and
//!    Qwen put it (cl100k and o200k do neither, hence rule 1).
//!
//! EOS ids given by the caller replace that: on a built-in's file they must be its special
//! tokens; otherwise an id no rank holds becomes a special EOS token named `<|eos:ID|>` (the
//! vocabulary grows to hold it, the ids between are holes) and an id a rank holds is an
//! `unknown_eos` error (a normal token cannot end the stream). A file of rule 2 or 3 has no
//! [`Encoder`]: without its split pattern, its BPE would cut text where the model's tokenizer
//! does not, so text is not tokenized (`encode` is `no_encoder`) rather than tokenized
//! wrongly.

use std::path::Path;
use std::sync::Arc;

use base64::Engine as _;

use super::{Encoder, VocabBuilder, VocabError, VocabErrorKind, Vocabulary};

/// The EOS token of every tiktoken encoding.
pub const ENDOFTEXT: &str = "<|endoftext|>";

/// An encoding `tiktoken-rs` ships.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// GPT-4 and GPT-3.5's encoding: 100,277 ids.
    Cl100kBase,
    /// GPT-4o's and the o-series' encoding: 200,019 ids.
    O200kBase,
}

impl Builtin {
    /// The encoding's name, as tiktoken spells it.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::Cl100kBase => "cl100k_base",
            Builtin::O200kBase => "o200k_base",
        }
    }

    /// The encoding called `name`.
    pub fn from_name(name: &str) -> Option<Builtin> {
        match name {
            "cl100k_base" => Some(Builtin::Cl100kBase),
            "o200k_base" => Some(Builtin::O200kBase),
            _ => None,
        }
    }

    /// How many ranks (normal tokens, ids `0 … n−1`) the encoding's rank file has.
    pub fn ranks(self) -> u32 {
        match self {
            Builtin::Cl100kBase => 100_256,
            Builtin::O200kBase => 199_998,
        }
    }

    fn bpe(self) -> &'static tiktoken_rs::CoreBPE {
        match self {
            Builtin::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
            Builtin::O200kBase => tiktoken_rs::o200k_base_singleton(),
        }
    }
}

struct BuiltinEncoder(Builtin);

impl Encoder for BuiltinEncoder {
    /// `encode_ordinary`: special-token names in the text are plain text.
    fn encode(&self, text: &str) -> Result<Vec<u32>, VocabError> {
        Ok(self.0.bpe().encode_ordinary(text))
    }
}

/// The built-in encoding `which`, with its tokenizer attached.
pub fn builtin(which: Builtin) -> Result<Vocabulary, VocabError> {
    let bpe = which.bpe();
    // The special tokens and their ids, as the encoder itself gives them.
    let mut specials: Vec<(&str, u32)> = Vec::new();
    for name in bpe.special_tokens() {
        if let [id] = bpe.encode_with_special_tokens(name)[..] {
            specials.push((name, id));
        }
    }
    specials.sort_unstable_by_key(|&(_, id)| id);
    let size = specials.iter().map(|&(_, id)| id + 1).max().unwrap_or(0);
    let mut builder = VocabBuilder::with_size(size)?;
    for id in 0..size {
        if specials.iter().any(|&(_, special)| special == id) {
            continue;
        }
        // An id the encoder does not know is a hole.
        if let Ok(bytes) = bpe.decode_bytes(&[id]) {
            builder.normal(id, bytes)?;
        }
    }
    for &(name, id) in &specials {
        builder.special(id, name)?;
        if name == ENDOFTEXT {
            builder.eos(id);
        }
    }
    Ok(builder
        .build()?
        .with_encoder(Arc::new(BuiltinEncoder(which))))
}

/// What [`rank_builder`] saw of a rank file besides its tokens.
struct Ranks {
    /// Lines with a token.
    count: usize,
    /// The first id past every rank.
    next_id: u32,
    /// The rank whose bytes are [`ENDOFTEXT`], if one is.
    endoftext: Option<u32>,
    /// The sum of the ranks given (each at most once): with `count`, the one id below
    /// `next_id` that no line gives, when only one is missing.
    sum: u64,
}

impl Ranks {
    /// The id below `next_id` that no line gives, when exactly one is missing.
    fn single_gap(&self) -> Option<u32> {
        if self.count as u64 + 1 != u64::from(self.next_id) {
            return None;
        }
        let all = u64::from(self.next_id) * (u64::from(self.next_id) - 1) / 2;
        u32::try_from(all - self.sum).ok()
    }
}

/// A builder holding the normal tokens of the rank file `text`, each line checked (a bad line
/// or a rank given twice is an error naming its line).
fn rank_builder(text: &str) -> Result<(VocabBuilder, Ranks), VocabError> {
    let mut builder = VocabBuilder::new();
    let mut ranks = Ranks {
        count: 0,
        next_id: 0,
        endoftext: None,
        sum: 0,
    };
    let engine = base64::engine::general_purpose::STANDARD;
    for (index, line) in text.lines().enumerate() {
        if line.is_empty() {
            continue;
        }
        let bad = |what: &str| {
            VocabError::new(
                VocabErrorKind::BadRankFile,
                format!("line {}: {what}", index + 1),
            )
        };
        let (token, rank) = line
            .split_once(' ')
            .ok_or_else(|| bad("expected `base64 SP rank`"))?;
        let bytes = engine
            .decode(token)
            .map_err(|e| bad(&format!("bad base64 ({e})")))?;
        let rank: u32 = rank
            .trim_end()
            .parse()
            .map_err(|_| bad(&format!("bad rank {rank:?}")))?;
        if bytes == ENDOFTEXT.as_bytes() {
            ranks.endoftext = Some(rank);
        }
        builder.token(rank, bytes).map_err(|e| VocabError {
            message: format!("line {}: {}", index + 1, e.message),
            ..e
        })?;
        ranks.count += 1;
        ranks.sum += u64::from(rank);
        ranks.next_id = ranks.next_id.max(rank + 1);
    }
    Ok((builder, ranks))
}

/// Whether `line` (without its LF) has the shape of a rank file's line, `base64 SP rank`:
/// how a caller that is given a file without its `.tiktoken` name (tiktoken's own cache keeps
/// them under a hash) tells one from a `tokenizer.json`, which starts with `{`.
pub fn is_rank_line(line: &[u8]) -> bool {
    let base64 = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=');
    match line.iter().position(|&b| b == b' ') {
        Some(sp) if sp < line.len() - 1 => {
            line[..sp].iter().all(base64) && line[sp + 1..].iter().all(u8::is_ascii_digit)
        }
        _ => false,
    }
}

/// A `.tiktoken` rank file's vocabulary, with the special tokens given (`(name, id)`) and the
/// EOS ids among them.
pub fn from_rank_text(
    text: &str,
    specials: &[(String, u32)],
    eos: &[u32],
) -> Result<Vocabulary, VocabError> {
    let (mut builder, _) = rank_builder(text)?;
    for (name, id) in specials {
        builder.special(*id, name.clone())?;
    }
    for &id in eos {
        builder.eos(id);
    }
    builder.build()
}

fn read_rank_file(path: &Path) -> Result<String, VocabError> {
    std::fs::read_to_string(path)
        .map_err(|e| VocabError::new(VocabErrorKind::Io, format!("{}: {e}", path.display())))
}

/// [`from_rank_text`] of the file at `path`.
pub fn from_rank_file(
    path: &Path,
    specials: &[(String, u32)],
    eos: &[u32],
) -> Result<Vocabulary, VocabError> {
    from_rank_text(&read_rank_file(path)?, specials, eos)
}

/// The built-in encoding whose rank file `builder` holds, if any: ranks `0 … n−1` (all of
/// them, once each: `rank_builder` refused a repeat) with the encoding's bytes at each.
fn builtin_of(builder: &VocabBuilder, ranks: &Ranks) -> Option<Builtin> {
    [Builtin::Cl100kBase, Builtin::O200kBase]
        .into_iter()
        .find(|&which| {
            let n = which.ranks();
            ranks.count == n as usize
                && ranks.next_id == n
                && (0..n).all(|id| {
                    let ours = builder.normal_bytes(id);
                    which
                        .bpe()
                        .decode_bytes(&[id])
                        .is_ok_and(|theirs| ours == Some(&theirs[..]))
                })
        })
}

/// `vocab` with `eos` as its EOS ids, or as it is when `eos` is empty.
fn with_given_eos(vocab: Vocabulary, eos: &[u32]) -> Result<Vocabulary, VocabError> {
    if eos.is_empty() {
        Ok(vocab)
    } else {
        vocab.with_eos(eos)
    }
}

/// The vocabulary of the rank text `text`, its special tokens and EOS decided as the module
/// docs say (a built-in's own ranks are the built-in; else `<|endoftext|>`, a rank of the file,
/// the one id the ranks skip or the id past them, is EOS), or with `eos` as its EOS ids when it is not empty.
pub fn from_path_text(text: &str, eos: &[u32]) -> Result<Vocabulary, VocabError> {
    let (mut builder, ranks) = rank_builder(text)?;
    if let Some(which) = builtin_of(&builder, &ranks) {
        return with_given_eos(builtin(which)?, eos);
    }
    if eos.is_empty() {
        let id = match ranks.endoftext {
            Some(id) => {
                builder.make_special(id, ENDOFTEXT.to_owned())?;
                id
            }
            None => {
                let id = ranks.single_gap().unwrap_or(ranks.next_id);
                builder.special(id, ENDOFTEXT)?;
                id
            }
        };
        builder.eos(id);
    }
    for &id in eos {
        // A rank is left as it is: `build` refuses it as EOS (`unknown_eos`).
        if builder.normal_bytes(id).is_none() {
            builder.special(id, format!("<|eos:{id}|>"))?;
        }
        builder.eos(id);
    }
    builder.build()
}

/// The `.tiktoken` rank file at `path` ([`from_path_text`]): what the CLI, C and Python load
/// for a rank file given by path.
pub fn from_path(path: &Path, eos: &[u32]) -> Result<Vocabulary, VocabError> {
    from_path_text(&read_rank_file(path)?, eos)
}

/// The built-in encoding called `name` (with `eos` as its EOS ids when not empty), else the
/// rank file at the path `name` ([`from_path`]). A name that is neither is an `io` error
/// naming the built-in encodings.
pub fn from_name_or_path(name: &str, eos: &[u32]) -> Result<Vocabulary, VocabError> {
    if let Some(which) = Builtin::from_name(name) {
        return with_given_eos(builtin(which)?, eos);
    }
    from_path(Path::new(name), eos).map_err(|e| match e.kind {
        VocabErrorKind::Io => VocabError::new(
            VocabErrorKind::Io,
            format!(
                "unknown tiktoken encoding {name:?} (built in: cl100k_base, o200k_base) and no \
                 .tiktoken rank file at that path ({})",
                e.message
            ),
        ),
        _ => e,
    })
}
