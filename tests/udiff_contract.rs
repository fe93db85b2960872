//! The confirmation contract on every corpus file in every mode: chunking invariance (whole,
//! byte at a time, every 2-way split), every prefix from scratch, and `allowed()` checked
//! against all 256 bytes at every prefix.

use std::path::PathBuf;

use frontier::harness::{check_byte_at_a_time, check_chunking, check_prefixes};
use frontier::udiff::{Limits, Mode, UdiffParser};

fn corpus() -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpora/udiff");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "diff"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "corpus missing: {files:?}");
    files
        .into_iter()
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect()
}

const MODES: [Mode; 3] = [Mode::Strict, Mode::Git, Mode::Recount];

/// Stride so that the quadratic checks stay within a few million bytes per file.
fn stride(len: usize) -> usize {
    (len / 1500).max(1)
}

#[test]
fn chunking_invariance_on_the_corpus() {
    for (name, input) in corpus() {
        for mode in MODES {
            let parser = UdiffParser::new(mode, Limits::default());
            check_chunking(&parser, &input, stride(input.len()))
                .unwrap_or_else(|e| panic!("{name} {mode:?}: {e}"));
        }
    }
}

#[test]
fn every_prefix_on_the_corpus() {
    for (name, input) in corpus() {
        for mode in MODES {
            let parser = UdiffParser::new(mode, Limits::default());
            check_prefixes(&parser, &input, stride(input.len()))
                .unwrap_or_else(|e| panic!("{name} {mode:?}: {e}"));
        }
    }
}

#[test]
fn allowed_is_exact_on_the_corpus() {
    for (name, input) in corpus() {
        for mode in MODES {
            let parser = UdiffParser::new(mode, Limits::default());
            check_byte_at_a_time(parser, &input, true)
                .unwrap_or_else(|e| panic!("{name} {mode:?}: {e}"));
        }
    }
}

#[test]
fn allowed_is_exact_at_the_smallest_line_limit() {
    // Long `---` lines in git and recount mode are demoted, in strict mode refused.
    let long = "x".repeat(300);
    let inputs = [
        format!("--- a/{long}\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n"),
        format!("--- a/f\n+++ b/{long}\n@@ -1 +1 @@\n-a\n+b\n"),
        format!("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n--- {long}\n+++ x\n"),
        format!("diff --git a/{long} b/x\n"),
        format!("--- a/f\n+++ b/f\n@@ -1 +1 @@ {long}\n-a\n+b\n"),
    ];
    for input in &inputs {
        for mode in MODES {
            let parser = UdiffParser::new(mode, Limits { max_line: 64 });
            check_byte_at_a_time(parser.clone(), input.as_bytes(), true)
                .unwrap_or_else(|e| panic!("{mode:?} {input:?}: {e}"));
            check_chunking(&parser, input.as_bytes(), 7)
                .unwrap_or_else(|e| panic!("{mode:?} {input:?}: {e}"));
        }
    }
}
