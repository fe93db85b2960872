//! Against the real tools: edits made here, diffed with `git diff` and `diff -u`, applied by
//! frontier and by `git apply` / GNU `patch` give byte-identical trees (and the edited tree);
//! and the project's own history, re-applied commit by commit onto each parent, gives each
//! commit's tree.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use frontier::apply::{apply_diff_stream, DiffOptions, Workspace};
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
