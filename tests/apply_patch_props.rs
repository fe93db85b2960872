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

/// Whether `parser`'s input can be completed to a sentence: short finishing texts are tried,
/// and where few bytes are allowed (a marker's rest, a character's continuation) each of them
/// is taken in turn.
fn completes<P: PushParser>(parser: &P, depth: usize) -> bool {
    const FINISH: [&str; 7] = [
        "",
        "x",
        "@",
        "*** End of File",
        "End Patch",
        "Delete File: x",
        "Move to: x",
    ];
    const BODY: [&str; 7] = [
        "",
        " x\n",
        "+x\n",
        "@@\n x\n",
        "*** Delete File: x\n",
        "*** Update File: x\n x\n",
        "\n",
    ];
    const END: [&str; 6] = [
        "",
        "EOF",
        "*** End Patch",
        "*** End Patch\nEOF",
        "*** Begin Patch\n*** End Patch",
        "*** Begin Patch\n*** End Patch\nEOF",
    ];
    if parser.accepting() {
        return true;
    }
    for finish in FINISH {
        for sep in ["", "\n"] {
            for body in BODY {
                for end in END {
                    let text = format!("{finish}{sep}{body}{end}");
                    let mut q = parser.clone();
                    if q.push(text.as_bytes(), &mut |_| {}).is_ok() && q.accepting() {
                        return true;
                    }
                }
            }
        }
    }
    let allowed = parser.allowed();
    let few = allowed.len() <= 4 || allowed.iter().all(|b| b >= 0x80);
    depth > 0
        && few
        && allowed.iter().take(4).any(|b| {
            let mut q = parser.clone();
            q.push(&[b], &mut |_| {}).is_ok() && completes(&q, depth - 1)
        })
}

/// The allowed bytes worth probing: the interesting ones and the ends of the set.
fn probes(allowed: frontier::ByteSet) -> Vec<u8> {
    let special = frontier::ByteSet::of(b"\n\r\t\x0b *+-@<EOFx\xc2\xe1\xe3\xf0\x80\x85\xa0\xbf");
    let mut out: Vec<u8> = allowed.intersection(special).iter().collect();
    out.extend(allowed.iter().next());
    out.extend(allowed.iter().last());
    out.sort_unstable();
    out.dedup();
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    /// Every allowed byte keeps the input viable: from every prefix of a shaped input, after
    /// each allowed byte, a completion to a sentence exists (found by a bounded search).
    #[test]
    fn allowed_bytes_are_viable(text in shaped(), stride in 1usize..7) {
        fn check<P: PushParser>(mut parser: P, text: &[u8], stride: usize) -> Result<(), TestCaseError> {
            for (at, &b) in text.iter().enumerate() {
                if at % stride == 0 {
                    for probe in probes(parser.allowed()) {
                        let mut next = parser.clone();
                        let pushed = next.push(&[probe], &mut |_| {});
                        prop_assert!(pushed.is_ok());
                        prop_assert!(
                            completes(&next, 24),
                            "no completion after {:?} + {:#04x}",
                            String::from_utf8_lossy(&text[..at]),
                            probe
                        );
                    }
                }
                if parser.push(&[b], &mut |_| {}).is_err() {
                    break;
                }
            }
            Ok(())
        }
        check(StrictParser::default(), &text, stride * 3)?;
        check(CodexParser::new(), &text, stride * 3)?;
    }
}
