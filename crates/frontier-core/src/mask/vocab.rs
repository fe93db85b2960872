//! Vocabularies: what each token id of a model stands for, as bytes.
//!
//! A [`Vocabulary`] has ids `0 … V−1`, each a normal token (a non-empty byte string, which may
//! hold part of a UTF-8 character), a special token (a name that stands for no bytes of the
//! text; some are EOS), or a hole (an unused id). Every source goes through one
//! [`VocabBuilder`], so the checks (no id given twice, no empty normal token, no id past the
//! vocabulary, EOS ids that exist) are made in one place. An id whose token a source spells as
//! the empty string is a hole, as `masks.md` defines one, in every source:
//!
//! - [`tiktoken`]: `cl100k_base` and `o200k_base` built in (from `tiktoken-rs`, which embeds
//!   the rank files), and `.tiktoken` rank files by path;
//! - [`hf`]: a Hugging Face `tokenizer.json` (byte-level BPE and SentencePiece byte fallback);
//! - [`Vocabulary::from_raw`]: the byte strings an engine already holds, with its special and
//!   EOS ids (the C and Python entry point).
//!
//! Two ids may hold the same bytes: real vocabularies do (Llama-2 has both `▁` and `<0x20>` for
//! a space), so both are kept and both are allowed wherever those bytes are. Giving one id two
//! meanings is an error.
//!
//! A vocabulary is read-only once built, `Send + Sync`, and meant to be shared through an
//! `Arc`; its token trie is built on first use and kept.

use std::fmt;
use std::sync::{Arc, OnceLock};

use super::line_text::LineTextTable;
use super::trie::TokenTrie;
use crate::recognizer::LineText;

pub mod hf;
pub mod tiktoken;

/// The largest vocabulary accepted, in ids (16,777,216): far above any model's (about 256k),
/// and low enough that a stray huge id in a file is an error instead of a huge allocation.
pub const MAX_VOCAB: u32 = 1 << 24;

/// The longest normal token accepted, in bytes (65,535). Real vocabularies stay under 1 KiB.
pub const MAX_TOKEN_LEN: usize = u16::MAX as usize;

/// What one id of a vocabulary is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TokenKind {
    /// A token standing for its (non-empty) bytes.
    Normal,
    /// A special token that is not an EOS token: never allowed in a mask.
    Special,
    /// A special token that ends the stream: allowed exactly when the bytes so far are a
    /// sentence.
    Eos,
    /// An id with no token: never allowed.
    Hole,
}

/// Why a vocabulary could not be loaded or built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VocabErrorKind {
    /// The file could not be read.
    Io,
    /// The file is not a `tokenizer.json` (not JSON, or no `model` with a vocabulary).
    NotTokenizerJson,
    /// The tokenizer's model type or its way of spelling bytes is not one this module reads.
    UnknownModel,
    /// A line of a `.tiktoken` file is not `base64 SP rank`.
    BadRankFile,
    /// A token's spelling cannot be turned into bytes (a byte-level token with a character
    /// outside the GPT-2 byte map).
    BadToken,
    /// One id was given two tokens.
    DuplicateId,
    /// A normal token with no bytes.
    EmptyToken,
    /// A token longer than [`MAX_TOKEN_LEN`].
    TokenTooLong,
    /// An id at or past the vocabulary's size (or past [`MAX_VOCAB`]).
    IdOutOfRange,
    /// An EOS token that the vocabulary does not have.
    UnknownEos,
    /// Encoding text was asked of a vocabulary that has no tokenizer for it.
    NoEncoder,
    /// The tokenizer's ids do not spell the text in this vocabulary (a file whose tokenizer
    /// numbers its tokens otherwise than its token table, a normalizer that rewrites text).
    EncoderMismatch,
}

