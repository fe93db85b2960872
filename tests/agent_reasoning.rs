//! A turn's reasoning in the governed loop, against loopback servers streaming it in each
//! API's own form (Chat `reasoning_content` deltas, Responses `reasoning_text` deltas,
//! Anthropic thinking blocks), and the boundary pass's order.
//!
//! A reply with reasoning and calls leaves CPAT's `reasoning_trace` (`api_required`,
//! ephemeral, `source_ids` its reply, the reply's `api.reasoning_content`), journaled; the next
//! Chat request carries `reasoning_content` on that reply's message while its chain is open,
//! and not after the next reply released it; Responses and Anthropic never replay it; a reply
//! with reasoning and no call leaves no trace; reasoning written inline (`<think>`) stays in
//! the text and makes no trace. The CTL loop hands the engine its source's reasoning too
//! (`--model openai` and the provider APIs with `--tools ctl`), and never replays it. The
//! boundary pass runs after the follow-up is ingested, as CPAT's loop runs it: its request
//! holds the new question as the current one, so the answered question's turns can be
//! compacted there and the new question cannot.

mod agent_support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_support::native::{body, c, frame, items, provider, End, C};
use agent_support::server::{serve, Received, Reply, Rng};
use agent_support::{run_native_with, run_with, RunResult};
use frontier::agent::context::boundary::BOUNDARY_PROMPT;
use frontier::agent::context::{Arm, Ladder, Settings};
use frontier::agent::openai::{OpenAi, OpenAiConfig};
use frontier::agent::provider::{Provider, ProviderConfig, ToolMode};
use frontier::agent::{Config, EndStatus, ModelSource};
use frontier::context::block::{Kind, Retention, Visibility};
use frontier::context::durable::Durability;
use frontier::context::replay::replay;
use frontier::context::tokens::CpatEstimator;
use frontier::language::CtlMode;
use frontier::streams::Api;
use serde_json::{json, Value};

const APIS: [Api; 3] = [
    Api::OpenAiChat,
    Api::OpenAiResponses,
    Api::AnthropicMessages,
];

const TASK: &str = "summarise the two files";
const FOLLOWUP: &str = "and which file is longer?";

const R1: &str = "I should read a.txt first, then b.txt.";
const R2: &str = "a.txt is read; b.txt is next.";
const R3: &str = "Both are read: time to answer.";

fn lines(tag: &str, count: usize) -> String {
    (0..count)
        .map(|i| format!("{tag} line {i:04} of the file\n"))
        .collect()
}

fn files(root: &Path) {
    std::fs::write(root.join("a.txt"), lines("a", 12)).unwrap();
    std::fs::write(root.join("b.txt"), lines("b", 20)).unwrap();
}

/// Governed settings in `run_dir`: a window no step reaches, in `arm`.
fn settings(run_dir: &Path, arm: Arm) -> Settings {
    let mut s = Settings::new(run_dir);
    s.arm = arm;
    s.budget.max_tokens = 1_000_000;
    s.ladder = Ladder {
        spill_tokens: 100_000,
        preview_chars: 200,
        keep_recent: 8,
        cache_ttl: Duration::from_secs(3600),
        collapse_ratio: 10.0,
        compact_ratio: 10.0,
    };
    s.durability = Durability::Flush;
    s
}

fn read(id: &'static str, path: &str) -> C {
    c(id, "read_file", json!({"path": path}))
}

