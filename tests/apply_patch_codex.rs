//! Codex mode against a reference model of Codex's own parser (`apply_patch_support/codex_ref.rs`)
//! and Codex's conformance scenarios.

#[path = "apply_patch_support/codex_ref.rs"]
mod codex_ref;
#[path = "apply_patch_support/gen.rs"]
mod gen;

use frontier::apply_patch::units::FileOperation;
use frontier::apply_patch::{CodexParser, OperationAssembler};
use frontier::contract::{PushParser, Verdict};
use frontier::harness;
use gen::Rng;

fn reference(bytes: &[u8]) -> Result<Vec<FileOperation>, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| e.to_string())?;
    codex_ref::parse(text)
}

/// The operations codex mode confirms, and its verdict.
fn ours(
    bytes: &[u8],
) -> (
    Vec<FileOperation>,
    Verdict<frontier::apply_patch::PatchErrorKind>,
) {
    let mut parser = CodexParser::new();
    let mut assembler = OperationAssembler::default();
    let mut ops = Vec::new();
    let _ = parser.push(bytes, &mut |e| ops.extend(assembler.on_event(&e)));
    let outcome = parser.finish(&mut |e| ops.extend(assembler.on_event(&e)));
    (ops, outcome.verdict)
}

/// Codex mode accepts exactly what the reference accepts, with the same operations; and on
/// every prefix `accepting()` agrees with the reference on that prefix.
fn agree(bytes: &[u8], what: &str) {
    let (ops, verdict) = ours(bytes);
    match reference(bytes) {
        Ok(expected) => {
            assert_eq!(verdict, Verdict::Complete, "{what}: reference accepts");
            assert_eq!(ops, expected, "{what}");
        }
        Err(why) => assert_ne!(
            verdict,
            Verdict::Complete,
            "{what}: reference refuses ({why})"
        ),
    }
    let mut parser = CodexParser::new();
    for k in 0..=bytes.len() {
        if parser.error().is_some() {
            break;
        }
        assert_eq!(
            parser.accepting(),
            reference(&bytes[..k]).is_ok(),
            "{what}: accepting after {k} bytes {:?}",
            String::from_utf8_lossy(&bytes[..k])
        );
        if k < bytes.len() {
            let _ = parser.push(&bytes[k..k + 1], &mut |_| {});
        }
    }
}

/// A byte outside `allowed()` leaves no way to a patch Codex accepts: checked against a few
/// continuations.
fn refusals_are_final(bytes: &[u8], what: &str) {
    let mut parser = CodexParser::new();
    let tails: [&[u8]; 6] = [
        b"",
        b"\n*** End Patch",
        b" x\n*** End Patch",
        b"\n+x\n*** End Patch",
        b"\nEOF",
        b"EOF",
    ];
    for k in 0..=bytes.len() {
        let allowed = parser.allowed();
        for b in b"\n\r \t*+-@<EOPabx\xc2\xa0\xe3".iter().copied() {
            if allowed.contains(b) {
                continue;
            }
            for tail in tails
                .iter()
                .chain(std::iter::once(&&bytes[k.min(bytes.len())..]))
            {
                let mut probe = bytes[..k].to_vec();
                probe.push(b);
                probe.extend_from_slice(tail);
                assert!(
                    reference(&probe).is_err(),
                    "{what}: byte {b:#04x} refused after {k} bytes, but {:?} is accepted",
                    String::from_utf8_lossy(&probe)
                );
            }
        }
        if k == bytes.len() || parser.push(&bytes[k..k + 1], &mut |_| {}).is_err() {
            break;
        }
    }
}

fn conformance() -> Vec<(String, Vec<u8>)> {
    let root = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/conformance/codex-apply-patch"
    );
    let mut out = Vec::new();
    for entry in std::fs::read_dir(root).expect("conformance scenarios") {
        let dir = entry.unwrap().path();
        if let Ok(bytes) = std::fs::read(dir.join("patch.txt")) {
            out.push((
                dir.file_name().unwrap().to_string_lossy().into_owned(),
                bytes,
            ));
        }
    }
    out.sort();
    out
}

