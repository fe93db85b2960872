//! The unified-diff engine on units built by hand: git apply's offset search and anchoring,
//! fuzz, `-p`, new, deleted and renamed files, modes, missing newlines, binary patches,
//! atomicity and streaming.

mod apply_support;

use apply_support::{read, workspace};
use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;

use frontier::apply::udiff::apply_file_patches;
use frontier::apply::{DiffOptions, DiffSession, ErrorKind, Workspace};
use frontier::udiff::units::{
    Binary, BinaryBlock, BinaryKind, FileHeader, FilePatch, Hunk, HunkLine, LineKind,
};

/// A hunk from lines written as in a diff body (`' '`, `-`, `+`; a trailing `$` means "no
/// newline at end of file").
fn hunk(old_start: u64, new_start: u64, body: &[&str]) -> Hunk {
    let lines: Vec<HunkLine> = body
        .iter()
        .map(|l| {
            let (kind, rest) = match l.as_bytes()[0] {
                b' ' => (LineKind::Context, &l[1..]),
                b'-' => (LineKind::Remove, &l[1..]),
                b'+' => (LineKind::Add, &l[1..]),
                _ => panic!("bad test line {l}"),
            };
            let (content, no_newline) = match rest.strip_suffix('$') {
                Some(c) => (c, true),
                None => (rest, false),
            };
            HunkLine {
                kind,
                content: content.as_bytes().to_vec(),
                no_newline,
            }
        })
        .collect();
    let old_count = lines.iter().filter(|l| l.kind != LineKind::Add).count() as u64;
    let new_count = lines.iter().filter(|l| l.kind != LineKind::Remove).count() as u64;
    Hunk {
        old_start,
        old_count,
        new_start,
        new_count,
        section: Vec::new(),
        lines,
        ranges_stated: true,
    }
}

fn git_patch(old: &str, new: &str, hunks: Vec<Hunk>) -> FilePatch {
    let path = |n: &str| {
        if n == "/dev/null" {
            n.as_bytes().to_vec()
        } else {
            format!("x/{n}").into_bytes()
        }
    };
    FilePatch {
        header: FileHeader {
            git_names: Some((
                format!("a/{old}").into_bytes(),
                format!("b/{new}").into_bytes(),
            )),
            old_path: Some(if old == "/dev/null" {
                path(old)
            } else {
                format!("a/{old}").into_bytes()
            }),
            new_path: Some(if new == "/dev/null" {
                path(new)
            } else {
                format!("b/{new}").into_bytes()
            }),
            ..FileHeader::default()
        },
        hunks,
    }
}

fn apply(
    dir: &tempfile::TempDir,
    options: DiffOptions,
    patches: &[FilePatch],
) -> Result<(), frontier::apply::ApplyError> {
    apply_file_patches(Workspace::new(dir.path()).unwrap(), options, patches).map(|_| ())
}

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("l{i}\n")).collect()
}

#[test]
fn hunks_are_found_at_an_offset_nearest_first() {
    // The hunk says line 3, the text is at line 8: found by the outward search.
    let dir = workspace(&[("f", &numbered(12))]);
    let p = git_patch("f", "f", vec![hunk(3, 3, &[" l7", "-l8", "+L8", " l9"])]);
    apply(&dir, DiffOptions::default(), &[p]).unwrap();
    assert_eq!(read(&dir, "f"), numbered(12).replace("l8\n", "L8\n"));

    // Two identical places: the one nearer the stated line wins.
    let text = "a\nb\nc\nx\nx\nx\na\nb\nc\n";
    let p = git_patch("f", "f", vec![hunk(6, 6, &[" a", "-b", "+B", " c"])]);
    let dir = workspace(&[("f", text)]);
    apply(&dir, DiffOptions::default(), &[p]).unwrap();
    assert_eq!(read(&dir, "f"), "a\nb\nc\nx\nx\nx\na\nB\nc\n");
}

