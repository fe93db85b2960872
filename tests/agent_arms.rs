//! CPAT's three arms in the loop (`cpat_reference.md` §9, §11, §12: its five `agentLoop`
//! tests, rewritten): the boundary-maintenance pass before a follow-up question (cpat only),
//! what each arm offers the model, the runtime's safety net in `threshold`, the hard window
//! ending a `react` run and never a `cpat` one; then what frontier adds: a malformed
//! `context_update` in the pass does not end the run (divergence 8), and `frontier run`
//! governs by default in a run directory of its own that replays.
//!
//! CTL has no prose, so where CPAT's fake client answers "answer one" and "answer two", the
//! model here answers each question with the empty reply that ends it (a turn with no calls);
//! the counts of model calls are CPAT's.

mod agent_support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use agent_support::server::{self, Reply};
use agent_support::Recording;
use frontier::agent::context::boundary::BOUNDARY_PROMPT;
use frontier::agent::context::{Arm, Settings};
use frontier::agent::openai::{OpenAi, OpenAiConfig};
use frontier::agent::replay::Turn;
use frontier::agent::runner::TOOLS_CLOSED_NOTE;
use frontier::agent::{Config, EndStatus, Finish, Message, ModelSource, Role};
use frontier::apply::Workspace;
use frontier::context::durable::Durability;
use frontier::context::tokens::CpatEstimator;
use frontier::language::CtlMode;
use serde_json::{json, Value};

const FIRST: &str = "What does a.txt say?";
const SECOND: &str = "And how many lines has big.txt?";