/// `body` with `reasoning` streamed in the API's own form, in pieces, before the turn's text
/// and calls (right after the stream's first event).
fn with_reasoning(api: Api, body: Vec<u8>, reasoning: &str, rng: &mut Rng) -> Vec<u8> {
    let text = String::from_utf8(body).unwrap();
    let at = text.find("\n\n").unwrap() + 2;
    let mut frames = String::new();
    match api {
        Api::OpenAiChat => {
            for piece in rng.pieces(reasoning, 6) {
                frames.push_str(&frame(
                    api,
                    "",
                    json!({"id": "x", "object": "chat.completion.chunk",
                           "choices": [{"index": 0, "delta": {"reasoning_content": piece},
                                        "finish_reason": null}]}),
                ));
            }
        }
        Api::OpenAiResponses => {
            for piece in rng.pieces(reasoning, 6) {
                frames.push_str(&frame(
                    api,
                    "response.reasoning_text.delta",
                    json!({"type": "response.reasoning_text.delta", "item_id": "rs",
                           "output_index": 0, "content_index": 0, "delta": piece}),
                ));
            }
        }
        Api::AnthropicMessages => {
            frames.push_str(&frame(
                api,
                "content_block_start",
                json!({"type": "content_block_start", "index": 9,
                       "content_block": {"type": "thinking", "thinking": ""}}),
            ));
            for piece in rng.pieces(reasoning, 6) {
                frames.push_str(&frame(
                    api,
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 9,
                           "delta": {"type": "thinking_delta", "thinking": piece}}),
                ));
            }
            frames.push_str(&frame(
                api,
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 9,
                       "delta": {"type": "signature_delta", "signature": "c2lnbmF0dXJl"}}),
            ));
            frames.push_str(&frame(
                api,
                "content_block_stop",
                json!({"type": "content_block_stop", "index": 9}),
            ));
        }
    }
    let mut out = text;
    out.insert_str(at, &frames);
    out.into_bytes()
}

/// A turn of `text` and `calls`, with `reasoning` if any.
fn turn(api: Api, text: &str, calls: &[C], reasoning: Option<&str>, rng: &mut Rng) -> Reply {
    let streamed = body(api, text, calls, End::Done, rng);
    Reply::stream(match reasoning {
        Some(r) => with_reasoning(api, streamed, r, rng),
        None => streamed,
    })
}

/// Runs a governed native session of `api` against `replies`; the run and the bodies.
fn run_native(
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
    (run, bodies(server))
}

fn bodies(server: std::thread::JoinHandle<Vec<Received>>) -> Vec<Value> {
    server.join().unwrap().into_iter().map(|r| r.body).collect()
}

fn journal(run_dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(run_dir.join("journal.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The journal's `ingest` record of block `id`.
fn ingested<'j>(journal: &'j [Value], id: &str) -> &'j Value {
    journal
        .iter()
        .find(|r| r["type"] == "ingest" && r["block_id"] == id)
        .unwrap_or_else(|| panic!("no ingest of {id}"))
}

/// The ids of the `reasoning_trace` blocks the journal ingested.
fn traces(journal: &[Value]) -> Vec<String> {
    journal
        .iter()
        .filter(|r| r["type"] == "ingest" && r["kind"] == "reasoning_trace")
        .map(|r| r["block_id"].as_str().unwrap().to_owned())
        .collect()
}

/// The Chat assistant message that made the call `id`.
fn chat_message_of<'b>(body: &'b Value, id: &str) -> &'b Value {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| {
            m["tool_calls"]
                .as_array()
                .is_some_and(|calls| calls.iter().any(|c| c["id"] == id))
        })
        .unwrap_or_else(|| panic!("no message made {id}: {body}"))
}

