//! Property tests: on random byte strings shaped like patches (valid, cut, mutated), both
//! modes keep the contract (every split, byte at a time with all 256 next bytes, every
//! prefix), and the strict assembler's operations agree with the codex assembler's wherever
//! a patch is valid in both modes and free of what the modes read differently.

#[path = "apply_patch_support/gen.rs"]
mod gen;

use frontier::apply_patch::{CodexParser, StrictParser};
use frontier::contract::PushParser;
use frontier::harness;
use proptest::prelude::*;

fn shaped() -> impl Strategy<Value = Vec<u8>> {
    (any::<u64>(), 0u8..4, any::<bool>()).prop_map(|(seed, edits, codex)| {
        let mut rng = gen::Rng(seed | 1);
        let mut text = if codex {
            gen::codex_text(&mut rng)
        } else {
            gen::valid_patch(&mut rng, false)
        };
        for _ in 0..edits {
            text = gen::mutate(&mut rng, &text);
        }
        text
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn strict_keeps_the_contract(text in shaped()) {
        harness::check_chunking(&StrictParser::default(), &text, 1).map_err(TestCaseError::fail)?;
        harness::check_byte_at_a_time(StrictParser::default(), &text, true).map_err(TestCaseError::fail)?;
        harness::check_prefixes(&StrictParser::default(), &text, 3).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn codex_keeps_the_contract(text in shaped()) {
        harness::check_chunking(&CodexParser::new(), &text, 1).map_err(TestCaseError::fail)?;
        harness::check_byte_at_a_time(CodexParser::new(), &text, true).map_err(TestCaseError::fail)?;
        harness::check_prefixes(&CodexParser::new(), &text, 3).map_err(TestCaseError::fail)?;
    }

    /// A live parser that is not accepting always allows some byte (no dead end is reachable
    /// through allowed bytes).
    #[test]
    fn no_dead_ends(text in shaped()) {
        fn walk<P: PushParser>(mut parser: P, text: &[u8]) -> Result<(), TestCaseError> {
            for (at, &b) in text.iter().enumerate() {
                prop_assert!(parser.accepting() || !parser.allowed().is_empty(), "dead end after {} bytes", at);
                if parser.push(&[b], &mut |_| {}).is_err() {
                    break;
                }
            }
            Ok(())
        }
        walk(StrictParser::default(), &text)?;
        walk(CodexParser::new(), &text)?;
    }

    #[test]
    fn arbitrary_bytes_never_panic(text in proptest::collection::vec(any::<u8>(), 0..200)) {
        let mut prefixed = b"*** Begin Patch\n*** Update File: a\n".to_vec();
        prefixed.extend_from_slice(&text);
        for input in [&text, &prefixed] {
            harness::check_byte_at_a_time(StrictParser::default(), input, false).map_err(TestCaseError::fail)?;
            harness::check_byte_at_a_time(CodexParser::new(), input, false).map_err(TestCaseError::fail)?;
        }
    }
}