impl crate::contract::ErrorKind for VocabErrorKind {
    fn as_str(self) -> &'static str {
        match self {
            VocabErrorKind::Io => "io",
            VocabErrorKind::NotTokenizerJson => "not_tokenizer_json",
            VocabErrorKind::UnknownModel => "unknown_model",
            VocabErrorKind::BadRankFile => "bad_rank_file",
            VocabErrorKind::BadToken => "bad_token",
            VocabErrorKind::DuplicateId => "duplicate_id",
            VocabErrorKind::EmptyToken => "empty_token",
            VocabErrorKind::TokenTooLong => "token_too_long",
            VocabErrorKind::IdOutOfRange => "id_out_of_range",
            VocabErrorKind::UnknownEos => "unknown_eos",
            VocabErrorKind::NoEncoder => "no_encoder",
            VocabErrorKind::EncoderMismatch => "encoder_mismatch",
        }
    }
}

/// A vocabulary error: a stable kind and a message naming the id, line or field at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VocabError {
    /// What went wrong.
    pub kind: VocabErrorKind,
    /// Where and what, for a person.
    pub message: String,
}

impl VocabError {
    /// An error of `kind` (for loaders and [`Encoder`]s outside this module too).
    pub fn new(kind: VocabErrorKind, message: impl Into<String>) -> VocabError {
        VocabError {
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for VocabError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::contract::ErrorKind;
        write!(f, "{}: {}", self.kind.as_str(), self.message)
    }
}

impl std::error::Error for VocabError {}

/// Text to token ids with a vocabulary's own tokenizer: the seam behind which a heavy
/// tokenizer lives, so that the vocabulary itself needs none.
pub trait Encoder: Send + Sync {
    /// The ids the tokenizer gives `text`, or why it could not encode it.
    fn encode(&self, text: &str) -> Result<Vec<u32>, VocabError>;
}

/// One id's entry while a vocabulary is being built.
#[derive(Clone, Debug)]
enum Entry {
    Normal(Vec<u8>),
    Special(String),
    /// An id given with an empty string: a hole (`masks.md`), but given, so that giving the
    /// id again is still an error.
    Hole,
}

/// Collects ids and checks them; every loader builds through it.
#[derive(Debug, Default)]
pub struct VocabBuilder {
    entries: Vec<Option<Entry>>,
    size: Option<u32>,
    eos: Vec<u32>,
}

impl VocabBuilder {
    /// A builder whose size is the largest id given plus one.
    pub fn new() -> VocabBuilder {
        VocabBuilder::default()
    }

    /// A builder for exactly `size` ids (ids not given are holes).
    pub fn with_size(size: u32) -> Result<VocabBuilder, VocabError> {
        if size > MAX_VOCAB {
            return Err(VocabError::new(
                VocabErrorKind::IdOutOfRange,
                format!("vocabulary size {size} is past the limit of {MAX_VOCAB}"),
            ));
        }
        Ok(VocabBuilder {
            entries: Vec::with_capacity(size as usize),
            size: Some(size),
            eos: Vec::new(),
        })
    }

    fn slot(&mut self, id: u32) -> Result<&mut Option<Entry>, VocabError> {
        let limit = self.size.unwrap_or(MAX_VOCAB);
        if id >= limit {
            return Err(VocabError::new(
                VocabErrorKind::IdOutOfRange,
                format!("token id {id} is past the vocabulary's {limit} ids"),
            ));
        }
        let index = id as usize;
        if index >= self.entries.len() {
            self.entries.resize(index + 1, None);
        }
        Ok(&mut self.entries[index])
    }

    fn put(&mut self, id: u32, entry: Entry) -> Result<(), VocabError> {
        let slot = self.slot(id)?;
        if let Some(old) = slot {
            return Err(VocabError::new(
                VocabErrorKind::DuplicateId,
                format!("token id {id} is given twice ({old:?} and {entry:?})"),
            ));
        }
        *slot = Some(entry);
        Ok(())
    }

    /// Gives `id` a normal token with `bytes` (not empty).
    pub fn normal(&mut self, id: u32, bytes: Vec<u8>) -> Result<(), VocabError> {
        if bytes.is_empty() {
            return Err(VocabError::new(
                VocabErrorKind::EmptyToken,
                format!("token id {id} has no bytes"),
            ));
        }
        if bytes.len() > MAX_TOKEN_LEN {
            return Err(VocabError::new(
                VocabErrorKind::TokenTooLong,
                format!(
                    "token id {id} has {} bytes (the limit is {MAX_TOKEN_LEN})",
                    bytes.len()
                ),
            ));
        }
        self.put(id, Entry::Normal(bytes))
    }

