//! The commit of `frontier apply` when a real write fails part-way: an immutable file
//! (`chattr +i`, which stops even root) as the third of three operations. Under the safe policy
//! the tree is afterwards byte-identical to before; under the codex policy the files written
//! before the failure stay and are listed on standard output.

mod cli_support;

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

fn frontier(dir: &Path, args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    let root = [OsStr::new("--root"), dir.as_os_str(), OsStr::new("-")];
    let args = ["apply"].iter().chain(args).map(OsStr::new).chain(root);
    cli_support::run(args, stdin)
}

/// Every path under `root`: kind, bytes (or link target) and permission bits.
fn snapshot(root: &Path) -> Vec<(PathBuf, &'static str, Vec<u8>, u32)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            let mode = meta.permissions().mode();
            if meta.is_dir() {
                stack.push(path);
                out.push((rel, "dir", Vec::new(), mode));
            } else if meta.file_type().is_symlink() {
                let target = fs::read_link(&path).unwrap().into_os_string();
                out.push((rel, "link", target.into_encoded_bytes(), mode));
            } else {
                out.push((rel, "file", fs::read(&path).unwrap(), mode));
            }
        }
    }
    out.sort();
    out
}

/// A root with `a.txt`, `z.txt` (immutable) and `sub/keep.txt`; the flag is cleared on drop
/// so the directory can be removed.
struct Root {
    dir: tempfile::TempDir,
    immutable: PathBuf,
}

impl Root {
    /// `None` when the filesystem or the user cannot set the immutable flag.
    fn new() -> Option<Root> {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.txt"), "a1\na2\n").unwrap();
        fs::write(dir.path().join("z.txt"), "z1\nz2\n").unwrap();
        fs::create_dir(dir.path().join("sub")).unwrap();
        fs::write(dir.path().join("sub/keep.txt"), "k\n").unwrap();
        let immutable = dir.path().join("z.txt");
        let set = Command::new("chattr").arg("+i").arg(&immutable).status();
        if !set.is_ok_and(|s| s.success()) {
            eprintln!(
                "chattr +i is not available here: skipped (the unit tests inject the failure)"
            );
            return None;
        }
        Some(Root { dir, immutable })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        let _ = Command::new("chattr")
            .arg("-i")
            .arg(&self.immutable)
            .status();
    }
}

const UPDATE_ADD_UPDATE: &[u8] = b"*** Begin Patch\n*** Update File: a.txt\n@@\n-a1\n+A1\n*** Add File: new1.txt\n+n\n*** Update File: z.txt\n@@\n-z1\n+Z1\n*** End Patch\n";

const UPDATE_ADD_DELETE: &[u8] = b"*** Begin Patch\n*** Update File: a.txt\n@@\n-a1\n+A1\n*** Add File: new/dir/new1.txt\n+n\n*** Delete File: z.txt\n*** End Patch\n";

#[test]
fn safe_policy_undoes_an_update_and_an_add_when_the_third_write_fails() {
    let Some(root) = Root::new() else { return };
    let before = snapshot(root.path());
    let (code, out, err) = frontier(root.path(), &["--lang", "apply_patch"], UPDATE_ADD_UPDATE);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(
        err.contains("commit z.txt: Operation not permitted"),
        "{err}"
    );
    assert!(err.ends_with("frontier: nothing was changed\n"), "{err}");
    assert_eq!(snapshot(root.path()), before);
}

#[test]
fn safe_policy_undoes_when_a_delete_is_the_failing_third_operation() {
    let Some(root) = Root::new() else { return };
    let before = snapshot(root.path());
    let (code, out, err) = frontier(root.path(), &["--lang", "apply_patch"], UPDATE_ADD_DELETE);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(
        err.contains("commit z.txt: Operation not permitted"),
        "{err}"
    );
    assert_eq!(snapshot(root.path()), before);
}

#[test]
fn unified_diffs_share_the_undo() {
    let Some(root) = Root::new() else { return };
    let before = snapshot(root.path());
    let diff = b"--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-a1\n+A1\n a2\n--- /dev/null\n+++ b/new/new1.txt\n@@ -0,0 +1 @@\n+n\n--- a/z.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-z1\n-z2\n";
    let (code, out, err) = frontier(root.path(), &["--lang", "udiff"], diff);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(err.contains("z.txt: Operation not permitted"), "{err}");
    assert!(err.ends_with("frontier: nothing was changed\n"), "{err}");
    assert_eq!(snapshot(root.path()), before);
}

#[test]
fn codex_policy_keeps_and_lists_what_it_wrote_before_the_failure() {
    let Some(root) = Root::new() else { return };
    let (code, out, err) = frontier(
        root.path(),
        &["--lang", "apply_patch", "--policy", "codex"],
        UPDATE_ADD_UPDATE,
    );
    assert_eq!((code, out.as_str()), (1, "M a.txt\nA new1.txt\n"), "{err}");
    assert!(
        err.contains("commit z.txt: Operation not permitted"),
        "{err}"
    );
    assert!(!err.contains("nothing was changed"), "{err}");
    assert_eq!(fs::read(root.path().join("a.txt")).unwrap(), b"A1\na2\n");
    assert_eq!(fs::read(root.path().join("new1.txt")).unwrap(), b"n\n");
    assert_eq!(fs::read(root.path().join("z.txt")).unwrap(), b"z1\nz2\n");
}
