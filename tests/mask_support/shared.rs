//! Vocabularies built once per test binary and shared by its tests (each `tiktoken` load reads
//! back a whole encoder), with a first-byte index that makes the brute-force mask affordable
//! at every step of a corpus.

use std::sync::{Arc, OnceLock};

use frontier::mask::vocab::hf::{self, EosSpec};
use frontier::mask::vocab::tiktoken::{self, Builtin};
use frontier::mask::{TokenKind, Vocabulary};
use frontier::recognizer::Recognizer;

use super::{byte_level_json, greedy_tokenize};

/// A vocabulary and its normal tokens in byte order.
pub struct Shared {
    pub vocab: Arc<Vocabulary>,
    /// The normal tokens sorted by their bytes, each with the length of the prefix it shares
    /// with the one before.
    sorted: Vec<(u32, u16)>,
    /// The EOS ids (allowed when the state accepts); every other special and hole is never.
    eos: Vec<u32>,
}

impl Shared {
    fn new(vocab: Vocabulary) -> Shared {
        let mut ids: Vec<u32> = vocab.normal_tokens().map(|(id, _)| id).collect();
        ids.sort_by(|&a, &b| vocab.bytes(a).cmp(vocab.bytes(b)));
        let mut sorted = Vec::with_capacity(ids.len());
        let mut before: &[u8] = &[];
        for &id in &ids {
            let bytes = vocab.bytes(id);
            let common = bytes.iter().zip(before).take_while(|(a, b)| a == b).count();
            sorted.push((id, common as u16));
            before = bytes;
        }
        let eos = (0..vocab.size())
            .filter(|&id| vocab.kind(id) == Some(TokenKind::Eos))
            .collect();
        Shared {
            vocab: Arc::new(vocab),
            sorted,
            eos,
        }
    }

    /// The mask by definition: each normal token's bytes pushed into a copy of `state`, EOS
    /// when `state` accepts. Tokens go in byte order and the pushes of the prefix a token
    /// shares with the one before are not repeated: `after[d]` is the state after its first
    /// `d` bytes, and `taken` how many of those bytes the state took (a token whose shared
    /// prefix was refused is refused too, without a push).
    pub fn brute_mask<R: Recognizer>(&self, state: &R) -> Vec<u32> {
        let mut words = vec![0u32; self.vocab.mask_words()];
        let mut after = vec![*state; self.vocab.max_token_len() as usize + 1];
        let mut taken = 0usize;
        for &(id, common) in &self.sorted {
            let bytes = self.vocab.bytes(id);
            let common = common as usize;
            if taken < common {
                continue; // a byte of the shared prefix was refused
            }
            taken = common;
            while taken < bytes.len() {
                let mut next = after[taken];
                if !next.try_byte(bytes[taken]) {
                    break;
                }
                taken += 1;
                after[taken] = next;
            }
            if taken == bytes.len() {
                words[id as usize / 32] |= 1 << (id % 32);
            }
        }
        if state.accepting() {
            for &id in &self.eos {
                words[id as usize / 32] |= 1 << (id % 32);
            }
        }
        words
    }

    /// `bytes` as the vocabulary's own tokenizer splits them (UTF-8 text with an encoder),
    /// else by longest match.
    pub fn tokenize(&self, bytes: &[u8]) -> Vec<u32> {
        match std::str::from_utf8(bytes) {
            Ok(text) if self.vocab.has_encoder() => self.vocab.encode(text).unwrap(),
            _ => greedy_tokenize(&self.vocab, bytes),
        }
    }
}

pub fn cl100k() -> &'static Shared {
    static CELL: OnceLock<Shared> = OnceLock::new();
    CELL.get_or_init(|| Shared::new(tiktoken::builtin(Builtin::Cl100kBase).unwrap()))
}

pub fn o200k() -> &'static Shared {
    static CELL: OnceLock<Shared> = OnceLock::new();
    CELL.get_or_init(|| Shared::new(tiktoken::builtin(Builtin::O200kBase).unwrap()))
}

/// The Llama-3-style byte-level `tokenizer.json` of [`byte_level_json`], EOS `<|eot_id|>`.
pub fn byte_level() -> &'static Shared {
    static CELL: OnceLock<Shared> = OnceLock::new();
    CELL.get_or_init(|| {
        let eos = [EosSpec::Name("<|eot_id|>".into())];
        Shared::new(hf::from_json_text(&byte_level_json(), &eos).unwrap())
    })
}