#[test]
fn a_reply_with_reasoning_and_calls_leaves_a_trace_replayed_on_chat_while_its_chain_is_open() {
    for (seed, api) in APIS.into_iter().enumerate() {
        let runs = tempfile::tempdir().unwrap();
        let dir = runs.path().join("run");
        let mut rng = Rng(seed as u64 + 7);
        let replies = vec![
            turn(api, "", &[read("c1", "a.txt")], Some(R1), &mut rng),
            turn(api, "", &[read("c2", "b.txt")], Some(R2), &mut rng),
            turn(api, "Both summarised.", &[], Some(R3), &mut rng),
        ];
        let (run, bodies) =
            run_native(api, replies, seed as u64, settings(&dir, Arm::Cpat), |_| {});
        let name = api.name();
        assert_eq!(run.status, EndStatus::Done, "{name}: {}", run.transcript);
        assert_eq!(bodies.len(), 3, "{name}");

        // The journal: CPAT's trace for each reply with calls, none for the answer.
        let records = journal(&dir);
        assert_eq!(
            traces(&records),
            ["reasoning_004", "reasoning_007"],
            "{name}"
        );
        for (trace, reply, reasoning) in [
            ("reasoning_004", "assistant_003", R1),
            ("reasoning_007", "assistant_006", R2),
        ] {
            let t = ingested(&records, trace);
            assert_eq!(t["role"], "assistant", "{name} {t}");
            assert_eq!(t["visibility"], "api_required", "{name} {t}");
            assert_eq!(t["retention"], "ephemeral", "{name} {t}");
            assert_eq!(t["source_ids"], json!([reply]), "{name} {t}");
            let r = ingested(&records, reply);
            assert_eq!(r["api"]["reasoning_content"], reasoning, "{name} {r}");
            // One change: the reply's record is continued by its trace's.
            assert_eq!(r["continued"], true, "{name} {r}");
        }
        let answer = ingested(&records, "assistant_009");
        assert_eq!(answer["kind"], "assistant_message", "{name}");
        assert!(answer.get("api").is_none(), "{name}: {answer}");

        // The replayed store: each trace holds its reasoning, released (hidden) by the next
        // reply, and the replies no longer carry it.
        let engine = replay(&dir, Arc::new(CpatEstimator)).unwrap().engine;
        for (trace, reply, reasoning) in [
            ("reasoning_004", "assistant_003", R1),
            ("reasoning_007", "assistant_006", R2),
        ] {
            let t = engine.store().get(trace).unwrap();
            assert_eq!(t.kind, Kind::ReasoningTrace);
            assert_eq!(t.visibility, Visibility::Hidden, "{name}: {trace}");
            assert_eq!(t.retention, Retention::Ephemeral);
            assert_eq!(t.source_ids, [reply]);
            assert_eq!(t.content.rendered(), reasoning);
            let r = engine.store().get(reply).unwrap();
            assert_eq!(r.api.as_ref().unwrap().reasoning_content, None, "{name}");
        }
        assert!(engine
            .view()
            .messages
            .iter()
            .all(|m| m.reasoning_content.is_none()));

        // The requests.
        match api {
            Api::OpenAiChat => {
                // While c1's chain is open, its message replays R1.
                assert_eq!(
                    chat_message_of(&bodies[1], "c1")["reasoning_content"],
                    R1,
                    "{}",
                    bodies[1]
                );
                // The next reply released it: c2's message has R2, c1's nothing.
                assert!(
                    chat_message_of(&bodies[2], "c1")
                        .get("reasoning_content")
                        .is_none(),
                    "{}",
                    bodies[2]
                );
                assert_eq!(chat_message_of(&bodies[2], "c2")["reasoning_content"], R2);
                let replayed = bodies[2]["messages"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|m| m.get("reasoning_content").is_some())
                    .count();
                assert_eq!(replayed, 1, "{}", bodies[2]);
                // No trace is rendered as a message of its own.
                let all = serde_json::to_string(&bodies[2]).unwrap();
                assert!(!all.contains("[reasoning trace]"), "{all}");
                assert!(!all.contains(R1), "{all}");
            }
            _ => {
                // Not replayed: no reasoning, no thinking block, no signature.
                for body in &bodies {
                    let all = serde_json::to_string(body).unwrap();
                    for absent in [R1, R2, "reasoning_content", "thinking", "c2lnbmF0dXJl"] {
                        assert!(!all.contains(absent), "{name}: {absent} in {all}");
                    }
                }
            }
        }
    }
}

#[test]
fn reasoning_without_calls_makes_no_trace() {
    for (seed, api) in APIS.into_iter().enumerate() {
        let runs = tempfile::tempdir().unwrap();
        let dir = runs.path().join("run");
        let mut rng = Rng(seed as u64 + 11);
        let replies = vec![turn(api, "Nothing to read.", &[], Some(R3), &mut rng)];
        let (run, bodies) =
            run_native(api, replies, seed as u64, settings(&dir, Arm::Cpat), |_| {});
        assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
        assert_eq!(bodies.len(), 1);
        let records = journal(&dir);
        assert!(traces(&records).is_empty(), "{}: {records:?}", api.name());
        let reply = ingested(&records, "assistant_003");
        assert!(reply.get("api").is_none(), "{reply}");
        assert!(!records.iter().any(|r| r["block_id"] == "reasoning_004"));
    }
}

