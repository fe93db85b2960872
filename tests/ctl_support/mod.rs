//! The corpus driver the CTL corpus suites share: the files of a corpus folder (`valid`,
//! `truncated`, `invalid`), the verdict each folder promises, the contract checks run on every
//! file, and the snapshot an event stream is recorded as. The `insta` assertion itself stays in
//! each suite, so that its snapshots keep their file's name.

#![allow(dead_code)] // each suite uses the part it needs

use std::path::{Path, PathBuf};

use frontier::contract::ErrorKind;
use frontier::ctl::CtlParser;
use frontier::harness::{self, Transcript};

/// The files of the corpus at `dir` (below the crate root), sorted; at least 20 of them.
pub fn corpus(dir: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files = Vec::new();
    for folder in ["valid", "truncated", "invalid"] {
        for entry in std::fs::read_dir(root.join(folder)).unwrap() {
            files.push(entry.unwrap().path());
        }
    }
    files.sort();
    assert!(files.len() >= 20, "the corpus went missing");
    files
}

/// The name of the folder `path` stands in.
fn folder(path: &Path) -> &str {
    path.parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
}

/// The verdict the folder of `path` promises.
pub fn expected_verdict(path: &Path) -> &'static str {
    match folder(path) {
        "valid" => "complete",
        "truncated" => "incomplete",
        _ => "error",
    }
}

/// The snapshot name of a corpus file: `FOLDER__STEM`.
pub fn snapshot_name(path: &Path) -> String {
    format!(
        "{}__{}",
        folder(path),
        path.file_stem().unwrap().to_str().unwrap()
    )
}

/// Every chunking of every file gives the same transcript, with the verdict its folder
/// promises.
pub fn every_chunking_gives_the_same_transcript(parser: &CtlParser, files: &[PathBuf]) {
    for path in files {
        let input = std::fs::read(path).unwrap();
        let whole = harness::check_chunking(parser, &input, 1)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(
            whole.outcome.verdict.as_str(),
            expected_verdict(path),
            "{}",
            path.display()
        );
        for size in [2, 3, 7, 64] {
            assert_eq!(harness::run(parser.clone(), &input, Some(size)), whole);
        }
    }
}

/// Every prefix of every file is a stream of its own.
pub fn every_prefix_is_a_stream_of_its_own(parser: &CtlParser, files: &[PathBuf]) {
    for path in files {
        let input = std::fs::read(path).unwrap();
        harness::check_prefixes(parser, &input, 1)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

/// `allowed()` is exact for every next byte of every file.
pub fn allowed_is_exact_for_every_next_byte(parser: &CtlParser, files: &[PathBuf]) {
    for path in files {
        let input = std::fs::read(path).unwrap();
        harness::check_byte_at_a_time(parser.clone(), &input, true)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

/// What a snapshot records of a transcript. `unclosed` is recorded only by the suites whose
/// snapshots carry it (`Some(None)` is written as `null`; `None` leaves the field out).
#[derive(serde::Serialize)]
pub struct Snapshot<'a> {
    verdict: &'static str,
    consumed: u64,
    confirmed: u64,
    error: Option<(u64, u8, &'static str)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unclosed: Option<Option<String>>,
    events: &'a [frontier::event::Record],
}

/// The snapshot of `t`, without the unclosed construct.
pub fn snapshot<K: ErrorKind>(t: &Transcript<K>) -> Snapshot<'_> {
    Snapshot {
        verdict: t.outcome.verdict.as_str(),
        consumed: t.outcome.consumed,
        confirmed: t.outcome.confirmed,
        error: t
            .outcome
            .verdict
            .error()
            .map(|e| (e.offset, e.byte, e.kind.as_str())),
        unclosed: None,
        events: &t.records,
    }
}

/// The snapshot of `t` with the unclosed construct (`null` when there is none).
pub fn snapshot_with_unclosed<K: ErrorKind>(t: &Transcript<K>) -> Snapshot<'_> {
    Snapshot {
        unclosed: Some(t.outcome.verdict.unclosed().map(|u| u.to_string())),
        ..snapshot(t)
    }
}