/// One call in extended CTL, every value inline.
fn call(id: &str, name: &str, args: &[(&str, &str)]) -> String {
    let mut s = format!("call {id} {name}\n");
    for (k, v) in args {
        s.push_str(&format!("arg {k} = {v}\n"));
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

/// The reply that answers a question: no calls.
fn answer() -> Turn {
    Turn::Output {
        bytes: Vec::new(),
        finish: Finish::Stop,
    }
}

/// The boundary pass's reply: one `context_update` with these operations.
fn update(operations: &str) -> Turn {
    calls(call(
        "b1",
        "context_update",
        &[
            ("reason", "tidy at the boundary"),
            ("operations", operations),
        ],
    ))
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let big: String = (0..120)
        .map(|i| format!("big line {i:04} of the file, some words to fill it up\n"))
        .collect();
    std::fs::write(dir.path().join("big.txt"), big).unwrap();
    std::fs::write(dir.path().join("a.txt"), "a says hello\n").unwrap();
    dir
}

fn settings(run_dir: &Path, arm: Arm) -> Settings {
    let mut s = Settings::new(run_dir);
    s.arm = arm;
    s.durability = Durability::Flush;
    s
}

/// The two questions in extended CTL, governed by `settings`: the status and the records.
fn run(model: &mut dyn ModelSource, root: &Path, settings: Settings) -> (EndStatus, Vec<Value>) {
    let mut config = Config::new(Workspace::new(root).unwrap());
    config.task = Some(FIRST.into());
    config.followups = vec![SECOND.into()];
    config.ctl_mode = CtlMode::Extended;
    config.context = Some(settings);
    let mut out = Vec::new();
    let status = frontier::agent::run(&config, model, &mut out).unwrap();
    let records = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (status, records)
}

fn journal(run_dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(run_dir.join("journal.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn of_type<'r>(records: &'r [Value], kind: &str) -> Vec<&'r Value> {
    records.iter().filter(|r| r["type"] == kind).collect()
}

fn steps<'r>(records: &'r [Value], step: &str) -> Vec<&'r Value> {
    records
        .iter()
        .filter(|r| r["type"] == "context" && r["step"] == step)
        .collect()
}

/// Whether a request is a boundary pass: the prompt second to last, the manifest last.
fn is_boundary(messages: &[Message]) -> bool {
    messages.len() >= 2 && messages[messages.len() - 2].content == BOUNDARY_PROMPT
}

/// The chat events of a turn's content, served by the loopback server.
fn replies(turns: &[Turn]) -> Vec<Reply> {
    let event = |delta: Value, finish: Value| {
        let v = json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {v}\n\n")
    };
    turns
        .iter()
        .map(|t| {
            let Turn::Output { bytes, finish } = t else {
                unreachable!("no overflow here")
            };
            let content = String::from_utf8(bytes.clone()).unwrap();
            let mut sse = event(
                json!({"role": "assistant", "content": content}),
                Value::Null,
            );
            sse.push_str(&event(json!({}), json!(finish.name())));
            sse.push_str("data: [DONE]\n\n");
            Reply::stream(sse.into_bytes())
        })
        .collect()
}

#[test]
fn an_ephemeral_context_update_pass_runs_before_each_followup() {
    let root = workspace();
    let runs = tempfile::tempdir().unwrap();
    let turns = vec![answer(), update("[]"), answer()];
    let (base, server) = server::serve(replies(&turns), 7);
    let mut model = OpenAi::new(OpenAiConfig::new(format!("{base}/v1"), "test-model"));
    let (status, records) = run(&mut model, root.path(), settings(runs.path(), Arm::Cpat));
    assert_eq!(status, EndStatus::Done, "{records:?}");
    let bodies: Vec<Value> = server.join().unwrap().into_iter().map(|r| r.body).collect();
    // Three model calls, one of them the boundary pass, the second.
    assert_eq!(bodies.len(), 3);
    let prompt_at = |b: &Value| {
        let m = b["messages"].as_array().unwrap();
        (m[m.len() - 2]["content"] == BOUNDARY_PROMPT).then_some(m.len())
    };
    let boundary: Vec<usize> = (0..3)
        .filter(|&i| prompt_at(&bodies[i]).is_some())
        .collect();
    assert_eq!(boundary, [1]);
    let pass = bodies[1]["messages"].as_array().unwrap();
    // The prompt is a user message, second to last; the manifest is last.
    assert_eq!(pass[pass.len() - 2]["role"], "user");
    assert!(pass[pass.len() - 1]["content"]
        .as_str()
        .unwrap()
        .starts_with("<context_manifest>"));
    // Only context_update is offered: nothing natively, and the prompt says so.
    assert!(bodies.iter().all(|b| b.get("tools").is_none()));
    assert!(BOUNDARY_PROMPT.contains("Only `context_update` runs in this step"));
    // The pass sees the new question as the current one.
    assert!(pass
        .iter()
        .any(|m| m["role"] == "user" && m["content"].as_str().unwrap().ends_with(SECOND)));
    // One no-op patch, the agent's, journaled; the run's record says it was applied.
    let journal = journal(runs.path());
    let patches = of_type(&journal, "patch");
    assert_eq!(patches.len(), 1, "{patches:?}");
    assert_eq!(patches[0]["actor"], "agent");
    assert_eq!(patches[0]["operations"], json!([]));
    assert_eq!(patches[0]["result"]["ok"], true);
    assert_eq!(patches[0]["result"]["applied"], 0);
    assert_eq!(of_type(&journal, "llm_call").len(), 3);
    let pass_records = steps(&records, "boundary");
    assert_eq!(pass_records.len(), 1);
    assert_eq!(pass_records[0]["ok"], true);
    assert_eq!(pass_records[0]["turn"], 2);
    // Nothing of the pass is ingested: no block holds the prompt, the last request neither,
    // and the pass's call and result are not in it.
    let replayed = frontier::context::replay::replay(runs.path(), Arc::new(CpatEstimator)).unwrap();
    let store = replayed.engine.store();
    assert!(store
        .iter()
        .all(|b| !b.content.rendered().contains("tidy at the boundary")
            && !b.content.rendered().contains(&BOUNDARY_PROMPT[..60])));
    let last = bodies[2].to_string();
    assert!(!last.contains(&BOUNDARY_PROMPT[..60]));
    assert!(!last.contains("tidy at the boundary"));
    // The transcript asked the question and ran no tool.
    let asked = of_type(&records, "question");
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0]["text"], SECOND);
    assert!(of_type(&records, "tool_result").is_empty());
}

