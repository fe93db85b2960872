//! `frontier context apply` on the shipped cases (`corpora/context/`, their expected lines in
//! `corpora/context/expected/`), its exit statuses and bad case files; `frontier context
//! replay` on a run written by the engine, whole and cut off.

mod cli_support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cli_support::run;
use frontier::context::durable::{Durability, JOURNAL_FILE};
use frontier::context::tokens::CpatEstimator;
use frontier::context::{Actor, Config, Engine, Message};
use serde_json::Value;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/context")
}

fn cases() -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(corpus())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    cases.sort();
    cases
}

#[test]
fn every_shipped_case_prints_its_expected_line() {
    let cases = cases();
    assert!(cases.len() >= 8, "{cases:?}");
    for case in &cases {
        let name = case.file_stem().unwrap().to_str().unwrap();
        let (code, out, err) = run(
            ["context".as_ref(), "apply".as_ref(), case.as_os_str()],
            b"",
        );
        let line: Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{name}: {e}: {out}"));
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(corpus().join("expected").join(format!("{name}.json")))
                .unwrap(),
        )
        .unwrap();
        assert_eq!(line, expected, "{name}");
        assert_eq!(out.lines().count(), 1);
        assert_eq!(
            code,
            if line["ok"] == true { 0 } else { 1 },
            "{name}: {err}"
        );
        assert_eq!(line["case"], name);
    }
}

#[test]
fn a_case_on_standard_input_is_read_for_a_dash() {
    let offload = corpus().join("offload.json");
    let (_, from_file, _) = run(
        ["context".as_ref(), "apply".as_ref(), offload.as_os_str()],
        b"",
    );
    let text = std::fs::read(&offload).unwrap();
    let (code, piped, err) = run(["context", "apply", "-"], &text);
    assert_eq!(code, 0, "{err}");
    let (mut file_line, mut piped_line): (Value, Value) = (
        serde_json::from_str(&from_file).unwrap(),
        serde_json::from_str(&piped).unwrap(),
    );
    assert_eq!(piped_line["case"], "-");
    file_line["case"] = Value::Null;
    piped_line["case"] = Value::Null;
    assert_eq!(piped_line, file_line);
}

#[test]
fn several_cases_one_line_each_in_order_and_a_bad_case_file_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"blocks":[{"id":"x"}]}"#).unwrap();
    let missing = dir.path().join("missing.json");
    let offload = corpus().join("offload.json");
    let compact = corpus().join("compact_turn.json");
    let (code, out, err) = run(
        [
            "context".as_ref(),
            "apply".as_ref(),
            offload.as_os_str(),
            bad.as_os_str(),
            missing.as_os_str(),
            compact.as_os_str(),
        ],
        b"",
    );
    assert_eq!(code, 2, "{err}");
    let names: Vec<String> = out
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["case"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(names, ["offload", "compact_turn"]);
    assert!(
        err.contains("bad.json: block 0: missing field `role`"),
        "{err}"
    );
    assert!(err.contains("missing.json: No such file"), "{err}");
}

#[test]
fn max_tokens_sets_the_budget_and_is_bounded() {
    let offload = corpus().join("offload.json");
    let (code, out, _) = run(
        [
            "context".as_ref(),
            "apply".as_ref(),
            "--max-tokens".as_ref(),
            "1000".as_ref(),
            offload.as_os_str(),
        ],
        b"",
    );
    assert_eq!(code, 0);
    let line: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(line["budget"]["max"], 1000);
    assert_eq!(line["budget"]["soft_limit"], 700);
    for bad in ["0", "-1", "x", "1000000001"] {
        let (code, _, err) = run(
            [
                "context".as_ref(),
                "apply".as_ref(),
                "--max-tokens".as_ref(),
                bad.as_ref(),
                offload.as_os_str(),
            ],
            b"",
        );
        assert_eq!(code, 2, "{bad}: {err}");
    }
}

/// A new engine writing its run to `dir`: the default configuration, CPAT's estimator,
/// journal entries synced.
fn engine(dir: &Path) -> Engine {
    Engine::create(
        dir,
        Config::default(),
        Arc::new(CpatEstimator),
        Durability::Fsync,
    )
    .unwrap()
}

