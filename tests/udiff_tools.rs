//! Against the real tools: diffs written by `git diff`, `git log -p` and `diff -u` parse
//! completely, with exactly the file patches and line counts that git itself reports
//! (`--numstat`), and hunk bodies that match the files they were made from.

use std::path::Path;
use std::process::Command;

use frontier::contract::{PushParser, Verdict};
use frontier::udiff::units::{FilePatch, LineKind};
use frontier::udiff::{parse_all, Limits, Mode, UdiffParser};

fn have_git() -> bool {
    let ok = Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("note: git is not installed; skipping");
    }
    ok
}

fn run(dir: &Path, program: &str, args: &[&str]) -> Vec<u8> {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap_or_else(|e| panic!("{program} {args:?}: {e}"));
    // `diff` exits 1 when the inputs differ.
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `(added, removed)` per file patch, as `--numstat` prints them (binary: 0, 0).
fn numstat(text: &[u8]) -> Vec<(u64, u64)> {
    String::from_utf8_lossy(text)
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let mut parts = l.split('\t');
            let a = parts.next().unwrap().parse().unwrap_or(0);
            let r = parts.next().unwrap().parse().unwrap_or(0);
            (a, r)
        })
        .collect()
}

fn counts(files: &[FilePatch]) -> Vec<(u64, u64)> {
    files
        .iter()
        .map(|f| {
            let lines = f.hunks.iter().flat_map(|h| &h.lines);
            let added = lines.clone().filter(|l| l.kind == LineKind::Add).count() as u64;
            let removed = lines.filter(|l| l.kind == LineKind::Remove).count() as u64;
            (added, removed)
        })
        .collect()
}

fn parse(mode: Mode, input: &[u8]) -> Vec<FilePatch> {
    let (files, outcome) = parse_all(UdiffParser::new(mode, Limits::default()), input);
    assert_eq!(outcome.verdict, Verdict::Complete, "{mode:?}: {outcome:?}");
    assert_eq!(outcome.consumed, input.len() as u64);
    assert_eq!(outcome.confirmed, input.len() as u64);
    files
}

/// A small deterministic generator, so that failures reproduce.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

fn random_file(rng: &mut Lcg) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..rng.next(60) {
        match rng.next(12) {
            0 => {}
            1 => out.extend_from_slice(b"    "),
            2 => out.extend_from_slice(b"--- looks like a header\r"),
            3 => out.extend_from_slice(b"@@ -1 +1 @@"),
            4 => out.extend_from_slice(&[0xff, 0xfe, b'x']),
            5 => out.extend_from_slice(b"-- an SQL comment"),
            6 => out.extend_from_slice(b"++ counter"),
            _ => out.extend_from_slice(format!("line {} of {}", rng.next(8), i).as_bytes()),
        }
        out.push(b'\n');
    }
    if rng.next(4) == 0 && !out.is_empty() {
        out.pop(); // no final newline
    }
    out
}

fn edit(rng: &mut Lcg, file: &[u8]) -> Vec<u8> {
    let mut lines: Vec<Vec<u8>> = file
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    for _ in 0..rng.next(6) {
        let at = rng.next(lines.len() as u64 + 1) as usize;
        match rng.next(3) {
            0 if at < lines.len() => {
                lines.remove(at);
            }
            1 if at < lines.len() => {
                lines[at] = format!("changed {}\n", rng.next(100)).into_bytes()
            }
            _ => lines.insert(at, format!("inserted {}\n", rng.next(100)).into_bytes()),
        }
    }
    let mut out = lines.concat();
    if rng.next(5) == 0 {
        if out.last() == Some(&b'\n') {
            out.pop();
        } else {
            out.push(b'\n');
        }
    }
    out
}

/// The lines of `text` as a diff shows them: content without LF, and whether the LF is missing.
fn file_lines(text: &[u8]) -> Vec<(&[u8], bool)> {
    text.split_inclusive(|&b| b == b'\n')
        .map(|l| match l.strip_suffix(b"\n") {
            Some(c) => (c, false),
            None => (l, true),
        })
        .collect()
}

/// Each hunk's old side is the old file's lines at `old_start`, its new side the new file's.
fn check_hunks_against_files(patch: &FilePatch, old: &[u8], new: &[u8]) {
    let (old, new) = (file_lines(old), file_lines(new));
    for h in &patch.hunks {
        let side = |keep: LineKind| -> Vec<(&[u8], bool)> {
            h.lines
                .iter()
                .filter(|l| l.kind == LineKind::Context || l.kind == keep)
                .map(|l| (&l.content[..], l.no_newline))
                .collect()
        };
        let at = |start: u64, count: u64| {
            (start.max(1) - 1) as usize..(start.max(1) - 1 + count) as usize
        };
        let old_side = side(LineKind::Remove);
        let new_side = side(LineKind::Add);
        assert_eq!(old_side.len() as u64, h.old_count);
        assert_eq!(new_side.len() as u64, h.new_count);
        if h.old_count > 0 {
            assert_eq!(
                old_side,
                old[at(h.old_start, h.old_count)].to_vec(),
                "old side of {h:?}"
            );
        }
        if h.new_count > 0 {
            assert_eq!(
                new_side,
                new[at(h.new_start, h.new_count)].to_vec(),
                "new side of {h:?}"
            );
        }
    }
}

