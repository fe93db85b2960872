//! Cases found by an audit of the engine against `spec/apply_patch.md`: whole patches, parsed
//! by codex mode and applied by the streaming engine, under both policies. Then the two
//! policies against each other on random files and patches: where the safe policy applies a
//! patch whose chunks all match exactly, with no pure addition and no blank line at the end of
//! the file (the documented differences), Codex's policy applies it too, with the same result;
//! where safe finds no place for a chunk, codex fails too.

mod apply_support;
#[path = "apply_patch_support/gen.rs"]
mod gen;

use std::fs;
use std::os::unix::fs::symlink;

use apply_support::{read, workspace};
use frontier::apply::{apply_patch_stream, Change, ErrorKind, Failure, Policy, Workspace};
use frontier::apply_patch::CodexParser;
use gen::Rng;

const POLICIES: [Policy; 2] = [Policy::Safe, Policy::Codex];

fn apply(dir: &tempfile::TempDir, policy: Policy, patch: &str) -> Result<Vec<Change>, Failure> {
    let ws = Workspace::new(dir.path()).unwrap();
    apply_patch_stream(
        CodexParser::new(),
        patch.as_bytes(),
        3,
        ws,
        policy,
        |_, _| {},
    )
}

/// "Reads go through the transaction": a later operation sees what an earlier one staged, even
/// when the two name the file differently (through a symbolic link to it, or to its directory,
/// inside the root), as Codex does, which writes each operation before reading for the next.
#[test]
fn later_operations_see_earlier_ones_through_links_inside_the_root() {
    let spellings = [
        ("link", "link"),
        ("real.txt", "link"),
        ("link", "real.txt"),
        ("d/f.txt", "dl/f.txt"),
        ("dl/f.txt", "d/f.txt"),
        ("dl/f.txt", "dl/f.txt"),
    ];
    for policy in POLICIES {
        for (first, second) in spellings {
            let dir = workspace(&[("real.txt", "a\nb\n"), ("d/f.txt", "a\nb\n")]);
            symlink("real.txt", dir.path().join("link")).unwrap();
            symlink("d", dir.path().join("dl")).unwrap();
            let patch = format!(
                "*** Begin Patch\n*** Update File: {first}\n@@\n-a\n+A\n\
                 *** Update File: {second}\n@@\n-b\n+B\n*** End Patch\n"
            );
            apply(&dir, policy, &patch).unwrap_or_else(|e| panic!("{first} {second}: {e:?}"));
            let target = if first.starts_with('d') {
                "d/f.txt"
            } else {
                "real.txt"
            };
            assert_eq!(
                read(&dir, target),
                "A\nB\n",
                "{policy:?} {first} then {second}"
            );
            assert!(fs::symlink_metadata(dir.path().join("link"))
                .unwrap()
                .file_type()
                .is_symlink());
        }
    }
}

/// Deleting a link removes the link (Codex's `remove_file`); adding the same path afterwards
/// creates a regular file there and leaves the link's old target alone.
#[test]
fn a_deleted_link_added_again_is_a_regular_file() {
    for policy in POLICIES {
        let dir = workspace(&[("real.txt", "real\n")]);
        symlink("real.txt", dir.path().join("link")).unwrap();
        let patch =
            "*** Begin Patch\n*** Delete File: link\n*** Add File: link\n+new\n*** End Patch\n";
        apply(&dir, policy, patch).unwrap();
        assert_eq!(read(&dir, "real.txt"), "real\n", "{policy:?}");
        let meta = fs::symlink_metadata(dir.path().join("link")).unwrap();
        assert!(meta.file_type().is_file(), "{policy:?}");
        assert_eq!(read(&dir, "link"), "new\n", "{policy:?}");
    }
}

/// Under safe, a move whose destination is the source under another spelling rewrites the file
/// in place, as a move to the very same path does, instead of deleting what it just wrote.
#[test]
fn a_move_to_another_spelling_of_the_same_file_keeps_it_under_safe() {
    let dir = workspace(&[("d/f.txt", "a\n")]);
    symlink("d", dir.path().join("dl")).unwrap();
    let patch = "*** Begin Patch\n*** Update File: dl/f.txt\n*** Move to: d/f.txt\n@@\n-a\n+b\n*** End Patch\n";
    apply(&dir, Policy::Safe, patch).unwrap();
    assert_eq!(read(&dir, "d/f.txt"), "b\n");
}

