//! Against the real tools: edits made here, diffed with `git diff` and `diff -u`, applied by
//! frontier and by `git apply` / GNU `patch` give byte-identical trees (and the edited tree);
//! and the project's own history, re-applied commit by commit onto each parent, gives each
//! commit's tree.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use frontier::apply::{apply_diff_stream, DiffOptions, ErrorKind, Workspace};
use frontier::udiff::UdiffParser;

fn tool(dir: &Path, program: &str, args: &[&str]) -> Vec<u8> {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    // `diff` exits 1 when files differ.
    let ok = out.status.success() || (program == "diff" && out.status.code() == Some(1));
    assert!(
        ok,
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn git(dir: &Path, args: &[&str]) -> Vec<u8> {
    let mut all = vec![
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "-c",
        "core.autocrlf=false",
    ];
    all.extend_from_slice(args);
    tool(dir, "git", &all)
}

/// Path -> (content, executable), `.git` excluded.
type Snapshot = BTreeMap<String, (Vec<u8>, bool)>;

fn snapshot(root: &Path) -> Snapshot {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_name() == ".git" {
                continue;
            }
            let p = e.path();
            let meta = fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                let data = if meta.file_type().is_symlink() {
                    fs::read_link(&p)
                        .unwrap()
                        .to_string_lossy()
                        .as_bytes()
                        .to_vec()
                } else {
                    fs::read(&p).unwrap()
                };
                out.insert(rel, (data, meta.permissions().mode() & 0o100 != 0));
            }
        }
    }
    out
}

fn write(root: &Path, rel: &str, data: &[u8]) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, data).unwrap();
}

