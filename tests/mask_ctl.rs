//! CTL masks over real vocabularies at every step of the corpora: the matcher's mask (cached
//! and uncached) equals the brute-force definition, rollback restores the exact mask, and the
//! EOS bits equal `accepting`. Default limits and small ones (`max_line` 20, `max_arg` 100,
//! under which `05_apply_patch.ctl`'s 224-byte argument is refused mid-stream).
//!
//! Corpus: every file of `corpora/ctl/valid` (1,435 bytes in all); tiktoken encodes the UTF-8
//! ones with its own tokenizer, the others (and every file for the made byte-level
//! `tokenizer.json`) are split by longest match. The brute force pushes every token of the
//! vocabulary at every step, so the vocabularies are walked in full: the file runs in about
//! 6–13 s at the test profile's opt-level 1 (2-core machine, shared).

mod mask_support;

use std::sync::Arc;

use frontier::ctl::{CtlMachine, Limits};
use frontier::mask::vocab::hf::{self, EosSpec};
use frontier::mask::vocab::tiktoken::{self, Builtin};
use frontier::mask::{CompiledGrammar, MaskError, Vocabulary};
use frontier::recognizer::Recognizer;
use mask_support::*;

fn corpus() -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir("corpora/ctl/valid")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ctl"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect()
}

fn tokenize(vocab: &Vocabulary, bytes: &[u8]) -> Vec<u32> {
    match std::str::from_utf8(bytes) {
        Ok(text) if vocab.has_encoder() => vocab.encode(text).unwrap(),
        _ => greedy_tokenize(vocab, bytes),
    }
}

const SMALL: Limits = Limits {
    max_line: 20,
    max_arg: 100,
};

/// Runs the checks over the corpus; returns the number of steps checked and of files whose
/// tokens the limits refused.
fn check_vocab(vocab: Arc<Vocabulary>, limits: Limits) -> (usize, usize) {
    let grammar = CompiledGrammar::new(Arc::clone(&vocab), CtlMachine::new(limits));
    let mut cached = vec![0u32; vocab.mask_words()];
    let mut uncached = vec![0u32; vocab.mask_words()];
    let mut steps = 0;
    let mut refused = 0;
    for (name, bytes) in corpus() {
        let tokens = tokenize(&vocab, &bytes);
        let mut matcher = grammar.matcher();
        let mut previous: Option<Vec<u32>> = None;
        for (i, &token) in tokens.iter().chain(vocab.eos().first()).enumerate() {
            let expected = brute_mask(&vocab, &matcher.state());
            matcher.fill_mask(&mut cached).unwrap();
            matcher.fill_mask_uncached(&mut uncached).unwrap();
            assert_eq!(uncached, expected, "{name} step {i}: walk vs brute force");
            assert_eq!(cached, expected, "{name} step {i}: cache vs brute force");
            for &eos in vocab.eos() {
                assert_eq!(
                    bit(&cached, eos),
                    matcher.accepting(),
                    "{name} step {i}: EOS"
                );
            }
            steps += 1;
            // Rollback of the last token gives back the previous step's exact mask.
            if let Some(before) = &previous {
                let mut again = matcher.clone();
                again.rollback(1).unwrap();
                again.fill_mask(&mut uncached).unwrap();
                assert_eq!(&uncached, before, "{name} step {i}: rollback");
            }
            match matcher.consume(token) {
                Ok(()) => assert!(
                    bit(&expected, token),
                    "{name} step {i}: took a masked token"
                ),
                Err(err) => {
                    assert!(!bit(&expected, token), "{name} step {i}: refused {err}");
                    assert!(
                        limits.max_line < Limits::DEFAULT_MAX_LINE,
                        "{name} step {i}: a valid file is refused under default limits: {err}"
                    );
                    assert!(matches!(err, MaskError::TokenRefused { .. }), "{err}");
                    refused += 1;
                    break;
                }
            }
            previous = Some(expected);
        }
        if limits.max_line == Limits::DEFAULT_MAX_LINE && !vocab.eos().is_empty() {
            assert!(matcher.is_terminated(), "{name}: EOS ends a valid file");
            matcher.fill_mask(&mut cached).unwrap();
            let eos_only = brute_mask_eos_only(&vocab);
            assert_eq!(
                cached, eos_only,
                "{name}: after EOS the mask holds EOS only"
            );
        }
    }
    (steps, refused)
}

fn brute_mask_eos_only(vocab: &Vocabulary) -> Vec<u32> {
    let mut words = vec![0u32; vocab.mask_words()];
    for &id in vocab.eos() {
        words[id as usize / 32] |= 1 << (id % 32);
    }
    words
}