#[test]
fn inline_think_blocks_stay_in_the_text_and_make_no_trace() {
    let runs = tempfile::tempdir().unwrap();
    let dir = runs.path().join("run");
    let api = Api::OpenAiChat;
    let mut rng = Rng(5);
    let thought = "<think>a.txt holds the answer</think>";
    let replies = vec![
        turn(api, thought, &[read("c1", "a.txt")], None, &mut rng),
        turn(api, "Summarised.", &[], None, &mut rng),
    ];
    let (run, bodies) = run_native(api, replies, 5, settings(&dir, Arm::Cpat), |_| {});
    assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
    let records = journal(&dir);
    assert!(traces(&records).is_empty(), "{records:?}");
    let message = chat_message_of(&bodies[1], "c1");
    assert_eq!(message["content"], thought, "{message}");
    assert!(message.get("reasoning_content").is_none(), "{message}");
}

/// One call in extended CTL.
fn ctl_call(id: &str, name: &str, args: &[(&str, &str)]) -> String {
    let mut s = format!("call {id} {name}\n");
    for (k, v) in args {
        s.push_str(&format!("arg {k} = {v}\n"));
    }
    s.push_str("end\n");
    s
}

#[test]
fn the_ctl_loop_hands_its_sources_reasoning_to_the_engine_and_does_not_replay_it() {
    for source in ["openai", "provider"] {
        let runs = tempfile::tempdir().unwrap();
        let dir = runs.path().join("run");
        let api = Api::OpenAiChat;
        let mut rng = Rng(3);
        let read_a = ctl_call("c1", "read_file", &[("path", "a.txt")]);
        let replies = vec![
            Reply::stream(with_reasoning(
                api,
                body(api, &read_a, &[], End::Done, &mut rng),
                R1,
                &mut rng,
            )),
            Reply::stream(with_reasoning(
                api,
                body(api, "", &[], End::Done, &mut rng),
                R3,
                &mut rng,
            )),
        ];
        let (base, server) = serve(replies, 3);
        let base = format!("{base}/v1");
        let mut model: Box<dyn ModelSource> = match source {
            "openai" => {
                let mut config = OpenAiConfig::new(&base, "test-model");
                config.api_key = Some("test-key".into());
                config.read_timeout = Duration::from_secs(10);
                config.retry.max_retries = 0;
                Box::new(OpenAi::new(config).with_notices(|_| {}))
            }
            _ => {
                let mut config = ProviderConfig::new(api, &base, "test-model");
                config.api_key = Some("test-key".into());
                config.read_timeout = Duration::from_secs(10);
                Box::new(Provider::new(config, ToolMode::Ctl).with_notices(|_| {}))
            }
        };
        let s = settings(&dir, Arm::Cpat);
        let run = run_with(&mut *model, |config| {
            config.task = Some(TASK.into());
            config.ctl_mode = CtlMode::Extended;
            files(config.workspace.root());
            config.context = Some(s);
        });
        let bodies = bodies(server);
        assert_eq!(run.status, EndStatus::Done, "{source}: {}", run.transcript);
        assert_eq!(bodies.len(), 2, "{source}");
        let records = journal(&dir);
        assert_eq!(traces(&records), ["reasoning_004"], "{source}");
        let t = ingested(&records, "reasoning_004");
        assert_eq!(t["visibility"], "api_required");
        assert_eq!(t["source_ids"], json!(["assistant_003"]));
        assert_eq!(
            ingested(&records, "assistant_003")["api"]["reasoning_content"],
            R1
        );
        let engine = replay(&dir, Arc::new(CpatEstimator)).unwrap().engine;
        assert_eq!(
            engine
                .store()
                .get("reasoning_004")
                .unwrap()
                .content
                .rendered(),
            R1
        );
        // CTL results come back as user text, not an API tool-call chain: nothing replayed.
        let sent = serde_json::to_string(&bodies[1]).unwrap();
        assert!(!sent.contains("reasoning_content"), "{source}: {sent}");
        assert!(!sent.contains(R1), "{source}: {sent}");
    }
}

/// The text of a Chat message.
fn text_of(item: &Value) -> String {
    item["content"].as_str().unwrap_or_default().to_owned()
}

