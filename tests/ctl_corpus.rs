//! The contract on every CTL corpus file: chunking invariance, every prefix, exact allowed
//! sets, and snapshots of the event streams.

use std::path::{Path, PathBuf};

use frontier::contract::{ErrorKind, PushParser};
use frontier::ctl::CtlParser;
use frontier::harness::{self, Transcript};

fn corpus() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/ctl");
    let mut files = Vec::new();
    for dir in ["valid", "truncated", "invalid"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            files.push(entry.unwrap().path());
        }
    }
    files.sort();
    assert!(files.len() >= 20, "the corpus went missing");
    files
}

fn expected_verdict(path: &Path) -> &'static str {
    match path
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
    {
        "valid" => "complete",
        "truncated" => "incomplete",
        _ => "error",
    }
}

#[test]
fn every_chunking_gives_the_same_transcript() {
    for path in corpus() {
        let input = std::fs::read(&path).unwrap();
        let whole = harness::check_chunking(&CtlParser::default(), &input, 1)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(
            whole.outcome.verdict.as_str(),
            expected_verdict(&path),
            "{}",
            path.display()
        );
        for size in [2, 3, 7, 64] {
            assert_eq!(
                harness::run(CtlParser::default(), &input, Some(size)),
                whole
            );
        }
    }
}

#[test]
fn every_prefix_is_a_stream_of_its_own() {
    for path in corpus() {
        let input = std::fs::read(&path).unwrap();
        harness::check_prefixes(&CtlParser::default(), &input, 1)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

#[test]
fn allowed_is_exact_for_every_next_byte() {
    for path in corpus() {
        let input = std::fs::read(&path).unwrap();
        harness::check_byte_at_a_time(CtlParser::default(), &input, true)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

#[derive(serde::Serialize)]
struct Snapshot<'a> {
    verdict: &'static str,
    consumed: u64,
    confirmed: u64,
    error: Option<(u64, u8, &'static str)>,
    events: &'a [frontier::event::Record],
}

fn snapshot<K: ErrorKind>(t: &Transcript<K>) -> Snapshot<'_> {
    Snapshot {
        verdict: t.outcome.verdict.as_str(),
        consumed: t.outcome.consumed,
        confirmed: t.outcome.confirmed,
        error: t
            .outcome
            .verdict
            .error()
            .map(|e| (e.offset, e.byte, e.kind.as_str())),
        events: &t.records,
    }
}

#[test]
fn event_streams_match_their_snapshots() {
    for path in corpus() {
        let input = std::fs::read(&path).unwrap();
        let transcript = harness::run(CtlParser::default(), &input, Some(5));
        let name = format!(
            "{}__{}",
            path.parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_str()
                .unwrap(),
            path.file_stem().unwrap().to_str().unwrap()
        );
        insta::assert_json_snapshot!(name, snapshot(&transcript));
    }
}

#[test]
fn confirmed_calls_are_those_ended_before_the_cut() {
    // The truncated files are a complete four-call turn plus a cut fifth call.
    for path in corpus()
        .iter()
        .filter(|p| expected_verdict(p) == "incomplete")
    {
        let input = std::fs::read(path).unwrap();
        let mut assembler = frontier::ctl::CallAssembler::default();
        let mut calls = Vec::new();
        let mut parser = CtlParser::default();
        let _ = parser.push(&input, &mut |e| {
            calls.extend(assembler.on_event(&e).unwrap())
        });
        let expected = if path.ends_with("06_cut_after_digits.ctl") {
            0
        } else {
            4
        };
        assert_eq!(calls.len(), expected, "{}", path.display());
        assert!(calls.iter().all(|c| c.id != "c5"));
    }
}
