//! `frontier check|trace|events --lang apply_patch --mode strict|codex` end to end.

use std::process::Command;

fn frontier(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_frontier"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
    )
}

#[test]
fn check_json_counts_files_and_chunks() {
    let (code, out) = frontier(&[
        "check",
        "--lang",
        "apply_patch",
        "--json",
        "--chunk",
        "3",
        "corpora/apply_patch/multi_chunk.patch",
        "corpora/apply_patch/invalid_utf8.patch",
    ]);
    assert_eq!(code, 1);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["verdict"], "complete");
    assert_eq!(
        lines[0]["units"],
        serde_json::json!({"files": 2, "chunks": 4})
    );
    assert_eq!(
        lines[1]["error"],
        serde_json::json!({"offset": 41, "byte": 40, "kind": "invalid_utf8"})
    );
    assert_eq!(lines[1]["confirmed"], 40);
    assert!(out.starts_with("{\"file\":\"corpora/apply_patch/multi_chunk.patch\",\"verdict\":"));
}

#[test]
fn modes_differ_where_codex_is_lenient() {
    let file = "corpora/apply_patch/codex_crlf.patch";
    let (strict, _) = frontier(&[
        "check",
        "--lang",
        "apply_patch",
        "--mode",
        "strict",
        "--json",
        file,
    ]);
    let (codex, out) = frontier(&[
        "check",
        "--lang",
        "apply_patch",
        "--mode",
        "codex",
        "--json",
        file,
    ]);
    assert_eq!((strict, codex), (1, 0));
    assert!(
        out.contains("\"units\":{\"files\":1,\"chunks\":1}"),
        "{out}"
    );
    let (code, _) = frontier(&["check", "--lang", "apply_patch", "--mode", "lenient", file]);
    assert_eq!(code, 2);
}

#[test]
fn trace_and_events() {
    let file = "corpora/apply_patch/update_move.patch";
    let (_, summary) = frontier(&["trace", "--lang", "apply_patch", "--summary", file]);
    let len = std::fs::read(file).unwrap().len();
    let v: serde_json::Value = serde_json::from_str(summary.trim()).unwrap();
    assert_eq!(v["prefixes"], len as u64 + 1);
    assert_eq!(v["accepting"], 2, "after `*** End Patch` and after its LF");
    let (_, trace) = frontier(&["trace", "--lang", "apply_patch", file]);
    assert_eq!(trace.lines().count(), len + 1);
    assert_eq!(
        trace.lines().next().unwrap(),
        "{\"at\":0,\"accepting\":false,\"allowed\":[[42,42]]}"
    );
    let (code, events) = frontier(&[
        "events",
        "--lang",
        "apply_patch",
        "--mode",
        "codex",
        "--chunk",
        "1",
        file,
    ]);
    assert_eq!(code, 0);
    assert!(
        events.contains("{\"event\":\"move_to\"}\n{\"event\":\"path\",\"data\":\"src/main.py\"}"),
        "{events}"
    );
    assert!(events.contains("{\"event\":\"file_end\",\"op\":\"update\"}"));
}

#[test]
fn the_environment_mode_takes_one_environment_id_line() {
    let dir = tempfile::tempdir().unwrap();
    let patch = dir.path().join("env.patch");
    std::fs::write(
        &patch,
        "*** Begin Patch\n*** Environment ID: prod\n*** Add File: a\n+x\n*** End Patch\n",
    )
    .unwrap();
    let file = patch.to_str().unwrap();
    let check = |mode: &str| {
        frontier(&[
            "check",
            "--lang",
            "apply_patch",
            "--mode",
            mode,
            "--json",
            file,
        ])
    };
    let (code, out) = check("environment");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(r#""units":{"files":1,"chunks":0}"#), "{out}");
    // Strict mode refuses the line at its `E` (byte 20).
    let (code, out) = check("strict");
    assert_eq!(code, 1);
    assert!(
        out.contains(r#""error":{"offset":20,"byte":69,"kind":"bad_marker"}"#),
        "{out}"
    );
    let (code, out) = frontier(&[
        "events",
        "--lang",
        "apply_patch",
        "--mode",
        "environment",
        file,
    ]);
    assert_eq!(code, 0);
    assert!(
        out.contains("{\"event\":\"environment\"}\n{\"event\":\"path\",\"data\":\"prod\"}"),
        "{out}"
    );
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let (code, out) = frontier(&[
        "apply",
        "--lang",
        "apply_patch",
        "--mode",
        "environment",
        "--root",
        root.to_str().unwrap(),
        file,
    ]);
    assert_eq!((code, out.as_str()), (0, "A a\n"));
    assert_eq!(std::fs::read_to_string(root.join("a")).unwrap(), "x\n");
}
