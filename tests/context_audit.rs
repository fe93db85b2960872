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

/// A small stored state: system, question, a tool-call chain, a reply, the current question.
fn state() -> Value {
    serde_json::json!([
        {"id":"system_001","role":"runtime","kind":"system_prompt","description":"System prompt","content":"You are an agent.","retention":"persistent","protected":true},
        {"id":"user_002","role":"user","kind":"user_message","description":"User message: q1","content":"q1","retention":"persistent","protected":true},
        {"id":"assistant_003","role":"assistant","kind":"assistant_message","description":"A","content":"","api":{"tool_calls":[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{}"}}]}},
        {"id":"tool_004","role":"tool","kind":"tool_result","description":"T","content":"{\"a\":1}","api":{"tool_call_id":"c1","name":"read_file"}},
        {"id":"assistant_005","role":"assistant","kind":"assistant_message","description":"A2","content":"answer one"},
        {"id":"user_006","role":"user","kind":"user_message","description":"User message: q2","content":"q2","retention":"persistent","protected":true}
    ])
}

/// `frontier context apply` on cases written to a temporary directory, in order; the exit
/// status and the output lines.
fn apply_cases(cases: &[(&str, Value)]) -> (i32, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["context".to_owned(), "apply".to_owned()];
    for (name, case) in cases {
        let path = dir.path().join(format!("{name}.json"));
        std::fs::write(&path, case.to_string()).unwrap();
        args.push(path.to_str().unwrap().to_owned());
    }
    let (code, out, err) = run(&args, b"");
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), cases.len(), "{err}");
    for ((name, _), line) in cases.iter().zip(&lines) {
        assert_eq!(line["case"], *name);
    }
    (code, lines)
}

fn case(args: Value) -> Value {
    serde_json::json!({"blocks": state(), "content": {}, "args": args})
}

fn compact_of(ids: &[&str]) -> Value {
    serde_json::json!({"op":"compact","ids":ids,"description":"d","content":"c","preserve":["p"],"drop":[]})
}

fn rejections(line: &Value) -> Vec<(i64, String, String)> {
    line["rejections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["op_index"].as_i64().unwrap(),
                r["rule"].as_str().unwrap().to_owned(),
                r["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// `cpat_reference.md` §1: ids are `<prefix>_<NNN>`, padded to at least three digits, from
/// one counter (`_1000` after 999); `context.md`: `id_counter` defaults to the largest numeric
/// suffix among the block ids.
#[test]
fn summary_ids_follow_the_id_counter_past_three_digits() {
    let ops = serde_json::json!({"operations": [compact_of(&["assistant_005"]), compact_of(&["user_002"])]});
    let mut counted = case(ops.clone());
    counted["id_counter"] = 999.into();
    let (code, lines) = apply_cases(&[("default", case(ops)), ("counted", counted)]);
    assert_eq!(code, 0);
    assert_eq!(
        lines[0]["created_block_ids"],
        serde_json::json!(["summary_007", "summary_008"])
    );
    assert_eq!(
        lines[1]["created_block_ids"],
        serde_json::json!(["summary_1000", "summary_1001"])
    );
    let keys: Vec<&String> = lines[1]["content_puts"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys, ["summary_1000@v1", "summary_1001@v1"]);
}

/// `cpat_reference.md` §2 and §3.1: `replace` with no ids targets `""` (`unknown_id`, never
/// `empty_ids`), and the id pre-checks come before `op_disabled`.
#[test]
fn replace_without_ids_is_an_unknown_empty_id_and_ids_are_checked_before_the_gate() {
    let mut enabled = case(serde_json::json!({"operations":[{"op":"replace","content":"new"}]}));
    enabled["options"] = serde_json::json!({"allowReplace": true});
    let disabled_unknown =
        case(serde_json::json!({"operations":[{"op":"replace","ids":["nope_009"],"content":"x"}]}));
    let disabled = case(
        serde_json::json!({"operations":[{"op":"replace","ids":["tool_004","nope_009"],"content":"x"}]}),
    );
    let (code, lines) = apply_cases(&[
        ("enabled", enabled),
        ("disabled_unknown", disabled_unknown),
        ("disabled", disabled),
    ]);
    assert_eq!(code, 1);
    assert_eq!(
        rejections(&lines[0]),
        [(0, "unknown_id".into(), "block \"\" does not exist".into())]
    );
    assert_eq!(
        rejections(&lines[1]),
        [(
            0,
            "unknown_id".into(),
            "block \"nope_009\" does not exist".into()
        )]
    );
    // Only `ids[0]` is replace's target: the unknown second id is ignored.
    assert_eq!(
        rejections(&lines[2]),
        [(
            0,
            "op_disabled".into(),
            "replace is disabled in this MVP configuration (history must not be rewritten)".into()
        )]
    );
}

/// `cpat_reference.md` §3.1 (restore): an offloaded block whose version key the content store
/// does not hold is `artifact_missing`; with the key it comes back inline, its description
/// CPAT's `Restored payload: …` and its version unchanged.
#[test]
fn restore_needs_the_payload_at_the_blocks_version_key() {
    let mut blocks = state();
    blocks[3]["version"] = 2.into();
    blocks[3]["content"] = serde_json::json!({"artifact_id":"tool_004@v2","uri":"artifact://tool_004@v2","store":"file","summary":"s","retrieval_hint":"h"});
    let restore = serde_json::json!({"operations":[{"op":"restore","ids":["tool_004"]}]});
    let missing =
        serde_json::json!({"blocks": blocks, "content": {"tool_004@v1": "old"}, "args": restore});
    let mut present = missing.clone();
    present["content"]["tool_004@v2"] = "{\"a\":  2}\n".into();
    let (code, lines) = apply_cases(&[("missing", missing), ("present", present)]);
    assert_eq!(code, 1);
    assert_eq!(
        rejections(&lines[0]),
        [(
            0,
            "artifact_missing".into(),
            "block \"tool_004\" payload is unrecoverable (no content at its version key)".into()
        )]
    );
    assert_eq!(lines[1]["ok"], true);
    let block = &lines[1]["blocks"][3];
    assert_eq!(block["content"], "{\"a\":  2}\n");
    assert_eq!(block["version"], 2);
    assert_eq!(block["description"], "Restored payload: {\"a\": 2}");
    assert_eq!(lines[1]["content_puts"], serde_json::json!({}));
}

/// `cpat_reference.md` §7: code points below U+2E80 count 0.3, the others 0.6, rounded up
/// once (a block without a `token_count` is estimated so); §3.1: "blank" is JavaScript's
/// `trim()`, whose whitespace has no U+001C, so a summary of U+001C is not blank.
#[test]
fn the_estimator_splits_at_u2e80_and_blank_is_javascripts() {
    let mut blocks = state();
    blocks[4]["content"] = "\u{2e7f}".repeat(10).into();
    blocks[5]["content"] = "\u{2e80}".repeat(10).into();
    let estimated = serde_json::json!({"blocks": blocks, "args": {"operations": []}});
    let unit_separator = case(serde_json::json!({"operations":[
        {"op":"compact","ids":["assistant_005"],"description":"d","content":"\u{1c}","preserve":["p"],"drop":[]}
    ]}));
    let js_blank = case(serde_json::json!({"operations":[
        {"op":"compact","ids":["assistant_005"],"description":"\u{feff}\u{3000}\u{2028}","content":"c","preserve":["p"],"drop":[]}
    ]}));
    let (_, lines) = apply_cases(&[
        ("estimated", estimated),
        ("unit_separator", unit_separator),
        ("js_blank", js_blank),
    ]);
    assert_eq!(lines[0]["blocks"][4]["token_count"], 3);
    assert_eq!(lines[0]["blocks"][5]["token_count"], 6);
    assert_eq!(lines[1]["ok"], true, "{}", lines[1]);
    assert_eq!(
        rejections(&lines[2]),
        [(
            0,
            "compact_output".into(),
            "compact requires output.description and output.content".into()
        )]
    );
}

/// `cpat_reference.md` §2: an item with a missing op is `unknown op "undefined"`, and an item
/// that is not an object (a string, a number, an array) has no `op` either; the first bad
/// item in array order decides the error, and nothing is journaled.
#[test]
fn an_item_that_is_not_an_object_has_no_op() {
    let (code, lines) = apply_cases(&[
        (
            "string",
            case(serde_json::json!({"operations": ["compact"]})),
        ),
        (
            "number",
            case(
                serde_json::json!({"operations": [{"op":"restore","ids":["tool_004"]}, 5, {"op":"clear"}]}),
            ),
        ),
        (
            "array",
            case(serde_json::json!({"operations": [["op", "compact"]]})),
        ),
        (
            "clear_first",
            case(serde_json::json!({"operations": [{"op":"clear"}, "compact"]})),
        ),
        (
            "null",
            case(serde_json::json!({"operations": [null, {"op":"clear"}]})),
        ),
    ]);
    assert_eq!(code, 1);
    let errors: Vec<&Value> = lines.iter().map(|l| &l["error"]).collect();
    let parse = |m: &str| serde_json::json!({"stage": "parse", "message": m});
    assert_eq!(
        errors,
        [
            &parse("unknown op \"undefined\""),
            &parse("unknown op \"undefined\""),
            &parse("unknown op \"undefined\""),
            &parse("unknown op \"clear\""),
            &parse("operation 0 is not an object"),
        ]
    );
    for line in &lines {
        assert_eq!(line["journal"], serde_json::json!([]));
        assert_eq!(
            line["tool_result"],
            format!("error: {}", line["error"]["message"].as_str().unwrap())
        );
    }
}

/// A reply with tool calls and an empty reasoning makes no trace (CPAT tests
/// `reasoning_content` for truth); a non-empty one makes CPAT's `api_required` trace.
#[test]
fn an_empty_reasoning_makes_no_trace() {
    use frontier::context::block::{FunctionCall, Kind, ToolCall, Visibility};
    let call = |id: &str| ToolCall {
        id: id.into(),
        kind: "function".into(),
        function: FunctionCall {
            name: "read_file".into(),
            arguments: r#"{"path":"a.txt"}"#.into(),
        },
    };
    let mut engine = Engine::in_memory(Config::default());
    let empty = engine
        .ingest(Message::Assistant {
            text: String::new(),
            tool_calls: vec![call("c1")],
            reasoning: Some(String::new()),
        })
        .unwrap();
    assert_eq!(empty.len(), 1, "{empty:?}");
    let made = engine
        .ingest(Message::Assistant {
            text: String::new(),
            tool_calls: vec![call("c2")],
            reasoning: Some("read a.txt first".into()),
        })
        .unwrap();
    assert_eq!(made.len(), 2, "{made:?}");
    let trace = engine.store().get(&made[1]).unwrap();
    assert_eq!(trace.kind, Kind::ReasoningTrace);
    assert_eq!(trace.visibility, Visibility::ApiRequired);
}

/// A summary goes where its earliest source stood: one whose earliest source is a chain's
/// result, with the chain's head and a later result still in the view, would stand between
/// the calls and their results, and `chain_atomicity` rejects the patch (the property tests'
/// case, pinned).
#[test]
fn a_summary_that_would_stand_inside_a_chain_is_rejected() {
    use frontier::context::block::{FunctionCall, ToolCall};
    let mut engine = Engine::in_memory(Config::default());
    let calls = ["c1", "c2", "c3"].map(|id| ToolCall {
        id: id.into(),
        kind: "function".into(),
        function: FunctionCall {
            name: "read_file".into(),
            arguments: r#"{"path":"a.txt"}"#.into(),
        },
    });
    let head = engine
        .ingest(Message::Assistant {
            text: String::new(),
            tool_calls: calls.to_vec(),
            reasoning: None,
        })
        .unwrap()
        .remove(0);
    let results: Vec<String> = ["c1", "c2", "c3"]
        .iter()
        .map(|id| {
            engine
                .ingest(Message::ToolResult {
                    tool_call_id: (*id).into(),
                    name: "read_file".into(),
                    text: format!("the text of {id}"),
                })
                .unwrap()
                .remove(0)
        })
        .collect();
    let reply = engine
        .ingest(Message::Assistant {
            text: "read them".into(),
            tool_calls: Vec::new(),
            reasoning: None,
        })
        .unwrap()
        .remove(0);
    let last = &results[2];
    let args = serde_json::json!({"reason": "r", "operations": [
        {"op": "compact", "ids": [reply, last], "description": "d", "content": "c",
         "preserve": ["p"], "drop": []},
        {"op": "set_visibility", "ids": [last], "visibility": "model"},
    ]});
    let outcome = engine.apply_args(&args.to_string(), Actor::Agent).unwrap();
    assert!(!outcome.ok);
    assert_eq!(outcome.rejections.len(), 1, "{:?}", outcome.rejections);
    let rejection = &outcome.rejections[0];
    assert_eq!(rejection.op_index, -1);
    assert!(
        rejection
            .message
            .contains(&format!("would stand between \"{head}\"")),
        "{}",
        rejection.message
    );
    // The whole chain compacted with the reply is fine.
    let whole = serde_json::json!({"reason": "r", "operations": [
        {"op": "compact", "ids": [head, results[0], results[1], last, reply],
         "description": "d", "content": "c", "preserve": ["p"], "drop": []},
    ]});
    assert!(
        engine
            .apply_args(&whole.to_string(), Actor::Agent)
            .unwrap()
            .ok
    );
}
