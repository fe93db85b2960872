//! Strict mode against llguidance 1.9 itself: Codex's grammar, the single-byte tokenizer, and
//! after every prefix the same allowed set, the same accepting flag, and the same first
//! refused byte. Over the corpus and over generated patches, their truncations and mutations.

#[path = "apply_patch_support/gen.rs"]
mod gen;
#[path = "apply_patch_support/oracle.rs"]
mod oracle;

use frontier::apply_patch::{StrictOptions, StrictParser};
use frontier::contract::PushParser;
use gen::Rng;
use oracle::Oracle;

const GRAMMAR: &str = include_str!("../grammars/apply_patch.lark");
const GRAMMAR_ENV: &str = include_str!("../grammars/apply_patch_env.lark");

/// Compares every prefix of `input`; returns how many bytes were compared.
fn agree(oracle: &Oracle, options: StrictOptions, input: &[u8], what: &str) -> usize {
    let (answers, refused) = oracle.trace(input);
    let mut parser = StrictParser::new(options);
    for (at, answer) in answers.iter().enumerate() {
        assert_eq!(
            parser.allowed(),
            answer.allowed,
            "{what}: allowed after {at} bytes ({:?})",
            String::from_utf8_lossy(&input[..at.min(input.len())])
        );
        assert_eq!(
            parser.accepting(),
            answer.accepting,
            "{what}: accepting after {at} bytes"
        );
        let Some(&byte) = input.get(at) else { break };
        let pushed = parser.push(&[byte], &mut |_| {});
        if refused == Some(at) {
            let e = pushed.expect_err("llguidance refused this byte");
            assert_eq!(e.offset, at as u64, "{what}");
            return at;
        }
        assert!(
            pushed.is_ok(),
            "{what}: refused byte {byte:#04x} at {at} that llguidance took"
        );
    }
    assert_eq!(refused, None, "{what}");
    input.len()
}

#[test]
fn corpus_agrees_with_llguidance() {
    let oracle = Oracle::new(GRAMMAR);
    let mut files = 0;
    for entry in std::fs::read_dir("corpora/apply_patch").unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "patch") {
            let input = std::fs::read(&path).unwrap();
            agree(
                &oracle,
                StrictOptions::default(),
                &input,
                &path.display().to_string(),
            );
            files += 1;
        }
    }
    assert!(files >= 20);
}

#[test]
fn conformance_patches_agree_with_llguidance() {
    let oracle = Oracle::new(GRAMMAR);
    let root = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/conformance/codex-apply-patch"
    );
    let mut patches = 0;
    for entry in std::fs::read_dir(root).expect("conformance scenarios") {
        let path = entry.unwrap().path().join("patch.txt");
        if let Ok(input) = std::fs::read(&path) {
            agree(
                &oracle,
                StrictOptions::default(),
                &input,
                &path.display().to_string(),
            );
            patches += 1;
        }
    }
    assert!(patches >= 23, "{patches}");
}

fn generated(grammar: &str, options: StrictOptions, seed: u64, cases: usize) {
    let oracle = Oracle::new(grammar);
    let mut rng = Rng(seed);
    let mut bytes = 0;
    for case in 0..cases {
        let valid = gen::valid_patch(&mut rng, options.environment);
        let n = agree(&oracle, options, &valid, &format!("case {case} valid"));
        assert_eq!(n, valid.len(), "a generated patch must be a sentence");
        bytes += n;
        let mut mutated = valid.clone();
        for round in 0..3 {
            mutated = gen::mutate(&mut rng, &mutated);
            bytes += agree(
                &oracle,
                options,
                &mutated,
                &format!("case {case} mutation {round}"),
            );
        }
    }
    assert!(bytes > cases * 50);
}

#[test]
fn generated_patches_agree_with_llguidance() {
    generated(GRAMMAR, StrictOptions::default(), 0x9e3779b97f4a7c15, 400);
}

#[test]
fn environment_variant_agrees_with_llguidance() {
    generated(
        GRAMMAR_ENV,
        StrictOptions { environment: true },
        0x2545f4914f6cdd1d,
        100,
    );
    let oracle = Oracle::new(GRAMMAR_ENV);
    let input = b"*** Begin Patch\n*** Environment ID: prod\n*** Delete File: a\n*** End Patch\n";
    assert_eq!(
        agree(&oracle, StrictOptions { environment: true }, input, "env"),
        input.len()
    );
}

/// The comparison can fail: a grammar that differs in one place (`/(.+)/` for add lines, as an
/// older comment in Codex's parser has it) disagrees on the first empty `+` line.
#[test]
fn a_different_grammar_is_caught() {
    let other = GRAMMAR.replace("add_line: \"+\" /(.*)/ LF", "add_line: \"+\" /(.+)/ LF");
    assert_ne!(other, GRAMMAR);
    let oracle = Oracle::new(&other);
    let input = b"*** Begin Patch\n*** Add File: a\n+\n*** End Patch\n";
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        agree(&oracle, StrictOptions::default(), input, "other grammar")
    }));
    assert!(caught.is_err());
}
