//! Spec-audit cases for the context engine and its commands (`context.md`,
//! `cpat_reference.md`): behaviours the spec states that the other context tests did not pin
//! down, each found by probing the binary and the library.

mod cli_support;

use std::sync::Arc;

use cli_support::run;
use frontier::agent::context::vocab::VocabCounter;
use frontier::context::durable::Durability;
use frontier::context::tokens::TokenCounter;
use frontier::context::{Actor, Config, Engine, Message};
use frontier::mask::vocab::tiktoken::{self, Builtin};
use serde_json::Value;

/// `frontier context replay RUN_DIR` rebuilds any run `frontier run` writes, and a run
/// counted in the model's own tokens (`--vocab`, `run.json` naming `vocab:<VOCAB>`) is
/// rebuilt with that vocabulary, not refused for not being CPAT's estimator.
#[test]
fn replay_rebuilds_a_run_counted_with_a_vocabulary() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let vocab = Arc::new(tiktoken::builtin(Builtin::Cl100kBase).unwrap());
    let counter: Arc<dyn TokenCounter> =
        Arc::new(VocabCounter::new(vocab.clone(), "tiktoken:cl100k_base"));
    let mut engine =
        Engine::create(&run_dir, Config::default(), counter, Durability::Flush).unwrap();
    engine
        .ingest(Message::System {
            text: "You are an agent.".into(),
        })
        .unwrap();
    engine
        .ingest(Message::User {
            text: "Why did the nightly backup fail?".into(),
            origin: None,
        })
        .unwrap();
    engine
        .apply_args(r#"{"reason":"nothing yet","operations":[]}"#, Actor::Agent)
        .unwrap();
    let expected_view = engine.view();
    let expected_budget = engine.budget();
    drop(engine);

    let (code, out, err) = run(
        ["context".as_ref(), "replay".as_ref(), run_dir.as_os_str()],
        b"",
    );
    assert_eq!(code, 0, "{err}");
    let line: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(line["records"], 3);
    assert_eq!(line["stopped"], Value::Null);
    let user = &line["blocks"][1];
    let text = "Why did the nightly backup fail?";
    assert_eq!(user["token_count"], vocab.encode(text).unwrap().len());
    assert_eq!(
        line["view"]["estimated_tokens"],
        expected_view.estimated_tokens
    );
    assert_eq!(
        line["view"]["messages"],
        serde_json::json!(expected_view.messages)
    );
    assert_eq!(line["budget"]["used"], expected_budget.used);
}

/// A run whose vocabulary cannot be loaded any more cannot be rebuilt: exit 1, and the
/// message names the vocabulary.
#[test]
fn replay_of_a_run_with_an_unknown_vocabulary_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let vocab = Arc::new(tiktoken::builtin(Builtin::Cl100kBase).unwrap());
    let counter: Arc<dyn TokenCounter> =
        Arc::new(VocabCounter::new(vocab, "tiktoken:no_such_encoding"));
    let mut engine =
        Engine::create(&run_dir, Config::default(), counter, Durability::Flush).unwrap();
    engine
        .ingest(Message::System {
            text: "You are an agent.".into(),
        })
        .unwrap();
    drop(engine);
    let (code, out, err) = run(
        ["context".as_ref(), "replay".as_ref(), run_dir.as_os_str()],
        b"",
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("no_such_encoding"), "{err}");
}

/// One CTL call with counted arguments.
fn ctl_call(id: &str, name: &str, args: &[(&str, &str)]) -> String {
    let mut s = format!("call {id} {name}\n");
    for (k, v) in args {
        s.push_str(&format!("arg {k} {}\n{v}", v.len()));
    }
    s.push_str("end\n");
    s
}

/// `frontier run` on replayed turns (CTL outputs, then an empty answer), in a fresh
/// workspace holding `files`; the run directory's journal records.
fn governed_run(files: &[(&str, String)], outputs: &[String], extra: &[&str]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    for (name, text) in files {
        std::fs::write(root.join(name), text).unwrap();
    }
    let mut replay = String::new();
    for output in outputs {
        replay.push_str(&serde_json::json!({"output": output, "finish": "tool_calls"}).to_string());
        replay.push('\n');
    }
    replay.push_str("{\"output\":\"\",\"finish\":\"stop\"}\n");
    let turns = dir.path().join("turns.jsonl");
    std::fs::write(&turns, replay).unwrap();
    let run_dir = dir.path().join("run");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_frontier"))
        .args(["run", "--task", "Summarise the files."])
        .arg("--model")
        .arg(format!("replay:{}", turns.display()))
        .arg("--root")
        .arg(&root)
        .arg("--run-dir")
        .arg(&run_dir)
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(run_dir.join("journal.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The runtime's patches, `(reason's step, ids)`, in journal order.
fn runtime_steps(records: &[Value]) -> Vec<(String, Vec<String>)> {
    records
        .iter()
        .filter(|r| r["type"] == "patch" && r["actor"] == "runtime" && r["result"]["ok"] == true)
        .map(|r| {
            let reason = r["reason"].as_str().unwrap();
            let step = reason.split(':').next().unwrap().to_owned();
            let ids = r["operations"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|op| op["ids"].as_array().unwrap().iter())
                .map(|id| id.as_str().unwrap().to_owned())
                .collect();
            (step, ids)
        })
        .collect()
}

/// Seed 004, 11.2, step 2: with a cold cache the tool results beyond the most recent N are
/// cleared. The most recent N are tool results, whatever their form: a result the spill step
/// has just offloaded is still the most recent one, so with N = 1 the older, inline result is
/// the stale one and is cleared.
#[test]
fn clear_stale_keeps_the_most_recent_results_even_when_they_are_spilled() {
    let older = "first result line with some words\n".repeat(60);
    let newer = "second result line with some words\n".repeat(300);
    let records = governed_run(
        &[("older.txt", older), ("newer.txt", newer)],
        &[
            ctl_call("c1", "read_file", &[("path", "older.txt")]),
            ctl_call("c2", "read_file", &[("path", "newer.txt")]),
        ],
        &[
            "--keep-recent",
            "1",
            "--cache-ttl",
            "0",
            "--spill-tokens",
            "1000",
        ],
    );
    let steps = runtime_steps(&records);
    // tool_004 is older.txt's result, tool_006 newer.txt's.
    assert_eq!(
        steps,
        [
            ("spill".to_owned(), vec!["tool_006".to_owned()]),
            ("clear_stale".to_owned(), vec!["tool_004".to_owned()]),
        ]
    );
}

/// Step 2 never clears the most recent N themselves: with N = 2 and two results, nothing is
/// stale.
#[test]
fn clear_stale_leaves_the_most_recent_n_alone() {
    let text = "a result line with some words\n".repeat(60);
    let records = governed_run(
        &[("a.txt", text.clone()), ("b.txt", text)],
        &[
            ctl_call("c1", "read_file", &[("path", "a.txt")]),
            ctl_call("c2", "read_file", &[("path", "b.txt")]),
        ],
        &["--keep-recent", "2", "--cache-ttl", "0"],
    );
    assert_eq!(runtime_steps(&records), []);
}