#[test]
fn react_skips_the_boundary_pass() {
    let root = workspace();
    let runs = tempfile::tempdir().unwrap();
    let mut model = Recording::new(vec![answer(), answer()], 5);
    let (status, records) = run(&mut model, root.path(), settings(runs.path(), Arm::React));
    assert_eq!(status, EndStatus::Done, "{records:?}");
    assert_eq!(model.requests.len(), 2);
    assert_eq!(model.requests.iter().filter(|r| is_boundary(r)).count(), 0);
    assert!(steps(&records, "boundary").is_empty());
    // The second request asks the second question, after the first.
    let second = &model.requests[1];
    let users: Vec<&str> = second
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.content.as_str())
        .collect();
    assert!(users.iter().any(|u| u.ends_with(FIRST)));
    assert!(users.iter().any(|u| u.ends_with(SECOND)));
    assert!(of_type(&journal(runs.path()), "patch").is_empty());
}

#[test]
fn react_checks_no_budget_and_offers_no_context_tool() {
    // The window the threshold arm's safety net fires in: react leaves it alone.
    let root = workspace();
    let runs = tempfile::tempdir().unwrap();
    let mut s = settings(runs.path(), Arm::React);
    s.budget.max_tokens = 3000;
    s.ladder.spill_tokens = 100;
    s.ladder.cache_ttl = std::time::Duration::ZERO;
    let turns = vec![
        calls(call("c1", "read_file", &[("path", "big.txt")])),
        calls(call(
            "c2",
            "context_update",
            &[("reason", "x"), ("operations", "[]")],
        )),
        answer(),
        answer(),
    ];
    let mut model = Recording::new(turns, 5);
    let (status, records) = run(&mut model, root.path(), s);
    assert_eq!(status, EndStatus::Done, "{records:?}");
    assert!(of_type(&journal(runs.path()), "patch").is_empty());
    assert!(of_type(&records, "context").is_empty());
    let refused = of_type(&records, "refused");
    assert_eq!(refused.len(), 1);
    assert!(refused[0]["reason"]
        .as_str()
        .unwrap()
        .starts_with("unknown_tool: context_update is not offered in the react arm"));
    for request in &model.requests {
        assert!(!system(request).contains("context_update"));
        assert!(request[1..]
            .iter()
            .all(|m| !m.content.contains("<budget_report>")));
    }
    // The result is whole in the last request: nothing spilled or offloaded it.
    let big = std::fs::read_to_string(root.path().join("big.txt")).unwrap();
    assert!(model.requests[3]
        .iter()
        .any(|m| m.content.contains(big.trim_end())));
}

#[test]
fn the_plain_loop_asks_followups_too() {
    let root = workspace();
    let mut config = Config::new(Workspace::new(root.path()).unwrap());
    config.task = Some(FIRST.into());
    config.followups = vec![SECOND.into()];
    config.ctl_mode = CtlMode::Extended;
    let turns = vec![
        calls(call("c1", "read_file", &[("path", "a.txt")])),
        answer(),
        answer(),
    ];
    let mut model = Recording::new(turns, 5);
    let mut out = Vec::new();
    let status = frontier::agent::run(&config, &mut model, &mut out).unwrap();
    assert_eq!(status, EndStatus::Done);
    assert_eq!(model.requests.len(), 3);
    // The last request: the conversation so far, then the second question, no engine's tags.
    let last = &model.requests[2];
    assert_eq!(last[1], Message::new(Role::User, FIRST));
    assert_eq!(last.last().unwrap(), &Message::new(Role::User, SECOND));
    assert!(last.iter().all(|m| !m.content.contains("[block:")));
    let transcript = String::from_utf8(out).unwrap();
    assert!(transcript.contains(&format!(
        "{{\"type\":\"question\",\"turn\":3,\"text\":\"{SECOND}\"}}"
    )));
}

/// The system prompt of a request.
fn system(messages: &[Message]) -> &str {
    assert_eq!(messages[0].role, Role::System);
    &messages[0].content
}