/// The boundary scenario on Chat: a read, the first answer, the pass making `update`, the
/// second answer. The run, the bodies, the journal.
fn boundary_run(update: Value, seed: u64) -> (RunResult, Vec<Value>, Vec<Value>) {
    let runs = tempfile::tempdir().unwrap();
    let dir = runs.path().join("run");
    let api = Api::OpenAiChat;
    let mut rng = Rng(seed);
    let replies = vec![
        turn(api, "", &[read("c1", "a.txt")], None, &mut rng),
        turn(api, "The first answer.", &[], None, &mut rng),
        turn(
            api,
            "",
            &[c("b1", "context_update", update)],
            None,
            &mut rng,
        ),
        turn(api, "The second answer.", &[], None, &mut rng),
    ];
    let (run, bodies) = run_native(api, replies, seed, settings(&dir, Arm::Cpat), |config| {
        config.followups = vec![FOLLOWUP.into()]
    });
    assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
    assert_eq!(bodies.len(), 4);
    let records = journal(&dir);
    (run, bodies, records)
}

fn boundary_record(run: &RunResult) -> Value {
    run.of_type("context")
        .into_iter()
        .find(|r| r["step"] == "boundary")
        .expect("the boundary record")
        .clone()
}

#[test]
fn the_boundary_pass_runs_after_the_followup_is_ingested_and_can_compact_the_answered_turns() {
    // The prompt says what the order is.
    assert!(BOUNDARY_PROMPT.contains("a new one has just been asked"));
    assert!(BOUNDARY_PROMPT.contains("the current question"));
    assert!(!BOUNDARY_PROMPT.contains("a new one follows"));
    let update = json!({
        "reason": "the first question is answered",
        "operations": [{"op": "compact",
                        "ids": ["user_002", "assistant_003", "tool_004", "assistant_005"],
                        "description": "The first question and its answer",
                        "content": "Asked to summarise the files; a.txt was read; answered.",
                        "preserve": ["the first answer"], "drop": ["the raw a.txt"]}]
    });
    let (run, bodies, records) = boundary_run(update, 17);
    // The pass's request: the view with the follow-up as its latest user block (the
    // current question), then the boundary prompt, then the manifest.
    let pass = items(Api::OpenAiChat, &bodies[2]);
    let n = pass.len();
    assert!(text_of(&pass[n - 1]).starts_with("<context_manifest>"));
    assert_eq!(text_of(&pass[n - 2]), BOUNDARY_PROMPT);
    let question = pass[..n - 2]
        .iter()
        .rposition(|m| m["role"] == "user")
        .unwrap();
    assert!(
        text_of(&pass[question]).ends_with(FOLLOWUP),
        "{}",
        bodies[2]
    );
    assert_eq!(
        ingested(&records, "user_006")["description"],
        format!("User message: {FOLLOWUP}")
    );
    // The follow-up was ingested before the pass's call: its ingest record comes before the
    // pass's llm_call (the third).
    let at = |pred: &dyn Fn(&Value) -> bool| records.iter().position(pred).unwrap();
    let asked = at(&|r| r["type"] == "ingest" && r["block_id"] == "user_006");
    let calls: Vec<usize> = records
        .iter()
        .enumerate()
        .filter(|(_, r)| r["type"] == "llm_call")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(calls.len(), 4);
    assert!(calls[1] < asked && asked < calls[2], "{records:?}");
    // The answered question's turns, no longer the current question's, were compacted.
    let record = boundary_record(&run);
    assert_eq!(record["ok"], true, "{record}");
    let after = serde_json::to_string(&bodies[3]).unwrap();
    assert!(after.contains("a.txt was read; answered."), "{after}");
    assert!(!after.contains("a line 0011"), "{after}");
    assert!(after.contains(FOLLOWUP));
    assert!(!after.contains(BOUNDARY_PROMPT.trim()));
}

#[test]
fn the_boundary_pass_cannot_compact_the_new_question() {
    let update = json!({
        "reason": "tidy",
        "operations": [{"op": "compact", "ids": ["assistant_005", "user_006"],
                        "description": "d", "content": "c",
                        "preserve": ["p"], "drop": []}]
    });
    let (run, bodies, _) = boundary_run(update, 19);
    let record = boundary_record(&run);
    assert_eq!(record["ok"], false, "{record}");
    let result: Value = serde_json::from_str(record["result"].as_str().unwrap()).unwrap();
    assert_eq!(
        result["rejections"][0]["rule"], "protected_current_question",
        "{result}"
    );
    let after = serde_json::to_string(&bodies[3]).unwrap();
    assert!(after.contains(FOLLOWUP), "{after}");
}