/// A user message of the run (not the runtime's).
fn user(text: &str) -> Message {
    Message::User {
        text: text.into(),
        origin: None,
    }
}

/// An assistant message without calls or reasoning.
fn assistant(text: &str) -> Message {
    Message::Assistant {
        text: text.into(),
        tool_calls: vec![],
        reasoning: None,
    }
}

/// Applies the agent's patch `args` to `e`; it must succeed.
fn apply_ok(e: &mut Engine, args: &str) {
    let r = e.apply_args(args, Actor::Agent).unwrap();
    assert!(r.ok, "{args}");
}

/// `frontier context replay DIR`: the exit status and both outputs.
fn replay(dir: &Path) -> (i32, String, String) {
    run(
        ["context".as_ref(), "replay".as_ref(), dir.as_os_str()],
        b"",
    )
}

fn write_run(dir: &Path) -> Engine {
    let mut e = engine(dir);
    e.ingest(Message::System { text: "sys".into() }).unwrap();
    e.ingest(user("q")).unwrap();
    e.ingest(assistant("a")).unwrap();
    e.ingest(user("q2")).unwrap();
    apply_ok(
        &mut e,
        r#"{"reason":"r","operations":[{"op":"compact","ids":["user_002","assistant_003"],"description":"d","content":"c","preserve":["p"],"drop":[]}]}"#,
    );
    e
}

#[test]
fn replay_prints_the_rebuilt_store_and_its_view() {
    let dir = tempfile::tempdir().unwrap();
    let e = write_run(dir.path());
    let (code, out, err) = replay(dir.path());
    assert_eq!(code, 0, "{err}");
    assert_eq!(err, "");
    let line: Value = serde_json::from_str(&out).unwrap();
    let blocks: Vec<_> = e.store().iter().collect();
    assert_eq!(line["blocks"], serde_json::to_value(blocks).unwrap());
    assert_eq!(line["view"], serde_json::to_value(e.view()).unwrap());
    assert_eq!(line["seq"], e.seq());
    assert_eq!(line["records"], 6);
    assert_eq!(line["stopped"], Value::Null);
    assert_eq!(line["budget"]["pressure"], "ok");
}

#[test]
fn replay_of_a_cut_journal_says_where_it_stopped_and_a_tampered_payload_fails() {
    let dir = tempfile::tempdir().unwrap();
    write_run(dir.path());
    let journal = dir.path().join(JOURNAL_FILE);
    let text = std::fs::read(&journal).unwrap();
    std::fs::write(&journal, &text[..text.len() - 10]).unwrap();
    let (code, out, err) = replay(dir.path());
    assert_eq!(code, 0, "{err}");
    let line: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(line["stopped"]["reason"], "unfinished_change");
    assert_eq!(line["stopped"]["line"], 5);
    assert_eq!(line["records"], 4);
    assert!(
        err.contains("the journal ends inside a change at line 5"),
        "{err}"
    );
    std::fs::write(&journal, &text).unwrap();
    std::fs::write(dir.path().join("content/user_002@v1.txt"), "not q").unwrap();
    let (code, out, err) = replay(dir.path());
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(err.contains("content user_002@v1: altered"), "{err}");
    let (code, _, err) = run(["context", "replay", "/nonexistent/run"], b"");
    assert_eq!(code, 2, "{err}");
}