#[test]
fn conformance_patches_parse_as_codex_parses_them() {
    let scenarios = conformance();
    assert!(scenarios.len() >= 23, "{}", scenarios.len());
    let mut accepted = 0;
    for (name, bytes) in &scenarios {
        agree(bytes, name);
        harness::check_chunking(&CodexParser::new(), bytes, 1)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        harness::check_prefixes(&CodexParser::new(), bytes, 1)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        harness::check_byte_at_a_time(CodexParser::new(), bytes, true)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        accepted += reference(bytes).is_ok() as usize;
    }
    // Scenarios that fail only when applied still parse; the ones Codex's parser rejects
    // (an empty patch, an empty update hunk) do not.
    assert!(accepted >= 20 && accepted < scenarios.len(), "{accepted}");
}

#[test]
fn corpus_agrees_with_the_reference() {
    for entry in std::fs::read_dir("corpora/apply_patch").unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        agree(&bytes, &path.display().to_string());
        refusals_are_final(&bytes, &path.display().to_string());
    }
}

#[test]
fn generated_texts_agree_with_the_reference() {
    // APPLY_PATCH_CASES and APPLY_PATCH_SEED scale the run for a longer local search.
    let cases: usize = std::env::var("APPLY_PATCH_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    let seed: u64 = std::env::var("APPLY_PATCH_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x51f15e3b);
    let mut rng = Rng(seed);
    let mut complete = 0;
    for case in 0..cases {
        let text = if rng.chance(50) {
            gen::codex_text(&mut rng)
        } else {
            gen::valid_patch(&mut rng, false)
        };
        let text = if rng.chance(40) {
            gen::mutate(&mut rng, &text)
        } else {
            text
        };
        agree(&text, &format!("case {case}"));
        if case % 5 == 0 {
            refusals_are_final(&text, &format!("case {case}"));
            harness::check_byte_at_a_time(CodexParser::new(), &text, true)
                .unwrap_or_else(|e| panic!("case {case}: {e}"));
            harness::check_chunking(&CodexParser::new(), &text, 1)
                .unwrap_or_else(|e| panic!("case {case}: {e}"));
        }
        complete += reference(&text).is_ok() as usize;
    }
    assert!(complete > cases / 10, "{complete}");
}

#[test]
fn lenient_forms() {
    let accepted: &[&[u8]] = &[
        b"*** Begin Patch\n*** End Patch",
        b"\n\n  *** Begin Patch  \r\n*** Add File: a\n  *** End Patch  \n\n",
        b"*** Begin Patch\r\n*** Update File: a\r\n@@\r\n-x\r\n+y\r\n*** End Patch\r\n",
        b"<<'EOF'\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF\n",
        b"*** Begin Patch\n*** Update File: a\n x\n\n+y\n*** End of File\n\n*** End Patch",
        b"*** Begin Patch\n*** Environment ID: e1\n*** Delete File: a\n*** End Patch",
        b"*** Begin Patch\n*** Update File: a\n@@\n x\n *** End Patch\n*** End Patch",
    ];
    for &text in accepted {
        assert!(
            reference(text).is_ok(),
            "{:?}",
            String::from_utf8_lossy(text)
        );
        assert_eq!(
            ours(text).1,
            Verdict::Complete,
            "{:?}",
            String::from_utf8_lossy(text)
        );
    }
    let refused: &[(&[u8], &str)] = &[
        (
            b"*** Begin Patch\n*** Update File: a\n*** End Patch",
            "empty_update",
        ),
        (
            b"*** Begin Patch\n*** Update File: a\n@@\n@@\n-x\n*** End Patch",
            "bad_context_marker",
        ),
        (
            b"*** Begin Patch\n*** Update File: a\n@@foo\n-x\n*** End Patch",
            "bad_context_marker",
        ),
        (
            b"*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch",
            "empty_update",
        ),
        (
            b"*** Begin Patch\n*** Delete File: a\n*** End Patch\nmore",
            "trailing_data",
        ),
        (
            b"*** Begin Patch\n*** Add File: a\n+\xff\n*** End Patch",
            "invalid_utf8",
        ),
    ];
    for &(text, kind) in refused {
        assert!(reference(text).is_err());
        match ours(text).1 {
            Verdict::Error(e) => assert_eq!(
                frontier::ErrorKind::as_str(e.kind),
                kind,
                "{:?}",
                String::from_utf8_lossy(text)
            ),
            v => panic!("{:?}: {v:?}", String::from_utf8_lossy(text)),
        }
    }
}
