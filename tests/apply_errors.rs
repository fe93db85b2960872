//! What a failure says, as people and runtimes read it: snapshots of the error text for each
//! kind of failure, from patch text through the parser and the streaming engine.

use std::fs;

use frontier::apply::{apply_diff_stream, apply_patch_stream, DiffOptions, Policy, Workspace};
use frontier::apply_patch::StrictParser;
use frontier::udiff::UdiffParser;

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let files: [(&str, &str); 4] = [
        ("x.bin", "\0\x01"),
        (
            "src/lib.rs",
            "fn a() {\n    x();\n}\nfn b() {\n    x();\n}\n",
        ),
        ("notes.txt", "one\ntwo\n"),
        ("dir/keep.txt", "k\n"),
    ];
    for (name, content) in files {
        let p = dir.path().join(name);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, content).unwrap();
    }
    dir
}

fn patch_error(patch: &str) -> String {
    let dir = workspace();
    let ws = Workspace::new(dir.path()).unwrap();
    let r = apply_patch_stream(
        StrictParser::default(),
        patch.as_bytes(),
        0,
        ws,
        Policy::Safe,
        |_, _| {},
    );
    let e = r.unwrap_err().error;
    format!("kind: {}\n{e}", e.kind.name())
}

fn diff_error(diff: &str) -> String {
    let dir = workspace();
    let ws = Workspace::new(dir.path()).unwrap();
    let r = apply_diff_stream(
        UdiffParser::git(),
        diff.as_bytes(),
        0,
        ws,
        DiffOptions::default(),
        |_, _| {},
    );
    let e = r.unwrap_err();
    format!("kind: {}\n{e}", e.kind.name())
}

#[test]
fn ambiguous_chunk() {
    insta::assert_snapshot!(patch_error(
        "*** Begin Patch\n*** Update File: src/lib.rs\n@@\n-    x();\n+    y();\n*** End Patch\n"
    ));
}

#[test]
fn lines_not_found() {
    insta::assert_snapshot!(patch_error(
        "*** Begin Patch\n*** Update File: notes.txt\n@@\n one\n-three\n+3\n*** End Patch\n"
    ));
}

#[test]
fn context_not_found() {
    insta::assert_snapshot!(patch_error(
        "*** Begin Patch\n*** Update File: src/lib.rs\n@@ fn c() {\n-    x();\n+    y();\n*** End Patch\n"
    ));
}

#[test]
fn refused_paths_and_missing_files() {
    insta::assert_snapshot!(patch_error(
        "*** Begin Patch\n*** Add File: ../out.txt\n+x\n*** End Patch\n"
    ));
    insta::assert_snapshot!(patch_error(
        "*** Begin Patch\n*** Delete File: dir\n*** End Patch\n"
    ));
    insta::assert_snapshot!(patch_error(
        "*** Begin Patch\n*** Delete File: nope.txt\n*** End Patch\n"
    ));
    insta::assert_snapshot!(patch_error("*** Begin Patch\n*** Add File: a.txt\n+a\n"));
    insta::assert_snapshot!(patch_error("*** Begin Patch\n*** Frobnicate File: a.txt\n"));
}

#[test]
fn unified_diff_failures() {
    insta::assert_snapshot!(diff_error(
        "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n one\n-2\n+TWO\n"
    ));
    insta::assert_snapshot!(diff_error(
        "diff --git a/x.bin b/x.bin\nindex 1111111..2222222 100644\nBinary files a/x.bin and b/x.bin differ\n"
    ));
    insta::assert_snapshot!(diff_error(
        "--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+new\n"
    ));
}