/// The sample run of `corpora/context/run/` (used by `docs/context.md`): a short session with
/// an offload and a compact, on a fixed clock.
fn sample_run(dir: &Path) {
    let mut e = engine(dir);
    let mut n = 0;
    e.set_clock(move || {
        n += 1;
        format!("2026-12-01T12:00:{n:02}.000Z")
    });
    e.ingest(Message::System {
        text: "You are a research agent.".into(),
    })
    .unwrap();
    e.ingest(user("Why did the backup fail?")).unwrap();
    e.ingest(Message::Assistant {
        text: String::new(),
        tool_calls: vec![frontier::context::block::ToolCall {
            id: "call_1".into(),
            kind: "function".into(),
            function: frontier::context::block::FunctionCall {
                name: "read_file".into(),
                arguments: r#"{"path":"backup.log"}"#.into(),
            },
        }],
        reasoning: None,
    })
    .unwrap();
    e.ingest(Message::ToolResult {
        tool_call_id: "call_1".into(),
        name: "read_file".into(),
        text: format!(
            "ERROR disk full at 12:00\n{}INFO retry ok",
            "INFO retry\n".repeat(60)
        ),
    })
    .unwrap();
    apply_ok(
        &mut e,
        r#"{"reason":"the log is read","operations":[{"op":"payload_offload","ids":["tool_004"],"description":"backup.log (offloaded)","content":"disk full at 12:00; 60 retries, the last ok","retrieval_hint":"artifact_get for the whole log"}]}"#,
    );
    e.ingest(assistant("The disk was full at 12:00.")).unwrap();
    e.ingest(user("What should we change?")).unwrap();
    apply_ok(
        &mut e,
        r#"{"reason":"the first question is answered","operations":[{"op":"compact","ids":["user_002","assistant_003","tool_004","assistant_005"],"description":"first question","content":"The backup failed: the disk was full at 12:00 (log at artifact://tool_004@v1).","preserve":["disk full at 12:00"],"drop":["retry lines"]}]}"#,
    );
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for sub in ["", "content"] {
        for entry in std::fs::read_dir(dir.join(sub)).unwrap() {
            let p = entry.unwrap().path();
            if p.is_file() {
                let name = p.strip_prefix(dir).unwrap().display().to_string();
                out.push((name, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_shipped_sample_run_is_what_the_engine_writes() {
    let dir = tempfile::tempdir().unwrap();
    sample_run(dir.path());
    let shipped = corpus().join("run");
    if std::env::var_os("CONTEXT_BLESS").is_some() {
        let _ = std::fs::remove_dir_all(&shipped);
        std::fs::create_dir_all(shipped.join("content")).unwrap();
        for (name, bytes) in files(dir.path()) {
            std::fs::write(shipped.join(name), bytes).unwrap();
        }
    }
    assert_eq!(files(&shipped), files(dir.path()));
}

#[test]
fn a_calls_prompt_tokens_calibrate_the_estimate_and_a_count_of_zero_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = engine(dir.path());
    e.ingest(Message::System { text: "sys".into() }).unwrap();
    e.ingest(user("a question long enough to count for something"))
        .unwrap();
    let raw = e.budget().used;
    assert!(raw > 0);
    // No count, then 0: the raw estimate.
    e.record_llm_call("m", &serde_json::json!({})).unwrap();
    e.record_llm_call("m", &serde_json::json!({"prompt_tokens": 0}))
        .unwrap();
    assert_eq!(e.budget().used, raw);
    // Ten times the estimate: clamped to twice.
    e.record_llm_call("m", &serde_json::json!({"prompt_tokens": raw * 10}))
        .unwrap();
    assert_eq!(e.budget().used, raw * 2);
    // A later 0 or a call without a count keeps the last calibration.
    e.record_llm_call("m", &serde_json::json!({"prompt_tokens": 0}))
        .unwrap();
    e.record_llm_call("m", &serde_json::json!({})).unwrap();
    assert_eq!(e.budget().used, raw * 2);
}

#[test]
fn a_counter_below_the_blocks_numbers_never_makes_a_second_block_of_one_id() {
    let block = |id: &str, role: &str, kind: &str, text: &str| serde_json::json!({"id": id, "role": role, "kind": kind, "content": text});
    let case = serde_json::json!({
        "blocks": [
            block("user_001", "user", "user_message", "first"),
            block("assistant_002", "assistant", "assistant_message", "a long answer to compact"),
            block("summary_003", "runtime", "summary", "an older summary"),
            block("user_004", "user", "user_message", "second"),
        ],
        "id_counter": 2,
        "args": {"reason": "r", "operations": [{"op": "compact", "ids": ["assistant_002"],
            "description": "d", "content": "c", "preserve": ["p"], "drop": []}]},
    });
    let line = frontier::context::case::run("c", &case.to_string(), 16_000).unwrap();
    assert_eq!(line["ok"], true, "{line}");
    assert_eq!(
        line["created_block_ids"],
        serde_json::json!(["summary_004"])
    );
    let ids: Vec<&str> = line["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "{ids:?}");
}
