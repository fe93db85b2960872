//! Context governance in the native-tools loop, against loopback servers speaking OpenAI
//! Chat, OpenAI Responses and Anthropic Messages, streamed in random pieces: the ladder runs
//! before every call and the request is the engine's view in the API's shape, with every
//! call paired with its result by the API's own rules (checked on the bodies received), the
//! manifest last and the task kept; the context tools are native functions in the `cpat` arm
//! only; the boundary pass offers `context_update` alone; the hard window of `react` closes
//! the tools for one last call; `--generational` retires the oldest results first and the run
//! replays to the view that was sent; the usage each stream reports is journaled with its
//! call, calibrates the budget and gives the generational gate its cached fraction.

mod agent_support;

use std::path::{Path, PathBuf};

use agent_support::native::{body, c, done, items, made, provider, stream, with_usage, End, C};
use agent_support::server::{serve, Received, Reply, Rng};
use agent_support::{run_native_with, run_with, RunResult};
use frontier::agent::context::boundary::BOUNDARY_PROMPT;
use frontier::agent::context::compaction::COMPACT_PROMPT;
use frontier::agent::context::{Arm, Ladder, Settings};
use frontier::agent::provider::{Provider, ProviderConfig, ToolMode};
use frontier::agent::{Config, EndStatus};
use frontier::context::durable::Durability;
use frontier::streams::Api;
use serde_json::{json, Value};

const APIS: [Api; 3] = [
    Api::OpenAiChat,
    Api::OpenAiResponses,
    Api::AnthropicMessages,
];

const TASK: &str = "summarise the three files";

/// Lines of the file `tag`, `count` of them (about 15 tokens each).
fn lines(tag: &str, count: usize) -> String {
    (0..count)
        .map(|i| format!("{tag} line {i:04} of the file, some words to fill it up\n"))
        .collect()
}

/// big.txt (over the spill limit), a.txt and b.txt (over CPAT's 300-token floor).
fn files(root: &Path) {
    std::fs::write(root.join("big.txt"), lines("big", 90)).unwrap();
    std::fs::write(root.join("a.txt"), lines("a", 36)).unwrap();
    std::fs::write(root.join("b.txt"), lines("b", 36)).unwrap();
}

/// Governed settings journaled in `run_dir`: `window` tokens, spill over 1,000, two recent
/// results kept, a cache always cold, no fold and no compaction (they need more turns).
fn settings(run_dir: &Path, arm: Arm, window: u64) -> Settings {
    let mut s = Settings::new(run_dir);
    s.arm = arm;
    s.budget.max_tokens = window;
    s.ladder = Ladder {
        spill_tokens: 1000,
        preview_chars: 200,
        keep_recent: 2,
        cache_ttl: std::time::Duration::ZERO,
        collapse_ratio: 10.0,
        compact_ratio: 10.0,
    };
    s.durability = Durability::Flush;
    s
}

/// Runs a governed native session of `api` against `replies` with `settings`; the run,
/// the bodies received.
fn run(
    api: Api,
    replies: Vec<Reply>,
    seed: u64,
    settings: Settings,
    configure: impl FnOnce(&mut Config),
) -> (RunResult, Vec<Value>) {
    let (base, server) = serve(replies, seed);
    let mut model = provider(api, &base);
    let run = run_native_with(&mut model, |config| {
        config.task = Some(TASK.into());
        files(config.workspace.root());
        config.context = Some(settings);
        configure(config);
    });
    let bodies = server
        .join()
        .unwrap()
        .into_iter()
        .map(|r: Received| r.body)
        .collect();
    (run, bodies)
}

/// A read_file call.
fn read(id: &'static str, path: &str) -> C {
    c(id, "read_file", json!({"path": path}))
}

fn turn(api: Api, calls: &[C], rng: &mut Rng) -> Reply {
    stream(api, "", calls, End::Done, rng)
}

