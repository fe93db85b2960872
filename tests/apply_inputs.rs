//! What `frontier apply` (and the loop's `read_file` and `list_dir`) do with inputs a user or a
//! model may hand them: a FIFO where a file is expected, a root that is a regular file, a path
//! written as a directory's (`a.txt/`), a patch that does not parse, control bytes in names.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use frontier::apply::{apply_patch_stream, ErrorKind, ParseErrorInfo, Policy, Workspace};
use frontier::apply_patch::StrictParser;

/// Waits for `child` at most 20 s (a FIFO opened for reading would block for ever), killing it
/// and failing the test if it is still running then.
fn finish(mut child: Child) -> (i32, String, String) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("frontier still running after 20 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn apply(root: &Path, args: &[&str], patch: &[u8]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_frontier"))
        .arg("apply")
        .args(args)
        .arg("--root")
        .arg(root)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A command that refuses its flags exits without reading: a broken pipe is its answer.
    let _ = child.stdin.take().unwrap().write_all(patch);
    finish(child)
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

#[test]
fn a_fifo_is_refused_without_being_opened() {
    let dir = tempfile::tempdir().unwrap();
    mkfifo(&dir.path().join("p"));
    fs::write(dir.path().join("f.txt"), "x\n").unwrap();
    let cases: [(&[&str], &[u8], &str); 5] = [
        (
            &["--lang", "apply_patch"],
            b"*** Begin Patch\n*** Update File: p\n@@\n-x\n+y\n*** End Patch\n",
            "update p: is a FIFO, not a regular file: refused [not_regular_file]",
        ),
        (
            &["--lang", "apply_patch"],
            b"*** Begin Patch\n*** Delete File: p\n*** End Patch\n",
            "delete p: is a FIFO, not a regular file: refused [not_regular_file]",
        ),
        (
            &["--lang", "apply_patch"],
            b"*** Begin Patch\n*** Add File: p\n+y\n*** End Patch\n",
            "add p: is a FIFO, not a regular file: refused [not_regular_file]",
        ),
        (
            &["--lang", "apply_patch", "--policy", "codex"],
            b"*** Begin Patch\n*** Update File: f.txt\n*** Move to: p\n@@\n-x\n+y\n*** End Patch\n",
            "move p: is a FIFO, not a regular file: refused [not_regular_file]",
        ),
        (
            &["--lang", "udiff"],
            b"--- a/p\n+++ b/p\n@@ -1 +1 @@\n-x\n+y\n",
            "patch p: is a FIFO, not a regular file: refused [not_regular_file]",
        ),
    ];
    for (args, patch, expected) in cases {
        let (code, out, err) = apply(dir.path(), args, patch);
        assert_eq!((code, out.as_str()), (1, ""), "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    assert_eq!(fs::read(dir.path().join("f.txt")).unwrap(), b"x\n");
    let kind = fs::symlink_metadata(dir.path().join("p"))
        .unwrap()
        .file_type();
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(&kind));
}

#[test]
fn the_loop_refuses_to_read_or_list_a_fifo() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    fs::create_dir(&root).unwrap();
    mkfifo(&root.join("p"));
    let session = dir.path().join("fifo.jsonl");
    fs::write(
        &session,
        concat!(
            r#"{"output": "call c1 read_file\narg path 1\npend\ncall c2 list_dir\narg path 1\npend\n", "finish": "tool_calls"}"#,
            "\n",
            r#"{"output": "", "finish": "stop"}"#,
            "\n"
        ),
    )
    .unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_frontier"))
        .env("XDG_STATE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .args(["run", "--task", "read p", "--model"])
        .arg(format!("replay:{}", session.display()))
        .arg("--root")
        .arg(&root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (code, out, err) = finish(child);
    assert_eq!(code, 0, "{err}");
    let results: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &serde_json::Value| v["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 2, "{out}");
    assert_eq!(
        results[0]["output"],
        "is a FIFO, not a regular file: refused [not_regular_file]"
    );
    assert_eq!(
        results[1]["output"],
        "is a FIFO, not a directory: refused [not_regular_file]"
    );
}

#[test]
fn a_root_that_is_a_file_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    fs::write(&file, "x\n").unwrap();
    let patch = b"*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n";
    let (code, out, err) = apply(&file, &["--lang", "apply_patch"], patch);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains(": not a directory"), "{err}");

    let session = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/sessions/fix_greeting.jsonl");
    let child = Command::new(env!("CARGO_BIN_EXE_frontier"))
        .args(["run", "--task", "t", "--model"])
        .arg(format!("replay:{}", session.display()))
        .arg("--root")
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (code, out, err) = finish(child);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains(": not a directory"), "{err}");
    assert_eq!(fs::read(&file).unwrap(), b"x\n");
    assert!(Workspace::new(&file).is_err());
}