#[test]
fn hunks_at_the_start_or_without_trailing_context_are_anchored() {
    // A hunk at line 1 must match at the start of the file.
    let dir = workspace(&[("f", "z\na\nb\nc\n")]);
    let p = git_patch("f", "f", vec![hunk(1, 1, &[" a", "-b", "+B", " c"])]);
    let e = apply(&dir, DiffOptions::default(), &[p]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::LinesNotFound);
    assert!(e.lines[0].starts_with("@@ -1,3 +1,3 @@"));
    // A hunk with no trailing context must match at the end.
    let dir = workspace(&[("f", "a\nb\nc\nd\n")]);
    let p = git_patch("f", "f", vec![hunk(2, 2, &[" a", "-b"])]);
    assert_eq!(
        apply(&dir, DiffOptions::default(), &[p]).unwrap_err().kind,
        ErrorKind::LinesNotFound
    );
    let p = git_patch("f", "f", vec![hunk(3, 3, &[" c", "-d"])]);
    apply(&dir, DiffOptions::default(), &[p]).unwrap();
    assert_eq!(read(&dir, "f"), "a\nb\nc\n");
}

#[test]
fn fuzz_drops_outer_context_when_asked() {
    let text = numbered(10).replace("l3\n", "changed\n");
    let p = git_patch(
        "f",
        "f",
        vec![hunk(3, 3, &[" l3", " l4", "-l5", "+L5", " l6", " l7"])],
    );
    refused_exactly_then_applied_with_fuzz_1(&text, p, &text.replace("l5\n", "L5\n"));
}

#[test]
fn fuzz_also_lifts_the_anchoring_of_hunks_without_context() {
    // A `-U0` hunk in the middle of a file: git refuses it (no trailing context means "at the
    // end"); with fuzz it is placed as GNU patch places it, and GNU ties a hunk to an end only
    // when one side has less context than the other, so it goes where its line is.
    let p = git_patch("f", "f", vec![hunk(5, 5, &["-l5", "+L5"])]);
    let text = numbered(10);
    refused_exactly_then_applied_with_fuzz_1(&text, p, &text.replace("l5\n", "L5\n"));
}

/// `p` on a file `f` holding `text`: refused without fuzz (nothing changed), then `want` with
/// fuzz 1.
fn refused_exactly_then_applied_with_fuzz_1(text: &str, p: FilePatch, want: &str) {
    let dir = workspace(&[("f", text)]);
    let e = apply(&dir, DiffOptions::default(), std::slice::from_ref(&p)).unwrap_err();
    assert_eq!(e.kind, ErrorKind::LinesNotFound);
    assert_eq!(read(&dir, "f"), text);
    let fuzz_1 = DiffOptions {
        strip: Some(1),
        fuzz: 1,
    };
    apply(&dir, fuzz_1, &[p]).unwrap();
    assert_eq!(read(&dir, "f"), want);
}

#[test]
fn strip_levels() {
    let dir = workspace(&[("deep/f", "a\n")]);
    let mut p = git_patch("f", "f", vec![hunk(1, 1, &["-a", "+b"])]);
    p.header.git_names = None;
    p.header.old_path = Some(b"x/y/deep/f".to_vec());
    p.header.new_path = Some(b"x/y/deep/f".to_vec());
    apply(
        &dir,
        DiffOptions {
            strip: Some(2),
            fuzz: 0,
        },
        std::slice::from_ref(&p),
    )
    .unwrap();
    assert_eq!(read(&dir, "deep/f"), "b\n");
    let e = apply(
        &dir,
        DiffOptions {
            strip: Some(5),
            fuzz: 0,
        },
        &[p],
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::BadName);
}

