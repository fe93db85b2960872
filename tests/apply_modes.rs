//! `frontier apply`'s parser choice: `--policy codex` reads with the codex-mode parser unless
//! `--mode` says otherwise, `--mode codex` works under either policy, and an unknown mode is a
//! usage error. Codex's scenarios go through the binary, as a user would run them.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/codex-apply-patch")
}

const PADDED: [&str; 3] = [
    "017_whitespace_padded_hunk_header",
    "018_whitespace_padded_patch_markers",
    "020_whitespace_padded_patch_marker_lines",
];

fn copy_tree(from: &Path, to: &Path) {
    let Ok(entries) = fs::read_dir(from) else {
        return;
    };
    for e in entries {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            fs::create_dir_all(&target).unwrap();
            copy_tree(&e.path(), &target);
        } else {
            fs::copy(e.path(), target).unwrap();
        }
    }
}

/// Files as (relative path, bytes), sorted.
type Files = Vec<(String, Vec<u8>)>;

/// The files under `root`.
fn files(root: &Path) -> Files {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.push((rel, fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// Runs `frontier apply --lang apply_patch ARGS patch.txt` on a copy of the scenario's input;
/// returns the exit status, stderr, the files afterwards and the expected files.
fn scenario(name: &str, args: &[&str]) -> (i32, String, Files, Files) {
    let dir = scenarios_dir().join(name);
    let work = tempfile::tempdir().unwrap();
    copy_tree(&dir.join("input"), work.path());
    let out = Command::new(env!("CARGO_BIN_EXE_frontier"))
        .args(["apply", "--lang", "apply_patch"])
        .args(args)
        .arg("--root")
        .arg(work.path())
        .arg(dir.join("patch.txt"))
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        files(work.path()),
        files(&dir.join("expected")),
    )
}

/// The 23 scenarios' names, sorted.
fn scenario_names() -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(scenarios_dir())
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 23);
    names
}

#[test]
fn policy_codex_reproduces_every_scenario_through_the_binary() {
    for name in &scenario_names() {
        let (_, err, got, expected) = scenario(name, &["--policy", "codex"]);
        assert_eq!(got, expected, "{name}: {err}");
    }
}

#[test]
fn the_default_safe_policy_reproduces_every_scenario_but_015_through_the_binary() {
    for name in &scenario_names() {
        let (code, err, got, expected) = scenario(name, &[]);
        if name == "015_failure_after_partial_success_leaves_changes" {
            let mut input = files(&scenarios_dir().join(name).join("input"));
            input.sort();
            assert_eq!((code, got), (1, input), "{name}: atomic, nothing changed");
        } else {
            assert_eq!(got, expected, "{name}: {err}");
        }
    }
}

#[test]
fn padded_markers_apply_by_default_and_with_policy_codex_or_mode_codex() {
    for name in PADDED {
        for args in [
            &[][..],
            &["--policy", "codex"],
            &["--policy", "codex", "--mode", "codex"],
            &["--mode", "codex"],
        ] {
            let (code, err, got, expected) = scenario(name, args);
            assert_eq!((code, got), (0, expected), "{name} {args:?}: {err}");
        }
    }
}

#[test]
fn the_strict_mode_still_refuses_padded_markers() {
    for name in PADDED {
        for args in [
            &["--mode", "strict"][..],
            &["--policy", "codex", "--mode", "strict"],
        ] {
            let (code, err, got, _) = scenario(name, args);
            let mut input = files(&scenarios_dir().join(name).join("input"));
            input.sort();
            assert_eq!((code, got), (1, input), "{name} {args:?}");
            assert!(err.contains("[parse_error]"), "{err}");
        }
    }
}

#[test]
fn an_unknown_mode_is_a_usage_error() {
    let work = tempfile::tempdir().unwrap();
    for (lang, mode, expected) in [
        (
            "apply_patch",
            "git",
            "unknown mode \"git\" for apply_patch (modes: strict, codex, environment)",
        ),
        (
            "udiff",
            "codex",
            "unknown mode \"codex\" for udiff (modes: strict, git, recount)",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_frontier"))
            .args(["apply", "--lang", lang, "--mode", mode, "--root"])
            .arg(work.path())
            .arg("-")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(expected), "{err}");
        assert!(out.stdout.is_empty());
    }
}
