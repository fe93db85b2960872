//! apply_patch strict mode's mask key leaves a character's code point out: every character
//! of a text gives one key (one cached mask), and masks answered from the cache stay exact.

use std::collections::BTreeSet;
use std::sync::Arc;

use frontier::apply_patch::StrictMachine;
use frontier::mask::{CompiledGrammar, Vocabulary};
use frontier::recognizer::Recognizer;

const HEAD: &[u8] = b"*** Begin Patch\n*** Add File: a.txt\n+";

fn after(tail: &[u8]) -> StrictMachine {
    let mut m = StrictMachine::default();
    let text = [HEAD, tail].concat();
    assert_eq!(m.try_bytes(&text), text.len());
    m
}

/// Same answers for every continuation of up to two bytes.
fn same_future(a: StrictMachine, b: StrictMachine) {
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
fn cached_masks_equal_walks_on_a_unicode_patch() {
    let patch = std::fs::read("corpora/apply_patch/unicode.patch").unwrap();
    // Every single byte and every substring of up to four bytes of the patch as a token.
    let mut tokens: BTreeSet<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    for len in 2..=4 {
        tokens.extend(patch.windows(len).map(<[u8]>::to_vec));
    }
    let tokens: Vec<Vec<u8>> = tokens.into_iter().collect();
    let vocab = Arc::new(Vocabulary::from_raw(&tokens, &[], &[]).unwrap());
    let grammar = CompiledGrammar::new(Arc::clone(&vocab), StrictMachine::default());
    let mut matcher = grammar.matcher();
    let (mut cached, mut walked) = (vec![0; vocab.mask_words()], vec![0; vocab.mask_words()]);
    for (at, &byte) in patch.iter().enumerate() {
        matcher.fill_mask(&mut cached).unwrap();
        matcher.fill_mask_uncached(&mut walked).unwrap();
        assert_eq!(cached, walked, "at byte {at}");
        let id = tokens.binary_search(&vec![byte]).unwrap() as u32;
        matcher.consume(id).unwrap();
    }
    let stats = grammar.cache_stats();
    assert!(stats.hits > stats.misses, "{stats:?}");
}