/// The journal's records.
fn journal(run_dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(run_dir.join("journal.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The steps of the transcript's `context` records, in order.
fn steps(run: &RunResult) -> Vec<String> {
    run.of_type("context")
        .iter()
        .map(|r| r["step"].as_str().unwrap().to_owned())
        .collect()
}

/// The names of the tools a body declares.
fn tool_names(api: Api, body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let name = match api {
                Api::OpenAiChat => &t["function"]["name"],
                _ => &t["name"],
            };
            name.as_str().unwrap().to_owned()
        })
        .collect()
}

/// The text of a Chat or Responses message, or of an Anthropic message's text blocks.
fn text_of(item: &Value) -> String {
    match &item["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .map(|b| b["text"].as_str().unwrap())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The text a body ends with: the last message's, the last block of an Anthropic one.
fn last_text(api: Api, body: &Value) -> String {
    let all = items(api, body);
    let last = all.last().unwrap();
    assert_eq!(last["role"], "user", "{}: the last message", api.name());
    match api {
        Api::AnthropicMessages => {
            let block = last["content"].as_array().unwrap().last().unwrap();
            assert_eq!(block["type"], "text");
            block["text"].as_str().unwrap().to_owned()
        }
        _ => text_of(last),
    }
}

/// Every call is paired with its result, both ways, by the API's own rules:
///
/// - Chat: an assistant message's `tool_calls` are followed at once by one `tool` message
///   per call, in order, and a `tool` message answers a call of the assistant message
///   before the run of tool messages it is in;
/// - Responses: each `function_call` / `custom_tool_call` has exactly one output item of its
///   own kind after it, and each output item a call before it;
/// - Anthropic: user and assistant alternate, from a user message; the `tool_use` ids of an
///   assistant message are the `tool_result` ids that open the next user message, in order,
///   and a `tool_result` answers a `tool_use` of the message just before.
fn assert_paired(api: Api, body: &Value) {
    let all = items(api, body);
    let at = |i: usize| serde_json::to_string(&all[i]).unwrap();
    match api {
        Api::OpenAiChat => {
            let mut open: Vec<String> = Vec::new();
            for (i, m) in all.iter().enumerate() {
                if m["role"] == "tool" {
                    let id = m["tool_call_id"].as_str().unwrap();
                    assert_eq!(open.first().map(String::as_str), Some(id), "{}", at(i));
                    open.remove(0);
                    continue;
                }
                assert!(
                    open.is_empty(),
                    "calls {open:?} unanswered before {}",
                    at(i)
                );
                for call in m["tool_calls"].as_array().into_iter().flatten() {
                    open.push(call["id"].as_str().unwrap().to_owned());
                }
            }
            assert!(open.is_empty(), "calls {open:?} unanswered");
        }
        Api::OpenAiResponses => {
            for (i, item) in all.iter().enumerate() {
                let kind = item["type"].as_str().unwrap_or("message");
                let (pair, before) = match kind {
                    "function_call" => ("function_call_output", false),
                    "custom_tool_call" => ("custom_tool_call_output", false),
                    "function_call_output" => ("function_call", true),
                    "custom_tool_call_output" => ("custom_tool_call", true),
                    _ => continue,
                };
                let id = &item["call_id"];
                let range: Vec<&Value> = if before {
                    all[..i].iter().collect()
                } else {
                    all[i + 1..].iter().collect()
                };
                let n = range
                    .iter()
                    .filter(|o| o["type"] == pair && &o["call_id"] == id)
                    .count();
                assert_eq!(n, 1, "{}: its pair {pair}", at(i));
            }
        }
        Api::AnthropicMessages => {
            assert_eq!(all[0]["role"], "user");
            for (i, m) in all.iter().enumerate() {
                if i > 0 {
                    assert_ne!(m["role"], all[i - 1]["role"], "{}: roles alternate", at(i));
                }
                let blocks = m["content"].as_array().unwrap();
                let of = |kind: &str, key: &str| -> Vec<String> {
                    blocks
                        .iter()
                        .filter(|b| b["type"] == kind)
                        .map(|b| b[key].as_str().unwrap().to_owned())
                        .collect()
                };
                if m["role"] == "assistant" {
                    let uses = of("tool_use", "id");
                    if uses.is_empty() {
                        continue;
                    }
                    let next = all.get(i + 1).expect("a user message after the calls");
                    let opening: Vec<String> = next["content"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .take_while(|b| b["type"] == "tool_result")
                        .map(|b| b["tool_use_id"].as_str().unwrap().to_owned())
                        .collect();
                    assert_eq!(uses, opening, "{}", at(i));
                } else {
                    let answered = of("tool_result", "tool_use_id");
                    if answered.is_empty() {
                        continue;
                    }
                    let before: Vec<String> = all[i - 1]["content"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter(|b| b["type"] == "tool_use")
                        .map(|b| b["id"].as_str().unwrap().to_owned())
                        .collect();
                    assert_eq!(answered, before, "{}", at(i));
                }
            }
        }
    }
}

/// What every governed request is: paired, the manifest last, the task kept.
fn assert_governed(api: Api, body: &Value) {
    assert_paired(api, body);
    let last = last_text(api, body);
    assert!(last.starts_with("<context_manifest>"), "{last}");
    assert!(
        items(api, body)
            .iter()
            .any(|m| m["role"] == "user" && text_of(m).contains(TASK)),
        "{}: the task is gone",
        api.name()
    );
}

/// The calls of the main scenario: big.txt (spilled), a.txt, b.txt, then a.txt and b.txt
/// again in one turn (the stale ones cleared, then critical pressure), then the answer.
fn scenario(api: Api, rng: &mut Rng) -> Vec<Reply> {
    vec![
        turn(api, &[read("c1", "big.txt")], rng),
        turn(api, &[read("c2", "a.txt")], rng),
        turn(api, &[read("c3", "b.txt")], rng),
        turn(api, &[read("c4", "a.txt"), read("c5", "b.txt")], rng),
        done(api, rng),
    ]
}

/// A window the scenario's last request is at or over (CPAT's critical pressure), found from
/// the view's size at the last call of the same run with room (up to the first critical
/// measure the two runs are the same: nothing else of the ladder depends on the window).
fn critical_window(api: Api, arm: Arm) -> u64 {
    let runs = tempfile::tempdir().unwrap();
    let dir = runs.path().join("run");
    let mut rng = Rng(7);
    let (run, _) = run(
        api,
        scenario(api, &mut rng),
        7,
        settings(&dir, arm, 1_000_000),
        |_| {},
    );
    assert_eq!(run.status, EndStatus::Done);
    let calls: Vec<u64> = journal(&dir)
        .iter()
        .filter(|r| r["type"] == "llm_call")
        .map(|r| r["est_view_tokens"].as_u64().unwrap())
        .collect();
    calls[4]
}

#[test]
fn governed_requests_keep_every_call_paired_under_a_small_window() {
    for (seed, api) in APIS.into_iter().enumerate() {
        let window = critical_window(api, Arm::Cpat);
        let runs = tempfile::tempdir().unwrap();
        let dir = runs.path().join("run");
        let mut rng = Rng(seed as u64 + 1);
        let (run, bodies) = run(
            api,
            scenario(api, &mut rng),
            seed as u64,
            settings(&dir, Arm::Cpat, window),
            |_| {},
        );
        assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
        assert_eq!(bodies.len(), 5, "{}", api.name());
        // The ladder's steps fired: the spill, the stale results, the critical fallback.
        let steps = steps(&run);
        for step in ["spill", "clear_stale", "critical_fallback", "budget_report"] {
            assert!(steps.iter().any(|s| s == step), "{}: {steps:?}", api.name());
        }
        for body in &bodies {
            assert_governed(api, body);
            let tools = tool_names(api, body);
            assert!(tools.contains(&"context_update".to_owned()), "{tools:?}");
            assert!(tools.contains(&"artifact_get".to_owned()), "{tools:?}");
            assert!(body.get("tool_choice").is_none());
        }
        // The spilled result is its reference in every request after the spill, and every
        // call made is in the last request, each with its result.
        let last = serde_json::to_string(&bodies[4]).unwrap();
        assert!(last.contains("artifact://") && last.contains("Spilled:"));
        assert!(!last.contains("big line 0089"), "big.txt is inline");
        for id in ["c1", "c2", "c3", "c4", "c5"] {
            assert!(last.contains(id), "{}: {id} is gone", api.name());
        }
        // The runtime's measures are journaled patches of the runtime.
        let patches: Vec<Value> = journal(&dir)
            .into_iter()
            .filter(|r| r["type"] == "patch" && r["actor"] == "runtime")
            .collect();
        assert!(patches.len() >= 3, "{patches:?}");
    }
}

/// The first `tool_result` block id of the engine for a read of a.txt: the block that holds
/// it, named in the manifest of `body`.
fn block_of(api: Api, body: &Value, needle: &str) -> String {
    for m in items(api, body) {
        let text = match api {
            Api::OpenAiChat => text_of(&m),
            Api::OpenAiResponses => m["output"].as_str().map(str::to_owned).unwrap_or_default(),
            Api::AnthropicMessages => m["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|b| b["type"] == "tool_result")
                .map(|b| b["content"].as_str().unwrap().to_owned())
                .collect(),
        };
        if text.contains(needle) {
            let tag = text.strip_prefix("[block:").unwrap();
            return tag[..tag.find(']').unwrap()].to_owned();
        }
    }
    panic!("{needle} is in no tool result");
}

#[test]
fn a_native_context_update_is_applied_journaled_and_answered() {
    for (seed, api) in APIS.into_iter().enumerate() {
        let runs = tempfile::tempdir().unwrap();
        let dir = runs.path().join("run");
        let mut rng = Rng(seed as u64 + 11);
        // The block ids are the engine's: system 001, task 002, reply 003, result 004.
        let update = c(
            "u1",
            "context_update",
            json!({"reason": "a.txt is read; keep a reference",
                   "operations": [{"op": "payload_offload", "ids": ["tool_004"],
                                   "description": "a.txt, read", "content": "36 lines of a",
                                   "retrieval_hint": "artifact_get it"}]}),
        );
        let replies = vec![
            turn(api, &[read("c1", "a.txt")], &mut rng),
            turn(api, &[update], &mut rng),
            done(api, &mut rng),
        ];
        let (run, bodies) = run(
            api,
            replies,
            seed as u64,
            settings(&dir, Arm::Cpat, 1_000_000),
            |_| {},
        );
        assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
        assert_eq!(block_of(api, &bodies[1], "a line 0000"), "tool_004");
        // Applied with actor agent, journaled.
        let records = journal(&dir);
        let patch = records
            .iter()
            .find(|r| r["type"] == "patch" && r["actor"] == "agent")
            .expect("the agent's patch");
        assert_eq!(patch["result"]["ok"], true, "{patch}");
        assert_eq!(patch["operations"][0]["op"], "payload_offload");
        // Its result comes back as the call's result; a.txt is its reference from then on.
        let last = &bodies[2];
        assert_governed(api, last);
        let text = serde_json::to_string(last).unwrap();
        assert!(
            !text.contains("a line 0035"),
            "{}: a.txt is inline",
            api.name()
        );
        assert!(text.contains("36 lines of a"));
        let result = run
            .of_type("tool_result")
            .into_iter()
            .find(|r| r["id"] == "u1")
            .unwrap()
            .clone();
        assert_eq!(result["ok"], true, "{result}");
        assert!(text.contains("freed_tokens"), "the result is not sent");
    }
}

#[test]
fn threshold_offers_no_context_tool_and_refuses_a_call_to_one() {
    for (seed, api) in APIS.into_iter().enumerate() {
        let runs = tempfile::tempdir().unwrap();
        let dir = runs.path().join("run");
        let mut rng = Rng(seed as u64 + 21);
        let get = c("g1", "artifact_get", json!({"uri": "artifact://x"}));
        let replies = vec![turn(api, &[get], &mut rng), done(api, &mut rng)];
        let (run, bodies) = run(
            api,
            replies,
            seed as u64,
            settings(&dir, Arm::Threshold, 1_000_000),
            |_| {},
        );
        assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
        for body in &bodies {
            assert_governed(api, body);
            let tools = tool_names(api, body);
            assert_eq!(
                tools,
                [
                    "read_file",
                    "list_dir",
                    "write_file",
                    "apply_patch",
                    "shell"
                ],
                "{}",
                api.name()
            );
        }
        let refused = run.of_type("refused");
        assert_eq!(refused.len(), 1);
        let reason = refused[0]["reason"].as_str().unwrap();
        assert!(
            reason.starts_with("unknown_tool: artifact_get is not offered in the threshold arm"),
            "{reason}"
        );
    }
}

#[test]
fn the_boundary_pass_offers_only_context_update_and_ingests_only_its_patch() {
    for (seed, api) in APIS.into_iter().enumerate() {
        let runs = tempfile::tempdir().unwrap();
        let dir = runs.path().join("run");
        let mut rng = Rng(seed as u64 + 31);
        let update = c(
            "b1",
            "context_update",
            json!({"reason": "the first question is answered",
                   "operations": [{"op": "set_visibility", "ids": ["assistant_003", "tool_004"],
                                   "visibility": "archived"}]}),
        );
        let replies = vec![
            turn(api, &[read("c1", "a.txt")], &mut rng),
            stream(api, "The first answer.", &[], End::Done, &mut rng),
            turn(api, &[update], &mut rng),
            stream(api, "The second answer.", &[], End::Done, &mut rng),
        ];
        let (run, bodies) = run(
            api,
            replies,
            seed as u64,
            settings(&dir, Arm::Cpat, 1_000_000),
            |config| config.followups = vec!["and the second question?".into()],
        );
        assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
        assert_eq!(bodies.len(), 4);
        // The pass: the view, the boundary prompt, the manifest; context_update alone.
        let pass = &bodies[2];
        assert_eq!(tool_names(api, pass), ["context_update"], "{}", api.name());
        assert_paired(api, pass);
        assert!(last_text(api, pass).starts_with("<context_manifest>"));
        let all = items(api, pass);
        let prompt_at = all
            .iter()
            .position(|m| text_of(m).contains(BOUNDARY_PROMPT.trim()))
            .expect("the boundary prompt");
        assert!(
            prompt_at + 2 >= all.len(),
            "the prompt is not second to last"
        );
        assert!(all
            .iter()
            .any(|m| text_of(m).contains("and the second question?")));
        // Its patch is journaled; nothing else of it is ingested.
        let records = journal(&dir);
        let patch = records
            .iter()
            .find(|r| r["type"] == "patch" && r["actor"] == "agent")
            .expect("the pass's patch");
        assert_eq!(patch["result"]["ok"], true, "{patch}");
        let after = serde_json::to_string(&bodies[3]).unwrap();
        assert!(!after.contains(BOUNDARY_PROMPT.trim()));
        assert!(
            !after.contains("\"b1\""),
            "the pass's call is in the conversation"
        );
        assert!(
            !after.contains("a line 0035"),
            "the archived result is visible"
        );
        assert_governed(api, &bodies[3]);
        let record = run
            .of_type("context")
            .into_iter()
            .find(|r| r["step"] == "boundary")
            .unwrap()
            .clone();
        assert_eq!(record["ok"], true, "{record}");
    }
}

/// Whether a body closes the tools, in its API's form.
fn tools_closed(api: Api, body: &Value) -> bool {
    match api {
        Api::AnthropicMessages => body["tool_choice"] == json!({"type": "none"}),
        _ => body["tool_choice"] == "none",
    }
}

#[test]
fn reacts_hard_window_sends_one_request_with_the_tools_closed() {
    for (seed, api) in APIS.into_iter().enumerate() {
        let runs = tempfile::tempdir().unwrap();
        let dir = runs.path().join("run");
        let mut rng = Rng(seed as u64 + 41);
        let mut s = settings(&dir, Arm::React, 1_000_000);
        // The system prompt alone is over it.
        s.hard_window = Some(200);
        let replies = vec![turn(api, &[read("c1", "a.txt")], &mut rng)];
        let (run, bodies) = run(api, replies, seed as u64, s, |_| {});
        assert_eq!(run.status, EndStatus::TerminatedEarly, "{}", run.transcript);
        assert_eq!(bodies.len(), 1, "{}", api.name());
        assert!(tools_closed(api, &bodies[0]), "{}", bodies[0]);
        assert_governed(api, &bodies[0]);
        // The call the last turn made anyway is refused, never run.
        let refused = run.of_type("refused");
        assert_eq!(refused.len(), 1);
        assert!(refused[0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("tools_closed"));
        assert!(run.of_type("tool_result").is_empty());
        assert!(steps(&run).contains(&"hard_window".to_owned()));
    }
}

#[test]
fn react_has_no_ladder_and_no_context_tool() {
    for (seed, api) in APIS.into_iter().enumerate() {
        let runs = tempfile::tempdir().unwrap();
        let dir = runs.path().join("run");
        let mut rng = Rng(seed as u64 + 51);
        // A window the big file alone is over: react neither spills nor reports.
        let replies = vec![
            turn(api, &[read("c1", "big.txt")], &mut rng),
            done(api, &mut rng),
        ];
        let (run, bodies) = run(
            api,
            replies,
            seed as u64,
            settings(&dir, Arm::React, 1500),
            |_| {},
        );
        assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
        assert!(steps(&run).is_empty(), "{:?}", steps(&run));
        for body in &bodies {
            assert_governed(api, body);
            assert!(!tool_names(api, body).contains(&"context_update".to_owned()));
        }
        assert!(serde_json::to_string(&bodies[1])
            .unwrap()
            .contains("big line 0089"));
    }
}

#[test]
fn a_context_overflow_compacts_once_with_the_prompt_and_no_tools() {
    for (seed, api) in APIS.into_iter().enumerate() {
        let runs = tempfile::tempdir().unwrap();
        let dir = runs.path().join("run");
        let mut rng = Rng(seed as u64 + 61);
        let summary = "<analysis>draft</analysis><summary>a.txt and b.txt were read.</summary>";
        let replies = vec![
            turn(api, &[read("c1", "a.txt")], &mut rng),
            turn(api, &[read("c2", "b.txt")], &mut rng),
            Reply::status(400, "context_length_exceeded: the prompt is too long"),
            stream(api, summary, &[], End::Done, &mut rng),
            done(api, &mut rng),
        ];
        let mut s = settings(&dir, Arm::Cpat, 1_000_000);
        s.ladder.keep_recent = 1;
        let (run, bodies) = run(api, replies, seed as u64, s, |_| {});
        assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
        assert_eq!(bodies.len(), 5, "{}", api.name());
        // The compaction call: the view, then the seed's prompt; no tool to call.
        let compaction = &bodies[3];
        assert_paired(api, compaction);
        assert_eq!(last_text(api, compaction), COMPACT_PROMPT);
        match api {
            // Anthropic refuses tool_use blocks without tools: declared, and closed.
            Api::AnthropicMessages => assert!(tools_closed(api, compaction)),
            _ => assert!(compaction.get("tools").is_none(), "{compaction}"),
        }
        let compacted = run
            .of_type("context")
            .into_iter()
            .find(|r| r["step"] == "context_overflow")
            .unwrap()
            .clone();
        assert_eq!(compacted["ok"], true, "{compacted}");
        let after = &bodies[4];
        assert_governed(api, after);
        let text = serde_json::to_string(after).unwrap();
        assert!(text.contains("a.txt and b.txt were read."));
        assert!(!text.contains("draft"));
    }
}

/// The view the replayed run would send next (`frontier context replay DIR`), as Chat
/// messages `(role, content)`, the manifest left out.
fn replayed_view(dir: &Path) -> Vec<(String, String)> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_frontier"))
        .args(["context", "replay"])
        .arg(dir)
        .output()
        .unwrap();
    agent_support::assert_success(&out);
    let replayed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(replayed["stopped"], Value::Null);
    let run_json: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(run_json["generational"], true);
    let messages = replayed["view"]["messages"].as_array().unwrap();
    messages[..messages.len() - 1]
        .iter()
        .map(|m| {
            let content = m["content"].as_str().unwrap().to_owned();
            (m["role"].as_str().unwrap().to_owned(), content)
        })
        .collect()
}

#[test]
fn generational_retires_the_oldest_first_and_replays_to_the_view_sent() {
    let api = Api::OpenAiChat;
    let window = critical_window(api, Arm::Cpat);
    let runs = tempfile::tempdir().unwrap();
    let dir: PathBuf = runs.path().join("run");
    let mut rng = Rng(71);
    let mut s = settings(&dir, Arm::Cpat, window);
    s.budget.generational = true;
    // Nothing cleared by the ladder: the fallback chooses among all four results.
    s.ladder.cache_ttl = std::time::Duration::from_secs(3600);
    let (run, bodies) = run(api, scenario(api, &mut rng), 71, s, |_| {});
    assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
    let steps = steps(&run);
    assert!(
        steps.contains(&"generational_fallback".to_owned()),
        "{steps:?}"
    );
    assert!(
        !steps.contains(&"critical_fallback".to_owned()),
        "{steps:?}"
    );
    // Retired oldest first, in store order: a.txt's first read before the others (big.txt
    // was spilled before).
    let records = journal(&dir);
    let retired: Vec<String> = records
        .iter()
        .filter(|r| r["type"] == "patch" && r["actor"] == "runtime")
        .filter(|r| !r["reason"].as_str().unwrap().starts_with("spill"))
        .map(|r| r["operations"][0]["ids"][0].as_str().unwrap().to_owned())
        .collect();
    assert!(!retired.is_empty(), "{records:?}");
    let mut sorted = retired.clone();
    sorted.sort();
    assert_eq!(retired, sorted, "not oldest first");
    assert_eq!(retired[0], block_of(api, &bodies[2], "a line 0000"));
    for body in &bodies {
        assert_governed(api, body);
    }
    // The replay gives the view of the last request: the same messages in the same order
    // (the retired generations last), with the final answer, which came after it, in the
    // live part.
    let sent: Vec<(String, String)> = items(api, &bodies[4])
        .iter()
        .map(|m| (m["role"].as_str().unwrap().to_owned(), text_of(m)))
        .collect();
    let mut view = replayed_view(&dir);
    let answer = ("assistant".to_owned(), "Done.".to_owned());
    let at = view.iter().position(|m| m == &answer).expect("the answer");
    view.remove(at);
    assert!(at < view.len(), "the answer is not before the retired tail");
    assert_eq!(sent[..sent.len() - 1], view[..]);
}

#[test]
fn follow_up_questions_are_asked_in_the_native_loop_without_an_engine_too() {
    for (seed, api) in APIS.into_iter().enumerate() {
        let mut rng = Rng(seed as u64 + 81);
        let replies = vec![
            turn(api, &[read("c1", "a.txt")], &mut rng),
            stream(api, "The first answer.", &[], End::Done, &mut rng),
            stream(api, "The second answer.", &[], End::Done, &mut rng),
        ];
        let (base, server) = serve(replies, seed as u64);
        let mut model = provider(api, &base);
        let run = run_native_with(&mut model, |config| {
            config.task = Some(TASK.into());
            files(config.workspace.root());
            config.followups = vec!["and the second question?".into()];
        });
        let bodies: Vec<Value> = server.join().unwrap().into_iter().map(|r| r.body).collect();
        assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
        assert_eq!(bodies.len(), 3);
        assert_eq!(run.of_type("question").len(), 1);
        // The first answer, then the question, last; no engine: no manifest, no context tool.
        let all = items(api, &bodies[2]);
        assert_eq!(last_text(api, &bodies[2]), "and the second question?");
        assert!(all.iter().any(|m| text_of(m).contains("The first answer.")));
        assert!(!tool_names(api, &bodies[2]).contains(&"context_update".to_owned()));
        assert_paired(api, &bodies[2]);
    }
}

#[test]
fn a_model_that_reuses_its_call_ids_gets_them_unique_in_every_request() {
    for (seed, api) in APIS.into_iter().enumerate() {
        let runs = tempfile::tempdir().unwrap();
        let dir = runs.path().join("run");
        let mut rng = Rng(seed as u64 + 91);
        let replies = vec![
            turn(api, &[read("c1", "a.txt")], &mut rng),
            turn(api, &[read("c1", "b.txt")], &mut rng),
            done(api, &mut rng),
        ];
        let (run, bodies) = run(
            api,
            replies,
            seed as u64,
            settings(&dir, Arm::Cpat, 1_000_000),
            |_| {},
        );
        assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
        let last = &bodies[2];
        assert_governed(api, last);
        let ids = made(api, last);
        // The first keeps the model's id; the second is the engine's (turn 2's c1).
        assert_eq!(ids, ["c1", "t2.c1"], "{}", api.name());
    }
}

#[test]
fn folded_subtasks_keep_every_call_paired() {
    for (seed, api) in APIS.into_iter().enumerate() {
        let runs = tempfile::tempdir().unwrap();
        let dir = runs.path().join("run");
        let mut rng = Rng(seed as u64 + 101);
        let mut s = settings(&dir, Arm::Cpat, 1_000_000);
        // Fold whatever is finished: everything but the latest subtask.
        s.ladder.collapse_ratio = 0.0001;
        s.ladder.keep_recent = 1;
        s.ladder.cache_ttl = std::time::Duration::from_secs(3600);
        let replies = vec![
            turn(api, &[read("c1", "a.txt"), read("c2", "b.txt")], &mut rng),
            turn(api, &[read("c3", "b.txt")], &mut rng),
            turn(api, &[read("c4", "a.txt")], &mut rng),
            done(api, &mut rng),
        ];
        let (run, bodies) = run(api, replies, seed as u64, s, |_| {});
        assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
        let folds = steps(&run).iter().filter(|s| *s == "fold").count();
        assert!(folds >= 2, "{}: {:?}", api.name(), steps(&run));
        for body in &bodies {
            assert_governed(api, body);
        }
        // The first subtask is its summary in the last request, its calls no longer made.
        let last = &bodies[3];
        let text = serde_json::to_string(last).unwrap();
        assert!(
            text.contains("Finished subtask: c1 read_file, c2 read_file"),
            "{text}"
        );
        let made = made(api, last);
        assert!(!made.contains(&"c1".to_owned()), "{made:?}");
        assert!(made.contains(&"c4".to_owned()), "{made:?}");
    }
}

/// A turn of `api` (its text, its calls) whose stream reports a prompt of `prompt` tokens,
/// `cached` of them from the cache.
fn reporting(
    api: Api,
    text: &str,
    calls: &[C],
    (prompt, cached): (u64, Option<u64>),
    rng: &mut Rng,
) -> Reply {
    Reply::stream(with_usage(
        api,
        body(api, text, calls, End::Done, rng),
        prompt,
        cached,
    ))
}

/// The journal's `llm_call` records.
fn llm_calls(dir: &Path) -> Vec<Value> {
    journal(dir)
        .into_iter()
        .filter(|r| r["type"] == "llm_call")
        .collect()
}

/// The member of the provider's own usage object that holds the prompt's count.
fn provider_prompt_field(api: Api) -> &'static str {
    match api {
        Api::OpenAiChat => "prompt_tokens",
        _ => "input_tokens",
    }
}

#[test]
fn every_model_call_journals_the_usage_its_stream_reported() {
    for (seed, api) in APIS.into_iter().enumerate() {
        let runs = tempfile::tempdir().unwrap();
        let dir = runs.path().join("run");
        let mut rng = Rng(seed as u64 + 91);
        let summary = "<analysis>draft</analysis><summary>a.txt and b.txt were read.</summary>";
        // Reply i reports a prompt of 1,000 + i tokens, half of them cached: the turns, the
        // compaction call after the overflow, the boundary pass before the follow-up.
        let usage = |i: u64| (1000 + i, Some(500 + i));
        let replies = vec![
            reporting(api, "", &[read("c1", "a.txt")], usage(0), &mut rng),
            reporting(api, "", &[read("c2", "b.txt")], usage(1), &mut rng),
            Reply::status(400, "context_length_exceeded: the prompt is too long"),
            reporting(api, summary, &[], usage(3), &mut rng),
            reporting(api, "The first answer.", &[], usage(4), &mut rng),
            reporting(api, "Nothing to tidy.", &[], usage(5), &mut rng),
            reporting(api, "The second answer.", &[], usage(6), &mut rng),
        ];
        let mut s = settings(&dir, Arm::Cpat, 1_000_000);
        s.ladder.keep_recent = 1;
        let (run, bodies) = run(api, replies, seed as u64, s, |config| {
            config.followups = vec!["and the second question?".into()];
        });
        assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
        assert_eq!(bodies.len(), 7, "{}", api.name());
        let steps = steps(&run);
        for step in ["context_overflow", "boundary"] {
            assert!(steps.iter().any(|s| s == step), "{}: {steps:?}", api.name());
        }
        // Chat asks for the usage; the other two report it unasked.
        for body in &bodies {
            let asked = body["stream_options"] == json!({"include_usage": true});
            assert_eq!(asked, api == Api::OpenAiChat, "{}: {body}", api.name());
        }
        let calls = llm_calls(&dir);
        assert_eq!(calls.len(), 7, "{}", api.name());
        for (i, call) in calls.iter().enumerate() {
            let usage = &call["usage"];
            if i == 2 {
                // The refused request reported nothing.
                assert_eq!(usage, &json!({}), "{}", api.name());
                continue;
            }
            let (prompt, cached) = (1000 + i as u64, 500 + i as u64);
            assert_eq!(usage["prompt_tokens"], prompt, "{}: {call}", api.name());
            assert_eq!(usage["completion_tokens"], 9, "{}: {call}", api.name());
            assert_eq!(
                usage["prompt_cache_hit_tokens"],
                cached,
                "{}: {call}",
                api.name()
            );
            // The provider's own object, kept under a key of its own.
            let raw = &usage["provider"];
            let own = provider_prompt_field(api);
            let expected_own = if api == Api::AnthropicMessages {
                prompt - cached
            } else {
                prompt
            };
            assert_eq!(raw[own], expected_own, "{}: {call}", api.name());
        }
    }
}

#[test]
fn a_reported_prompt_twice_the_estimate_doubles_the_budgets_used_tokens() {
    for (seed, api) in APIS.into_iter().enumerate() {
        let script = |usage: Option<(u64, Option<u64>)>, rng: &mut Rng| match usage {
            Some(usage) => vec![
                reporting(api, "", &[read("c1", "a.txt")], usage, rng),
                done(api, rng),
            ],
            None => vec![turn(api, &[read("c1", "a.txt")], rng), done(api, rng)],
        };
        // The estimates at the two calls, with room and no usage reported.
        let runs = tempfile::tempdir().unwrap();
        let dir = runs.path().join("reference");
        let mut rng = Rng(seed as u64 + 5);
        let (run_ref, _) = run(
            api,
            script(None, &mut rng),
            5,
            settings(&dir, Arm::Cpat, 1_000_000),
            |_| {},
        );
        assert_eq!(run_ref.status, EndStatus::Done, "{}", run_ref.transcript);
        let estimates: Vec<u64> = llm_calls(&dir)
            .iter()
            .map(|r| {
                assert_eq!(r["usage"], json!({}), "nothing reported, nothing journaled");
                r["est_view_tokens"].as_u64().unwrap()
            })
            .collect();
        let (first, second) = (estimates[0], estimates[1]);
        // A window where the second request's estimate is ok, and twice it soft.
        let window = (2 * second) * 4 / 3;
        assert!((second as f64) < 0.7 * window as f64);
        let reports = |run: &RunResult| -> Vec<(String, u64)> {
            run.of_type("context")
                .iter()
                .filter(|r| r["step"] == "budget_report")
                .map(|r| {
                    (
                        r["pressure"].as_str().unwrap().to_owned(),
                        r["used"].as_u64().unwrap(),
                    )
                })
                .collect()
        };
        // Nothing reported: the raw estimate, no report.
        let dir = runs.path().join("unreported");
        let mut rng = Rng(seed as u64 + 5);
        let (plain, _) = run(
            api,
            script(None, &mut rng),
            5,
            settings(&dir, Arm::Cpat, window),
            |_| {},
        );
        assert_eq!(plain.status, EndStatus::Done, "{}", plain.transcript);
        assert_eq!(reports(&plain), [], "{}", api.name());
        // The first call's prompt reported at twice its estimate: CPAT's clamp(2, 0.5, 2)
        // scales the next estimate, which is now soft.
        let dir = runs.path().join("reported");
        let mut rng = Rng(seed as u64 + 5);
        let (reported, _) = run(
            api,
            script(Some((2 * first, None)), &mut rng),
            5,
            settings(&dir, Arm::Cpat, window),
            |_| {},
        );
        assert_eq!(reported.status, EndStatus::Done, "{}", reported.transcript);
        assert_eq!(
            reports(&reported),
            [("soft".to_owned(), 2 * second)],
            "{}",
            api.name()
        );
        let calls = llm_calls(&dir);
        assert_eq!(calls[0]["usage"]["prompt_tokens"], 2 * first);
        assert_eq!(calls[0]["est_view_tokens"], first);
    }
}

/// The scenario's turns, the i-th reporting the prompt `usage(i)`.
fn scenario_reporting(
    api: Api,
    rng: &mut Rng,
    usage: impl Fn(usize) -> (u64, Option<u64>),
) -> Vec<Reply> {
    let turns: [&[C]; 4] = [
        &[read("c1", "big.txt")],
        &[read("c2", "a.txt")],
        &[read("c3", "b.txt")],
        &[read("c4", "a.txt"), read("c5", "b.txt")],
    ];
    let mut replies: Vec<Reply> = turns
        .iter()
        .enumerate()
        .map(|(i, calls)| reporting(api, "", calls, usage(i), rng))
        .collect();
    replies.push(reporting(api, "Done.", &[], usage(4), rng));
    replies
}

#[test]
fn the_generational_gate_reads_the_reported_cached_fraction() {
    for (seed, api) in APIS.into_iter().enumerate() {
        let runs = tempfile::tempdir().unwrap();
        let generational = |dir: &Path, window: u64| {
            let mut s = settings(dir, Arm::Cpat, window);
            s.budget.generational = true;
            s.ladder.cache_ttl = std::time::Duration::from_secs(3600);
            s
        };
        // The estimate at each call with room: each stream then reports exactly it (the
        // calibration is 1 until the runs part), and the window is the last one's.
        let dir = runs.path().join("reference");
        let mut rng = Rng(seed as u64 + 13);
        let (reference, _) = run(
            api,
            scenario(api, &mut rng),
            13,
            generational(&dir, 1_000_000),
            |_| {},
        );
        assert_eq!(
            reference.status,
            EndStatus::Done,
            "{}",
            reference.transcript
        );
        let estimates: Vec<u64> = llm_calls(&dir)
            .iter()
            .map(|r| r["est_view_tokens"].as_u64().unwrap())
            .collect();
        assert_eq!(estimates.len(), 5);
        let window = estimates[4];
        let fallback = |run: &RunResult| {
            run.of_type("context")
                .into_iter()
                .find(|r| r["step"] == "generational_fallback")
                .cloned()
                .unwrap_or_else(|| panic!("{}: no fallback in {}", api.name(), run.transcript))
        };
        let retired = |dir: &Path| {
            journal(dir)
                .iter()
                .filter(|r| r["type"] == "patch" && r["generation"].is_u64())
                .count()
        };
        // 99 % of every prompt from the cache: with 46 turns left, 46 × 0.01 ≤ 1, so
        // rewriting the tail would not pay: the gate skips the fallback.
        let dir = runs.path().join("cached");
        let mut rng = Rng(seed as u64 + 13);
        let replies = scenario_reporting(api, &mut rng, |i| {
            (estimates[i], Some(estimates[i] * 99 / 100))
        });
        let (cached, _) = run(api, replies, 13, generational(&dir, window), |_| {});
        assert_eq!(cached.status, EndStatus::Done, "{}", cached.transcript);
        let record = fallback(&cached);
        assert_eq!(record["offloaded"], 0, "{}: {record}", api.name());
        let fraction = record["cached_fraction"].as_f64().unwrap();
        let want = (estimates[3] * 99 / 100) as f64 / estimates[3] as f64;
        assert!((fraction - want).abs() < 1e-12, "{}: {record}", api.name());
        assert_eq!(retired(&dir), 0, "{}", api.name());
        // The same prompts with no cache reported: the fallback runs and retires.
        let dir = runs.path().join("uncached");
        let mut rng = Rng(seed as u64 + 13);
        let replies = scenario_reporting(api, &mut rng, |i| (estimates[i], None));
        let (uncached, _) = run(api, replies, 13, generational(&dir, window), |_| {});
        assert_eq!(uncached.status, EndStatus::Done, "{}", uncached.transcript);
        let record = fallback(&uncached);
        assert!(
            record["offloaded"].as_u64().unwrap() > 0,
            "{}: {record}",
            api.name()
        );
        assert_eq!(record["cached_fraction"], 0.0, "{}: {record}", api.name());
        assert!(retired(&dir) > 0, "{}", api.name());
    }
}

#[test]
fn a_ctl_run_through_each_provider_journals_the_usage_it_reported() {
    for (seed, api) in APIS.into_iter().enumerate() {
        let runs = tempfile::tempdir().unwrap();
        let dir = runs.path().join("run");
        let mut rng = Rng(seed as u64 + 17);
        let ctl = "call c1 read_file\narg path 5\na.txtend\n";
        let replies = vec![
            reporting(api, ctl, &[], (3000, Some(2048)), &mut rng),
            reporting(api, "", &[], (3100, None), &mut rng),
        ];
        let (base, server) = serve(replies, seed as u64);
        // The provider's client with no API tools: CTL in the text.
        let base = match api {
            Api::AnthropicMessages => base,
            _ => format!("{base}/v1"),
        };
        let mut config = ProviderConfig::new(api, base, "m");
        config.api_key = Some("k".into());
        let mut model = Provider::new(config, ToolMode::Ctl).with_notices(|_| {});
        let run = run_with(&mut model, |config| {
            config.task = Some(TASK.into());
            files(config.workspace.root());
            config.context = Some(settings(&dir, Arm::Cpat, 1_000_000));
        });
        assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
        assert_eq!(server.join().unwrap().len(), 2);
        let usages: Vec<Value> = llm_calls(&dir).iter().map(|r| r["usage"].clone()).collect();
        assert_eq!(usages.len(), 2);
        assert_eq!(usages[0]["prompt_tokens"], 3000, "{}", api.name());
        assert_eq!(usages[0]["prompt_cache_hit_tokens"], 2048, "{}", api.name());
        assert_eq!(usages[1]["prompt_tokens"], 3100, "{}", api.name());
        assert!(
            usages[1].get("prompt_cache_hit_tokens").is_none(),
            "{}",
            api.name()
        );
    }
}