fn copy_tree(from: &Path, to: &Path) {
    for (rel, (data, exec)) in snapshot(from) {
        write(to, &rel, &data);
        if exec {
            fs::set_permissions(to.join(&rel), fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
}

#[test]
fn diff_run_with_epoch_dated_sides_creates_and_deletes_as_gnu_patch_does() {
    for seed in 30..36 {
        let (repo, base) = base_and_edit(seed);
        // Whole trees with `diff -ruN`: a file missing on one side is diffed against an empty
        // one dated the epoch, never `/dev/null`.
        let mut old = snapshot(base.path());
        let mut new = snapshot(repo.path());
        for t in [&mut old, &mut new] {
            t.retain(|k, (v, _)| !k.ends_with(".bin") && !v.is_empty());
        }
        // At least one creation and one deletion.
        new.insert("born/new.txt".into(), (b"a new file\n".to_vec(), false));
        let gone = old.keys().next().unwrap().clone();
        new.remove(&gone);
        let work = tempfile::tempdir().unwrap();
        let w = work.path();
        for (k, (v, _)) in &old {
            write(&w.join("a"), k, v);
        }
        for (k, (v, _)) in &new {
            write(&w.join("b"), k, v);
        }
        fs::create_dir_all(w.join("a")).unwrap();
        let diff = tool(w, "diff", &["-ruN", "a", "b"]);
        assert!(
            String::from_utf8_lossy(&diff).contains("\t1970-01-01 00:00:00"),
            "an epoch-dated side"
        );

        let (ours_tree, theirs_tree) = frontier_and_gnu_patch(&old, &diff, w);
        assert_eq!(ours_tree, theirs_tree, "seed {seed}");
        assert_eq!(ours_tree, contents(new.clone()), "seed {seed}");
    }
}

#[test]
fn a_traditional_diff_of_a_missing_file_with_no_old_lines_creates_it_as_git_apply_does() {
    let diff = b"--- a/born.txt\n+++ b/born.txt\n@@ -0,0 +1,2 @@\n+new\n+file\n";
    let ours = tempfile::tempdir().unwrap();
    let theirs = tempfile::tempdir().unwrap();
    git(theirs.path(), &["init", "-q"]);
    frontier_apply(ours.path(), diff, None);
    let patch_file = theirs.path().join("p.diff");
    fs::write(&patch_file, diff).unwrap();
    git(theirs.path(), &["apply", patch_file.to_str().unwrap()]);
    fs::remove_file(&patch_file).unwrap();
    assert_eq!(
        fs::read(ours.path().join("born.txt")).unwrap(),
        fs::read(theirs.path().join("born.txt")).unwrap()
    );
    // With old lines, or two hunks, it is a change to a file that is not there: refused.
    for diff in [
        &b"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"[..],
        b"--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+a\n@@ -5,0 +6 @@\n+b\n",
    ] {
        let ws = Workspace::new(ours.path()).unwrap();
        let options = DiffOptions {
            strip: Some(1),
            fuzz: 0,
        };
        let e = apply_diff_stream(UdiffParser::git(), diff, 7, ws, options, |_, _| {}).unwrap_err();
        assert!(e.to_string().contains("file_not_found"), "{e}");
        assert!(!ours.path().join("x").exists());
    }
}

/// A tree's contents, modes left out.
fn contents(t: Snapshot) -> BTreeMap<String, Vec<u8>> {
    t.into_iter().map(|(k, (v, _))| (k, v)).collect()
}

/// `diff` applied with `-p1` to two copies of `old`, by frontier and by GNU patch (the patch
/// file written in `scratch`): the two trees' contents.
fn frontier_and_gnu_patch(
    old: &Snapshot,
    diff: &[u8],
    scratch: &Path,
) -> (BTreeMap<String, Vec<u8>>, BTreeMap<String, Vec<u8>>) {
    let ours = tempfile::tempdir().unwrap();
    let theirs = tempfile::tempdir().unwrap();
    for (k, (v, _)) in old {
        write(ours.path(), k, v);
        write(theirs.path(), k, v);
    }
    frontier_apply(ours.path(), diff, Some(1));
    let patch_file = scratch.join("p.diff");
    fs::write(&patch_file, diff).unwrap();
    tool(
        theirs.path(),
        "patch",
        &["-s", "-p1", "-i", patch_file.to_str().unwrap()],
    );
    (
        contents(snapshot(ours.path())),
        contents(snapshot(theirs.path())),
    )
}

fn frontier_apply(root: &Path, diff: &[u8], strip: Option<usize>) {
    let ws = Workspace::new(root).unwrap();
    let options = DiffOptions { strip, fuzz: 0 };
    if let Err(e) = apply_diff_stream(UdiffParser::git(), diff, 4096, ws, options, |_, _| {}) {
        panic!(
            "frontier could not apply: {e}\n{}",
            String::from_utf8_lossy(diff)
        );
    }
}

/// A small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Text with many repeated lines, so that hunks have look-alikes elsewhere.
fn text(rng: &mut Rng, lines: usize) -> String {
    const WORDS: [&str; 6] = [
        "}",
        "",
        "    return x;",
        "fn f() {",
        "    let y = 2;",
        "// note",
    ];
    (0..lines)
        .map(|i| {
            if rng.below(4) == 0 {
                format!("line {i} {}\n", rng.next() % 1000)
            } else {
                format!("{}\n", WORDS[rng.below(WORDS.len())])
            }
        })
        .collect()
}

fn edit_text(rng: &mut Rng, s: &str) -> String {
    let mut lines: Vec<String> = s.lines().map(str::to_owned).collect();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(lines.len() + 1);
        match rng.below(3) {
            0 if at < lines.len() => {
                lines.remove(at);
            }
            1 if at < lines.len() => lines[at] = format!("changed {}", rng.next() % 100),
            _ => lines.insert(at, format!("inserted {}", rng.next() % 100)),
        }
    }
    let mut out: String = lines.iter().map(|l| format!("{l}\n")).collect();
    if rng.below(5) == 0 {
        out.pop();
    }
    out
}

/// A base tree in a fresh repository, then random edits of every kind git can express.
fn base_and_edit(seed: u64) -> (tempfile::TempDir, tempfile::TempDir) {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let repo = tempfile::tempdir().unwrap();
    let r = repo.path();
    git(r, &["init", "-q", "."]);
    for i in 0..6 {
        let n = 5 + rng.below(60);
        write(r, &format!("src/m{i}.rs"), text(&mut rng, n).as_bytes());
    }
    write(r, "crlf.txt", b"one\r\ntwo\r\nthree\r\n");
    write(r, "no_newline.txt", b"a\nb\nc");
    write(r, "gone.txt", b"to be deleted\n");
    write(r, "rename_me.txt", text(&mut rng, 30).as_bytes());
    write(r, "copy_me.txt", text(&mut rng, 40).as_bytes());
    write(r, "run.sh", b"#!/bin/sh\necho hi\n");
    let bin: Vec<u8> = (0..3000)
        .map(|i| ((i * 7 + seed as usize) % 251) as u8)
        .collect();
    write(r, "data.bin", &bin);
    git(r, &["add", "-A"]);
    git(r, &["commit", "-q", "-m", "base"]);
    let base = tempfile::tempdir().unwrap();
    copy_tree(r, base.path());

    for i in 0..6 {
        if rng.below(3) > 0 {
            let p = format!("src/m{i}.rs");
            let s = fs::read_to_string(r.join(&p)).unwrap();
            write(r, &p, edit_text(&mut rng, &s).as_bytes());
        }
    }
    write(r, "crlf.txt", b"one\r\nTWO\r\nthree\r\nfour\r\n");
    write(r, "no_newline.txt", b"a\nB\nc");
    fs::remove_file(r.join("gone.txt")).unwrap();
    let moved = fs::read_to_string(r.join("rename_me.txt")).unwrap();
    fs::remove_file(r.join("rename_me.txt")).unwrap();
    write(
        r,
        "moved/renamed.txt",
        edit_text(&mut rng, &moved).as_bytes(),
    );
    let original = fs::read_to_string(r.join("copy_me.txt")).unwrap();
    write(
        r,
        "copies/copied.txt",
        format!("{original}one more line\n").as_bytes(),
    );
    fs::set_permissions(r.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    let mut bin2 = bin.clone();
    bin2[100] ^= 0xff;
    bin2.extend_from_slice(b"tail");
    write(r, "data.bin", &bin2);
    write(r, "new/blob.bin", &[0, 1, 2, 3, 255, 0, 9]);
    write(r, "new/added.txt", b"fresh\nfile\n");
    write(r, "new/empty.txt", b"");
    (repo, base)
}

#[test]
fn git_diff_applied_by_frontier_and_git_apply_gives_the_same_tree() {
    for seed in 0..12 {
        let (repo, base) = base_and_edit(seed);
        let r = repo.path();
        git(r, &["add", "-A"]);
        let diff = git(
            r,
            &[
                "diff",
                "--cached",
                "--binary",
                "-M",
                "-C",
                "--find-copies-harder",
                "HEAD",
            ],
        );
        assert!(
            diff.windows(10).any(|w| w == b"copy from "),
            "the diff has a copy"
        );
        assert!(
            diff.windows(12).any(|w| w == b"rename from "),
            "the diff has a rename"
        );
        let expected = snapshot(r);

        let ours = tempfile::tempdir().unwrap();
        copy_tree(base.path(), ours.path());
        frontier_apply(ours.path(), &diff, None);

        let theirs = tempfile::tempdir().unwrap();
        copy_tree(base.path(), theirs.path());
        let scratch = tempfile::tempdir().unwrap();
        let patch_file = scratch.path().join("p.diff");
        fs::write(&patch_file, &diff).unwrap();
        git(theirs.path(), &["apply", patch_file.to_str().unwrap()]);

        let ours_tree = snapshot(ours.path());
        assert_eq!(ours_tree, snapshot(theirs.path()), "seed {seed}");
        assert_eq!(ours_tree, expected, "seed {seed}");
        // And it has really changed things.
        assert_ne!(ours_tree, snapshot(base.path()));
    }
}

#[test]
fn diff_u_applied_by_frontier_and_gnu_patch_gives_the_same_tree() {
    for seed in 20..30 {
        let (repo, base) = base_and_edit(seed);
        // `diff -u` is for text (leave the binary files out), and cannot express a new empty
        // file (`diff -u /dev/null empty` prints nothing).
        let mut old = snapshot(base.path());
        let mut new = snapshot(repo.path());
        for t in [&mut old, &mut new] {
            t.retain(|k, (v, _)| !k.ends_with(".bin") && !v.is_empty());
        }
        let work = tempfile::tempdir().unwrap();
        let w = work.path();
        for (k, (v, _)) in &old {
            write(&w.join("a"), k, v);
        }
        for (k, (v, _)) in &new {
            write(&w.join("b"), k, v);
        }
        let mut names: Vec<&String> = old.keys().chain(new.keys()).collect();
        names.sort();
        names.dedup();
        let mut diff = Vec::new();
        for name in names {
            let a = if old.contains_key(name) {
                format!("a/{name}")
            } else {
                "/dev/null".into()
            };
            let b = if new.contains_key(name) {
                format!("b/{name}")
            } else {
                "/dev/null".into()
            };
            diff.extend(tool(w, "diff", &["-u", &a, &b]));
        }
        assert!(!diff.is_empty());

        let (ours_tree, theirs_tree) = frontier_and_gnu_patch(&old, &diff, w);
        assert_eq!(ours_tree, theirs_tree, "seed {seed}");
        assert_eq!(ours_tree, contents(new.clone()), "seed {seed}");
    }
}

fn repo_root() -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let ok = Command::new("git")
        .args(["rev-parse", "--verify", "-q", "HEAD~1"])
        .current_dir(&root)
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some(root)
}

/// The files of `paths` that exist at `rev`, as `git archive` writes them (modes included),
/// extracted into a fresh directory.
fn checkout(root: &Path, rev: &str, paths: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut ls = vec!["ls-tree", "-r", "--name-only", "-z", rev, "--"];
    ls.extend_from_slice(paths);
    let listed = git(root, &ls);
    let present: Vec<&str> = listed
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| std::str::from_utf8(p).unwrap())
        .collect();
    if present.is_empty() {
        return dir;
    }
    let mut args = vec!["archive", "--format=tar", rev, "--"];
    args.extend_from_slice(&present);
    let tar = git(root, &args);
    let tar_file = dir.path().join(".archive.tar");
    fs::write(&tar_file, tar).unwrap();
    tool(dir.path(), "tar", &["-xf", ".archive.tar"]);
    fs::remove_file(tar_file).unwrap();
    dir
}

#[test]
fn the_project_history_replays_commit_by_commit() {
    let Some(root) = repo_root() else {
        // CI works on a clone with full history; elsewhere (a source tarball) there may be none.
        assert!(
            std::env::var_os("CI").is_none(),
            "CI needs the repository's history"
        );
        eprintln!("no git history here; skipped");
        return;
    };
    let revs = String::from_utf8(git(
        &root,
        &["rev-list", "--no-merges", "--max-count=50", "HEAD"],
    ))
    .unwrap();
    let mut replayed = 0;
    for commit in revs.lines() {
        let parent = format!("{commit}^");
        let has_parent = Command::new("git")
            .args(["rev-parse", "--verify", "-q", &parent])
            .current_dir(&root)
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !has_parent {
            continue;
        }
        let diff = git(
            &root,
            &[
                "diff",
                "--binary",
                "-M",
                "--no-color",
                "--no-ext-diff",
                &parent,
                commit,
            ],
        );
        if diff.is_empty() {
            continue;
        }
        // Only the paths the commit touches: the diff cannot change any other.
        let names = git(
            &root,
            &["diff", "--no-renames", "--name-only", "-z", &parent, commit],
        );
        let paths: Vec<&str> = names
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| std::str::from_utf8(p).unwrap())
            .collect();
        let tree = checkout(&root, &parent, &paths);
        frontier_apply(tree.path(), &diff, Some(1));
        let expected = checkout(&root, commit, &paths);
        assert_eq!(
            snapshot(tree.path()),
            snapshot(expected.path()),
            "commit {commit}"
        );
        replayed += 1;
    }
    assert!(replayed > 0);
}