    /// Gives `id` the token `bytes` from a source's table: a normal token, or a hole when
    /// `bytes` is empty (`masks.md`: an id whose token is the empty string is a hole, never
    /// allowed). Giving the id again is an error either way.
    pub fn token(&mut self, id: u32, bytes: Vec<u8>) -> Result<(), VocabError> {
        if bytes.is_empty() {
            return self.put(id, Entry::Hole);
        }
        self.normal(id, bytes)
    }

    /// Gives `id` a special token named `name`.
    pub fn special(&mut self, id: u32, name: impl Into<String>) -> Result<(), VocabError> {
        self.put(id, Entry::Special(name.into()))
    }

    /// Turns whatever `id` is into a special token named `name` (a tokenizer's added token
    /// marked special over the same id of its model's vocabulary).
    pub(crate) fn make_special(&mut self, id: u32, name: String) -> Result<(), VocabError> {
        *self.slot(id)? = Some(Entry::Special(name));
        Ok(())
    }

    /// Whether `id` was given anything (a token, a special token or a hole).
    pub(crate) fn is_given(&self, id: u32) -> bool {
        matches!(self.entries.get(id as usize), Some(Some(_)))
    }

    /// What `id` holds so far, if it is a normal token.
    pub(crate) fn normal_bytes(&self, id: u32) -> Option<&[u8]> {
        match self.entries.get(id as usize) {
            Some(Some(Entry::Normal(bytes))) => Some(bytes),
            _ => None,
        }
    }

    /// The id of the special token named `name`, if one was given.
    pub(crate) fn special_id(&self, name: &str) -> Option<u32> {
        self.entries
            .iter()
            .position(|entry| matches!(entry, Some(Entry::Special(n)) if n == name))
            .map(|i| i as u32)
    }

    /// Marks `id` as an EOS token; [`build`](VocabBuilder::build) checks it is a special token.
    pub fn eos(&mut self, id: u32) {
        if !self.eos.contains(&id) {
            self.eos.push(id);
        }
    }

    /// The checked vocabulary.
    pub fn build(self) -> Result<Vocabulary, VocabError> {
        let size = self.size.unwrap_or(self.entries.len() as u32);
        let mut kinds = vec![TokenKind::Hole; size as usize];
        let mut offsets = Vec::with_capacity(size as usize + 1);
        let mut bytes = Vec::new();
        let mut specials = Vec::new();
        let mut max_len = 0usize;
        offsets.push(0u32);
        for (id, entry) in self.entries.into_iter().enumerate() {
            match entry {
                Some(Entry::Normal(token)) => {
                    kinds[id] = TokenKind::Normal;
                    max_len = max_len.max(token.len());
                    bytes.extend_from_slice(&token);
                }
                Some(Entry::Special(name)) => {
                    kinds[id] = TokenKind::Special;
                    specials.push((id as u32, name));
                }
                Some(Entry::Hole) | None => {}
            }
            let end = u32::try_from(bytes.len()).map_err(|_| {
                VocabError::new(
                    VocabErrorKind::TokenTooLong,
                    "the tokens' bytes add up to more than 4 GiB",
                )
            })?;
            offsets.push(end);
        }
        offsets.resize(size as usize + 1, *offsets.last().unwrap_or(&0));
        for &id in &self.eos {
            match kinds.get(id as usize) {
                Some(TokenKind::Special | TokenKind::Eos) => kinds[id as usize] = TokenKind::Eos,
                Some(kind) => {
                    return Err(VocabError::new(
                        VocabErrorKind::UnknownEos,
                        format!("EOS id {id} is not a special token (it is {kind:?})"),
                    ))
                }
                None => {
                    return Err(VocabError::new(
                        VocabErrorKind::UnknownEos,
                        format!("EOS id {id} is past the vocabulary's {size} ids"),
                    ))
                }
            }
        }
        let mut eos = self.eos;
        eos.sort_unstable();
        Ok(Vocabulary {
            kinds,
            offsets,
            bytes,
            specials,
            eos,
            max_token_len: max_len as u32,
            trie: OnceLock::new(),
            line_text: Default::default(),
            encoder: None,
        })
    }
}

/// A read-only vocabulary (see the module docs).
pub struct Vocabulary {
    kinds: Vec<TokenKind>,
    /// Token `t`'s bytes are `bytes[offsets[t]..offsets[t + 1]]` (empty unless normal).
    offsets: Vec<u32>,
    bytes: Vec<u8>,
    /// The special tokens' names, by id.
    specials: Vec<(u32, String)>,
    eos: Vec<u32>,
    max_token_len: u32,
    trie: OnceLock<TokenTrie>,
    /// The tables of each [`LineText`] kind, by [`LineText::index`], built on first use.
    line_text: [OnceLock<LineTextTable>; LineText::ALL.len()],
    encoder: Option<Arc<dyn Encoder>>,
}

impl fmt::Debug for Vocabulary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Vocabulary")
            .field("size", &self.size())
            .field("eos", &self.eos)
            .field("max_token_len", &self.max_token_len)
            .field("encoder", &self.encoder.is_some())
            .finish()
    }
}

