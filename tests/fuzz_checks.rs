//! The fuzz targets' checks (`frontier::harness::check_contract`) over every corpus file,
//! with several chunkings, so that CI exercises what the fuzzers check.

use std::path::{Path, PathBuf};

use frontier::ctl::{CtlMode, CtlParser, Limits};
use frontier::harness::check_contract;

fn files(dir: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_none_or(|e| e != "md") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join(dir), &mut out);
    out.sort();
    out
}

/// Cut patterns: none, one in the middle, and a few uneven ones.
fn cut_patterns(len: usize) -> Vec<Vec<usize>> {
    vec![
        vec![],
        vec![len / 2],
        vec![1, len / 3, len / 3 + 1, len.saturating_sub(1)],
    ]
}

#[test]
fn ctl_corpus_under_the_fuzz_checks() {
    for path in files("corpora/ctl") {
        let input = std::fs::read(&path).unwrap();
        for limits in [
            Limits::default(),
            Limits {
                max_line: 16,
                max_arg: 64,
            },
        ] {
            for cuts in cut_patterns(input.len()) {
                for mode in [CtlMode::Strict, CtlMode::Extended] {
                    check_contract(&CtlParser::with_mode(limits, mode), &input, &cuts)
                        .unwrap_or_else(|e| panic!("{} ({mode:?}): {e}", path.display()));
                }
            }
        }
    }
}

#[test]
fn apply_patch_corpus_under_the_fuzz_checks() {
    use frontier::apply_patch::{CodexParser, StrictOptions, StrictParser};
    let mut inputs = files("corpora/apply_patch");
    inputs.extend(
        files("tests/conformance/codex-apply-patch")
            .into_iter()
            .filter(|p| p.ends_with("patch.txt")),
    );
    assert!(inputs.len() > 20);
    for path in inputs {
        let input = std::fs::read(&path).unwrap();
        for cuts in cut_patterns(input.len()) {
            for environment in [false, true] {
                check_contract(
                    &StrictParser::new(StrictOptions { environment }),
                    &input,
                    &cuts,
                )
                .unwrap_or_else(|e| panic!("strict {}: {e}", path.display()));
            }
            check_contract(&CodexParser::new(), &input, &cuts)
                .unwrap_or_else(|e| panic!("codex {}: {e}", path.display()));
        }
    }
}

#[test]
fn udiff_corpus_under_the_fuzz_checks() {
    use frontier::udiff::{Limits, Mode, UdiffParser};
    let inputs: Vec<_> = files("corpora/udiff")
        .into_iter()
        .filter(|p| p.extension().is_none_or(|e| e != "sh"))
        .collect();
    assert!(inputs.len() > 10);
    for path in inputs {
        let input = std::fs::read(&path).unwrap();
        for cuts in cut_patterns(input.len()) {
            for mode in [Mode::Strict, Mode::Git, Mode::Recount] {
                let parser = UdiffParser::new(
                    mode,
                    Limits {
                        max_line: Limits::MIN_MAX_LINE,
                    },
                );
                check_contract(&parser, &input, &cuts)
                    .unwrap_or_else(|e| panic!("{mode:?} {}: {e}", path.display()));
            }
        }
    }
}