#[test]
fn threshold_gets_the_runtime_safety_net_but_no_context_tool() {
    let root = workspace();
    let runs = tempfile::tempdir().unwrap();
    let mut s = settings(runs.path(), Arm::Threshold);
    // A small window and the seed's rungs out of the way: CPAT's critical fallback acts.
    s.budget.max_tokens = 3000;
    s.ladder.spill_tokens = 1_000_000;
    s.ladder.cache_ttl = std::time::Duration::from_secs(3600);
    s.ladder.collapse_ratio = 1.0;
    s.ladder.compact_ratio = 1.0;
    let turns = vec![
        calls(call("c1", "read_file", &[("path", "big.txt")])),
        calls(call(
            "c2",
            "context_update",
            &[("reason", "x"), ("operations", "[]")],
        )),
        calls(call(
            "c3",
            "artifact_get",
            &[("uri", "artifact://tool_004@v1")],
        )),
        answer(),
        answer(),
    ];
    let mut model = Recording::new(turns, 5);
    let (status, records) = run(&mut model, root.path(), s);
    assert_eq!(status, EndStatus::Done, "{records:?}");
    // Neither tool is offered: not in the system prompt of any request.
    for request in &model.requests {
        let prompt = system(request);
        assert!(!prompt.contains("context_update"), "{prompt}");
        assert!(!prompt.contains("artifact_get"), "{prompt}");
        assert!(prompt.contains("[block:<id>]"));
    }
    // A call to them is refused as an unknown tool, and never runs.
    let refused: Vec<&str> = of_type(&records, "refused")
        .iter()
        .map(|r| r["reason"].as_str().unwrap())
        .collect();
    assert_eq!(refused.len(), 2, "{refused:?}");
    assert!(
        refused[0].starts_with("unknown_tool: context_update is not offered in the threshold arm")
    );
    assert!(refused[1].starts_with("unknown_tool: artifact_get"));
    // The safety net fired: the critical fallback offloaded the big result, and a report
    // followed; no patch is the agent's, and no boundary pass ran before the follow-up.
    let journal = journal(runs.path());
    let patches = of_type(&journal, "patch");
    assert!(!patches.is_empty());
    assert!(patches.iter().all(|p| p["actor"] == "runtime"));
    assert_eq!(patches[0]["reason"], "critical budget pressure");
    assert_eq!(patches[0]["operations"][0]["ids"], json!(["tool_004"]));
    assert_eq!(steps(&records, "critical_fallback").len(), 1);
    assert!(!steps(&records, "budget_report").is_empty());
    assert!(model.requests.iter().all(|r| !is_boundary(r)));
}

/// The requests that closed the tools.
fn closed(requests: &[Vec<Message>]) -> usize {
    requests
        .iter()
        .filter(|r| r.iter().any(|m| m.content.ends_with(TOOLS_CLOSED_NOTE)))
        .count()
}

#[test]
fn react_terminates_early_when_the_hard_window_is_exceeded() {
    let root = workspace();
    let runs = tempfile::tempdir().unwrap();
    let mut s = settings(runs.path(), Arm::React);
    s.hard_window = Some(50);
    let turns = vec![
        calls(call("c1", "read_file", &[("path", "a.txt")])),
        answer(),
        answer(),
    ];
    let mut model = Recording::new(turns, 5);
    let (status, records) = run(&mut model, root.path(), s);
    assert_eq!(status, EndStatus::TerminatedEarly);
    // Exactly one call, and it had the tools closed: its call was refused, not run.
    assert_eq!(model.requests.len(), 1);
    assert_eq!(closed(&model.requests), 1);
    assert!(of_type(&records, "tool_result").is_empty());
    let refused = of_type(&records, "refused");
    assert_eq!(refused.len(), 1);
    assert!(refused[0]["reason"]
        .as_str()
        .unwrap()
        .starts_with("tools_closed"));
    // The peak estimate is recorded, over the window.
    let window = steps(&records, "hard_window");
    assert_eq!(window.len(), 1);
    assert_eq!(window[0]["hard_window"], 50);
    assert!(window[0]["estimate"].as_u64().unwrap() > 50);
    let end = records.last().unwrap();
    assert_eq!(end["status"], "terminated_early");
    assert_eq!(end["exit"], 1);
    assert!(end["peak_tokens"].as_u64().unwrap() > 50);
    // The note and the last reply are journaled: the run replays to them.
    let replayed = frontier::context::replay::replay(runs.path(), Arc::new(CpatEstimator)).unwrap();
    assert!(replayed
        .engine
        .store()
        .iter()
        .any(|b| b.content.rendered() == TOOLS_CLOSED_NOTE));
}

