//! Helpers shared by the mask tests: tokenizer.json files made here, the brute-force mask,
//! and a greedy tokenizer for bytes that are not UTF-8 (or for vocabularies without one).
#![allow(dead_code)]

pub mod shared;

use std::collections::HashMap;

use frontier::mask::{TokenKind, Vocabulary};
use frontier::recognizer::Recognizer;

/// GPT-2's byte-to-unicode map, written out independently of the crate's: printable Latin-1
/// bytes stand for themselves, the others take 256, 257, … in byte order.
pub fn gpt2_char(byte: u8) -> char {
    let printable = |b: u32| (33..=126).contains(&b) || (161..=172).contains(&b) || b >= 174;
    let b = u32::from(byte);
    if printable(b) {
        return char::from_u32(b).unwrap();
    }
    let rank = (0..b).filter(|&x| !printable(x)).count() as u32;
    char::from_u32(256 + rank).unwrap()
}

pub fn gpt2_spell(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| gpt2_char(b)).collect()
}

/// The multi-byte tokens of the byte-level test vocabulary (ids 256 on; a single byte here
/// would take its byte's key, and its id, in the JSON object).
pub const BYTE_LEVEL_WORDS: &[&str] = &[
    "call",
    "call ",
    " c",
    "arg",
    "arg ",
    "end",
    "end\n",
    "\nend\n",
    " path",
    " content",
    " command",
    " patch",
    "read",
    "_file",
    " read_file\n",
    "src",
    "/src",
    ".rs",
    "lib",
    "end\ncall",
    " 1",
    " 10",
    "0\n",
    "12",
    "***",
    " Begin",
    " Patch",
    "\n+",
    "    ",
    "  ",
    " world",
    "Hello",
    " Hello",
    "é",
    "—",
    "🦀",
    "\u{00e9}t\u{00e9}",
    "ll",
    "ca",
    "al",
    " t",
    "1 ",
];

/// A Llama-3-style byte-level `tokenizer.json`: ids 0–255 the single bytes in GPT-2 map order,
/// then [`BYTE_LEVEL_WORDS`], then added tokens: `<|begin_of_text|>` (special),
/// `<|eot_id|>` (special), `<tool>` (not special) and `<|reserved_0|>` (special).
pub fn byte_level_json() -> String {
    let mut vocab = serde_json::Map::new();
    for byte in 0..=255u8 {
        vocab.insert(gpt2_char(byte).to_string(), (byte as u32).into());
    }
    for (i, word) in BYTE_LEVEL_WORDS.iter().enumerate() {
        assert!(word.len() > 1, "{word:?} is a single byte");
        vocab.insert(gpt2_spell(word.as_bytes()), (256 + i as u32).into());
    }
    let base = 256 + BYTE_LEVEL_WORDS.len() as u32;
    let added = serde_json::json!([
        {"id": base, "content": "<|begin_of_text|>", "special": true, "normalized": false},
        {"id": base + 1, "content": "<|eot_id|>", "special": true, "normalized": false},
        {"id": base + 2, "content": "<tool>", "special": false, "normalized": false},
        {"id": base + 3, "content": "<|reserved_0|>", "special": true, "normalized": false},
    ]);
    serde_json::json!({
        "version": "1.0",
        "added_tokens": added,
        "normalizer": null,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": "\\s+"}, "behavior": "Isolated"},
            {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true}
        ]},
        "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true},
        "model": {"type": "BPE", "dropout": null, "unk_token": null, "byte_fallback": false,
                  "ignore_merges": true, "vocab": vocab, "merges": []}
    })
    .to_string()
}

/// The id of `word` in [`byte_level_json`].
pub fn byte_level_id(word: &str) -> u32 {
    256 + BYTE_LEVEL_WORDS.iter().position(|w| *w == word).unwrap() as u32
}

/// A Llama-2-style SentencePiece `tokenizer.json` with byte fallback: `<unk>` 0, `<s>` 1,
/// `</s>` 2, `<0x00>`–`<0xFF>` 3–258, then `▁` 259, `▁call` 260, `al` 261, `é` 262,
/// `▁▁` 263, and `<0x4>` 264 (one hex digit: not a byte token, the text `<0x4>`).
pub fn sentencepiece_json() -> String {
    let mut vocab = serde_json::Map::new();
    for (i, name) in ["<unk>", "<s>", "</s>"].iter().enumerate() {
        vocab.insert(name.to_string(), (i as u32).into());
    }
    for byte in 0..=255u32 {
        vocab.insert(format!("<0x{byte:02X}>"), (3 + byte).into());
    }
    for (i, piece) in [
        "\u{2581}",
        "\u{2581}call",
        "al",
        "é",
        "\u{2581}\u{2581}",
        "<0x4>",
    ]
    .iter()
    .enumerate()
    {
        vocab.insert(piece.to_string(), (259 + i as u32).into());
    }
    serde_json::json!({
        "version": "1.0",
        "added_tokens": [
            {"id": 0, "content": "<unk>", "special": true},
            {"id": 1, "content": "<s>", "special": true},
            {"id": 2, "content": "</s>", "special": true}
        ],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "\u{2581}"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "\u{2581}"}
        ]},
        "pre_tokenizer": null,
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "\u{2581}"}, "content": " "},
            {"type": "ByteFallback"},
            {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}
        ]},
        "model": {"type": "BPE", "unk_token": "<unk>", "byte_fallback": true, "fuse_unk": true,
                  "vocab": vocab, "merges": []}
    })
    .to_string()
}

/// The mask by definition: every normal token's bytes pushed into a copy of `state`, EOS
/// tokens when `state` accepts, nothing else.
pub fn brute_mask<R: Recognizer>(vocab: &Vocabulary, state: &R) -> Vec<u32> {
    let mut words = vec![0u32; vocab.mask_words()];
    for id in 0..vocab.size() {
        let allowed = match vocab.kind(id).unwrap() {
            TokenKind::Normal => {
                let bytes = vocab.bytes(id);
                let mut copy = *state;
                copy.try_bytes(bytes) == bytes.len()
            }
            TokenKind::Eos => state.accepting(),
            TokenKind::Special | TokenKind::Hole => false,
        };
        if allowed {
            words[id as usize / 32] |= 1 << (id % 32);
        }
    }
    words
}

pub fn bit(words: &[u32], id: u32) -> bool {
    words[id as usize / 32] & (1 << (id % 32)) != 0
}

/// Longest-match tokenization of `bytes` (every byte must be some token's prefix path).
pub fn greedy_tokenize(vocab: &Vocabulary, bytes: &[u8]) -> Vec<u32> {
    let mut by_bytes: HashMap<&[u8], u32> = HashMap::new();
    for id in (0..vocab.size()).rev() {
        if vocab.kind(id) == Some(TokenKind::Normal) {
            by_bytes.insert(vocab.bytes(id), id);
        }
    }
    let longest = vocab.max_token_len() as usize;
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let (len, id) = (1..=longest.min(bytes.len() - at))
            .rev()
            .find_map(|len| by_bytes.get(&bytes[at..at + len]).map(|&id| (len, id)))
            .expect("every byte is a token");
        out.push(id);
        at += len;
    }
    out
}

/// A small xorshift generator, so that a random test is deterministic by its seed.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A number below `n` (not 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}