impl Vocabulary {
    /// A vocabulary from the byte strings an engine holds: id `t` is `tokens[t]`; the ids in
    /// `special` are special tokens (their bytes are their names), those in `eos` EOS tokens
    /// (special whether listed there or not). An empty byte string that is not special is a
    /// hole, as in `masks.md`.
    pub fn from_raw(
        tokens: &[Vec<u8>],
        special: &[u32],
        eos: &[u32],
    ) -> Result<Vocabulary, VocabError> {
        let size = u32::try_from(tokens.len()).unwrap_or(u32::MAX);
        let mut builder = VocabBuilder::with_size(size)?;
        let mut is_special = vec![false; tokens.len()];
        for &id in special.iter().chain(eos) {
            match is_special.get_mut(id as usize) {
                Some(flag) => *flag = true,
                None => {
                    return Err(VocabError::new(
                        VocabErrorKind::IdOutOfRange,
                        format!("special id {id} is past the vocabulary's {size} ids"),
                    ))
                }
            }
        }
        for (id, token) in tokens.iter().enumerate() {
            if is_special[id] {
                builder.special(id as u32, String::from_utf8_lossy(token).into_owned())?;
            } else if !token.is_empty() {
                builder.normal(id as u32, token.clone())?;
            }
        }
        for &id in eos {
            builder.eos(id);
        }
        builder.build()
    }

    /// The number of ids, `V`.
    pub fn size(&self) -> u32 {
        self.kinds.len() as u32
    }

    /// The number of `u32` words of a mask over this vocabulary, `ceil(V/32)`.
    pub fn mask_words(&self) -> usize {
        self.kinds.len().div_ceil(32)
    }

    /// What `id` is (`None` past the vocabulary).
    pub fn kind(&self, id: u32) -> Option<TokenKind> {
        self.kinds.get(id as usize).copied()
    }