#[test]
fn react_runs_until_the_request_outgrows_the_hard_window() {
    // The first request fits; the read's result takes the second over the window.
    let root = workspace();
    let probe = tempfile::tempdir().unwrap();
    let mut first = Recording::new(vec![answer()], 5);
    let (_, records) = run(&mut first, root.path(), settings(probe.path(), Arm::React));
    let fits = records.last().unwrap()["peak_tokens"].as_u64().unwrap();
    let runs = tempfile::tempdir().unwrap();
    let mut s = settings(runs.path(), Arm::React);
    s.hard_window = Some(fits + 100);
    let turns = vec![
        calls(call("c1", "read_file", &[("path", "big.txt")])),
        answer(),
    ];
    let mut model = Recording::new(turns, 5);
    let (status, records) = run(&mut model, root.path(), s);
    assert_eq!(status, EndStatus::TerminatedEarly);
    assert_eq!(model.requests.len(), 2);
    assert_eq!(closed(&model.requests), 1);
    assert!(!model.requests[0]
        .iter()
        .any(|m| m.content.contains(TOOLS_CLOSED_NOTE)));
    assert_eq!(of_type(&records, "tool_result").len(), 1);
    assert!(records.last().unwrap()["peak_tokens"].as_u64().unwrap() > fits + 100);
}

#[test]
fn cpat_is_not_force_terminated_by_the_hard_window() {
    for arm in [Arm::Cpat, Arm::Threshold] {
        let root = workspace();
        let runs = tempfile::tempdir().unwrap();
        let mut s = settings(runs.path(), arm);
        s.hard_window = Some(50);
        let mut turns = vec![
            calls(call("c1", "read_file", &[("path", "a.txt")])),
            answer(),
        ];
        if arm == Arm::Cpat {
            turns.push(update("[]"));
        }
        turns.push(answer());
        let mut model = Recording::new(turns, 5);
        let (status, records) = run(&mut model, root.path(), s);
        assert_eq!(status, EndStatus::Done, "{arm:?}: {records:?}");
        assert_eq!(closed(&model.requests), 0);
        assert!(steps(&records, "hard_window").is_empty());
        assert_eq!(of_type(&records, "tool_result").len(), 1);
        assert!(records.last().unwrap()["peak_tokens"].as_u64().unwrap() > 50);
    }
}