#[test]
fn git_diff_of_generated_edits_agrees_with_numstat_and_the_files() {
    if !have_git() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    run(dir, "git", &["init", "-q"]);
    let mut rng = Lcg(42);
    for round in 0..12 {
        let names: Vec<String> = (0..4).map(|i| format!("f{i}.txt")).collect();
        let olds: Vec<Vec<u8>> = names.iter().map(|_| random_file(&mut rng)).collect();
        for (n, c) in names.iter().zip(&olds) {
            std::fs::write(dir.join(n), c).unwrap();
        }
        run(dir, "git", &["add", "-A"]);
        run(dir, "git", &["commit", "-qm", "base", "--allow-empty"]);
        let news: Vec<Vec<u8>> = olds.iter().map(|o| edit(&mut rng, o)).collect();
        for (n, c) in names.iter().zip(&news) {
            std::fs::write(dir.join(n), c).unwrap();
        }
        let diff = run(dir, "git", &["diff", "--text"]);
        let stat = numstat(&run(dir, "git", &["diff", "--text", "--numstat"]));
        for mode in [Mode::Strict, Mode::Git, Mode::Recount] {
            let files = parse(mode, &diff);
            assert_eq!(counts(&files), stat, "round {round} {mode:?}");
            let hunks = diff
                .split(|&b| b == b'\n')
                .filter(|l| l.starts_with(b"@@ -"))
                .count();
            assert_eq!(files.iter().map(|f| f.hunks.len()).sum::<usize>(), hunks);
            for f in &files {
                let name =
                    String::from_utf8_lossy(&f.header.new_path.as_ref().unwrap()[2..]).into_owned();
                let i = names.iter().position(|n| *n == name).unwrap();
                check_hunks_against_files(f, &olds[i], &news[i]);
            }
        }
    }
}

#[test]
fn diff_u_output_agrees_with_git_apply_numstat() {
    if !have_git() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut rng = Lcg(7);
    for round in 0..12 {
        let old = random_file(&mut rng);
        let new = edit(&mut rng, &old);
        std::fs::write(dir.join("old.txt"), &old).unwrap();
        std::fs::write(dir.join("new.txt"), &new).unwrap();
        let diff = run(dir, "diff", &["-u", "--text", "old.txt", "new.txt"]);
        std::fs::write(dir.join("p.diff"), &diff).unwrap();
        let files = parse(Mode::Git, &diff);
        if diff.is_empty() {
            assert!(files.is_empty());
            continue;
        }
        let stat = numstat(&run(dir, "git", &["apply", "--numstat", "p.diff"]));
        assert_eq!(counts(&files), stat, "round {round}");
        assert_eq!(parse(Mode::Strict, &diff), files);
        check_hunks_against_files(&files[0], &old, &new);
        assert_eq!(
            files[0].header.old_path.as_deref(),
            Some(&b"old.txt"[..]),
            "timestamp cut"
        );
    }
}

#[test]
fn the_projects_own_git_log_parses_completely() {
    if !have_git() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let log = run(root, "git", &["log", "-p", "--no-color", "--no-ext-diff"]);
    let stat = numstat(&run(
        root,
        "git",
        &["log", "--numstat", "--format=", "--no-color"],
    ));
    let files = parse(Mode::Git, &log);
    assert!(!files.is_empty());
    assert_eq!(counts(&files), stat);
    let recounted = parse(Mode::Recount, &log);
    assert_eq!(counts(&recounted), stat);
}

#[test]
fn the_projects_own_git_log_is_chunking_invariant() {
    if !have_git() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut log = run(root, "git", &["log", "-p", "--no-color", "--no-ext-diff"]);
    // At most 1 MiB, so that the test stays fast as the history grows (a cut is a fine input).
    log.truncate(1 << 20);
    // Byte at a time with the per-prefix checks (pending within K, accepting agrees with
    // finish), and 64 two-way splits.
    let parser = UdiffParser::new(Mode::Git, Limits::default());
    frontier::harness::check_chunking(&parser, &log, (log.len() / 64).max(1)).unwrap();
}

#[test]
fn git_format_patch_mails_parse_in_git_mode_as_git_apply_reads_them() {
    if !have_git() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    run(dir, "git", &["init", "-q"]);
    let mut rng = Lcg(7);
    let names: Vec<String> = (0..3).map(|i| format!("f{i}.txt")).collect();
    for (round, message) in ["base", "first edit", "second edit"].iter().enumerate() {
        for n in &names {
            let old = std::fs::read(dir.join(n)).unwrap_or_else(|_| random_file(&mut rng));
            let new = if round == 0 {
                old
            } else {
                edit(&mut rng, &old)
            };
            std::fs::write(dir.join(n), new).unwrap();
        }
        run(dir, "git", &["add", "-A"]);
        run(dir, "git", &["commit", "-qm", message, "--allow-empty"]);
    }
    // Two mails in one mbox, each ending with the `-- ` signature after its last hunk.
    let mbox = run(dir, "git", &["format-patch", "--stdout", "HEAD~2"]);
    assert!(
        mbox.windows(4).any(|w| w == b"\n-- "),
        "format-patch writes a signature"
    );
    let stat = numstat(&run(
        dir,
        "git",
        &["log", "-2", "--reverse", "--format=", "--numstat"],
    ));
    let files = parse(Mode::Git, &mbox);
    assert_eq!(counts(&files), stat);
    // Strict mode has no garbage: the mail's headers are refused.
    let mut parser = UdiffParser::new(Mode::Strict, Limits::default());
    assert_eq!(
        parser.push(&mbox, &mut |_| {}).map_err(|e| e.offset),
        Err(0)
    );
}