/// "Chunks are located in the order written, each search starting after the previous match":
/// a pure addition under a bare `@@` is appended at the end of the file, but it matched
/// nothing, so the next chunk is still searched from after the previous match (as Codex does).
#[test]
fn a_bare_pure_addition_does_not_move_the_search_to_the_end() {
    let patch = "*** Begin Patch\n*** Update File: f.txt\n@@\n+tail\n@@\n-b\n+B\n*** End Patch\n";
    for policy in POLICIES {
        let dir = workspace(&[("f.txt", "a\nb\nc\n")]);
        apply(&dir, policy, patch).unwrap_or_else(|e| panic!("{policy:?}: {e:?}"));
        assert_eq!(read(&dir, "f.txt"), "a\nB\nc\ntail\n", "{policy:?}");
    }
    // The search still starts after the previous match: here, after `b`.
    let patch = "*** Begin Patch\n*** Update File: f.txt\n@@\n-b\n+B\n@@\n+tail\n@@\n-a\n+A\n*** End Patch\n";
    for policy in POLICIES {
        let dir = workspace(&[("f.txt", "a\nb\nc\n")]);
        assert!(apply(&dir, policy, patch).is_err(), "{policy:?}");
        assert_eq!(read(&dir, "f.txt"), "a\nb\nc\n", "{policy:?}");
    }
}

/// The error kinds are documented per language (`bad_marker`: a `*** ` line that matches no
/// marker allowed here; `trailing_data`: anything after the end of the patch). A `*** ` line
/// that breaks off while it could still have been `*** End Patch` is a bad marker in codex mode
/// too, as in strict mode: nothing has ended yet.
#[test]
fn a_broken_marker_line_is_a_bad_marker_in_codex_mode() {
    use frontier::apply_patch::StrictParser;
    use frontier::contract::PushParser;
    fn kind(parser: &mut impl PushParser, text: &[u8]) -> (u64, &'static str) {
        let e = parser.push(text, &mut |_| {}).unwrap_err();
        (e.offset, frontier::ErrorKind::as_str(e.kind))
    }
    for text in [
        &b"*** Begin Patch\n*** Delete File: a\n*** Ex"[..],
        b"*** Begin Patch\n*** Delete File: a\n*** End Px",
        b"*** Begin Patch\n*** Add File: a\n+x\n*** Ex",
        b"*** Begin Patch\n*** Delete File: a\n*** Environment ID: e\n",
    ] {
        let what = String::from_utf8_lossy(text);
        let strict = kind(&mut StrictParser::default(), text);
        assert_eq!(strict.1, "bad_marker", "{what:?}");
        assert_eq!(kind(&mut CodexParser::new(), text), strict, "{what:?}");
    }
    // After the closing line, it is trailing data.
    for text in [
        &b"*** Begin Patch\n*** Delete File: a\n*** End Patchx"[..],
        b"*** Begin Patch\n*** Delete File: a\n*** End Patch\nmore",
    ] {
        let e = CodexParser::new().push(text, &mut |_| {}).unwrap_err();
        assert_eq!(frontier::ErrorKind::as_str(e.kind), "trailing_data");
    }
}

/// `patch` applied to a workspace holding `f.txt` = `file`: the file after it, or the kind of
/// the failure.
fn run(file: &str, patch: &str, policy: Policy) -> Result<String, ErrorKind> {
    let dir = workspace(&[("f.txt", file)]);
    apply(&dir, policy, patch).map_err(|f| f.error.kind)?;
    Ok(read(&dir, "f.txt"))
}

#[test]
fn safe_and_codex_agree_where_safe_applies() {
    let mut rng = Rng(0x5afe_c0de);
    let words = ["a", "b", "c", "x", "fn f()", "}"];
    let (mut agreed, mut refused) = (0, 0);
    for case in 0..3000 {
        let n = 1 + rng.below(12);
        let lines: Vec<&str> = (0..n).map(|_| rng.pick(&words)).collect();
        let file: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let mut patch = String::from("*** Begin Patch\n*** Update File: f.txt\n");
        let mut at = 0;
        for _ in 0..1 + rng.below(3) {
            if at >= n {
                break;
            }
            let start = at + rng.below(n - at);
            let len = 1 + rng.below((n - start).min(3));
            if rng.chance(30) {
                patch += &format!("@@ {}\n", lines[start.saturating_sub(1)]);
            } else {
                patch += "@@\n";
            }
            for (k, l) in lines[start..start + len].iter().enumerate() {
                match (k, rng.below(3)) {
                    (0, _) | (_, 0) => patch += &format!("-{l}\n"),
                    _ => patch += &format!(" {l}\n"),
                }
            }
            patch += &format!("+new{case}\n");
            at = start + len;
        }
        patch += "*** End Patch\n";
        let safe = run(&file, &patch, Policy::Safe);
        let codex = run(&file, &patch, Policy::Codex);
        match safe {
            Ok(text) => {
                assert_eq!(codex, Ok(text), "case {case}: {file:?}\n{patch}");
                agreed += 1;
            }
            Err(ErrorKind::LinesNotFound | ErrorKind::ContextNotFound) => {
                assert!(codex.is_err(), "case {case}: {file:?}\n{patch}");
                refused += 1;
            }
            Err(_) => {}
        }
    }
    assert!(agreed > 300 && refused > 10, "{agreed} {refused}");
}