/// Divergence 8 (`context.md`): a malformed `context_update` anywhere is an error result,
/// never a crash; CPAT's boundary pass has no catch (`cpat_reference.md` §11, §13.11).
#[test]
fn a_malformed_context_update_in_the_boundary_pass_does_not_end_the_run() {
    let passes = [
        // Not JSON.
        (update("[{\"op\":"), "error: operations is not JSON"),
        // An unknown op.
        (
            update(r#"[{"op":"shred","ids":["user_002"]}]"#),
            "error: unknown op \"shred\"",
        ),
        // A missing argument.
        (
            calls(call("b1", "context_update", &[("operations", "[]")])),
            "missing_argument",
        ),
        // Not CTL at all.
        (
            Turn::Output {
                bytes: b"I would rather not.".to_vec(),
                finish: Finish::Stop,
            },
            "no context_update",
        ),
    ];
    for (pass, said) in passes {
        let root = workspace();
        let runs = tempfile::tempdir().unwrap();
        let mut model = Recording::new(vec![answer(), pass, answer()], 4);
        let (status, records) = run(&mut model, root.path(), settings(runs.path(), Arm::Cpat));
        assert_eq!(status, EndStatus::Done, "{said}: {records:?}");
        assert_eq!(model.requests.len(), 3);
        let pass = steps(&records, "boundary");
        assert_eq!(pass.len(), 1);
        assert_eq!(pass[0]["ok"], false);
        let result = pass[0]["result"].as_str().unwrap();
        assert!(result.starts_with(said), "{result}");
        // Nothing was applied.
        assert!(of_type(&journal(runs.path()), "patch").is_empty());
    }
}

#[test]
fn the_boundary_pass_runs_nothing_but_one_context_update() {
    let root = workspace();
    let runs = tempfile::tempdir().unwrap();
    let mut pass = call("b1", "read_file", &[("path", "a.txt")]);
    pass.push_str(&call(
        "b2",
        "context_update",
        &[("reason", "r"), ("operations", "[]")],
    ));
    pass.push_str(&call(
        "b3",
        "context_update",
        &[("reason", "again"), ("operations", "[]")],
    ));
    let turns = vec![answer(), calls(pass), answer()];
    let mut model = Recording::new(turns, 3);
    let (status, records) = run(&mut model, root.path(), settings(runs.path(), Arm::Cpat));
    assert_eq!(status, EndStatus::Done, "{records:?}");
    let pass = steps(&records, "boundary");
    assert_eq!(pass[0]["id"], "b2");
    assert_eq!(pass[0]["ok"], true);
    let not_run: Vec<&str> = pass[0]["not_run"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(not_run, ["b1", "b3"]);
    assert!(of_type(&records, "tool_call").is_empty());
    assert!(of_type(&records, "tool_result").is_empty());
    assert_eq!(of_type(&journal(runs.path()), "patch").len(), 1);
}

#[test]
fn the_boundary_pass_reads_a_bounded_number_of_calls() {
    use frontier::agent::context::boundary::MAX_PASS_CALLS;
    let root = workspace();
    let runs = tempfile::tempdir().unwrap();
    let mut pass = call(
        "b0",
        "context_update",
        &[("reason", "r"), ("operations", "[]")],
    );
    for i in 1..=MAX_PASS_CALLS + 4 {
        pass.push_str(&call(&format!("b{i}"), "list_dir", &[("path", ".")]));
    }
    // The whole pass in one chunk: the bound holds inside a chunk too.
    let mut model = Recording::new(vec![answer(), calls(pass.clone()), answer()], pass.len());
    let (status, records) = run(&mut model, root.path(), settings(runs.path(), Arm::Cpat));
    assert_eq!(status, EndStatus::Done, "{records:?}");
    let pass = steps(&records, "boundary");
    assert_eq!(pass[0]["id"], "b0");
    assert_eq!(pass[0]["ok"], true);
    assert_eq!(
        pass[0]["not_run"].as_array().unwrap().len(),
        MAX_PASS_CALLS - 1
    );
    assert_eq!(
        pass[0]["problem"],
        format!("over {MAX_PASS_CALLS} calls: the rest was not read")
    );
}

/// `frontier run` on `turns` in `root`, with `$XDG_STATE_HOME` at `state`.
fn frontier_run(root: &Path, state: &Path, turns: &[Turn], extra: &[&str]) -> std::process::Output {
    let replay = state.join("turns.jsonl");
    let mut text = String::from("{\"ctl_mode\":\"extended\"}\n");
    text.push_str(&frontier::agent::replay::to_jsonl(turns));
    std::fs::write(&replay, text).unwrap();
    Command::new(env!("CARGO_BIN_EXE_frontier"))
        .args(["run", "--task", FIRST, "--root"])
        .arg(root)
        .arg("--model")
        .arg(format!("replay:{}", replay.display()))
        .args(extra)
        .env("XDG_STATE_HOME", state)
        .output()
        .unwrap()
}

/// The run directory `frontier run` named on standard error.
fn named_run_dir(stderr: &[u8]) -> PathBuf {
    let text = String::from_utf8_lossy(stderr);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("frontier: run directory "))
        .unwrap_or_else(|| panic!("no run directory in {text}"));
    PathBuf::from(line.split(" (frontier context replay").next().unwrap())
}

#[test]
fn run_governs_by_default_in_a_new_run_directory_that_replays() {
    let root = workspace();
    let state = tempfile::tempdir().unwrap();
    let turns = [
        calls(call("c1", "read_file", &[("path", "a.txt")])),
        answer(),
    ];
    let out = frontier_run(root.path(), state.path(), &turns, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = named_run_dir(&out.stderr);
    assert_eq!(dir.parent().unwrap(), state.path().join("frontier/runs"));
    // Private: it holds the conversation.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let (ms, pid) = name.split_once('-').unwrap();
    assert!(ms.parse::<u64>().unwrap() > 1_600_000_000_000);
    pid.parse::<u32>().unwrap();
    let transcript = String::from_utf8(out.stdout).unwrap();
    let task: Value = serde_json::from_str(transcript.lines().next().unwrap()).unwrap();
    assert_eq!(task["context"], "cpat");
    // The directory replays, through the CLI, to the run's last state.
    let replay = Command::new(env!("CARGO_BIN_EXE_frontier"))
        .args(["context", "replay"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(replay.status.code(), Some(0));
    let replayed: Value = serde_json::from_slice(&replay.stdout).unwrap();
    assert!(replayed["stopped"].is_null());
    let text = replayed.to_string();
    assert!(text.contains("a says hello"));
    assert!(text.contains(FIRST));
    // A second run gets a directory of its own.
    let again = frontier_run(root.path(), state.path(), &turns, &[]);
    assert_eq!(again.status.code(), Some(0));
    assert_ne!(named_run_dir(&again.stderr), dir);
    // --context off: no engine, no directory, the plain loop.
    let plain = frontier_run(root.path(), state.path(), &turns, &["--context", "off"]);
    assert_eq!(plain.status.code(), Some(0));
    assert!(plain.stderr.is_empty());
    let runs = std::fs::read_dir(state.path().join("frontier/runs"))
        .unwrap()
        .count();
    assert_eq!(runs, 2);
    let task: Value = serde_json::from_str(
        String::from_utf8(plain.stdout)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert!(task.get("context").is_none());
}

#[test]
fn run_takes_followups_and_refuses_arms_that_cannot_be() {
    let root = workspace();
    let state = tempfile::tempdir().unwrap();
    let turns = [answer(), update("[]"), answer()];
    let dir = state.path().join("run");
    let out = frontier_run(
        root.path(),
        state.path(),
        &turns,
        &["--task", SECOND, "--run-dir", dir.to_str().unwrap()],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A given run directory is not announced.
    assert!(out.stderr.is_empty());
    let records: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records[0]["followups"], json!([SECOND]));
    assert_eq!(steps(&records, "boundary").len(), 1);
    assert_eq!(of_type(&journal(&dir), "patch").len(), 1);
    let usage = |extra: &[&str], said: &str| {
        let out = frontier_run(root.path(), state.path(), &[answer()], extra);
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(said), "{extra:?}: {err}");
    };
    usage(
        &["--context", "full"],
        "expected cpat, threshold, react or off",
    );
    usage(
        &["--task", " "],
        "--task number 2: a follow-up question is blank",
    );
    usage(
        &["--context", "off", "--run-dir", "x"],
        "--run-dir needs a context engine",
    );
    usage(
        &["--context", "off", "--hard-window", "10"],
        "--hard-window needs a context engine",
    );
    usage(
        &["--hard-window", "0"],
        "invalid value '0' for '--hard-window",
    );
    // The native loop is governed as the CTL loop is: without an engine, the options of one
    // are usage errors there too.
    let native = |extra: &[&str], said: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_frontier"))
            .args([
                "run", "--model", "openai", "--tools", "native", "--task", "t",
            ])
            .arg("--root")
            .arg(root.path())
            .args(extra)
            .env("OPENAI_BASE_URL", "http://127.0.0.1:9")
            .env("OPENAI_MODEL", "m")
            .env("XDG_STATE_HOME", state.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(said), "{extra:?}: {err}");
    };
    native(
        &["--context", "off", "--hard-window", "10"],
        "--hard-window needs a context engine",
    );
    native(
        &["--context", "off", "--generational"],
        "--generational needs a context engine",
    );
    native(
        &["--context", "offf"],
        "expected cpat, threshold, react or off",
    );
}
