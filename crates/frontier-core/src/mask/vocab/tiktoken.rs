//! tiktoken vocabularies: `cl100k_base` and `o200k_base` built in, and `.tiktoken` rank files.
//!
//! A rank file has one token a line: its bytes in standard base64, a space, and its id (the
//! rank). The built-in encodings come from `tiktoken-rs`, which embeds OpenAI's rank files;
//! their ids are read back from its encoder one by one, with the special tokens it defines
//! (`<|endoftext|>` is EOS). Ids neither defines are holes (`o200k_base` has 200,019 ids with
//! 199,998 and 200,000–200,017 unused; `cl100k_base` 100,277 with 100,256 and
//! 100,261–100,275). The built-ins carry an [`Encoder`] (`tiktoken-rs`'s BPE, special
//! names encoded as text); a rank file by path carries none, since the file does not say which
//! split pattern its tokenizer uses.

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

/// A `.tiktoken` rank file's vocabulary, with the special tokens given (`(name, id)`) and the
/// EOS ids among them.
pub fn from_rank_text(
    text: &str,
    specials: &[(String, u32)],
    eos: &[u32],
) -> Result<Vocabulary, VocabError> {
    let mut builder = VocabBuilder::new();
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
        builder.normal(rank, bytes).map_err(|e| VocabError {
            message: format!("line {}: {}", index + 1, e.message),
            ..e
        })?;
    }
    for (name, id) in specials {
        builder.special(*id, name.clone())?;
    }
    for &id in eos {
        builder.eos(id);
    }
    builder.build()
}

/// [`from_rank_text`] of the file at `path`.
pub fn from_rank_file(
    path: &Path,
    specials: &[(String, u32)],
    eos: &[u32],
) -> Result<Vocabulary, VocabError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| VocabError::new(VocabErrorKind::Io, format!("{}: {e}", path.display())))?;
    from_rank_text(&text, specials, eos)
}
