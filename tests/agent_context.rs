//! Context governance in the loop: the ladder's steps under a small window (journal records
//! checked), the current question through compaction, tool-call chains paired in every
//! request a loopback server receives, `context_update` and `artifact_get` round trips, a
//! malformed `context_update`, the `context_overflow` path compacting once, and the usage
//! each Chat stream reports journaled with its call.

mod agent_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use agent_support::assert_success;
use agent_support::server::{self, Reply};
use frontier::agent::context::{Ladder, Settings, MUST_ACT_REMINDER};
use frontier::agent::openai::{OpenAi, OpenAiConfig};
use frontier::agent::replay::{Replay, Turn};
use frontier::agent::{Config, EndStatus, Finish, ModelSource};
use frontier::apply::Workspace;
use frontier::context::block::{Kind, Visibility};
use frontier::context::durable::Durability;
use frontier::context::tokens::CpatEstimator;
use frontier::language::CtlMode;
use frontier::mask::vocab::tiktoken::{self, Builtin};
use serde_json::{json, Value};

const TASK: &str = "Summarise the files big.txt, a.txt and b.txt.";

/// One call in extended CTL: one-line values inline, others as heredocs.
fn call(id: &str, name: &str, args: &[(&str, &str)]) -> String {
    let mut s = format!("call {id} {name}\n");
    for (k, v) in args {
        if v.contains('\n') {
            s.push_str(&format!("arg {k} <<EOF\n{v}\nEOF\n"));
        } else {
            s.push_str(&format!("arg {k} = {v}\n"));
        }
    }
    s.push_str("end\n");
    s
}

fn calls(text: String) -> Turn {
    Turn::Output {
        bytes: text.into_bytes(),
        finish: Finish::ToolCalls,
    }
}

/// The end of the task: a turn without calls (CTL has no prose).
fn done() -> Turn {
    answer("")
}

/// A turn of text (the compaction call's answer is not CTL).
fn answer(text: &str) -> Turn {
    Turn::Output {
        bytes: text.as_bytes().to_vec(),
        finish: Finish::Stop,
    }
}

/// Lines of `n` bytes each, numbered, `count` of them.
fn lines(tag: &str, count: usize) -> String {
    (0..count)
        .map(|i| format!("{tag} line {i:04} of the file, some words to fill it up\n"))
        .collect()
}

/// A workspace with big.txt, a.txt and b.txt.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.txt"), lines("big", 90)).unwrap();
    std::fs::write(dir.path().join("a.txt"), lines("a", 36)).unwrap();
    std::fs::write(dir.path().join("b.txt"), lines("b", 36)).unwrap();
    dir
}

/// The ladder's settings for the scenario: a 6,000-token window, spill over 1,000 tokens,
/// one recent result kept, a cache that is always cold, fold above 60 %, compact above 75 %.
fn small_window(run_dir: &Path) -> Settings {
    let mut s = Settings::new(run_dir);
    s.budget.max_tokens = 6000;
    s.ladder = Ladder {
        spill_tokens: 1000,
        preview_chars: 200,
        keep_recent: 1,
        cache_ttl: std::time::Duration::ZERO,
        collapse_ratio: 0.6,
        compact_ratio: 0.75,
    };
    s.durability = Durability::Flush;
    s
}

const SUMMARY: &str = "<analysis>scratch: the user asked for summaries</analysis>\n<summary>\nThe user asked to summarise big.txt, a.txt and b.txt; all three were read; w.txt was written.\n</summary>\n";

/// The scenario: six calls, a compaction answer, a final answer.
fn scenario() -> Vec<Turn> {
    vec![
        calls(call("c1", "read_file", &[("path", "big.txt")])),
        calls(call("c2", "read_file", &[("path", "a.txt")])),
        calls(call("c3", "read_file", &[("path", "b.txt")])),
        calls(call(
            "c4",
            "write_file",
            &[("path", "w.txt"), ("content", &lines("w", 45))],
        )),
        calls(call(
            "c5",
            "write_file",
            &[("path", "x.txt"), ("content", &lines("x", 160))],
        )),
        answer(SUMMARY),
        done(),
    ]
}