#[test]
fn a_path_written_as_a_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.txt"), "x\n").unwrap();
    fs::create_dir(dir.path().join("d")).unwrap();
    fs::write(dir.path().join("d/f"), "f\n").unwrap();
    let cases: [(&[u8], &str); 6] = [
        (
            b"*** Begin Patch\n*** Add File: a.txt/\n+y\n*** End Patch\n",
            "add a.txt/: path \"a.txt/\" names a directory, not a file [invalid_path]",
        ),
        (
            b"*** Begin Patch\n*** Add File: new.txt/\n+y\n*** End Patch\n",
            "add new.txt/:",
        ),
        (
            b"*** Begin Patch\n*** Update File: a.txt/\n@@\n-x\n+y\n*** End Patch\n",
            "update a.txt/:",
        ),
        (
            b"*** Begin Patch\n*** Delete File: a.txt/\n*** End Patch\n",
            "delete a.txt/:",
        ),
        (
            b"*** Begin Patch\n*** Update File: a.txt\n*** Move to: b/\n@@\n-x\n+y\n*** End Patch\n",
            "move b/:",
        ),
        (
            b"*** Begin Patch\n*** Add File: d/f/..\n+y\n*** End Patch\n",
            "add d/f/..:",
        ),
    ];
    for (patch, expected) in cases {
        let (code, out, err) = apply(dir.path(), &["--lang", "apply_patch"], patch);
        assert_eq!((code, out.as_str()), (1, ""), "{err}");
        assert!(err.contains(expected), "{err}");
        assert!(err.contains("[invalid_path]"), "{err}");
    }
    assert_eq!(fs::read(dir.path().join("a.txt")).unwrap(), b"x\n");
    assert!(!dir.path().join("new.txt").exists() && !dir.path().join("b").exists());
    assert_eq!(fs::read(dir.path().join("d/f")).unwrap(), b"f\n");
}

#[test]
fn a_parse_error_keeps_its_offset_byte_and_kind() {
    let dir = tempfile::tempdir().unwrap();
    let patch = b"*** Begin Patch\n*** Add File: a.txt\n+a\n*** Bogus\n";
    let ws = Workspace::new(dir.path()).unwrap();
    let failure = apply_patch_stream(
        StrictParser::default(),
        patch,
        5,
        ws,
        Policy::Safe,
        |_, _| {},
    )
    .unwrap_err();
    assert_eq!(failure.error.kind, ErrorKind::Parse);
    assert_eq!(
        failure.error.parse_error(),
        Some(&ParseErrorInfo {
            offset: 43,
            byte: b'B',
            kind: "bad_marker",
        })
    );
    assert!(!dir.path().join("a.txt").exists());
    // Cut off: a parse failure with no refused byte.
    let ws = Workspace::new(dir.path()).unwrap();
    let cut = apply_patch_stream(
        StrictParser::default(),
        &patch[..40],
        5,
        ws,
        Policy::Safe,
        |_, _| {},
    )
    .unwrap_err();
    assert_eq!(
        (cut.error.kind, cut.error.parse_error()),
        (ErrorKind::Parse, None)
    );
    // The command says the same in words.
    let (code, _, err) = apply(dir.path(), &["--lang", "apply_patch"], patch);
    assert_eq!(code, 1);
    assert!(
        err.contains("bad_marker at byte 43 (0x42 'B') [parse_error]"),
        "{err}"
    );
}

#[test]
fn messages_never_carry_a_raw_control_byte() {
    let dir = tempfile::tempdir().unwrap();
    for (name, shown) in [
        (&b"a\x01b"[..], "a\\x01b"),
        (b"a\x1b[31mred", "a\\x1b[31mred"),
        (b"a\rb", "a\\rb"),
        (b"a\x00b", "a\\0b"),
    ] {
        let mut patch = b"*** Begin Patch\n*** Update File: ".to_vec();
        patch.extend_from_slice(name);
        patch.extend_from_slice(b"\n@@\n-x\n+y\n*** End Patch\n");
        let (code, _, err) = apply(dir.path(), &["--lang", "apply_patch"], &patch);
        assert_eq!(code, 1, "{err}");
        assert!(err.contains(&format!("update {shown}:")), "{err:?}");
        assert!(
            err.bytes().all(|b| b == b'\n' || !b.is_ascii_control()),
            "{err:?}"
        );
    }
}
