//! apply_patch's mask keys leave a character's code point out where nothing to come reads it
//! (strict mode: everywhere; codex mode: between characters): a text's characters give one key
//! (one cached mask), and masks answered from the cache stay exact.

use std::collections::BTreeSet;
use std::sync::Arc;

use frontier::apply_patch::{CodexMachine, StrictMachine};
use frontier::mask::cache::CacheStats;
use frontier::mask::{CompiledGrammar, Vocabulary};
use frontier::recognizer::Recognizer;

const HEAD: &[u8] = b"*** Begin Patch\n*** Add File: a.txt\n+";

fn after(tail: &[u8]) -> StrictMachine {
    after_in(StrictMachine::default(), tail)
}

fn after_in<R: Recognizer>(mut m: R, tail: &[u8]) -> R {
    let text = [HEAD, tail].concat();
    assert_eq!(m.try_bytes(&text), text.len());
    m
}

/// Same answers for every continuation of up to two bytes.
fn same_future<R: Recognizer>(a: R, b: R) {
    for first in 0..=255u8 {
        let (mut x, mut y) = (a, b);
        assert_eq!(x.try_byte(first), y.try_byte(first), "{first:#04x}");
        assert_eq!(x.accepting(), y.accepting());
        for second in 0..=255u8 {
            let (mut x2, mut y2) = (x, y);
            assert_eq!(x2.try_byte(second), y2.try_byte(second));
        }
    }
}

#[test]
fn characters_leave_one_key() {
    // Between characters: after é (2 bytes), ü, 一 (3 bytes) and 😀 (4 bytes).
    let done = ["é", "ü", "一", "😀"].map(|c| after(c.as_bytes()));
    for m in &done[1..] {
        assert_eq!(m.mask_key(128), done[0].mask_key(128));
        same_future(*m, done[0]);
    }
    // Inside a character: the second byte of two 3-byte characters with one lead byte.
    let (a, b) = (after(&"一".as_bytes()[..2]), after(&"乙".as_bytes()[..2]));
    assert_ne!("一".as_bytes()[1], "乙".as_bytes()[1]);
    assert_eq!(a.mask_key(128), b.mask_key(128));
    same_future(a, b);
}

#[test]
fn codex_characters_leave_one_key_between_characters() {
    let done = [
        "é",
        "ü",
        "一",
        "😀",
        "é and ASCII after it",
        "ü and ASCII after it",
    ]
    .map(|c| after_in(CodexMachine::new(), c.as_bytes()));
    for m in &done[1..4] {
        assert_eq!(m.mask_key(128), done[0].mask_key(128));
        same_future(*m, done[0]);
    }
    assert_eq!(done[4].mask_key(128), done[5].mask_key(128));
    same_future(done[4], done[5]);
}

/// At every byte of `patch` (each byte its own token), the cached mask equals a fresh walk.
/// Returns the cache's figures.
fn cached_masks_equal_walks<R: Recognizer>(initial: R, patch: &[u8]) -> CacheStats {
    // Every single byte and every substring of up to four bytes of the patch as a token.
    let mut tokens: BTreeSet<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    for len in 2..=4 {
        tokens.extend(patch.windows(len).map(<[u8]>::to_vec));
    }
    let tokens: Vec<Vec<u8>> = tokens.into_iter().collect();
    let vocab = Arc::new(Vocabulary::from_raw(&tokens, &[], &[]).unwrap());
    let grammar = CompiledGrammar::new(Arc::clone(&vocab), initial);
    let mut matcher = grammar.matcher();
    let (mut cached, mut walked) = (vec![0; vocab.mask_words()], vec![0; vocab.mask_words()]);
    for (at, &byte) in patch.iter().enumerate() {
        matcher.fill_mask(&mut cached).unwrap();
        matcher.fill_mask_uncached(&mut walked).unwrap();
        assert_eq!(cached, walked, "at byte {at}");
        let id = tokens.binary_search(&vec![byte]).unwrap() as u32;
        matcher.consume(id).unwrap();
    }
    grammar.cache_stats()
}

#[test]
fn cached_masks_equal_walks_on_unicode_patches() {
    let unicode = std::fs::read("corpora/apply_patch/unicode.patch").unwrap();
    let strict = cached_masks_equal_walks(StrictMachine::default(), &unicode);
    // Strict mode's keys recur across the patch's characters (before the code point was left
    // out, each character made new ones and misses outnumbered hits).
    assert!(strict.hits > strict.misses, "{strict:?}");
    cached_masks_equal_walks(CodexMachine::new(), &unicode);
    let lenient = std::fs::read("corpora/apply_patch/codex_lenient.patch").unwrap();
    cached_masks_equal_walks(CodexMachine::new(), &lenient);
}