    /// Token `id`'s bytes: empty for special tokens, holes and ids past the vocabulary.
    pub fn bytes(&self, id: u32) -> &[u8] {
        let i = id as usize;
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&start), Some(&end)) => {
                self.bytes.get(start as usize..end as usize).unwrap_or(&[])
            }
            _ => &[],
        }
    }

    /// The name of special token `id`.
    pub fn special_name(&self, id: u32) -> Option<&str> {
        self.specials
            .binary_search_by_key(&id, |(i, _)| *i)
            .ok()
            .map(|i| self.specials[i].1.as_str())
    }

    /// The id of the special token named `name`.
    pub fn special_id(&self, name: &str) -> Option<u32> {
        self.specials
            .iter()
            .find(|(_, n)| n == name)
            .map(|(i, _)| *i)
    }

    /// The EOS ids, ascending.
    pub fn eos(&self) -> &[u32] {
        &self.eos
    }

    /// The longest normal token, in bytes.
    pub fn max_token_len(&self) -> u32 {
        self.max_token_len
    }

    /// The ids of the normal tokens, with their bytes.
    pub fn normal_tokens(&self) -> impl Iterator<Item = (u32, &[u8])> + '_ {
        (0..self.size()).filter_map(move |id| match self.kinds[id as usize] {
            TokenKind::Normal => Some((id, self.bytes(id))),
            _ => None,
        })
    }

    /// The token trie, built on first use (see [`TokenTrie`]).
    pub fn trie(&self) -> &TokenTrie {
        self.trie.get_or_init(|| TokenTrie::build(self))
    }

    /// The tables that make masks of run states, built on first use (see
    /// [`LineTextTable`]).
    pub fn line_text(&self, kind: LineText) -> &LineTextTable {
        self.line_text[kind.index()].get_or_init(|| LineTextTable::build(self, kind))
    }

    /// The ids `text` has with this vocabulary's own tokenizer. The ids must spell `text`
    /// back, each normal token by its bytes and each special token by its name: masks over
    /// ids that spell another text would be the masks of that text, so a tokenizer that
    /// disagrees with the token table is an `encoder_mismatch` error naming the first token
    /// that departs.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, VocabError> {
        let Some(encoder) = &self.encoder else {
            return Err(VocabError::new(
                VocabErrorKind::NoEncoder,
                "this vocabulary has no tokenizer to encode text with",
            ));
        };
        let ids = encoder.encode(text)?;
        let mut rest = text.as_bytes();
        for (index, &id) in ids.iter().enumerate() {
            let spelled = match self.kind(id) {
                Some(TokenKind::Normal) => self.bytes(id),
                Some(TokenKind::Special | TokenKind::Eos) => {
                    self.special_name(id).unwrap_or("").as_bytes()
                }
                Some(TokenKind::Hole) | None => &[],
            };
            match rest.strip_prefix(spelled).filter(|_| !spelled.is_empty()) {
                Some(after) => rest = after,
                None => {
                    return Err(VocabError::new(
                        VocabErrorKind::EncoderMismatch,
                        format!(
                            "the tokenizer's token {index} (id {id}) is not the text's bytes at \
                             {} in this vocabulary (the table gives {:?}): the tokenizer and \
                             the token table disagree",
                            text.len() - rest.len(),
                            String::from_utf8_lossy(spelled)
                        ),
                    ));
                }
            }
        }
        if !rest.is_empty() {
            return Err(VocabError::new(
                VocabErrorKind::EncoderMismatch,
                format!(
                    "the tokenizer's ids spell only the first {} bytes of the text",
                    text.len() - rest.len()
                ),
            ));
        }
        Ok(ids)
    }

    /// This vocabulary with `encoder` as its tokenizer.
    pub fn with_encoder(mut self, encoder: Arc<dyn Encoder>) -> Vocabulary {
        self.encoder = Some(encoder);
        self
    }

    /// Whether an encoder is attached.
    pub fn has_encoder(&self) -> bool {
        self.encoder.is_some()
    }

    /// This vocabulary with `eos` as its EOS tokens instead of its own (each must be a special
    /// token; the former EOS tokens stay special). On an error the vocabulary is dropped and
    /// the error says which id was refused.
    pub fn with_eos(mut self, eos: &[u32]) -> Result<Vocabulary, VocabError> {
        for &id in eos {
            match self.kinds.get(id as usize) {
                Some(TokenKind::Special | TokenKind::Eos) => {}
                Some(kind) => {
                    return Err(VocabError::new(
                        VocabErrorKind::UnknownEos,
                        format!("EOS id {id} is not a special token (it is {kind:?})"),
                    ))
                }
                None => {
                    return Err(VocabError::new(
                        VocabErrorKind::UnknownEos,
                        format!("EOS id {id} is past the vocabulary's {} ids", self.size()),
                    ))
                }
            }
        }
        for &old in &self.eos {
            self.kinds[old as usize] = TokenKind::Special;
        }
        for &id in eos {
            self.kinds[id as usize] = TokenKind::Eos;
        }
        let mut eos = eos.to_vec();
        eos.sort_unstable();
        eos.dedup();
        self.eos = eos;
        Ok(self)
    }
}