#[test]
fn fuzz_agrees_with_gnu_patch_on_drifted_context() {
    let mut compared = 0;
    let mut drifted_cases = 0;
    for seed in 40..100 {
        let mut rng = Rng(seed * 7919 + 3);
        let old = text(&mut rng, 80);
        let new = edit_text(&mut rng, &old);
        if new == old || !new.ends_with('\n') || !old.ends_with('\n') {
            continue;
        }
        let work = tempfile::tempdir().unwrap();
        let w = work.path();
        write(w, "a/f.txt", old.as_bytes());
        write(w, "b/f.txt", new.as_bytes());
        let diff = tool(w, "diff", &["-u", "a/f.txt", "b/f.txt"]);
        // The file the diff is applied to has drifted: a few lines that are context of the
        // hunks (never changed by them) are edited.
        let changed: Vec<usize> = {
            let body = String::from_utf8_lossy(&diff).into_owned();
            let mut ctx_lines = Vec::new();
            let mut line_no = 0usize;
            for l in body.lines() {
                if let Some(rest) = l.strip_prefix("@@ -") {
                    line_no = rest
                        .split([',', ' '])
                        .next()
                        .unwrap()
                        .parse::<usize>()
                        .unwrap();
                } else if l.starts_with(' ') {
                    ctx_lines.push(line_no);
                    line_no += 1;
                } else if l.starts_with('-') && !l.starts_with("---") {
                    line_no += 1;
                }
            }
            ctx_lines
                .into_iter()
                .filter(|_| rng.below(4) == 0)
                .take(2)
                .collect()
        };
        let drifted: String = old
            .lines()
            .enumerate()
            .map(|(i, l)| {
                if changed.contains(&(i + 1)) {
                    format!("{l} drifted\n")
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
        let ours = tempfile::tempdir().unwrap();
        let theirs = tempfile::tempdir().unwrap();
        write(ours.path(), "f.txt", drifted.as_bytes());
        write(theirs.path(), "f.txt", drifted.as_bytes());
        let patch_file = w.join("p.diff");
        fs::write(&patch_file, &diff).unwrap();
        let gnu = Command::new("patch")
            .args([
                "-s",
                "-p1",
                "-F2",
                "--no-backup-if-mismatch",
                "-r",
                "-",
                "-i",
            ])
            .arg(&patch_file)
            .current_dir(theirs.path())
            .output()
            .unwrap();
        let ws = Workspace::new(ours.path()).unwrap();
        let options = DiffOptions {
            strip: Some(1),
            fuzz: 2,
        };
        let r = apply_diff_stream(UdiffParser::git(), &diff, 0, ws, options, |_, _| {});
        if gnu.status.success() {
            r.unwrap_or_else(|e| panic!("seed {seed}: GNU patch applied it, frontier: {e}"));
            assert_eq!(
                fs::read(ours.path().join("f.txt")).unwrap(),
                fs::read(theirs.path().join("f.txt")).unwrap(),
                "seed {seed}"
            );
            compared += 1;
            drifted_cases += usize::from(!changed.is_empty());
        }
    }
    assert!(
        compared >= 20 && drifted_cases >= 10,
        "only {compared} ({drifted_cases}) compared"
    );
}

/// A traditional diff (`---`/`+++` without `diff --git`) names its file as git's
/// `parse_traditional_patch` does: a first file patch whose names carry no directory means
/// `-p 0` for the whole diff, and of two names the shorter wins when the longer merely extends
/// it (`f.txt` against `f.txt.new`, `f.txt~`), else the new one.
#[test]
fn traditional_names_and_the_guessed_strip_agree_with_git_apply() {
    let hunk = "@@ -1 +1 @@\n-a\n+b\n";
    let cases = [
        format!("--- f.txt\n+++ f.txt\n{hunk}"),
        format!("--- f.txt\t2020-01-01 00:00:00\n+++ f.txt.new\n{hunk}"),
        format!("--- d/f.txt.orig\n+++ d/f.txt\n{hunk}"),
        format!("--- a/sub/g.txt\n+++ b/sub/g.txt~\n{hunk}"),
        format!("--- f.txt\n+++ f.txt\n{hunk}--- sub/g.txt\n+++ sub/g.txt\n{hunk}"),
    ];
    for diff in cases {
        let ours = tempfile::tempdir().unwrap();
        let theirs = tempfile::tempdir().unwrap();
        for root in [ours.path(), theirs.path()] {
            write(root, "f.txt", b"a\n");
            write(root, "sub/g.txt", b"a\n");
        }
        git(theirs.path(), &["init", "-q"]);
        let patch_file = theirs.path().join(".git/p.diff");
        fs::write(&patch_file, &diff).unwrap();
        git(theirs.path(), &["apply", patch_file.to_str().unwrap()]);
        frontier_apply(ours.path(), diff.as_bytes(), None);
        assert_eq!(
            contents(snapshot(ours.path())),
            contents(snapshot(theirs.path())),
            "{diff}"
        );
    }
}

/// frontier on `root`: `Ok` or the error's kind.
fn frontier_try(
    root: &Path,
    diff: &[u8],
    parser: UdiffParser,
    fuzz: usize,
) -> Result<(), ErrorKind> {
    let ws = Workspace::new(root).unwrap();
    let options = DiffOptions {
        strip: Some(1),
        fuzz,
    };
    apply_diff_stream(parser, diff, 64, ws, options, |_, _| {})
        .map(drop)
        .map_err(|e| e.kind)
}

/// `git apply [extra]` on `root` (a fresh repository in it): whether it applied.
fn git_apply_try(root: &Path, diff: &[u8], extra: &[&str]) -> bool {
    if !root.join(".git").exists() {
        git(root, &["init", "-q"]);
    }
    let patch_file = root.join(".git/p.diff");
    fs::write(&patch_file, diff).unwrap();
    Command::new("git")
        .arg("apply")
        .args(extra)
        .arg(&patch_file)
        .current_dir(root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", root)
        .stdin(Stdio::null())
        .output()
        .unwrap()
        .status
        .success()
}

/// GNU `patch -p1 -F fuzz` on `root` (`-f`: no questions, never guessing a reversed patch; no
/// backup, no reject file): whether every hunk applied.
fn gnu_patch_try(root: &Path, diff: &[u8], scratch: &Path, fuzz: usize) -> bool {
    let patch_file = scratch.join("gnu.diff");
    fs::write(&patch_file, diff).unwrap();
    Command::new("patch")
        .args(["-s", "-f", "-p1", "--no-backup-if-mismatch", "-r", "-"])
        .arg(format!("-F{fuzz}"))
        .arg("-i")
        .arg(&patch_file)
        .current_dir(root)
        .stdin(Stdio::null())
        .output()
        .unwrap()
        .status
        .success()
}

/// The one file `f` in each of two fresh workspaces.
fn two_copies(text: &[u8]) -> (tempfile::TempDir, tempfile::TempDir) {
    let ours = tempfile::tempdir().unwrap();
    let theirs = tempfile::tempdir().unwrap();
    write(ours.path(), "f", text);
    write(theirs.path(), "f", text);
    (ours, theirs)
}

fn lines_of(v: &[String]) -> String {
    v.iter().map(|l| format!("{l}\n")).collect()
}

/// A hunk's text: `@@ -s,b +s,d @@` and the body, for `pre` = context and `-` lines.
fn hunk_body(
    start: usize,
    lead: &[String],
    del: &[String],
    add: &[String],
    trail: &[String],
) -> String {
    let ctx = |v: &[String]| v.iter().map(|l| format!(" {l}\n")).collect::<String>();
    let side = |c: char, v: &[String]| v.iter().map(|l| format!("{c}{l}\n")).collect::<String>();
    format!(
        "@@ -{start},{} +{start},{} @@\n{}{}{}{}",
        lead.len() + del.len() + trail.len(),
        lead.len() + add.len() + trail.len(),
        ctx(lead),
        side('-', del),
        side('+', add),
        ctx(trail)
    )
}

/// A file of few distinct lines and a diff of 2 to 4 hunks (under `header`), each cut from the
/// file as the hunks before it left it, mostly near the previous one, so that hunks often
/// overlap what earlier ones wrote or come before them; `min_context` to 2 context lines a
/// side.
fn overlapping_hunks(seed: u64, header: &str, min_context: usize) -> (Vec<String>, String) {
    let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1);
    let context = |rng: &mut Rng| min_context + rng.below(3 - min_context);
    let words = ["a", "b", "c", "a b"];
    let n = 8 + rng.below(25);
    let orig: Vec<String> = (0..n)
        .map(|_| words[rng.below(words.len())].to_owned())
        .collect();
    let mut cur = orig.clone();
    let mut diff = String::from(header);
    let mut at = 0;
    for k in 0..2 + rng.below(3) {
        if cur.len() < 4 {
            break;
        }
        let p = if k > 0 && rng.below(3) > 0 {
            (at + cur.len() - 2 + rng.below(5)) % (cur.len() - 3)
        } else {
            rng.below(cur.len() - 3)
        };
        let lead = context(&mut rng);
        let del = rng.below(2);
        let trail = context(&mut rng).min(cur.len() - p - lead - del);
        let add: Vec<String> = (0..1 + rng.below(2))
            .map(|_| format!("{} {k}", words[rng.below(words.len())]))
            .collect();
        let (l, d, t) = (
            cur[p..p + lead].to_vec(),
            cur[p + lead..p + lead + del].to_vec(),
            cur[p + lead + del..p + lead + del + trail].to_vec(),
        );
        diff.push_str(&hunk_body(p + 1, &l, &d, &add, &t));
        cur.splice(p + lead..p + lead + del, add.iter().cloned());
        at = p;
    }
    (orig, diff)
}

#[test]
fn overlapping_hunks_are_placed_as_git_apply_places_them() {
    // Hunk 2's preimage is what hunk 1 just wrote (`A B 22`), and also an untouched copy near
    // line 20: git never matches lines a hunk wrote, so it goes there.
    let mut file: Vec<String> = (1..=5).map(|i| i.to_string()).collect();
    file.extend(["x", "B", "22"].map(String::from));
    file.extend((9..=19).map(|i| i.to_string()));
    file.extend(["A", "B"].map(String::from));
    file.extend((22..=30).map(|i| i.to_string()));
    let diff = "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -5,3 +5,3 @@\n 5\n-x\n+A\n B\n\
                @@ -6,3 +6,3 @@\n A\n-B\n+C\n 22\n";
    let (ours, theirs) = two_copies(lines_of(&file).as_bytes());
    assert!(git_apply_try(theirs.path(), diff.as_bytes(), &[]));
    frontier_try(ours.path(), diff.as_bytes(), UdiffParser::git(), 0).unwrap();
    let got = fs::read_to_string(ours.path().join("f")).unwrap();
    assert_eq!(got, fs::read_to_string(theirs.path().join("f")).unwrap());
    assert!(
        got.contains("5\nA\nB\n22\n") && got.contains("19\nA\nC\n22\n"),
        "{got}"
    );
    // Without the second copy every candidate overlaps hunk 1: git refuses, and so does
    // frontier.
    let short = &file[..19];
    let (ours, theirs) = two_copies(lines_of(short).as_bytes());
    assert!(!git_apply_try(theirs.path(), diff.as_bytes(), &[]));
    assert!(git_apply_try(
        theirs.path(),
        diff.as_bytes(),
        &["--allow-overlap"]
    ));
    let r = frontier_try(ours.path(), diff.as_bytes(), UdiffParser::git(), 0);
    assert_eq!(r, Err(ErrorKind::LinesNotFound));
    assert_eq!(
        fs::read_to_string(ours.path().join("f")).unwrap(),
        lines_of(short)
    );
    // With fuzz, as GNU patch: `A`, the line hunk 1 wrote, is left out, and `B 22` is still the
    // original's (hunk 1's trailing context, not frozen), so `patch -F1` applies it there.
    for fuzz in [1, 2] {
        assert!(fuzz_case(&lines_of(short), diff, fuzz, "short"));
    }

    // Generated: files of few distinct lines, each hunk cut from the file as the hunks before
    // it left it, often over what they wrote.
    let (mut compared, mut refused, mut overlap_mattered) = (0, 0, 0);
    for seed in 0..150u64 {
        let (orig, diff) = overlapping_hunks(seed, "diff --git a/f b/f\n--- a/f\n+++ b/f\n", 1);
        let (ours, theirs) = two_copies(lines_of(&orig).as_bytes());
        let theirs_ok = git_apply_try(theirs.path(), diff.as_bytes(), &[]);
        let ours_r = frontier_try(ours.path(), diff.as_bytes(), UdiffParser::git(), 0);
        assert_eq!(ours_r.is_ok(), theirs_ok, "seed {seed}: {ours_r:?}\n{diff}");
        if let Err(kind) = ours_r {
            assert_eq!(kind, ErrorKind::LinesNotFound, "seed {seed}");
            refused += 1;
        }
        assert_eq!(
            fs::read(ours.path().join("f")).unwrap(),
            fs::read(theirs.path().join("f")).unwrap(),
            "seed {seed}\n{diff}"
        );
        compared += 1;
        // How often the marking decided something: `--allow-overlap` does otherwise.
        let overlap = tempfile::tempdir().unwrap();
        write(overlap.path(), "f", lines_of(&orig).as_bytes());
        let overlap_ok = git_apply_try(overlap.path(), diff.as_bytes(), &["--allow-overlap"]);
        if overlap_ok != theirs_ok
            || fs::read(overlap.path().join("f")).unwrap()
                != fs::read(theirs.path().join("f")).unwrap()
        {
            overlap_mattered += 1;
        }
    }
    eprintln!(
        "overlapping hunks: {compared} diffs compared with git apply, {refused} refused by both, \
         {overlap_mattered} where --allow-overlap differs"
    );
    assert!(refused >= 10 && compared - refused >= 10 && overlap_mattered >= 10);
}

#[test]
fn recount_hunks_without_ranges_are_searched_for_from_the_last_hunk() {
    let numbers = |n: usize| (1..=n).map(|i| format!("{i}\n")).collect::<String>();
    let recount = UdiffParser::recount;
    // `@@ ... @@` and a bare `@@`: found by searching, not tied to the start.
    for header in ["@@ ... @@", "@@", "@@ @@ fn main"] {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "f", numbers(10).as_bytes());
        let diff = format!("--- a/f\n+++ b/f\n{header}\n 4\n-5\n+five\n 6\n");
        frontier_try(dir.path(), diff.as_bytes(), recount(), 0).unwrap();
        assert_eq!(
            fs::read_to_string(dir.path().join("f")).unwrap(),
            numbers(10).replace("\n5\n", "\nfive\n"),
            "{header}"
        );
    }
    // No trailing context and no ranges: not tied to the end either.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f", numbers(20).as_bytes());
    let diff = "--- a/f\n+++ b/f\n@@\n 9\n 10\n-11\n+eleven\n";
    frontier_try(dir.path(), diff.as_bytes(), recount(), 0).unwrap();
    assert_eq!(
        fs::read_to_string(dir.path().join("f")).unwrap(),
        numbers(20).replace("\n11\n", "\neleven\n")
    );
    // The search starts after the previous hunk: of two places, the one after it wins, and a
    // hunk whose lines are only before it still applies there (the search goes both ways).
    let text = "x\ny\nmark\nx\ny\nend\n";
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f", text.as_bytes());
    let diff = "--- a/f\n+++ b/f\n@@\n-mark\n+MARK\n@@\n x\n-y\n+Y\n@@\n-end\n+END\n";
    frontier_try(dir.path(), diff.as_bytes(), recount(), 0).unwrap();
    assert_eq!(
        fs::read_to_string(dir.path().join("f")).unwrap(),
        "x\ny\nMARK\nx\nY\nEND\n"
    );
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f", text.as_bytes());
    let diff = "--- a/f\n+++ b/f\n@@\n-end\n+END\n@@\n-mark\n+MARK\n";
    frontier_try(dir.path(), diff.as_bytes(), recount(), 0).unwrap();
    assert_eq!(
        fs::read_to_string(dir.path().join("f")).unwrap(),
        "x\ny\nMARK\nx\ny\nEND\n"
    );
    // An error names the hunk as written.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f", numbers(3).as_bytes());
    let ws = Workspace::new(dir.path()).unwrap();
    let options = DiffOptions {
        strip: Some(1),
        fuzz: 0,
    };
    let diff = b"--- a/f\n+++ b/f\n@@\n-7\n+seven\n";
    let e = apply_diff_stream(recount(), diff, 64, ws, options, |_, _| {}).unwrap_err();
    assert_eq!(e.lines[0], "@@ ... @@", "{e}");

    // Generated: files of distinct lines; every hunk written without ranges gives the file
    // `git apply` gives for the same hunks with their ranges.
    let mut compared = 0;
    for seed in 0..40u64 {
        let mut rng = Rng(seed * 104_729 + 11);
        let orig: Vec<String> = (0..20 + rng.below(40))
            .map(|i| format!("line {i}"))
            .collect();
        let mut cur = orig.clone();
        let (mut stated, mut bare) = (String::new(), String::new());
        let mut p = 0;
        while p + 8 < cur.len() {
            p += rng.below(6);
            if p + 8 >= cur.len() {
                break;
            }
            let (lead, del) = (1 + rng.below(3), rng.below(3));
            let trail = 1 + rng.below(3);
            let add: Vec<String> = (0..rng.below(3))
                .map(|i| format!("new {seed} {p} {i}"))
                .collect();
            if del + add.len() == 0 {
                continue;
            }
            let (l, d, t) = (
                cur[p..p + lead].to_vec(),
                cur[p + lead..p + lead + del].to_vec(),
                cur[p + lead + del..p + lead + del + trail].to_vec(),
            );
            let body = hunk_body(p + 1, &l, &d, &add, &t);
            stated.push_str(&body);
            let (_, rest) = body.split_once('\n').unwrap();
            bare.push_str(if rng.below(2) == 0 {
                "@@\n"
            } else {
                "@@ ... @@\n"
            });
            bare.push_str(rest);
            cur.splice(p + lead..p + lead + del, add.iter().cloned());
            p += lead + add.len() + trail;
        }
        if stated.is_empty() {
            continue;
        }
        let head = "diff --git a/f b/f\n--- a/f\n+++ b/f\n";
        let (ours, theirs) = two_copies(lines_of(&orig).as_bytes());
        assert!(git_apply_try(
            theirs.path(),
            format!("{head}{stated}").as_bytes(),
            &[]
        ));
        frontier_try(
            ours.path(),
            format!("{head}{bare}").as_bytes(),
            recount(),
            0,
        )
        .unwrap_or_else(|e| panic!("seed {seed}: {e:?}\n{bare}"));
        assert_eq!(
            fs::read(ours.path().join("f")).unwrap(),
            fs::read(theirs.path().join("f")).unwrap(),
            "seed {seed}"
        );
        assert_eq!(
            fs::read_to_string(ours.path().join("f")).unwrap(),
            lines_of(&cur)
        );
        compared += 1;
    }
    eprintln!("recount without ranges: {compared} diffs compared with git apply");
    assert!(compared >= 30);
}

/// `frontier apply --fuzz N` and GNU `patch -F N` on the same file and diff: both apply it,
/// with the same result, or both refuse. Returns whether they applied it.
fn fuzz_case(text: &str, diff: &str, fuzz: usize, what: &str) -> bool {
    let (ours, theirs) = two_copies(text.as_bytes());
    let scratch = tempfile::tempdir().unwrap();
    let gnu = gnu_patch_try(theirs.path(), diff.as_bytes(), scratch.path(), fuzz);
    let r = frontier_try(ours.path(), diff.as_bytes(), UdiffParser::git(), fuzz);
    assert_eq!(r.is_ok(), gnu, "{what} -F{fuzz}: frontier {r:?}\n{diff}");
    if gnu {
        assert_eq!(
            fs::read_to_string(ours.path().join("f")).unwrap(),
            fs::read_to_string(theirs.path().join("f")).unwrap(),
            "{what} -F{fuzz}\n{diff}"
        );
    } else {
        assert_eq!(r, Err(ErrorKind::LinesNotFound), "{what}");
        assert_eq!(fs::read_to_string(ours.path().join("f")).unwrap(), text);
    }
    gnu
}

#[test]
fn fuzz_places_hunks_as_gnu_patch_does() {
    let numbers = |n: usize| (1..=n).map(|i| format!("{i}\n")).collect::<String>();
    // A hunk at line 1 with less leading than trailing context must match the start with the
    // context it keeps: `-F1`, `-F2` refuse, `-F3` drops the `1` and its start.
    let a = "X\n2\n3\n4\nY\n6\n7\n";
    let a_diff = "--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n";
    // No trailing context: the end of the file until the leading context is all dropped.
    let b_diff = "--- a/f\n+++ b/f\n@@ -8,4 +8,4 @@\n 8\n 9\n 10\n-11\n+eleven\n";
    for fuzz in 1..=3 {
        assert_eq!(fuzz_case(a, a_diff, fuzz, "A"), fuzz == 3);
        assert_eq!(fuzz_case(&numbers(20), b_diff, fuzz, "B"), fuzz == 3);
    }
    // No context at all: GNU patch places it where it says, whatever the fuzz.
    let c_diff = "--- a/f\n+++ b/f\n@@ -5 +5 @@\n-5\n+five\n";
    assert!(fuzz_case(&numbers(10), c_diff, 1, "C"));
    // The next hunk may not match before the last one's changes (GNU's last frozen line;
    // git, without fuzz, goes back for it), but may start in its trailing context (which git,
    // without fuzz, never matches again).
    let d = "a\nb\nc\nd\ne\nf\ng\n";
    let d_diff = "--- a/f\n+++ b/f\n@@ -3,3 +3,3 @@\n c\n-d\n+D\n e\n@@ -6,2 +6,2 @@\n-a\n+A\n b\n";
    for fuzz in 1..=2 {
        assert!(!fuzz_case(d, d_diff, fuzz, "D"));
    }
    let e_diff =
        "--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n@@ -4,3 +4,3 @@\n d\n-e\n+E\n f\n";
    assert!(fuzz_case(d, e_diff, 1, "E"));
    for (diff, git_ok) in [(d_diff, true), (e_diff, false)] {
        let (ours, theirs) = two_copies(d.as_bytes());
        assert_eq!(git_apply_try(theirs.path(), diff.as_bytes(), &[]), git_ok);
        let r = frontier_try(ours.path(), diff.as_bytes(), UdiffParser::git(), 0);
        assert_eq!(r.is_ok(), git_ok, "{diff}");
    }

    // Generated: `diff -u -U N` of a random edit, applied to a file that drifted (context lines
    // changed, lines inserted or removed near the hunks), at fuzz 1, 2 and 3.
    let (mut cases, mut applied, mut refused) = (0, 0, 0);
    for seed in 0..60u64 {
        let mut rng = Rng(seed * 6_364_136_223 + 1_442_695_040);
        let n = 30 + rng.below(50);
        let old = text(&mut rng, n);
        let new = edit_text(&mut rng, &old);
        if new == old || !new.ends_with('\n') {
            continue;
        }
        let work = tempfile::tempdir().unwrap();
        let w = work.path();
        write(w, "a/f", old.as_bytes());
        write(w, "b/f", new.as_bytes());
        let u = format!("-U{}", 1 + rng.below(4));
        let diff = String::from_utf8(tool(w, "diff", &[&u, "a/f", "b/f"])).unwrap();
        let mut lines: Vec<String> = old.lines().map(str::to_owned).collect();
        for _ in 0..1 + rng.below(4) {
            let i = rng.below(lines.len());
            match rng.below(3) {
                0 => lines[i] = format!("{} drifted", lines[i]),
                1 => lines.insert(i, format!("inserted {}", rng.below(9))),
                _ => {
                    lines.remove(i);
                }
            }
        }
        let drifted = lines_of(&lines);
        for fuzz in 1..=3 {
            cases += 1;
            if fuzz_case(&drifted, &diff, fuzz, &format!("seed {seed}")) {
                applied += 1;
            } else {
                refused += 1;
            }
        }
    }
    eprintln!("fuzz: {cases} cases compared with GNU patch, {applied} applied, {refused} refused");
    assert!(
        applied >= 30 && refused >= 10,
        "{applied} applied, {refused} refused"
    );
}

/// Generated diffs of 2 to 4 hunks over files of few distinct lines, each hunk cut from the file
/// as the hunks before it left it (so often over what they wrote, or before them), with 0 to 2
/// context lines a side: `frontier --fuzz N` and `patch -F N` agree, N = 1, 2.
#[test]
fn fuzz_on_overlapping_and_misordered_hunks_agrees_with_gnu_patch() {
    let (mut cases, mut applied, mut misordered) = (0, 0, 0);
    for seed in 0..300u64 {
        let (orig, diff) = overlapping_hunks(seed, "--- a/f\n+++ b/f\n", 0);
        for fuzz in 1..=2 {
            cases += 1;
            let what = format!("seed {seed}");
            if fuzz_case(&lines_of(&orig), &diff, fuzz, &what) {
                applied += 1;
            } else {
                // How many refusals are GNU's "misordered hunks" (a hunk found only before
                // the previous one's changes).
                let dir = tempfile::tempdir().unwrap();
                write(dir.path(), "f", lines_of(&orig).as_bytes());
                let patch_file = dir.path().join("p.diff");
                fs::write(&patch_file, &diff).unwrap();
                let out = Command::new("patch")
                    .args(["-f", "-p1", "--dry-run", "-r", "-", "-i"])
                    .arg(&patch_file)
                    .arg(format!("-F{fuzz}"))
                    .current_dir(dir.path())
                    .stdin(Stdio::null())
                    .output()
                    .unwrap();
                misordered +=
                    usize::from(String::from_utf8_lossy(&out.stdout).contains("misordered"));
            }
        }
    }
    eprintln!(
        "overlapping hunks with fuzz: {cases} cases compared with GNU patch, {applied} applied, \
         {} refused ({misordered} of them misordered)",
        cases - applied
    );
    assert!(applied >= 100 && cases - applied >= 100 && misordered >= 20);
}

/// A repository with `files` committed, then `edit` run in it: the staged diff, as `git diff
/// --cached -M -C --find-copies-harder` writes it, and a copy of the committed tree.
fn git_scenario(files: &[(&str, &str)], edit: impl FnOnce(&Path)) -> (Vec<u8>, tempfile::TempDir) {
    let repo = tempfile::tempdir().unwrap();
    let r = repo.path();
    git(r, &["init", "-q", "."]);
    for (rel, data) in files {
        write(r, rel, data.as_bytes());
    }
    git(r, &["add", "-A"]);
    git(r, &["commit", "-q", "-m", "base"]);
    let base = tempfile::tempdir().unwrap();
    copy_tree(r, base.path());
    edit(r);
    git(r, &["add", "-A"]);
    let diff = git(
        r,
        &[
            "diff",
            "--cached",
            "-M",
            "-C",
            "--find-copies-harder",
            "HEAD",
        ],
    );
    (diff, base)
}

/// `diff` applied to copies of `base` by frontier and by `git apply`: the same tree, and not
/// `base`'s.
fn agrees_with_git_apply(diff: &[u8], base: &Path, what: &str) {
    let ours = tempfile::tempdir().unwrap();
    copy_tree(base, ours.path());
    frontier_apply(ours.path(), diff, None);
    let theirs = tempfile::tempdir().unwrap();
    copy_tree(base, theirs.path());
    assert!(git_apply_try(theirs.path(), diff, &[]), "{what}: git apply");
    fs::remove_dir_all(theirs.path().join(".git")).unwrap();
    let tree = snapshot(ours.path());
    assert_eq!(tree, snapshot(theirs.path()), "{what}");
    assert_ne!(tree, snapshot(base), "{what}");
}

/// What `git apply` does that applying the file patches one by one would not: it reads the
/// source of a rename or a copy as it was before the diff, makes every deletion before every
/// creation, and lets a file take the place of a directory the diff empties.
#[test]
fn git_reads_sources_before_the_diff_and_deletes_before_it_creates() {
    let lines: String = (1..=20).map(|i| format!("{i}\n")).collect();
    let lines = lines.as_str();

    // A copy of a file the same diff modifies, listed after the modification (`git diff -C`
    // sorts by name): the copy's hunks are against the original.
    let (diff, base) = git_scenario(&[("a", lines)], |r| {
        fs::write(r.join("c"), lines.replace("\n5\n", "\nfive\n")).unwrap();
        fs::write(r.join("a"), lines.replace("\n15\n", "\nfifteen\n")).unwrap();
    });
    let text = String::from_utf8_lossy(&diff);
    assert!(
        text.find("+++ b/a").unwrap() < text.find("copy to c").unwrap(),
        "{text}"
    );
    agrees_with_git_apply(&diff, base.path(), "copy of a modified file");

    // A directory replaced by a file of its name: `git diff` lists the creation of `x` before
    // the deletions under `x/`.
    let files = [("x/y", "y\n"), ("x/deep/z", "z\n"), ("keep", "k\n")];
    let (diff, base) = git_scenario(&files, |r| {
        fs::remove_dir_all(r.join("x")).unwrap();
        fs::write(r.join("x"), "now a file\n").unwrap();
    });
    let text = String::from_utf8_lossy(&diff);
    assert!(
        text.find("+++ b/x\n").unwrap() < text.find("--- a/x/y").unwrap(),
        "{text}"
    );
    agrees_with_git_apply(&diff, base.path(), "directory replaced by a file");
    // With a file in the directory that the diff does not delete, both refuse, and frontier
    // leaves the tree as it was.
    let dir = tempfile::tempdir().unwrap();
    copy_tree(base.path(), dir.path());
    write(dir.path(), "x/deep/untracked", b"u\n");
    let before = snapshot(dir.path());
    let e = frontier_try(dir.path(), &diff, UdiffParser::git(), 0).unwrap_err();
    assert_eq!(e, ErrorKind::IsDirectory);
    assert_eq!(snapshot(dir.path()), before);
    // (git refuses it at the write, having deleted `x/y` and `x/deep/z` already.)
    assert!(!git_apply_try(dir.path(), &diff, &[]));

    // A file renamed into a directory of its own name (`git mv k k/g`): the rename's source
    // goes before the directory is made.
    let (diff, base) = git_scenario(&[("k", "a\nb\n")], |r| {
        fs::rename(r.join("k"), r.join("g")).unwrap();
        fs::create_dir(r.join("k")).unwrap();
        fs::rename(r.join("g"), r.join("k/g")).unwrap();
    });
    assert!(String::from_utf8_lossy(&diff).contains("rename to k/g"));
    agrees_with_git_apply(
        &diff,
        base.path(),
        "file renamed into a directory of its name",
    );

    // Two files swapped by two renames (written by hand: `git diff` shows a swap as two
    // rewrites), and a copy from a file the diff renamed away.
    let files = [("a", "first\n"), ("b", "second\n"), ("s", lines)];
    let (_, base) = git_scenario(&files, |_| {});
    let swap = "diff --git a/a b/b\nsimilarity index 100%\nrename from a\nrename to b\n\
                diff --git a/b b/a\nsimilarity index 100%\nrename from b\nrename to a\n";
    agrees_with_git_apply(swap.as_bytes(), base.path(), "swap by two renames");
    let copy_after_rename = "diff --git a/s b/t\nsimilarity index 100%\nrename from s\n\
                             rename to t\ndiff --git a/s b/u\nsimilarity index 100%\n\
                             copy from s\ncopy to u\n";
    agrees_with_git_apply(
        copy_after_rename.as_bytes(),
        base.path(),
        "copy from a renamed-away file",
    );
    // Two names and no rename lines, in the `diff --git` line or in `---`/`+++` under it: git
    // removes the old name and writes the new.
    for header in [
        "diff --git a/s b/v\n--- a/s\n",
        "diff --git a/s b/s\n--- a/s\n",
    ] {
        let diff = format!("{header}+++ b/v\n@@ -1,2 +1,2 @@\n-1\n+one\n 2\n");
        agrees_with_git_apply(diff.as_bytes(), base.path(), header);
    }
    // A rename onto a file no file patch removes is refused, by both.
    let onto = "diff --git a/a b/b\nsimilarity index 100%\nrename from a\nrename to b\n";
    let dir = tempfile::tempdir().unwrap();
    copy_tree(base.path(), dir.path());
    let before = snapshot(dir.path());
    let e = frontier_try(dir.path(), onto.as_bytes(), UdiffParser::git(), 0).unwrap_err();
    assert_eq!(e, ErrorKind::FileExists);
    assert_eq!(snapshot(dir.path()), before);
    assert!(!git_apply_try(dir.path(), onto.as_bytes(), &[]));
}

#[test]
fn hunkless_git_file_patches_with_names_agree_with_git_apply() {
    // `git diff` never names the sides of a mode change, a rename or an empty new file; a
    // model or another tool may. With a metadata line the pair needs no hunk (the file patch
    // is complete at the `+++` line); without one `git apply` refuses "only garbage", and
    // frontier refuses too (the file patch is cut off before its hunk).
    let next = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-x\n+y\n";
    let accepted = [
        "diff --git a/f b/f\nold mode 100644\nnew mode 100755\n--- a/f\n+++ b/f\n".to_owned(),
        format!("diff --git a/f b/f\nold mode 100644\nnew mode 100755\n--- a/f\n+++ b/f\n{next}"),
        "diff --git a/x b/y\nsimilarity index 100%\nrename from x\nrename to y\n--- a/x\n+++ b/y\n"
            .to_owned(),
        "diff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n".to_owned(),
        "diff --git a/e b/e\ndeleted file mode 100644\n--- a/e\n+++ /dev/null\n".to_owned(),
        format!("diff --git a/f b/f\nold mode 100644\nnew mode 100755\n--- a/f\n+++ b/f\nnot a patch\n{next}"),
    ];
    let refused = [
        "diff --git a/f b/f\n--- a/f\n+++ b/f\n".to_owned(),
        "diff --git a/f b/f\nindex 45b983b..45b983b 100644\n--- a/f\n+++ b/f\n".to_owned(),
        "diff --git a/f b/f\ndeleted file mode 100644\n--- a/f\n+++ /dev/null\n".to_owned(),
    ];
    let setup = |root: &Path| {
        write(root, "f", b"hi\n");
        write(root, "e", b"");
        write(root, "x", b"x\n");
        fs::set_permissions(root.join("f"), fs::Permissions::from_mode(0o644)).unwrap();
    };
    for (diff, expected) in accepted
        .iter()
        .map(|d| (d, true))
        .chain(refused.iter().map(|d| (d, false)))
    {
        let ours = tempfile::tempdir().unwrap();
        let theirs = tempfile::tempdir().unwrap();
        setup(ours.path());
        setup(theirs.path());
        let git_ok = git_apply_try(theirs.path(), diff.as_bytes(), &[]);
        let ours_ok = frontier_try(ours.path(), diff.as_bytes(), UdiffParser::git(), 0);
        assert_eq!(git_ok, expected, "git apply on\n{diff}");
        assert_eq!(ours_ok.is_ok(), expected, "{ours_ok:?} on\n{diff}");
        assert_eq!(snapshot(ours.path()), snapshot(theirs.path()), "{diff}");
    }
}