/// The journal's records.
fn journal(run_dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(run_dir.join("journal.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The runtime's patches: `(step, ok)` from the reason's first word.
fn runtime_patches(records: &[Value]) -> Vec<(String, bool)> {
    records
        .iter()
        .filter(|r| r["type"] == "patch" && r["actor"] == "runtime")
        .map(|r| {
            let reason = r["reason"].as_str().unwrap();
            let step = reason.split(':').next().unwrap().to_owned();
            (step, r["result"]["ok"].as_bool().unwrap())
        })
        .collect()
}

fn transcript_records(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Writes `turns` as a replay file declaring extended CTL in `dir`; returns its path.
fn extended_replay(dir: &Path, turns: &[Turn]) -> PathBuf {
    let replay = dir.join("turns.jsonl");
    let mut text = String::from("{\"ctl_mode\":\"extended\"}\n");
    text.push_str(&frontier::agent::replay::to_jsonl(turns));
    std::fs::write(&replay, text).unwrap();
    replay
}

/// `frontier run --task TASK` on the replay file `replay` in `root`, its run directory
/// `run_dir`, with `extra` flags.
fn frontier_run(replay: &Path, root: &Path, run_dir: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_frontier"))
        .args(["run", "--task", TASK])
        .arg("--model")
        .arg(format!("replay:{}", replay.display()))
        .arg("--root")
        .arg(root)
        .arg("--run-dir")
        .arg(run_dir)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn the_ladder_fires_in_order_under_a_small_window() {
    let root = workspace();
    let runs = tempfile::tempdir().unwrap();
    let run_dir = runs.path().join("run");
    let replay = extended_replay(runs.path(), &scenario());
    let out = frontier_run(
        &replay,
        root.path(),
        &run_dir,
        &[
            "--chunk",
            "7",
            "--context-window",
            "6000",
            "--spill-tokens",
            "1000",
            "--preview-chars",
            "200",
            "--keep-recent",
            "1",
            "--cache-ttl",
            "0",
            "--collapse-ratio",
            "0.6",
            "--compact-ratio",
            "0.75",
        ],
    );
    assert_success(&out);
    let transcript = transcript_records(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(transcript.last().unwrap()["status"], "done");
    let records = journal(&run_dir);
    let patches = runtime_patches(&records);
    // Every step fired and committed, and the first of each came in the ladder's order.
    let first = |step: &str| {
        patches
            .iter()
            .position(|(s, ok)| s == step && *ok)
            .unwrap_or_else(|| panic!("no committed {step} in {patches:?}"))
    };
    let order = [
        first("spill"),
        first("clear_stale"),
        first("fold"),
        first("compact"),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{patches:?}");
    // The spill left a preview and the key; the compaction's summary has no analysis.
    let spill = records
        .iter()
        .find(|r| r["type"] == "patch" && r["reason"].as_str().unwrap().starts_with("spill"))
        .unwrap();
    let op = &spill["operations"][0];
    assert_eq!(op["op"], "payload_offload");
    assert!(op["replace_with"]["summary"]
        .as_str()
        .unwrap()
        .contains("big line 0000"));
    let compact = records
        .iter()
        .find(|r| r["type"] == "patch" && r["reason"].as_str().unwrap().starts_with("compact"))
        .unwrap();
    let summary = compact["operations"][0]["output"]["content"]
        .as_str()
        .unwrap();
    assert!(
        summary.starts_with("The user asked to summarise"),
        "{summary}"
    );
    assert!(!summary.contains("analysis") && !summary.contains("<summary>"));
    // The transcript says the same, step by step.
    let steps: Vec<&str> = transcript
        .iter()
        .filter(|r| r["type"] == "context")
        .map(|r| r["step"].as_str().unwrap())
        .collect();
    for step in ["spill", "clear_stale", "fold", "compact"] {
        assert!(steps.contains(&step), "{steps:?}");
    }
    // The run directory replays: the view the model would see next keeps the question.
    let replayed = frontier::context::replay::replay(&run_dir, Arc::new(CpatEstimator)).unwrap();
    assert!(replayed.stopped.is_none());
    let view = replayed.engine.view();
    assert!(view
        .messages
        .iter()
        .any(|m| m.role == "user" && m.content.ends_with(TASK)));
    // The tools never reached the run directory: it holds the engine's files only.
    let mut names: Vec<String> = std::fs::read_dir(&run_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["content", "journal.jsonl", "run.json"]);
}

/// The calls an assistant message makes and the results a user message carries.
fn ids(content: &str, word: &str) -> Vec<String> {
    content
        .lines()
        .filter_map(|l| l.strip_prefix(word))
        .filter_map(|rest| rest.split(' ').next())
        .map(str::to_owned)
        .collect()
}

/// Every call in a request is answered by the user message right after it, and every result
/// answers a call of the assistant message right before it.
fn assert_paired(body: &Value) {
    let messages = body["messages"].as_array().unwrap();
    for (i, m) in messages.iter().enumerate() {
        let content = m["content"].as_str().unwrap_or("");
        if m["role"] == "assistant" {
            let made = ids(content, "call ");
            if made.is_empty() {
                continue;
            }
            let next = messages.get(i + 1).expect("a call is answered");
            assert_eq!(next["role"], "user", "{body}");
            let answered = ids(next["content"].as_str().unwrap(), "result ");
            assert_eq!(answered, made, "call without its result in {body}");
        } else if m["role"] == "user" {
            let answered = ids(content, "result ");
            if answered.is_empty() {
                continue;
            }
            let before = &messages[i - 1];
            assert_eq!(before["role"], "assistant", "{body}");
            let made = ids(before["content"].as_str().unwrap(), "call ");
            assert_eq!(made, answered, "result without its call in {body}");
        }
    }
}

/// Runs `model` on the task in `root`, in extended CTL, governed by `settings`; returns the
/// end status and the transcript's records.
fn run_governed(
    model: &mut dyn ModelSource,
    root: &Path,
    settings: Settings,
) -> (EndStatus, Vec<Value>) {
    let mut config = Config::new(Workspace::new(root).unwrap());
    config.task = Some(TASK.into());
    config.ctl_mode = CtlMode::Extended;
    config.context = Some(settings);
    let mut out = Vec::new();
    let status = frontier::agent::run(&config, model, &mut out).unwrap();
    (status, transcript_records(&String::from_utf8(out).unwrap()))
}

fn run_against(base: String, root: &Path, settings: Settings) -> (EndStatus, Vec<Value>) {
    let mut model = OpenAi::new(OpenAiConfig::new(base, "test-model"));
    run_governed(&mut model, root, settings)
}

/// What the loopback server answers to each request: the turn's content as a Chat event
/// stream (the whole content in one delta, then the finish).
fn replies(turns: &[Turn]) -> Vec<Reply> {
    let event = |delta: Value, finish: Value| {
        let v = json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {v}\n\n")
    };
    turns
        .iter()
        .map(|t| match t {
            Turn::Output { bytes, finish } => {
                let content = String::from_utf8(bytes.clone()).unwrap();
                let mut sse = event(
                    json!({"role": "assistant", "content": content}),
                    Value::Null,
                );
                sse.push_str(&event(json!({}), json!(finish.name())));
                sse.push_str("data: [DONE]\n\n");
                Reply::stream(sse.into_bytes())
            }
            Turn::ContextOverflow => unreachable!("the scenario has no overflow"),
        })
        .collect()
}

#[test]
fn chains_stay_paired_and_the_question_survives_in_every_request_sent() {
    let root = workspace();
    let runs = tempfile::tempdir().unwrap();
    let turns = scenario();
    let (base, server) = server::serve(replies(&turns), 1);
    let base = format!("{base}/v1");
    let (status, transcript) = run_against(base, root.path(), small_window(runs.path()));
    assert_eq!(status, EndStatus::Done, "{transcript:?}");
    let bodies: Vec<Value> = server.join().unwrap().into_iter().map(|r| r.body).collect();
    assert_eq!(bodies.len(), turns.len());
    let compaction = bodies
        .iter()
        .position(|b| {
            let last = b["messages"].as_array().unwrap().last().unwrap();
            last["content"]
                .as_str()
                .unwrap()
                .starts_with("CRITICAL: Respond with TEXT ONLY.")
        })
        .expect("one request is the compaction call");
    assert_eq!(compaction, 5);
    for body in &bodies {
        assert_paired(body);
        // The current question, verbatim, in every request, compaction or not.
        let question = format!("[block:user_002]\n{TASK}");
        assert!(
            body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["role"] == "user" && m["content"] == question.as_str()),
            "{body}"
        );
        // The manifest is the last message (the compaction prompt follows it).
        let messages = body["messages"].as_array().unwrap();
        let manifest = &messages[messages.len() - 1 - usize::from(body == &bodies[compaction])];
        assert!(manifest["content"]
            .as_str()
            .unwrap()
            .starts_with("<context_manifest>"));
    }
    // After the compaction the model sees the summary, not the analysis.
    let after = bodies.last().unwrap().to_string();
    assert!(after.contains("The user asked to summarise big.txt"));
    assert!(!after.contains("scratch: the user asked"));
    // Spilled and cleared results show their artifact keys in the requests after them.
    assert!(bodies[1].to_string().contains("artifact://tool_004@v1"));
}

fn run_replay(turns: Vec<Turn>, root: &Path, settings: Settings) -> (EndStatus, Vec<Value>) {
    run_governed(&mut Replay::new("context", turns, 5), root, settings)
}

fn results(transcript: &[Value]) -> Vec<(String, bool, String)> {
    transcript
        .iter()
        .filter(|r| r["type"] == "tool_result")
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_owned(),
                r["ok"].as_bool().unwrap(),
                r["output"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn context_update_and_artifact_get_round_trip() {
    let root = workspace();
    let runs = tempfile::tempdir().unwrap();
    let ops = r#"[{"op":"payload_offload","ids":["tool_004"],"description":"a.txt, offloaded","content":"a.txt: 36 numbered lines","retrieval_hint":"artifact_get it"}]"#;
    let turns = vec![
        calls(call("c1", "read_file", &[("path", "a.txt")])),
        calls(call(
            "c2",
            "context_update",
            &[("reason", "a.txt is read"), ("operations", ops)],
        )),
        calls(call(
            "c3",
            "artifact_get",
            &[("uri", "artifact://tool_004@v1"), ("max_chars", "40")],
        )),
        calls(call(
            "c4",
            "artifact_get",
            &[("uri", "artifact://tool_004@v1")],
        )),
        calls(call("c5", "artifact_get", &[("uri", "artifact://nope@v1")])),
        done(),
    ];
    let (status, transcript) = run_replay(turns, root.path(), Settings::new(runs.path()));
    assert_eq!(status, EndStatus::Done);
    let got = results(&transcript);
    let update: Value = serde_json::from_str(&got[1].2).unwrap();
    assert!(got[1].1);
    assert_eq!(update["ok"], true);
    assert_eq!(update["applied"], 1);
    assert!(update["freed_tokens"].as_u64().unwrap() > 0);
    let a = std::fs::read_to_string(root.path().join("a.txt")).unwrap();
    assert_eq!(
        got[2].2,
        format!(
            "{}\n…[truncated, full payload is {} chars]",
            &a[..40],
            a.len()
        )
    );
    assert_eq!(got[3], ("c4".into(), true, a));
    assert_eq!(
        got[4],
        (
            "c5".into(),
            false,
            "error: no artifact at \"artifact://nope@v1\"".into()
        )
    );
    // The agent's patch is journaled with its actor.
    let records = journal(runs.path());
    let patch = records.iter().find(|r| r["type"] == "patch").unwrap();
    assert_eq!(patch["actor"], "agent");
    assert_eq!(patch["reason"], "a.txt is read");
}

#[test]
fn a_malformed_context_update_is_an_error_result_and_the_run_goes_on() {
    let root = workspace();
    let runs = tempfile::tempdir().unwrap();
    let turns = vec![
        calls(call(
            "c1",
            "context_update",
            &[("reason", "x"), ("operations", "[{\"op\":")],
        )),
        calls(call(
            "c2",
            "context_update",
            &[
                ("reason", "x"),
                ("operations", r#"[{"op":"shred","ids":["user_002"]}]"#),
            ],
        )),
        calls(call(
            "c3",
            "context_update",
            &[("reason", "x"), ("operations", r#"{"op":"compact"}"#)],
        )),
        calls(call(
            "c4",
            "context_update",
            &[
                ("reason", "x"),
                (
                    "operations",
                    r#"[{"op":"set_visibility","ids":["nope_999"],"visibility":"archived"}]"#,
                ),
            ],
        )),
        calls(call("c5", "context_update", &[("operations", "[]")])),
        calls(call(
            "c6",
            "artifact_get",
            &[("uri", "artifact://x"), ("max_chars", "0")],
        )),
        done(),
    ];
    let (status, transcript) = run_replay(turns, root.path(), Settings::new(runs.path()));
    assert_eq!(status, EndStatus::Done, "{transcript:?}");
    let got = results(&transcript);
    assert!(
        got[0]
            .2
            .starts_with("error: operations is not JSON (line 1, column 7)"),
        "{}",
        got[0].2
    );
    assert_eq!(got[1].2, "error: unknown op \"shred\"");
    assert_eq!(got[2].2, "error: \"operations\" must be an array");
    let rejected: Value = serde_json::from_str(&got[3].2).unwrap();
    assert_eq!(rejected["ok"], false);
    assert_eq!(rejected["rejections"][0]["rule"], "unknown_id");
    assert!(got.iter().all(|(_, ok, _)| !ok));
    let refused: Vec<&str> = transcript
        .iter()
        .filter(|r| r["type"] == "refused")
        .map(|r| r["reason"].as_str().unwrap())
        .collect();
    assert_eq!(refused.len(), 2, "{refused:?}");
    assert!(refused[0].starts_with("missing_argument"));
    assert!(refused[1].starts_with("invalid_argument: max_chars \"0\""));
    // Only the well-formed update reached the journal (rejected, with its rule).
    let patches: Vec<Value> = journal(runs.path())
        .into_iter()
        .filter(|r| r["type"] == "patch")
        .collect();
    assert_eq!(patches.len(), 1);
    assert_eq!(patches[0]["result"]["rejections"][0]["rule"], "unknown_id");
}

#[test]
fn context_tools_without_governance_are_refused() {
    let root = workspace();
    let mut config = Config::new(Workspace::new(root.path()).unwrap());
    config.ctl_mode = CtlMode::Extended;
    let mut model = Replay::new(
        "plain",
        vec![
            calls(call("c1", "artifact_get", &[("uri", "artifact://x@v1")])),
            done(),
        ],
        3,
    );
    let mut out = Vec::new();
    let status = frontier::agent::run(&config, &mut model, &mut out).unwrap();
    assert_eq!(status, EndStatus::Done);
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("unknown_tool: artifact_get needs context governance"),
        "{text}"
    );
}

#[test]
fn a_context_overflow_compacts_once_through_the_engine() {
    let root = workspace();
    let runs = tempfile::tempdir().unwrap();
    let turns = vec![
        calls(call("c1", "read_file", &[("path", "a.txt")])),
        calls(call("c2", "read_file", &[("path", "b.txt")])),
        Turn::ContextOverflow,
        answer(SUMMARY),
        Turn::ContextOverflow,
        done(),
    ];
    let (status, transcript) = run_replay(turns, root.path(), Settings::new(runs.path()));
    assert_eq!(status, EndStatus::RecoveryExhausted);
    let transitions: Vec<&str> = transcript
        .iter()
        .filter(|r| r["type"] == "transition")
        .map(|r| r["reason"].as_str().unwrap())
        .collect();
    assert_eq!(transitions, ["next_turn", "next_turn", "compact_retry"]);
    let patches = runtime_patches(&journal(runs.path()));
    assert_eq!(patches, [("context_overflow".to_owned(), true)]);
    let records = journal(runs.path());
    let compact = records.iter().find(|r| r["type"] == "patch").unwrap();
    assert_eq!(compact["operations"][0]["op"], "compact");
    let ids = compact["operations"][0]["ids"].as_array().unwrap();
    // The head (system prompt, the question) and the tail (the last chain) are not in it.
    assert_eq!(ids, &[json!("assistant_003"), json!("tool_004")]);
}

/// The text of an ingested block, from the content store.
fn ingested_text(run_dir: &Path, record: &Value) -> String {
    let key = record["content_key"].as_str().unwrap();
    std::fs::read_to_string(run_dir.join("content").join(format!("{key}.txt"))).unwrap()
}

/// The runtime reminders the journal ingested: their text from the content store.
fn reminders(run_dir: &Path) -> Vec<String> {
    journal(run_dir)
        .iter()
        .filter(|r| r["type"] == "ingest" && r["origin"] == "runtime")
        .map(|r| ingested_text(run_dir, r))
        .collect()
}

/// The budget reports the journal ingested: each block's id, the reports it hid, its JSON.
fn budget_reports(run_dir: &Path) -> Vec<(String, Value, Value)> {
    journal(run_dir)
        .iter()
        .filter(|r| r["type"] == "ingest" && r["kind"] == "budget_report")
        .map(|r| {
            let report = serde_json::from_str(&ingested_text(run_dir, r)).unwrap();
            (
                r["block_id"].as_str().unwrap().to_owned(),
                r["hides"].clone(),
                report,
            )
        })
        .collect()
}

/// Settings with every rung of the seed's ladder out of the way, for CPAT's own ladder.
fn budget_only(run_dir: &Path, window: u64) -> Settings {
    let mut s = Settings::new(run_dir);
    s.budget.max_tokens = window;
    s.ladder.spill_tokens = 1_000_000;
    s.ladder.cache_ttl = std::time::Duration::from_secs(3600);
    s.ladder.collapse_ratio = 1.0;
    s.ladder.compact_ratio = 1.0;
    s.durability = Durability::Flush;
    s
}

#[test]
fn critical_pressure_offloads_the_largest_result_then_reports() {
    let root = workspace();
    let runs = tempfile::tempdir().unwrap();
    let turns = vec![
        calls(call("c1", "read_file", &[("path", "big.txt")])),
        done(),
    ];
    let (status, transcript) = run_replay(turns, root.path(), budget_only(runs.path(), 3000));
    assert_eq!(status, EndStatus::Done, "{transcript:?}");
    let records = journal(runs.path());
    let fallback: Vec<&Value> = records
        .iter()
        .filter(|r| r["type"] == "patch" && r["actor"] == "runtime")
        .collect();
    assert_eq!(fallback.len(), 1);
    assert_eq!(fallback[0]["reason"], "critical budget pressure");
    assert_eq!(fallback[0]["operations"][0]["ids"], json!(["tool_004"]));
    // The first report comes after the fallback: CPAT says soft when the fallback brought the
    // level down. It is a `budget_report` block holding CPAT's JSON.
    let reports = budget_reports(runs.path());
    assert!(!reports.is_empty());
    let (_, hides, report) = &reports[0];
    assert_eq!(hides, &json!([]), "nothing to rotate out yet");
    assert_eq!(report["pressure"], "soft");
    assert_eq!(report["max_tokens"], 3000);
    assert_eq!(report["required_preserve"].as_array().unwrap().len(), 4);
    assert!(reminders(runs.path()).is_empty(), "soft asks for nothing");
}

#[test]
fn generational_retires_the_oldest_result_first_where_critical_takes_the_largest() {
    // One turn reads a.txt, big.txt and b.txt: results tool_004, tool_005 (the largest) and
    // tool_006, well over a 3,000-token window.
    let reads = [
        call("c1", "read_file", &[("path", "a.txt")]),
        call("c2", "read_file", &[("path", "big.txt")]),
        call("c3", "read_file", &[("path", "b.txt")]),
    ]
    .concat();
    for (generational, step, reason, first) in [
        (
            false,
            "critical_fallback",
            "critical budget pressure",
            "tool_005",
        ),
        (
            true,
            "generational_fallback",
            "generational tail under budget pressure",
            "tool_004",
        ),
    ] {
        let root = workspace();
        let runs = tempfile::tempdir().unwrap();
        let mut settings = budget_only(runs.path(), 3000);
        settings.budget.generational = generational;
        let turns = vec![calls(reads.clone()), done()];
        let (status, transcript) = run_replay(turns, root.path(), settings);
        assert_eq!(status, EndStatus::Done, "{transcript:?}");
        let steps: Vec<&str> = transcript
            .iter()
            .filter(|r| r["type"] == "context")
            .map(|r| r["step"].as_str().unwrap())
            .collect();
        assert!(steps.contains(&step), "{steps:?}");
        let records = journal(runs.path());
        let offloads: Vec<&Value> = records
            .iter()
            .filter(|r| r["type"] == "patch" && r["actor"] == "runtime")
            .collect();
        assert!(!offloads.is_empty());
        assert_eq!(offloads[0]["reason"], reason);
        assert_eq!(offloads[0]["operations"][0]["ids"], json!([first]));
        let run: Value =
            serde_json::from_str(&std::fs::read_to_string(runs.path().join("run.json")).unwrap())
                .unwrap();
        assert_eq!(run["generational"].as_bool().unwrap_or(false), generational);
    }
}

#[test]
fn reports_rotate_every_turn_and_a_must_act_turn_that_ignores_them_is_reminded() {
    let root = workspace();
    let runs = tempfile::tempdir().unwrap();
    let turns = vec![
        calls(call("c1", "read_file", &[("path", "a.txt")])),
        calls(call("c2", "list_dir", &[("path", ".")])),
        calls(call("c3", "list_dir", &[("path", ".")])),
        done(),
    ];
    let window = 2900;
    let (status, transcript) = run_replay(turns, root.path(), budget_only(runs.path(), window));
    assert_eq!(status, EndStatus::Done, "{transcript:?}");
    let levels: Vec<&str> = transcript
        .iter()
        .filter(|r| r["step"] == "budget_report")
        .map(|r| r["pressure"].as_str().unwrap())
        .collect();
    assert!(
        levels.len() >= 2 && levels.iter().all(|l| *l == "must_act"),
        "{levels:?}"
    );
    // A report every turn, each hiding the one before (CPAT's rotation).
    let reports = budget_reports(runs.path());
    assert_eq!(reports.len(), levels.len());
    for (i, (_, hides, report)) in reports.iter().enumerate() {
        assert_eq!(report["pressure"], "must_act");
        let before: Vec<&str> = reports[..i]
            .last()
            .map(|(id, ..)| id.as_str())
            .into_iter()
            .collect();
        assert_eq!(hides, &json!(before), "report {i}");
    }
    // The turns that ran task tools and neither updated nor declined are reminded; the
    // reminders are the runtime's, never the current question.
    let nudges = reminders(runs.path());
    assert!(!nudges.is_empty());
    assert!(nudges.iter().all(|n| n == MUST_ACT_REMINDER), "{nudges:?}");
    let replayed = frontier::context::replay::replay(runs.path(), Arc::new(CpatEstimator)).unwrap();
    let store = replayed.engine.store();
    let question = store.block(store.current_question().unwrap());
    assert_eq!(question.id, "user_002");
    // Replayed, the rotation holds: only the last report is seen.
    let shown: Vec<&str> = store
        .iter()
        .filter(|b| b.kind == Kind::BudgetReport && b.visibility == Visibility::Model)
        .map(|b| b.id.as_str())
        .collect();
    assert_eq!(shown, [reports.last().unwrap().0.as_str()]);
}

#[test]
fn a_must_act_turn_that_updates_the_context_is_not_reminded() {
    let root = workspace();
    let runs = tempfile::tempdir().unwrap();
    let answered = [
        call("c1", "read_file", &[("path", "a.txt")]),
        call(
            "c2",
            "context_update",
            &[("reason", "r"), ("operations", "[]")],
        ),
    ]
    .concat();
    // The last turn may be taken by a compaction (the window fills): a second one ends it.
    let turns = vec![
        calls(call("c0", "read_file", &[("path", "a.txt")])),
        calls(answered),
        done(),
        done(),
    ];
    let (status, transcript) = run_replay(turns, root.path(), budget_only(runs.path(), 2900));
    assert_eq!(status, EndStatus::Done, "{transcript:?}");
    let levels: Vec<&str> = transcript
        .iter()
        .filter(|r| r["step"] == "budget_report" && r["turn"] == 2)
        .map(|r| r["pressure"].as_str().unwrap())
        .collect();
    assert_eq!(levels, ["must_act"], "turn 2 was under a must-act report");
    // After turn 2's last result, no reminder: it answered the report.
    let journal = journal(runs.path());
    let last_result = journal
        .iter()
        .rposition(|r| r["type"] == "ingest" && r["kind"] == "tool_result")
        .unwrap();
    let late: Vec<&Value> = journal[last_result..]
        .iter()
        .filter(|r| r["type"] == "ingest" && r["origin"] == "runtime")
        .collect();
    assert!(late.is_empty(), "{late:?}");
}

#[test]
fn run_counts_tokens_with_the_models_vocabulary() {
    let root = workspace();
    let runs = tempfile::tempdir().unwrap();
    let run_dir = runs.path().join("run");
    let replay = extended_replay(
        runs.path(),
        &[calls(call("c1", "read_file", &[("path", "a.txt")])), done()],
    );
    let out = frontier_run(
        &replay,
        root.path(),
        &run_dir,
        &["--vocab", "tiktoken:cl100k_base"],
    );
    assert_success(&out);
    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(run["token_counter"], "vocab:tiktoken:cl100k_base");
    let vocab = tiktoken::builtin(Builtin::Cl100kBase).unwrap();
    let a = std::fs::read_to_string(root.path().join("a.txt")).unwrap();
    let records = journal(&run_dir);
    let result = records
        .iter()
        .find(|r| r["type"] == "ingest" && r["kind"] == "tool_result")
        .unwrap();
    assert_eq!(result["token_count"], vocab.encode(&a).unwrap().len());
    assert_ne!(
        result["token_count"],
        frontier::context::tokens::estimate_tokens(&a)
    );
}

#[test]
fn run_refuses_a_run_directory_that_holds_a_run_and_bad_ratios() {
    let root = workspace();
    let runs = tempfile::tempdir().unwrap();
    let replay = runs.path().join("turns.jsonl");
    std::fs::write(&replay, frontier::agent::replay::to_jsonl(&[done()])).unwrap();
    let run_dir = runs.path().join("run");
    let run = |extra: &[&str]| frontier_run(&replay, root.path(), &run_dir, extra);
    assert_eq!(run(&[]).status.code(), Some(0));
    let again = run(&[]);
    assert_eq!(again.status.code(), Some(1));
    let transcript = String::from_utf8(again.stdout).unwrap();
    assert!(
        transcript.contains("\"type\":\"context_error\""),
        "{transcript}"
    );
    assert!(transcript.contains("already holds a run"), "{transcript}");
    let bad = run(&["--soft-ratio", "0.9", "--must-act-ratio", "0.8"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("must not decrease"));
    let bad = run(&["--compact-ratio", "1.5"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn an_overflow_clears_stale_results_first_and_a_summary_that_does_not_shrink_is_not_committed() {
    let root = workspace();
    let runs = tempfile::tempdir().unwrap();
    let mut settings = Settings::new(runs.path());
    settings.ladder.keep_recent = 1;
    settings.ladder.cache_ttl = std::time::Duration::from_secs(3600);
    let long = format!("<summary>{}</summary>", lines("summary", 200));
    let turns = vec![
        calls(call("c1", "read_file", &[("path", "a.txt")])),
        calls(call("c2", "read_file", &[("path", "b.txt")])),
        Turn::ContextOverflow,
        answer(&long),
        done(),
    ];
    let (status, transcript) = run_replay(turns, root.path(), settings);
    assert_eq!(status, EndStatus::Done, "{transcript:?}");
    // The warm cache kept the ladder from clearing; the overflow cleared a.txt's result.
    let records = journal(runs.path());
    assert_eq!(
        runtime_patches(&records),
        [("clear_stale".to_owned(), true)]
    );
    let cleared = records.iter().find(|r| r["type"] == "patch").unwrap();
    assert_eq!(cleared["operations"][0]["ids"], json!(["tool_004"]));
    let skipped: Vec<&Value> = transcript
        .iter()
        .filter(|r| r["step"] == "context_overflow")
        .collect();
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0]["ok"], false);
    assert_eq!(
        skipped[0]["skipped"],
        "the summary is no smaller than what it replaces"
    );
}

#[test]
fn the_run_directory_inside_the_root_is_out_of_the_tools_reach() {
    let root = workspace();
    let replay = extended_replay(
        root.path(),
        &[
            calls(call("c1", "read_file", &[("path", "run/journal.jsonl")])),
            calls(call(
                "c2",
                "write_file",
                &[("path", "run/content/x.txt"), ("content", "x")],
            )),
            done(),
        ],
    );
    let out = frontier_run(&replay, root.path(), &root.path().join("run"), &[]);
    assert_success(&out);
    let transcript = transcript_records(&String::from_utf8(out.stdout).unwrap());
    let refused: Vec<&str> = transcript
        .iter()
        .filter(|r| r["type"] == "refused")
        .map(|r| r["reason"].as_str().unwrap())
        .collect();
    assert_eq!(refused.len(), 2, "{transcript:?}");
    assert!(
        refused.iter().all(|r| r.starts_with("protected_path")),
        "{refused:?}"
    );
    assert!(!root.path().join("run/content/x.txt").exists());
}

/// A Chat event stream of `turn` (its content in one delta, then the finish) whose last
/// chunk reports a prompt of `prompt` tokens, `cached` of them from the cache.
fn reply_reporting(turn: &Turn, prompt: u64, cached: u64) -> Reply {
    let Turn::Output { bytes, finish } = turn else {
        unreachable!("a turn of output")
    };
    let chunk = |delta: Value, finish: Value| {
        let v = json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                       "usage": null});
        format!("data: {v}\n\n")
    };
    let content = String::from_utf8(bytes.clone()).unwrap();
    let mut sse = chunk(
        json!({"role": "assistant", "content": content}),
        Value::Null,
    );
    sse.push_str(&chunk(json!({}), json!(finish.name())));
    let usage = json!({"choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": 3,
                       "prompt_tokens_details": {"cached_tokens": cached}}});
    sse.push_str(&format!("data: {usage}\n\ndata: [DONE]\n\n"));
    Reply::stream(sse.into_bytes())
}

#[test]
fn every_chat_call_of_the_ctl_loop_journals_the_usage_it_reported() {
    let root = workspace();
    let runs = tempfile::tempdir().unwrap();
    // The turns, the compaction call after the overflow, the first answer, the boundary
    // pass before the follow-up, the second answer: reply i reports 2,000 + i tokens.
    let turns = [
        calls(call("c1", "read_file", &[("path", "a.txt")])),
        calls(call("c2", "read_file", &[("path", "b.txt")])),
        Turn::ContextOverflow,
        answer(SUMMARY),
        done(),
        done(),
        done(),
    ];
    let replies = turns
        .iter()
        .enumerate()
        .map(|(i, t)| match t {
            Turn::ContextOverflow => {
                Reply::status(400, "context_length_exceeded: the prompt is too long")
            }
            t => reply_reporting(t, 2000 + i as u64, 1000 + i as u64),
        })
        .collect();
    let (base, server) = server::serve(replies, 3);
    let mut model = OpenAi::new(OpenAiConfig::new(format!("{base}/v1"), "test-model"));
    let mut config = Config::new(Workspace::new(root.path()).unwrap());
    config.task = Some(TASK.into());
    config.ctl_mode = CtlMode::Extended;
    let mut settings = Settings::new(runs.path());
    settings.durability = Durability::Flush;
    config.context = Some(settings);
    config.followups = vec!["And the second question?".into()];
    let mut out = Vec::new();
    let status = frontier::agent::run(&config, &mut model, &mut out).unwrap();
    let transcript = transcript_records(&String::from_utf8(out).unwrap());
    assert_eq!(status, EndStatus::Done, "{transcript:?}");
    let steps: Vec<&str> = transcript
        .iter()
        .filter(|r| r["type"] == "context")
        .map(|r| r["step"].as_str().unwrap())
        .collect();
    assert!(steps.contains(&"context_overflow"), "{steps:?}");
    assert!(steps.contains(&"boundary"), "{steps:?}");
    let bodies: Vec<Value> = server.join().unwrap().into_iter().map(|r| r.body).collect();
    assert_eq!(bodies.len(), turns.len());
    for body in &bodies {
        assert_eq!(
            body["stream_options"],
            json!({"include_usage": true}),
            "{body}"
        );
    }
    let calls: Vec<Value> = journal(runs.path())
        .into_iter()
        .filter(|r| r["type"] == "llm_call")
        .collect();
    assert_eq!(calls.len(), turns.len());
    for (i, call) in calls.iter().enumerate() {
        if i == 2 {
            assert_eq!(
                call["usage"],
                json!({}),
                "the refused request reported nothing"
            );
            continue;
        }
        let (prompt, cached) = (2000 + i as u64, 1000 + i as u64);
        assert_eq!(
            call["usage"],
            json!({"prompt_tokens": prompt, "completion_tokens": 3,
                   "prompt_cache_hit_tokens": cached,
                   "provider": {"prompt_tokens": prompt, "completion_tokens": 3,
                                "prompt_tokens_details": {"cached_tokens": cached}}}),
            "call {i}"
        );
    }
}