#[test]
fn byte_level_tokenizer_json_masks() {
    let vocab = Arc::new(
        hf::from_json_text(&byte_level_json(), &[EosSpec::Name("<|eot_id|>".into())]).unwrap(),
    );
    let (steps, refused) = check_vocab(Arc::clone(&vocab), Limits::default());
    assert!(steps > 500 && refused == 0, "{steps} steps");
    let (_, refused) = check_vocab(vocab, SMALL);
    assert!(refused >= 1, "the small limits refuse 05_apply_patch.ctl");
}

#[test]
fn cl100k_masks() {
    let vocab = Arc::new(tiktoken::builtin(Builtin::Cl100kBase).unwrap());
    assert_eq!(check_vocab(Arc::clone(&vocab), Limits::default()).1, 0);
    assert!(check_vocab(vocab, SMALL).1 >= 1);
}

#[test]
fn o200k_masks() {
    let vocab = Arc::new(tiktoken::builtin(Builtin::O200kBase).unwrap());
    assert_eq!(check_vocab(Arc::clone(&vocab), Limits::default()).1, 0);
    assert!(check_vocab(vocab, SMALL).1 >= 1);
}

/// Many threads fill masks from one grammar at once; every fill equals a fresh walk.
#[test]
fn cache_shared_across_threads_answers_what_a_walk_computes() {
    let vocab = Arc::new(tiktoken::builtin(Builtin::Cl100kBase).unwrap());
    let grammar = CompiledGrammar::new(Arc::clone(&vocab), CtlMachine::default());
    let files = corpus();
    std::thread::scope(|scope| {
        for t in 0..3 {
            let grammar = Arc::clone(&grammar);
            let files = &files;
            scope.spawn(move || {
                let mut cached = vec![0u32; grammar.vocab().mask_words()];
                let mut fresh = cached.clone();
                for (name, bytes) in files.iter().skip(t) {
                    let mut matcher = grammar.matcher();
                    for token in tokenize(grammar.vocab(), bytes) {
                        matcher.fill_mask(&mut cached).unwrap();
                        matcher.fill_mask_uncached(&mut fresh).unwrap();
                        assert_eq!(cached, fresh, "{name}");
                        matcher.consume(token).unwrap();
                    }
                }
            });
        }
    });
    let stats = grammar.cache_stats();
    assert!(stats.hits > 0 && stats.misses > 0, "{stats:?}");
    assert!(stats.entries as u64 <= stats.misses);
}

/// A cache of two masks still answers every step exactly, and never holds more than two.
#[test]
fn a_tiny_cache_evicts_and_stays_exact() {
    let vocab = Arc::new(
        hf::from_json_text(&byte_level_json(), &[EosSpec::Name("<|eot_id|>".into())]).unwrap(),
    );
    let grammar =
        CompiledGrammar::with_cache_capacity(Arc::clone(&vocab), CtlMachine::default(), 2);
    let mut cached = vec![0u32; vocab.mask_words()];
    for (name, bytes) in corpus() {
        let mut matcher = grammar.matcher();
        for token in tokenize(&vocab, &bytes) {
            matcher.fill_mask(&mut cached).unwrap();
            assert_eq!(cached, brute_mask(&vocab, &matcher.state()), "{name}");
            matcher.consume(token).unwrap();
            assert!(grammar.cache_stats().entries <= 2);
        }
    }
    // Warm-up fills the cache with the states of a sample.
    let warm = CompiledGrammar::new(Arc::clone(&vocab), CtlMachine::default());
    let sample = b"call c1 read_file\narg path 10\nsrc/lib.rsend\n";
    assert_eq!(warm.warm_up(sample), sample.len() + 1);
    let stats = warm.cache_stats();
    assert!(
        stats.entries > 10 && stats.entries <= sample.len() + 1,
        "{stats:?}"
    );
}

/// Equal keys give equal masks: every state of the corpus whose key was seen before has the
/// mask computed for that key.
#[test]
fn states_with_equal_keys_have_equal_masks() {
    let vocab = Arc::new(tiktoken::builtin(Builtin::O200kBase).unwrap());
    let grammar =
        CompiledGrammar::with_cache_capacity(Arc::clone(&vocab), CtlMachine::default(), 0);
    let horizon = vocab.max_token_len();
    let mut seen = std::collections::HashMap::new();
    let mut words = vec![0u32; vocab.mask_words()];
    let mut repeats = 0;
    for (_, bytes) in corpus() {
        let mut state = CtlMachine::default();
        for &byte in &bytes {
            grammar.fill_uncached(&state, &mut words).unwrap();
            match seen.entry(state.mask_key(horizon)) {
                std::collections::hash_map::Entry::Occupied(e) => {
                    assert_eq!(e.get(), &words, "{state:?}");
                    repeats += 1;
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(words.clone());
                }
            }
            assert!(state.try_byte(byte));
        }
    }
    assert!(repeats > 100, "{repeats} repeated keys");
}
