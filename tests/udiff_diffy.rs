//! Differential test against diffy 0.5.2: the same inputs give the same file patches, hunk
//! ranges and lines.

use std::path::PathBuf;

use diffy::patch_set::{ParseOptions, PatchSet};
use diffy::Line;
use frontier::contract::Verdict;
use frontier::udiff::units::{FilePatch, LineKind};
use frontier::udiff::{parse_all, Mode, UdiffParser};

/// One hunk as both sides describe it: ranges, then lines as (side, bytes with their LF).
type Shape = ((u64, u64, u64, u64), Vec<(char, Vec<u8>)>);

fn ours(input: &[u8]) -> Vec<Option<Vec<Shape>>> {
    let (files, outcome) = parse_all(UdiffParser::git(), input);
    assert_eq!(
        outcome.verdict,
        Verdict::<frontier::udiff::UdiffErrorKind>::Complete
    );
    files.iter().map(shape).collect()
}

/// `None` for a binary file patch.
fn shape(f: &FilePatch) -> Option<Vec<Shape>> {
    if f.header.binary.is_some() {
        return None;
    }
    Some(
        f.hunks
            .iter()
            .map(|h| {
                let lines = h
                    .lines
                    .iter()
                    .map(|l| {
                        let side = match l.kind {
                            LineKind::Context => ' ',
                            LineKind::Remove => '-',
                            LineKind::Add => '+',
                        };
                        let mut bytes = l.content.clone();
                        if !l.no_newline {
                            bytes.push(b'\n');
                        }
                        (side, bytes)
                    })
                    .collect();
                ((h.old_start, h.old_count, h.new_start, h.new_count), lines)
            })
            .collect(),
    )
}

fn theirs(input: &[u8]) -> Vec<Option<Vec<Shape>>> {
    let opts = if input.windows(11).any(|w| w == b"diff --git ") {
        ParseOptions::gitdiff()
    } else {
        ParseOptions::unidiff()
    };
    PatchSet::parse_bytes(input, opts)
        .map(|p| {
            let p = p.unwrap_or_else(|e| panic!("diffy: {e}"));
            let text = p.patch().as_text()?;
            Some(
                text.hunks()
                    .iter()
                    .map(|h| {
                        let (o, n) = (h.old_range(), h.new_range());
                        let lines = h
                            .lines()
                            .iter()
                            .map(|l| match l {
                                Line::Context(t) => (' ', t.to_vec()),
                                Line::Delete(t) => ('-', t.to_vec()),
                                Line::Insert(t) => ('+', t.to_vec()),
                            })
                            .collect();
                        (
                            (
                                o.start() as u64,
                                o.len() as u64,
                                n.start() as u64,
                                n.len() as u64,
                            ),
                            lines,
                        )
                    })
                    .collect(),
            )
        })
        .collect()
}

fn corpus(name: &str) -> Vec<u8> {
    std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("corpora/udiff")
            .join(name),
    )
    .unwrap()
}

#[test]
fn same_file_patches_hunks_and_lines_as_diffy_on_the_corpus() {
    for name in [
        "git_basic.diff",
        "git_meta.diff",
        "git_no_newline.diff",
        "git_binary_differ.diff",
        "git_binary_patch.diff",
        "git_crlf.diff",
        "git_quoted.diff",
        "git_log.diff",
        "gnu_diff_u.diff",
        "gnu_diff_ru.diff",
        "model_empty_context.diff",
    ] {
        let input = corpus(name);
        let ours = ours(&input);
        let hunks: usize = ours.iter().flatten().map(Vec::len).sum();
        assert!(
            !ours.is_empty() && (hunks > 0 || name.contains("binary")),
            "{name}: nothing parsed"
        );
        assert_eq!(ours, theirs(&input), "{name}");
    }
}

#[test]
fn same_as_diffy_on_the_projects_git_log() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let Ok(out) = std::process::Command::new("git")
        .args(["log", "-p", "--no-color", "--no-ext-diff"])
        .current_dir(&root)
        .output()
    else {
        eprintln!("note: git is not installed; skipping");
        return;
    };
    let ours = ours(&out.stdout);
    assert!(!ours.is_empty());
    assert_eq!(ours, theirs(&out.stdout));
}

#[test]
fn recount_mode_agrees_with_diffy_on_correct_counts() {
    // With correct counts, recounting finds the same hunks.
    let input = corpus("git_basic.diff");
    let (files, _) = parse_all(UdiffParser::new(Mode::Recount, Default::default()), &input);
    let recounted: Vec<_> = files.iter().map(shape).collect();
    assert_eq!(recounted, theirs(&input));
}