#[test]
fn new_deleted_renamed_and_mode_changes() {
    let dir = workspace(&[
        ("old.txt", "keep\n"),
        ("del.txt", "x\ny\n"),
        ("run.sh", "echo\n"),
    ]);
    let mut create = git_patch(
        "/dev/null",
        "sub/new.txt",
        vec![hunk(0, 1, &["+n1", "+n2$"])],
    );
    create.header.git_names = Some((b"a/sub/new.txt".to_vec(), b"b/sub/new.txt".to_vec()));
    create.header.new_file_mode = Some(0o100644);
    let mut delete = git_patch("del.txt", "/dev/null", vec![hunk(1, 0, &["-x", "-y"])]);
    delete.header.git_names = Some((b"a/del.txt".to_vec(), b"b/del.txt".to_vec()));
    delete.header.deleted_file_mode = Some(0o100644);
    let rename = FilePatch {
        header: FileHeader {
            git_names: Some((b"a/old.txt".to_vec(), b"b/moved/new.txt".to_vec())),
            rename_from: Some(b"old.txt".to_vec()),
            rename_to: Some(b"moved/new.txt".to_vec()),
            similarity: Some(100),
            ..FileHeader::default()
        },
        hunks: vec![],
    };
    let chmod = FilePatch {
        header: FileHeader {
            git_names: Some((b"a/run.sh".to_vec(), b"b/run.sh".to_vec())),
            old_mode: Some(0o100644),
            new_mode: Some(0o100755),
            ..FileHeader::default()
        },
        hunks: vec![],
    };
    apply(
        &dir,
        DiffOptions::default(),
        &[create.clone(), delete.clone(), rename, chmod],
    )
    .unwrap();
    assert_eq!(read(&dir, "sub/new.txt"), "n1\nn2");
    assert!(!dir.path().join("del.txt").exists());
    assert!(!dir.path().join("old.txt").exists());
    assert_eq!(read(&dir, "moved/new.txt"), "keep\n");
    let mode = fs::metadata(dir.path().join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);

    // Creating what exists, deleting what is not all there.
    assert_eq!(
        apply(&dir, DiffOptions::default(), &[create])
            .unwrap_err()
            .kind,
        ErrorKind::FileExists
    );
    fs::write(dir.path().join("del.txt"), "x\ny\nz\n").unwrap();
    let e = apply(&dir, DiffOptions::default(), &[delete]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::LinesNotFound);
}

#[test]
fn missing_newlines_must_agree() {
    let dir = workspace(&[("f", "a\nb")]);
    let wrong = git_patch("f", "f", vec![hunk(1, 1, &[" a", "-b", "+c"])]);
    assert!(apply(&dir, DiffOptions::default(), &[wrong]).is_err());
    let right = git_patch("f", "f", vec![hunk(1, 1, &[" a", "-b$", "+c"])]);
    apply(&dir, DiffOptions::default(), &[right]).unwrap();
    assert_eq!(read(&dir, "f"), "a\nc\n");
}

