//! `frontier run` as a command: flags, the transcript file, exit statuses.

mod agent_support;

use std::path::Path;
use std::process::Command;

use agent_support::{assert_success, session_path};

fn frontier() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_frontier"));
    // `run` makes its run directories there, not in the home directory.
    command.env("XDG_STATE_HOME", env!("CARGO_TARGET_TMPDIR"));
    command
}

/// Writes `turns` (replay JSON lines) to `name` in `dir` and runs them with `dir` as the root.
fn replay_in(dir: &Path, name: &str, turns: &str) -> std::process::Output {
    let file = dir.join(name);
    std::fs::write(&file, turns).unwrap();
    frontier()
        .args(["run", "--model"])
        .arg(format!("replay:{}", file.display()))
        .arg("--root")
        .arg(dir)
        .output()
        .unwrap()
}

#[test]
fn replays_a_session_into_a_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("t.jsonl");
    let root = dir.path().join("ws");
    std::fs::create_dir(&root).unwrap();
    let out = frontier()
        .args(["run", "--model"])
        .arg(format!("replay:{}", session_path("fix_greeting.jsonl")))
        .arg("--root")
        .arg(&root)
        .args(["--task", "fix the greeting", "--chunk", "3", "--transcript"])
        .arg(&transcript)
        .output()
        .unwrap();
    assert_success(&out);
    assert!(out.stdout.is_empty());
    let text = std::fs::read_to_string(&transcript).unwrap();
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["type"], "task");
    assert_eq!(first["text"], "fix the greeting");
    assert!(text.lines().last().unwrap().contains(r#""status":"done""#));
    assert_eq!(
        std::fs::read_to_string(root.join("greet.sh")).unwrap(),
        "name=\"${1:-world}\"\necho \"Hello, $name!\"\n"
    );
}

#[test]
fn exit_status_one_for_a_broken_stream_two_for_bad_usage() {
    let dir = tempfile::tempdir().unwrap();
    // The shipped noise session recovers from its stray prose: a clean end.
    let out = frontier()
        .args(["run", "--model"])
        .arg(format!("replay:{}", session_path("noise.jsonl")))
        .arg("--root")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains(r#""reason":"stream_error_nudge""#));
    // A session that breaks and never answers the nudge ends with status 1.
    let out = replay_in(
        dir.path(),
        "broken.jsonl",
        "{\"output\":\"call c1 list_dir\\narg path 1\\n.end\\nSure!\",\"finish\":\"stop\"}\n",
    );
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains(r#""type":"stream_error""#));
    assert!(stdout.contains(r#""status":"stream_error""#));
    assert!(String::from_utf8_lossy(&out.stderr).contains("stream_error"));
    // Cut off by the output limit at a call boundary, with nothing after: status 1 too.
    let out = replay_in(
        dir.path(),
        "cut.jsonl",
        "{\"output\":\"call c1 list_dir\\narg path 1\\n.end\\n\",\"finish\":\"length\"}\n",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("output_cut_off"));

    let background = frontier()
        .args(["run", "--toolset", "background", "--model"])
        .arg(format!("replay:{}", session_path("fix_greeting.jsonl")))
        .arg("--root")
        .arg(dir.path())
        .output()
        .unwrap();
    // Refusals are not failures of the run.
    assert_eq!(background.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&background.stdout).contains("forbidden_by_toolset"));

    for bad in [
        vec!["run", "--model", "gpt", "--root", "."],
        vec![
            "run",
            "--model",
            "replay:/nonexistent/session.jsonl",
            "--root",
            ".",
        ],
        vec!["run", "--model", "replay:x", "--root", "/nonexistent/root"],
        vec![
            "run",
            "--model",
            "replay:x",
            "--root",
            ".",
            "--toolset",
            "root",
        ],
    ] {
        let out = frontier().args(&bad).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
    }
    let bad_session = dir.path().join("bad.jsonl");
    std::fs::write(&bad_session, "{\"output\":\"x\",\"finish\":\"maybe\"}\n").unwrap();
    let out = frontier()
        .args(["run", "--model"])
        .arg(format!("replay:{}", bad_session.display()))
        .arg("--root")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 1"));
}

#[test]
fn openai_without_a_model_name_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = frontier()
        .args(["run", "--model", "openai", "--root"])
        .arg(dir.path())
        .env_remove("OPENAI_MODEL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("OPENAI_MODEL"));
}

#[test]
fn a_forged_write_leaves_the_transcript_inside_the_root_intact() {
    // The docs' own example: `--root . --transcript run.jsonl`, and a model that writes it.
    let dir = tempfile::tempdir().unwrap();
    let forged = "{\"type\":\"task\",\"text\":\"forged\"}\n";
    let session = dir.path().join("forge.jsonl");
    let command = "echo forged >>run.jsonl";
    let frame = format!(
        "call c1 write_file\narg path 9\nrun.jsonlarg content {}\n{forged}end\n\
         call c2 shell\narg command {}\n{command}end\n",
        forged.len(),
        command.len()
    );
    std::fs::write(
        &session,
        serde_json::json!({"output": frame, "finish": "tool_calls"}).to_string() + "\n",
    )
    .unwrap();
    let out = frontier()
        .current_dir(dir.path())
        .args(["run", "--model"])
        .arg(format!("replay:{}", session.display()))
        .args(["--root", ".", "--transcript", "run.jsonl"])
        .output()
        .unwrap();
    assert_success(&out);
    let text = std::fs::read_to_string(dir.path().join("run.jsonl")).unwrap();
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records[0]["type"], "task");
    assert_eq!(records[0]["text"], serde_json::Value::Null);
    assert_eq!(records.last().unwrap()["type"], "end");
    let refused: Vec<&serde_json::Value> =
        records.iter().filter(|r| r["type"] == "refused").collect();
    assert_eq!(refused.len(), 2, "{text}");
    for r in refused {
        assert!(r["reason"]
            .as_str()
            .unwrap()
            .starts_with("protected_path: "));
    }
    assert!(!text.lines().any(|l| l == "forged"), "{text}");
}

#[test]
fn a_shell_timeout_past_its_bound_is_refused_before_anything_runs() {
    // The option is bounded at parse time (`docs/cli.md`); the shell itself takes any
    // `Duration` (`tests/agent_loop.rs`).
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("shell.jsonl");
    let frame = "call c1 shell\narg command 14\ntouch ran.txtend\n";
    std::fs::write(
        &session,
        serde_json::json!({"output": frame, "finish": "tool_calls"}).to_string() + "\n",
    )
    .unwrap();
    let out = frontier()
        .args(["run", "--shell-timeout", "18446744073709551615", "--model"])
        .arg(format!("replay:{}", session.display()))
        .arg("--root")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--shell-timeout"));
    assert!(out.stdout.is_empty());
    assert!(!dir.path().join("ran.txt").exists());
}
