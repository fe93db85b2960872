//! `frontier apply` as `cli.md` says: what changed on standard output, exit 0; the reason on
//! standard error, exit 1, and (safe policy) nothing changed.

mod cli_support;

use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::process::{Command, Stdio};

fn frontier(dir: &std::path::Path, args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    let root = [OsStr::new("--root"), dir.as_os_str()];
    let args = ["apply"].iter().chain(args).map(OsStr::new).chain(root);
    cli_support::run(args, stdin)
}

#[test]
fn apply_patch_prints_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("f.txt"), "a\nb\n").unwrap();
    fs::write(dir.path().join("old.txt"), "o\n").unwrap();
    let patch = b"*** Begin Patch\n*** Update File: f.txt\n@@\n-a\n+A\n*** Add File: n/x.txt\n+hi\n*** Delete File: old.txt\n*** End Patch\n";
    let (code, out, err) = frontier(dir.path(), &["--lang", "apply_patch", "-"], patch);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (0, "M f.txt\nA n/x.txt\nD old.txt\n", "")
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        "A\nb\n"
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("n/x.txt")).unwrap(),
        "hi\n"
    );
}

/// A path with control characters is listed with them escaped, as error messages are; the
/// file itself gets the name the patch gave.
#[test]
fn the_listing_escapes_control_characters() {
    let dir = tempfile::tempdir().unwrap();
    let patch = b"*** Begin Patch\n*** Add File: a\rb\x1b[31m\n+x\n*** End Patch\n";
    let (code, out, err) = frontier(dir.path(), &["--lang", "apply_patch", "-"], patch);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (0, "A a\\rb\\x1b[31m\n", "")
    );
    assert_eq!(fs::read(dir.path().join("a\rb\x1b[31m")).unwrap(), b"x\n");
}

#[test]
fn failures_say_why_and_change_nothing_under_safe() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("f.txt"), "x\ny\nx\n").unwrap();
    let patch = b"*** Begin Patch\n*** Add File: new.txt\n+n\n*** Update File: f.txt\n@@\n-x\n+z\n*** End Patch\n";
    let (code, out, err) = frontier(
        dir.path(),
        &["--lang", "apply_patch", "--chunk", "5", "-"],
        patch,
    );
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(err.contains("update f.txt"), "{err}");
    assert!(err.contains("[ambiguous]"), "{err}");
    assert!(err.contains("candidate lines: 1, 3"), "{err}");
    assert!(err.contains("nothing was changed"), "{err}");
    assert!(!dir.path().join("new.txt").exists());

    // The codex policy takes the first match.
    let (code, out, _) = frontier(
        dir.path(),
        &["--lang", "apply_patch", "--policy", "codex", "-"],
        patch,
    );
    assert_eq!((code, out.as_str()), (0, "A new.txt\nM f.txt\n"));
    assert_eq!(
        fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        "z\ny\nx\n"
    );

    // A patch that does not parse applies nothing.
    let (code, _, err) = frontier(
        dir.path(),
        &["--lang", "apply_patch", "-"],
        b"*** Begin Patch\n*** Add File: q\n+q\n",
    );
    assert_eq!(code, 1);
    assert!(err.contains("[parse_error]"), "{err}");
    assert!(!dir.path().join("q").exists());
}

#[test]
fn udiff_with_strip_levels() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("f.txt"), "1\n2\n3\n").unwrap();
    let diff = b"--- f.txt\n+++ f.txt\n@@ -1,3 +1,3 @@\n 1\n-2\n+two\n 3\n";
    let (code, _, err) = frontier(dir.path(), &["--lang", "udiff", "-p", "1", "-"], diff);
    assert_eq!(code, 1, "-p1 cannot strip a one-component name");
    assert!(err.contains("[bad_name]"), "{err}");
    let (code, out, err) = frontier(dir.path(), &["--lang", "udiff", "-p", "0", "-"], diff);
    assert_eq!((code, out.as_str(), err.as_str()), (0, "M f.txt\n", ""));
    assert_eq!(
        fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        "1\ntwo\n3\n"
    );
    let (code, _, err) = frontier(dir.path(), &["--lang", "udiff", "-p", "0", "-"], diff);
    assert_eq!(code, 1);
    assert!(err.contains("hunk #1 does not apply"), "{err}");
    assert!(err.contains("| -2"), "{err}");
    // Without `-p`, git's guess: a traditional diff whose names have no directory is `-p 0`.
    let back = b"--- f.txt\n+++ f.txt\n@@ -1,3 +1,3 @@\n 1\n-two\n+2\n 3\n";
    let (code, out, err) = frontier(dir.path(), &["--lang", "udiff", "-"], back);
    assert_eq!((code, out.as_str(), err.as_str()), (0, "M f.txt\n", ""));
    assert_eq!(
        fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        "1\n2\n3\n"
    );
}

#[test]
fn a_failure_is_reported_while_the_patch_is_still_arriving() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("f.txt"), "a\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_frontier"))
        .args(["apply", "--lang", "apply_patch", "--root"])
        .arg(dir.path())
        .arg("-")
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let stdin = std::sync::Arc::new(std::sync::Mutex::new(child.stdin.take()));
    // The first chunk cannot apply; the next header confirms it. The stream stays open.
    let write = |bytes: &[u8]| {
        let mut guard = stdin.lock().unwrap();
        let pipe = guard.as_mut().unwrap();
        pipe.write_all(bytes).unwrap();
        pipe.flush().unwrap();
    };
    write(b"*** Begin Patch\n*** Update File: f.txt\n@@\n-zzz\n+y\n*** Add File: more.txt\n");
    // A watchdog closes the stream after a while, so that a regression fails instead of hanging.
    let watchdog = std::sync::Arc::clone(&stdin);
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(30));
        watchdog.lock().unwrap().take();
    });
    let started = std::time::Instant::now();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "reported only at the end"
    );
    assert!(first.contains("cannot apply"), "{first}");
    assert!(first.contains("update f.txt"), "{first}");
    write(b"+m\n*** End Patch\n");
    stdin.lock().unwrap().take();
    assert_eq!(child.wait().unwrap().code(), Some(1));
    assert!(!dir.path().join("more.txt").exists());
}