fn deflate(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[test]
fn binary_literal_and_delta_patches_apply_and_differ_is_refused() {
    let dir = workspace(&[]);
    fs::write(dir.path().join("b.bin"), b"\0\x01\x02hello").unwrap();
    let mut literal = git_patch("n.bin", "n.bin", vec![]);
    literal.header.new_file_mode = Some(0o100644);
    literal.header.binary = Some(Binary::Patch {
        forward: BinaryBlock {
            kind: BinaryKind::Literal,
            size: 3,
            deflated: deflate(b"\xff\0\xfe"),
        },
        reverse: None,
    });
    // b.bin (8 bytes) -> copy 0..3, insert "yo".
    let delta = [8u8, 5, 0x90, 3, 2, b'y', b'o'];
    let mut patch = git_patch("b.bin", "b.bin", vec![]);
    patch.header.binary = Some(Binary::Patch {
        forward: BinaryBlock {
            kind: BinaryKind::Delta,
            size: delta.len() as u64,
            deflated: deflate(&delta),
        },
        reverse: None,
    });
    apply(&dir, DiffOptions::default(), &[literal, patch.clone()]).unwrap();
    assert_eq!(fs::read(dir.path().join("n.bin")).unwrap(), b"\xff\0\xfe");
    assert_eq!(fs::read(dir.path().join("b.bin")).unwrap(), b"\0\x01\x02yo");
    // The same delta no longer fits the file.
    assert_eq!(
        apply(&dir, DiffOptions::default(), &[patch])
            .unwrap_err()
            .kind,
        ErrorKind::BinaryMismatch
    );
    let mut differ = git_patch("b.bin", "b.bin", vec![]);
    differ.header.binary = Some(Binary::Differ);
    assert_eq!(
        apply(&dir, DiffOptions::default(), &[differ])
            .unwrap_err()
            .kind,
        ErrorKind::BinaryWithoutData
    );
}

#[test]
fn a_failing_file_patch_leaves_every_file_as_it_was() {
    let dir = workspace(&[("a", "1\n2\n3\n"), ("b", "x\n")]);
    let ok = git_patch("a", "a", vec![hunk(1, 1, &[" 1", "-2", "+two", " 3"])]);
    let bad = git_patch("b", "b", vec![hunk(1, 1, &["-y", "+z"])]);
    let e = apply(&dir, DiffOptions::default(), &[ok, bad]).unwrap_err();
    assert_eq!(
        (e.kind, e.operation, e.path.as_str()),
        (ErrorKind::LinesNotFound, "patch", "b")
    );
    assert_eq!(read(&dir, "a"), "1\n2\n3\n");
}

#[test]
fn paths_outside_the_root_are_refused() {
    let dir = workspace(&[]);
    // With -p1 a leading slash is stripped like any component (as git does); with -p0 it stays.
    for (name, strip, kind) in [
        ("../../x", 1, ErrorKind::PathEscapesRoot),
        ("b/../../x", 1, ErrorKind::PathEscapesRoot),
        ("/etc/passwd", 0, ErrorKind::AbsolutePath),
    ] {
        let mut p = git_patch("/dev/null", "x", vec![hunk(0, 1, &["+evil"])]);
        p.header.git_names = None;
        p.header.new_path = Some(name.as_bytes().to_vec());
        let e = apply(
            &dir,
            DiffOptions {
                strip: Some(strip),
                fuzz: 0,
            },
            &[p],
        )
        .unwrap_err();
        assert_eq!(e.kind, kind, "{name}");
    }
}

#[test]
fn streaming_checks_each_hunk_as_it_arrives() {
    let dir = workspace(&[("f", &numbered(30))]);
    let p = git_patch(
        "f",
        "f",
        vec![
            hunk(2, 2, &[" l1", "-l2", "+L2", " l3"]),
            hunk(10, 10, &[" l10", "-nope", " l12"]),
            hunk(20, 20, &[" l19", "-l20", " l21"]),
        ],
    );
    let mut s = DiffSession::new(Workspace::new(dir.path()).unwrap(), DiffOptions::default());
    s.begin_file(&p.header).unwrap();
    s.hunk(&p.hunks[0]).unwrap();
    let e = s.hunk(&p.hunks[1]).unwrap_err();
    assert!(e.detail.contains("hunk #2"));
    assert_eq!(s.commit().unwrap_err(), e);
    assert_eq!(read(&dir, "f"), numbered(30));

    // Many hunks in order on a large file, streamed then completed.
    let big = numbered(5000);
    let dir = workspace(&[("f", &big)]);
    let hunks: Vec<Hunk> = (0..50)
        .map(|k| {
            let i = 10 + k * 100;
            hunk(
                i as u64,
                i as u64,
                &[
                    &format!(" l{i}"),
                    &format!("-l{}", i + 1),
                    &format!("+X{}", i + 1),
                    &format!(" l{}", i + 2),
                ],
            )
        })
        .collect();
    let p = git_patch("f", "f", hunks);
    let mut s = DiffSession::new(Workspace::new(dir.path()).unwrap(), DiffOptions::default());
    s.begin_file(&p.header).unwrap();
    for h in &p.hunks[..20] {
        s.hunk(h).unwrap();
    }
    s.file_patch(&p).unwrap();
    s.commit().unwrap();
    let mut expected = big.clone();
    for k in 0..50 {
        let i = 11 + k * 100;
        expected = expected.replace(&format!("\nl{i}\n"), &format!("\nX{i}\n"));
    }
    assert_eq!(read(&dir, "f"), expected);
}

#[test]
fn a_hunk_before_an_earlier_one_still_applies() {
    let dir = workspace(&[("f", &numbered(20))]);
    let p = git_patch(
        "f",
        "f",
        vec![
            hunk(15, 15, &[" l14", "-l15", "+L15", " l16"]),
            hunk(3, 3, &[" l2", "-l3", "+L3a", "+L3b", " l4"]),
        ],
    );
    apply(&dir, DiffOptions::default(), &[p]).unwrap();
    let expected = numbered(20)
        .replace("l15\n", "L15\n")
        .replace("\nl3\n", "\nL3a\nL3b\n");
    assert_eq!(read(&dir, "f"), expected);
}

#[test]
fn a_streamed_diff_fails_at_the_hunk_not_at_the_end() {
    use frontier::apply::apply_diff_stream;
    use frontier::udiff::UdiffParser;
    let dir = workspace(&[("a", "1\n2\n3\n"), ("b", "x\n")]);
    let mut diff = b"--- a/a\n+++ b/a\n@@ -1,3 +1,3 @@\n 1\n-TWO\n+2b\n 3\n".to_vec();
    let hunk_ends = diff.len();
    diff.extend_from_slice(b"--- a/b\n+++ b/b\n@@ -1 +1 @@\n-x\n+y\n");
    let mut known = None;
    let ws = Workspace::new(dir.path()).unwrap();
    let r = apply_diff_stream(
        UdiffParser::git(),
        &diff,
        1,
        ws,
        DiffOptions::default(),
        |e, at| {
            assert_eq!(e.path, "a");
            known = Some(at as usize);
        },
    );
    assert_eq!(r.unwrap_err().kind, ErrorKind::LinesNotFound);
    // A hunk is confirmed one byte late: at the first byte of the next line.
    assert_eq!(known, Some(hunk_ends + 1));
    assert_eq!(read(&dir, "a"), "1\n2\n3\n");
    assert_eq!(read(&dir, "b"), "x\n");

    // Recount mode applies a model-written diff whose counts are wrong.
    let sloppy = b"--- a/a\n+++ b/a\n@@ -1,9 +1,9 @@\n 1\n-2\n+two\n 3\n";
    let ws = Workspace::new(dir.path()).unwrap();
    apply_diff_stream(
        UdiffParser::recount(),
        sloppy,
        0,
        ws,
        DiffOptions::default(),
        |_, _| {},
    )
    .unwrap();
    assert_eq!(read(&dir, "a"), "1\ntwo\n3\n");
    let ws = Workspace::new(dir.path()).unwrap();
    let r = apply_diff_stream(
        UdiffParser::git(),
        sloppy,
        0,
        ws,
        DiffOptions::default(),
        |_, _| {},
    );
    assert_eq!(r.unwrap_err().kind, ErrorKind::Parse);
}

#[test]
fn symbolic_links_and_submodules_are_refused() {
    let dir = workspace(&[]);
    for mode in [0o120000, 0o160000] {
        let mut p = git_patch("/dev/null", "link", vec![hunk(0, 1, &["+/etc/passwd$"])]);
        p.header.git_names = Some((b"a/link".to_vec(), b"b/link".to_vec()));
        p.header.new_file_mode = Some(mode);
        let e = apply(&dir, DiffOptions::default(), &[p]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Unsupported);
    }
    assert!(!dir.path().join("link").exists());
}

mod arbitrary {
    //! Nothing panics, whatever the hunks and the file: the result is applied or an error.
    use super::*;
    use proptest::prelude::*;

    fn line() -> impl Strategy<Value = HunkLine> {
        (0..3u8, prop_oneof!["a", "b", "", "a\r"], any::<bool>()).prop_map(|(k, c, nl)| HunkLine {
            kind: [LineKind::Context, LineKind::Remove, LineKind::Add][k as usize],
            content: c.as_bytes().to_vec(),
            no_newline: nl,
        })
    }

    fn any_hunk() -> impl Strategy<Value = Hunk> {
        (0..20u64, 0..20u64, proptest::collection::vec(line(), 0..6)).prop_map(|(o, n, lines)| {
            Hunk {
                old_start: o,
                old_count: 9,
                new_start: n,
                new_count: 9,
                section: Vec::new(),
                lines,
                ranges_stated: true,
            }
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn never_panics(
            file in proptest::collection::vec(prop_oneof!["a\n", "b\n", "\n", "a"], 0..12),
            hunks in proptest::collection::vec(any_hunk(), 0..4),
            fuzz in 0usize..3,
            create in any::<bool>(),
        ) {
            let text: String = file.concat();
            let dir = workspace(&[("f", &text)]);
            let old = if create { "/dev/null" } else { "f" };
            let p = git_patch(old, "f", hunks);
            let r = apply(&dir, DiffOptions { strip: Some(1), fuzz }, &[p]);
            if r.is_err() {
                prop_assert_eq!(read(&dir, "f"), text);
            }
        }
    }
}
