//! Every rule of the engine, triggered by a minimal case: one line per rule, the op that
//! breaks it and the exact message (CPAT's, `cpat_reference.md` §3.5, except the two rules
//! frontier adds). Then patches of several ops where some fail, and arguments that are not an
//! update at all. Each case goes through `frontier context apply`'s own function.

use frontier::context::case;
use frontier::context::rules::Rule;
use serde_json::{json, Value};

/// The stored state every line starts from.
fn blocks() -> Value {
    let b = |id: &str, role: &str, kind: &str, content: Value, extra: Value| {
        let mut v = json!({"id":id,"role":role,"kind":kind,"description":id,"content":content});
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    };
    let none = json!({});
    let prot = json!({"protected":true});
    json!([
        b(
            "system_001",
            "runtime",
            "system_prompt",
            json!("sys"),
            prot.clone()
        ),
        b(
            "user_002",
            "user",
            "user_message",
            json!("old question"),
            prot.clone()
        ),
        b(
            "assistant_003",
            "assistant",
            "assistant_message",
            json!(""),
            json!({"api":{"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}})
        ),
        b(
            "tool_004",
            "tool",
            "tool_result",
            json!("{\"a\":1,\"secret\":\"x\"}"),
            json!({"api":{"tool_call_id":"c1","name":"f"}})
        ),
        b(
            "assistant_005",
            "assistant",
            "assistant_message",
            json!({"artifact_id":"assistant_005@v1","uri":"artifact://assistant_005@v1","store":"file","summary":"s","retrieval_hint":"h"}),
            none.clone()
        ),
        b(
            "assistant_006",
            "assistant",
            "assistant_message",
            json!("plain"),
            none.clone()
        ),
        b(
            "assistant_007",
            "assistant",
            "assistant_message",
            json!("gone"),
            json!({"visibility":"hidden"})
        ),
        b(
            "task_008",
            "runtime",
            "task_state",
            json!("state"),
            none.clone()
        ),
        b(
            "budget_009",
            "runtime",
            "budget_report",
            json!("{}"),
            none.clone()
        ),
        b(
            "reasoning_010",
            "assistant",
            "reasoning_trace",
            json!("thinking"),
            json!({"visibility":"api_required"})
        ),
        b(
            "assistant_011",
            "assistant",
            "assistant_message",
            json!("text reply"),
            none.clone()
        ),
        b(
            "tool_012",
            "tool",
            "tool_result",
            json!("plain text"),
            json!({"api":{"tool_call_id":"c9","name":"f"}})
        ),
        b(
            "user_014",
            "user",
            "user_message",
            json!("current question"),
            prot
        ),
    ])
}

/// Runs one patch of `ops` on the fixture.
fn run(ops: Value, options: Value) -> Value {
    let text = json!({"blocks": blocks(), "content": {}, "args": {"reason":"r","operations":ops},
        "options": options})
    .to_string();
    case::run("rule", &text, 16_000).unwrap()
}

const OFF: &str = "{}";
const REPLACE: &str = r#"{"allowReplace":true}"#;
const REDACT: &str = r#"{"allowRedact":true}"#;

/// (rule, op, options, message).
fn table() -> Vec<(Rule, Value, &'static str, &'static str)> {
    vec![
        (Rule::EmptyIds, json!({"op":"restore","ids":[]}), OFF,
         "operation has no target ids"),
        (Rule::UnknownId, json!({"op":"restore","ids":["nope"]}), OFF,
         r#"block "nope" does not exist"#),
        (Rule::ProtectedKind, json!({"op":"set_visibility","ids":["system_001"],"visibility":"model"}), OFF,
         r#"block "system_001": system prompt is not patchable"#),
        (Rule::InvalidField, json!({"op":"restore","ids":"tool_004"}), OFF,
         r#"restore: field "ids" must be an array of strings"#),
        (Rule::CompactOutput, json!({"op":"compact","ids":["assistant_006"],"description":"d","preserve":["p"],"drop":[]}), OFF,
         "compact requires output.description and output.content"),
        (Rule::CompactPolicy, json!({"op":"compact","ids":["assistant_006"],"description":"d","content":"c","preserve":[],"drop":[]}), OFF,
         "compact must declare non-empty `preserve` and a `drop` list"),
        (Rule::MergeOutput, json!({"op":"merge","ids":["assistant_006","assistant_011"],"content":"c"}), OFF,
         "merge requires output.description and output.content (the consolidated block)"),
        (Rule::FoldOutput, json!({"op":"fold","ids":["assistant_006"],"description":" ","content":"c","scope_label":"s"}), OFF,
         "fold requires output.description and output.content (the scope summary)"),
        (Rule::ProtectedState, json!({"op":"compact","ids":["task_008"],"description":"d","content":"c","preserve":["p"],"drop":[]}), OFF,
         r#"block "task_008" is task_state and cannot be collapsed into a summary; archive or restore it instead"#),
        (Rule::ProtectedCurrentQuestion, json!({"op":"compact","ids":["user_014"],"description":"d","content":"c","preserve":["p"],"drop":[]}), OFF,
         r#"block "user_014" is the current question (most recent user message) and cannot be collapsed; it must stay verbatim so you do not lose track of what you are answering"#),
        (Rule::HiddenTarget, json!({"op":"compact","ids":["assistant_007"],"description":"d","content":"c","preserve":["p"],"drop":[]}), OFF,
         r#"block "assistant_007" is hidden; restore it first"#),
        (Rule::OffloadReplacement, json!({"op":"payload_offload","ids":["assistant_006"],"description":"d","content":"s"}), OFF,
         "payload_offload requires replace_with.{description,summary,retrieval_hint}"),
        (Rule::OffloadKind, json!({"op":"payload_offload","ids":["user_002"],"description":"d","content":"s","retrieval_hint":"h"}), OFF,
         r#"block "user_002" (user_message) cannot be offloaded; only tool results and assistant messages"#),
        (Rule::AlreadyOffloaded, json!({"op":"payload_offload","ids":["assistant_005"],"description":"d","content":"s","retrieval_hint":"h"}), OFF,
         r#"block "assistant_005" is already offloaded"#),
        (Rule::OpDisabled, json!({"op":"replace","ids":["assistant_006"],"content":"x"}), OFF,
         "replace is disabled in this MVP configuration (history must not be rewritten)"),
        (Rule::OpDisabled, json!({"op":"redact","ids":["tool_004"],"drop":["secret"]}), OFF,
         "redact is disabled in this MVP configuration"),
        (Rule::RedactFields, json!({"op":"redact","ids":["tool_004"],"drop":[]}), REDACT,
         "redact requires drop_fields"),
        (Rule::RedactKind, json!({"op":"redact","ids":["assistant_006"],"drop":["a"]}), REDACT,
         r#"block "assistant_006" is not an inline tool result"#),
        (Rule::RedactNotJson, json!({"op":"redact","ids":["tool_012"],"drop":["a"]}), REDACT,
         r#"block "tool_012" content is not JSON; use compact or payload_offload instead"#),
        (Rule::VisibilityMissing, json!({"op":"set_visibility","ids":["assistant_006"],"visibility":""}), OFF,
         "set_visibility requires a visibility value"),
        (Rule::VisibilityInvalid, json!({"op":"set_visibility","ids":["assistant_006"],"visibility":"api_required"}), OFF,
         r#"set_visibility visibility must be "model", "archived" or "hidden", not "api_required""#),
        (Rule::ProtectedHidden, json!({"op":"set_visibility","ids":["user_002"],"visibility":"hidden"}), OFF,
         r#"block "user_002" is protected and cannot be hidden; archive it or compact it into a summary"#),
        (Rule::ReplaceProtected, json!({"op":"replace","ids":["user_002"],"content":"x"}), REPLACE,
         r#"block "user_002" is a protected original and cannot be replaced"#),
        (Rule::ReplaceContent, json!({"op":"replace","ids":["assistant_006"],"content":" \u{3000}"}), REPLACE,
         "replace requires non-empty content"),
        (Rule::NotOffloaded, json!({"op":"restore","ids":["assistant_006"]}), OFF,
         r#"block "assistant_006" is not offloaded; restore only re-inlines payload_offloaded blocks"#),
        (Rule::ArtifactMissing, json!({"op":"restore","ids":["assistant_005"]}), OFF,
         r#"block "assistant_005" payload is unrecoverable (no content at its version key)"#),
        (Rule::MergeArity, json!({"op":"merge","ids":["assistant_006"],"description":"d","content":"c"}), OFF,
         "merge needs at least 2 source ids to consolidate"),
        (Rule::MergeResolution, json!({"op":"merge","ids":["assistant_006","assistant_011"],"description":"d","content":"c","resolution":"Update"}), OFF,
         r#"merge requires resolution: "update" (combine overlapping info) or "contradiction" (newer info supersedes older)"#),
        (Rule::FoldScope, json!({"op":"fold","ids":["assistant_006"],"description":"d","content":"c"}), OFF,
         "fold requires a scope_label naming the subtask being folded"),
        (Rule::FoldRange, json!({"op":"fold","ids":["assistant_006","assistant_011"],"description":"d","content":"c","scope_label":"s"}), OFF,
         "fold ids must be a contiguous block range (a subtask trajectory); use compact for a non-contiguous set"),
        (Rule::ChainAtomicity, json!({"op":"set_visibility","ids":["tool_004"],"visibility":"archived"}), OFF,
         r#"tool-call chain would be broken: "assistant_003" stays visible but its chain member "tool_004" would not. Patch the whole chain together (e.g. compact all of: assistant_003, tool_004)."#),
    ]
}

#[test]
fn each_rule_is_triggered_by_a_minimal_case_with_its_exact_message() {
    let before = run(json!([]), json!({}))["blocks"].clone();
    let mut covered = std::collections::HashSet::new();
    for (rule, op, options, message) in table() {
        let out = run(json!([op]), serde_json::from_str(options).unwrap());
        let expected_index = if rule == Rule::ChainAtomicity { -1 } else { 0 };
        assert_eq!(
            out["rejections"],
            json!([{"op_index": expected_index, "rule": rule.name(), "message": message}]),
            "{}: {op}",
            rule.name()
        );
        assert_eq!(out["ok"], false);
        assert_eq!(out["blocks"], before, "{}: the store changed", rule.name());
        assert_eq!(out["content_puts"], json!({}));
        covered.insert(rule);
    }
    let missing: Vec<&str> = Rule::ALL
        .iter()
        .filter(|r| !covered.contains(r))
        .map(|r| r.name())
        .collect();
    assert!(missing.is_empty(), "rules without a line: {missing:?}");
}

#[test]
fn the_other_protected_kind_reasons() {
    for (id, reason) in [
        ("budget_009", "budget reports are runtime-owned and rotated automatically every turn \u{2014} remove this id from your operation and retry"),
        ("reasoning_010", "block is api_required (open tool-call chain); the runtime will release it"),
    ] {
        let out = run(json!([{"op":"restore","ids":[id]}]), json!({}));
        assert_eq!(out["rejections"][0]["message"], format!("block \"{id}\": {reason}"));
    }
}

#[test]
fn the_kth_op_failing_applies_nothing_and_every_rejection_is_listed() {
    let archive = |id: &str| json!({"op":"set_visibility","ids":[id],"visibility":"archived"});
    let before = run(json!([]), json!({}))["blocks"].clone();
    for k in 0..4 {
        let mut ops: Vec<Value> = ["assistant_006", "assistant_011", "user_002", "tool_012"]
            .iter()
            .map(|id| archive(id))
            .collect();
        ops[k] = json!({"op":"restore","ids":["nope"]});
        let out = run(Value::Array(ops), json!({}));
        assert_eq!(out["ok"], false, "k={k}");
        assert_eq!(out["applied"], 0);
        assert_eq!(out["blocks"], before, "k={k}");
        assert_eq!(out["rejections"].as_array().unwrap().len(), 1);
        assert_eq!(out["rejections"][0]["op_index"], k);
        // The patch is journaled, rejected, with no summary records.
        assert_eq!(out["journal"].as_array().unwrap().len(), 1);
        assert_eq!(out["journal"][0]["result"]["ok"], false);
    }
    // Two failing ops, one passing in between: both rejections, in op order.
    let out = run(
        json!([{"op":"restore","ids":["nope"]}, archive("assistant_006"), {"op":"merge","ids":["assistant_006"],"description":"d","content":"c"}]),
        json!({}),
    );
    let listed: Vec<(i64, &str)> = out["rejections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["op_index"].as_i64().unwrap(), r["rule"].as_str().unwrap()))
        .collect();
    assert_eq!(listed, [(0, "unknown_id"), (2, "merge_arity")]);
}

#[test]
fn divergence_4_a_rejected_ops_partial_changes_do_not_reach_the_next_op() {
    // CPAT leaves assistant_006 hidden in the staged copy and reports hidden_target too.
    let out = run(
        json!([{"op":"set_visibility","ids":["assistant_006","user_002"],"visibility":"hidden"},
               {"op":"compact","ids":["assistant_006"],"description":"d","content":"c","preserve":["p"],"drop":[]}]),
        json!({}),
    );
    let rules: Vec<&str> = out["rejections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["protected_hidden"]);
}

#[test]
fn divergence_3_a_field_of_the_wrong_type_is_an_invalid_field_rejection() {
    for (op, message) in [
        (
            json!({"op":"set_visibility","ids":"tool_004"}),
            r#"set_visibility: field "ids" must be an array of strings"#,
        ),
        (
            json!({"op":"set_visibility","ids":["tool_004", 4]}),
            r#"set_visibility: field "ids" must be an array of strings"#,
        ),
        (
            json!({"op":"compact","ids":["assistant_006"],"description":"d","content":42,"preserve":["p"],"drop":[]}),
            r#"compact: field "content" must be a string"#,
        ),
        (
            json!({"op":"compact","ids":["assistant_006"],"description":"d","content":"c","preserve":"p","drop":[]}),
            r#"compact: field "preserve" must be an array of strings"#,
        ),
        (
            json!({"op":"set_visibility","ids":["assistant_006"],"visibility":false}),
            r#"set_visibility: field "visibility" must be a string"#,
        ),
        (
            json!({"op":"merge","ids":["a","b"],"description":"d","content":"c","resolution":1}),
            r#"merge: field "resolution" must be a string"#,
        ),
        (
            json!({"op":"redact","ids":["tool_004"],"drop":"secret"}),
            r#"redact: field "drop" must be an array of strings"#,
        ),
    ] {
        let out = run(json!([op]), json!({"allowRedact":true}));
        assert_eq!(out["error"], Value::Null, "{op}");
        assert_eq!(
            out["rejections"],
            json!([{"op_index":0,"rule":"invalid_field","message":message}]),
            "{op}"
        );
    }
}

#[test]
fn divergence_2_set_visibility_takes_only_model_archived_hidden() {
    for bad in ["foo", "ARCHIVED", "api_required"] {
        let out = run(
            json!([{"op":"set_visibility","ids":["assistant_006"],"visibility":bad}]),
            json!({}),
        );
        assert_eq!(out["rejections"][0]["rule"], "visibility_invalid", "{bad}");
    }
    // Missing or null still archives, as in CPAT.
    for op in [
        json!({"op":"set_visibility","ids":["assistant_006"]}),
        json!({"op":"set_visibility","ids":["assistant_006"],"visibility":null}),
    ] {
        let out = run(json!([op]), json!({}));
        assert_eq!(out["ok"], true);
        assert_eq!(out["blocks"][5]["visibility"], "archived");
    }
}

/// Runs raw argument text.
fn run_raw(args: &str) -> Value {
    let text = json!({"blocks": blocks(), "args": args}).to_string();
    case::run("bad", &text, 16_000).unwrap()
}

#[test]
fn arguments_that_are_not_an_update_are_a_parse_error_and_change_nothing() {
    let before = run(json!([]), json!({}))["blocks"].clone();
    for (args, message) in [
        (
            "{\"reason\":",
            "arguments are not JSON: EOF while parsing a value at line 1 column 10",
        ),
        ("[1,2]", "arguments must be a JSON object"),
        ("null", "arguments must be a JSON object"),
        (
            r#"{"reason":"r","operations":{"op":"restore"}}"#,
            "\"operations\" must be an array",
        ),
        (
            r#"{"reason":5,"operations":[]}"#,
            "\"reason\" must be a string",
        ),
        (r#"{"operations":[null]}"#, "operation 0 is not an object"),
        (
            r#"{"operations":[{"op":"restore","ids":["tool_004"]},{"op":"clear"}]}"#,
            "unknown op \"clear\"",
        ),
        (
            r#"{"operations":[{"ids":["tool_004"]}]}"#,
            "unknown op \"undefined\"",
        ),
        (r#"{"operations":[{"op":7}]}"#, "unknown op \"7\""),
        (r#"{"operations":[{"op":null}]}"#, "unknown op \"null\""),
    ] {
        let out = run_raw(args);
        assert_eq!(
            out["error"],
            json!({"stage":"parse","message":message}),
            "{args}"
        );
        assert_eq!(out["tool_result"], format!("error: {message}"));
        assert_eq!(out["ok"], false);
        assert_eq!(out["blocks"], before);
        assert_eq!(out["journal"], json!([]), "a throw journals nothing");
    }
}

#[test]
fn missing_operations_and_missing_ids() {
    let out = run_raw(r#"{"reason":"nothing"}"#);
    assert_eq!(out["ok"], true);
    assert_eq!(out["applied"], 0);
    let out = run_raw(r#"{"operations":[{"op":"restore"}]}"#);
    assert_eq!(out["rejections"][0]["rule"], "empty_ids");
    // replace without ids targets "" (CPAT's default).
    let out = run_raw(r#"{"operations":[{"op":"replace","content":"x"}]}"#);
    assert_eq!(
        out["rejections"][0]["message"],
        r#"block "" does not exist"#
    );
}

#[test]
fn fields_cpat_copies_without_a_default_keep_an_explicit_null_in_the_journal() {
    // `replace`'s `description: f.description` and `redact`'s `preserve_fields: f.preserve`
    // have no `??`: a missing field is left out of the journaled op, `null` is written as
    // `null`, and neither changes what the op does.
    let out = run(
        json!([{"op":"replace","ids":["assistant_005"],"content":"new","description":null}]),
        json!({"allowReplace":true}),
    );
    assert_eq!(out["ok"], true);
    assert_eq!(out["blocks"][4]["description"], "assistant_005");
    assert_eq!(
        out["journal"][0]["operations"][0],
        json!({"op":"replace","id":"assistant_005","content":"new","description":null})
    );
    let out = run(
        json!([{"op":"replace","ids":["assistant_005"],"content":"new"}]),
        json!({"allowReplace":true}),
    );
    assert_eq!(
        out["journal"][0]["operations"][0],
        json!({"op":"replace","id":"assistant_005","content":"new"})
    );
    let out = run(
        json!([{"op":"redact","ids":["tool_004"],"drop":["a"],"preserve":null}]),
        json!({"allowRedact":true}),
    );
    assert_eq!(
        out["journal"][0]["operations"][0],
        json!({"op":"redact","ids":["tool_004"],"drop_fields":["a"],"preserve_fields":null})
    );
    let out = run(
        json!([{"op":"redact","ids":["tool_004"],"drop":["a"]}]),
        json!({"allowRedact":true}),
    );
    assert_eq!(
        out["journal"][0]["operations"][0],
        json!({"op":"redact","ids":["tool_004"],"drop_fields":["a"]})
    );
}
