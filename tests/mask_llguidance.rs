//! apply_patch strict-mode masks against llguidance 1.9 with real vocabularies: Codex's Lark
//! grammar (`grammars/apply_patch.lark`) with `%llguidance {"no_forcing": true}` prepended
//! (without it llguidance narrows a mask to the one token that spells bytes the grammar
//! forces; `masks.md`), `o200k_base` and `cl100k_base`, real patches tokenized by the
//! vocabulary's own tokenizer, and at every step the two masks bit for bit, EOS included, both
//! sides consuming the same token. Each vocabulary's trie is built for llguidance from our
//! `Vocabulary` (special tokens as 0xFF followed by their name, llguidance's marker, so no
//! text matches them).
//!
//! Patches: the files of `corpora/apply_patch` that strict mode takes whole (the valid and the
//! truncated ones) and every `patch.txt` of `tests/conformance/codex-apply-patch`. A file
//! strict mode refuses is compared up to the token both refuse.

mod mask_support;

use std::sync::Arc;

use frontier::apply_patch::{StrictOptions, StrictParser};
use frontier::contract::PushParser;
use frontier::mask::{CompiledGrammar, TokenKind, Vocabulary};
use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{ApproximateTokEnv, TokEnv, TokRxInfo, TokTrie};
use llguidance::{Matcher, ParserFactory};
use mask_support::bit;
use mask_support::shared::{cl100k, o200k, Shared};

const GRAMMAR: &str = include_str!("../grammars/apply_patch.lark");

/// llguidance's view of `vocab`: normal tokens with their bytes, special tokens as 0xFF and
/// their name, holes empty; its one EOS is our first.
fn llguidance_env(vocab: &Vocabulary) -> TokEnv {
    let words: Vec<Vec<u8>> = (0..vocab.size())
        .map(|id| match vocab.kind(id) {
            Some(TokenKind::Normal) => vocab.bytes(id).to_vec(),
            Some(TokenKind::Special | TokenKind::Eos) => {
                let name = vocab.special_name(id).expect("a special token has a name");
                [&[0xFF], name.as_bytes()].concat()
            }
            _ => Vec::new(),
        })
        .collect();
    let eos = *vocab.eos().first().expect("an EOS token");
    let info = TokRxInfo::new(vocab.size(), eos);
    Arc::new(ApproximateTokEnv::new(TokTrie::from(&info, &words)))
}

/// The patches, by name; all of them are UTF-8 text.
fn patches() -> Vec<(String, String)> {
    let mut paths: Vec<_> = std::fs::read_dir("corpora/apply_patch")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "patch"))
        .collect();
    for entry in std::fs::read_dir("tests/conformance/codex-apply-patch").unwrap() {
        let path = entry.unwrap().path().join("patch.txt");
        if path.is_file() {
            paths.push(path);
        }
    }
    paths.sort();
    paths
        .into_iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(&p).ok()?; // `invalid_utf8.patch` is not text
            Some((p.display().to_string(), text))
        })
        .collect()
}

/// llguidance's mask in our layout.
fn their_words(mask: &llguidance::toktrie::SimpleVob, vocab: &Vocabulary) -> Vec<u32> {
    let mut words = vec![0u32; vocab.mask_words()];
    for id in 0..vocab.size() {
        if mask.is_allowed(id) {
            words[id as usize / 32] |= 1 << (id % 32);
        }
    }
    words
}

/// What the comparison saw.
#[derive(Debug, Default)]
struct Seen {
    steps: usize,
    /// Allowed tokens, summed over the steps (the masks compared are not trivial).
    allowed: u64,
    /// Patches both sides took whole and ended with EOS.
    ended: usize,
    /// Patches both sides refused at the same token.
    refused: usize,
}

fn compare(shared: &Shared) -> Seen {
    let vocab = &shared.vocab;
    let env = llguidance_env(vocab);
    let mut factory = ParserFactory::new_simple(&env).unwrap();
    factory.set_stderr_log_level(0);
    let lark = format!("%llguidance {{\"no_forcing\": true}}\n{GRAMMAR}");
    let grammar = TopLevelGrammar::from_lark(lark);
    let strict = StrictParser::new(StrictOptions::default());
    let ours = CompiledGrammar::new(Arc::clone(vocab), strict.recognizer());
    let eos = vocab.eos()[0];
    let mut mask = vec![0u32; vocab.mask_words()];
    let mut seen = Seen::default();
    for (name, text) in patches() {
        let tokens = vocab.encode(&text).unwrap();
        let mut theirs = Matcher::new(factory.create_parser(grammar.clone()));
        assert!(!theirs.is_error(), "{:?}", theirs.get_error());
        let mut matcher = ours.matcher();
        // Every token of the patch, then EOS when both allow it.
        for (i, &token) in tokens.iter().chain([&eos]).enumerate() {
            matcher.fill_mask(&mut mask).unwrap();
            // Where nothing but the end may follow llguidance has stopped, and answers EOS alone.
            let expected = their_words(&theirs.compute_mask_or_eos().unwrap(), vocab);
            if mask != expected {
                let differ: Vec<(u32, bool)> = (0..vocab.size())
                    .filter(|&id| bit(&mask, id) != bit(&expected, id))
                    .map(|id| (id, bit(&mask, id)))
                    .take(8)
                    .collect();
                let before: Vec<u8> = tokens[..i]
                    .iter()
                    .flat_map(|&t| vocab.bytes(t).to_vec())
                    .collect();
                panic!(
                    "{name}: step {i}: (id, ours) {differ:?}; after {:?}",
                    String::from_utf8_lossy(&before),
                );
            }
            seen.steps += 1;
            seen.allowed += mask.iter().map(|w| u64::from(w.count_ones())).sum::<u64>();
            if !bit(&mask, token) {
                // Both refuse it (the masks are equal); a refused EOS is a cut-off patch.
                assert!(matcher.consume(token).is_err(), "{name} step {i}");
                assert_eq!(theirs.try_consume_tokens(&[token]).ok(), Some(0), "{name}");
                if token != eos {
                    seen.refused += 1;
                }
                break;
            }
            matcher.consume(token).unwrap();
            // llguidance has already stopped where only the end may follow; EOS ends it
            // elsewhere.
            if !(token == eos && theirs.is_stopped()) {
                theirs.consume_token(token).unwrap();
            }
            if token == eos {
                seen.ended += 1;
                // After EOS both answer with EOS only.
                matcher.fill_mask(&mut mask).unwrap();
                let after = their_words(&theirs.compute_mask_or_eos().unwrap(), vocab);
                assert_eq!(mask, after, "{name}: after EOS");
            }
        }
    }
    seen
}

#[test]
fn strict_masks_equal_llguidance_with_o200k() {
    let seen = compare(o200k());
    assert!(seen.allowed > 100_000 * seen.steps as u64, "{seen:?}");
    assert!(
        seen.steps > 1500 && seen.ended >= 25 && seen.refused >= 5,
        "{seen:?}"
    );
}

#[test]
fn strict_masks_equal_llguidance_with_cl100k() {
    let seen = compare(cl100k());
    assert!(seen.allowed > 50_000 * seen.steps as u64, "{seen:?}");
    assert!(
        seen.steps > 1500 && seen.ended >= 25 && seen.refused >= 5,
        "{seen:?}"
    );
}
