//! CPAT's own tests of its engine and its argument normalisation (`cpat_reference.md` §12,
//! `test/patch.test.ts` and `test/contextTool.test.ts`), rewritten against frontier's engine:
//! the same scenarios, the same assertions.

mod context_support;

use context_support::*;
use frontier::context::args::{self, Operation, Output, ReplaceWith};
use frontier::context::block::{Content, Kind, Visibility};
use frontier::context::{Config, Message};
use serde_json::json;

#[test]
fn payload_offload_is_zero_copy_and_recoverable() {
    let mut e = engine();
    system(&mut e, "sys");
    user(&mut e, "read the big file");
    let payload = "line of a large file\n".repeat(200);
    let (_, tools) = chain(&mut e, &[("c1", &payload)]);
    let t = &tools[0];
    let before = block(&e, t).token_count;
    let r = patch(
        &mut e,
        json!({"reason":"done reading","operations":[{"op":"payload_offload","ids":[t],
            "description":"big file","content":"200 identical lines","retrieval_hint":"artifact_get"}]}),
    );
    assert!(r.ok, "{r:?}");
    assert!(
        r.freed_tokens as f64 > 0.9 * before as f64,
        "{r:?} of {before}"
    );
    let b = block(&e, t);
    assert_eq!(b.kind, Kind::ToolResult);
    let Content::Ref(reference) = &b.content else {
        panic!("not a ref: {b:?}")
    };
    assert_eq!(e.artifact_get(&reference.uri, Some(1 << 20)), payload);
    assert_eq!(b.api.as_ref().unwrap().tool_call_id.as_deref(), Some("c1"));
}

#[test]
fn compact_requires_preserve_and_drop_and_archives_sources() {
    let mut e = engine();
    system(&mut e, "sys");
    user(&mut e, "question");
    let (a, tools) = chain(&mut e, &[("c1", "result")]);
    let t = &tools[0];
    let r = patch(
        &mut e,
        json!({"reason":"r","operations":[{"op":"compact","ids":[a,t],"description":"d",
            "content":"summary","preserve":[],"drop":[]}]}),
    );
    assert_eq!(rules(&r), ["compact_policy"]);
    let r = patch(
        &mut e,
        json!({"reason":"r","operations":[{"op":"compact","ids":[a,t],"description":"d",
            "content":"summary","preserve":["the result"],"drop":[]}]}),
    );
    assert!(r.ok, "{r:?}");
    assert_eq!(visibility(&e, &a), Visibility::Archived);
    assert_eq!(visibility(&e, t), Visibility::Archived);
    let summary = block(&e, &r.created_block_ids[0]);
    assert_eq!(summary.source_ids, [a.clone(), t.clone()]);
    assert_eq!(
        visible_kinds(&e),
        ["system_prompt", "user_message", "summary"]
    );
}

#[test]
fn breaking_a_tool_call_chain_is_rejected() {
    let mut e = engine();
    system(&mut e, "sys");
    user(&mut e, "q");
    let (_, tools) = chain(&mut e, &[("c1", "result")]);
    let r = patch(
        &mut e,
        json!({"reason":"r","operations":[{"op":"set_visibility","ids":[tools[0]],"visibility":"archived"}]}),
    );
    assert_eq!(rules(&r), ["chain_atomicity"]);
    assert_eq!(r.rejections[0].op_index, -1);
    assert_eq!(visibility(&e, &tools[0]), Visibility::Model);
}

#[test]
fn system_prompt_and_user_originals_are_protected() {
    let mut config = Config::default();
    config.options.allow_replace = true;
    let mut e = engine_with(config);
    let s = system(&mut e, "sys");
    let u = user(&mut e, "q");
    let one = |op: serde_json::Value| json!({"reason":"r","operations":[op]});
    let r = patch(
        &mut e,
        one(json!({"op":"set_visibility","ids":[s],"visibility":"archived"})),
    );
    assert_eq!(rules(&r), ["protected_kind"]);
    let r = patch(
        &mut e,
        one(json!({"op":"replace","ids":[u],"content":"other"})),
    );
    assert_eq!(rules(&r), ["replace_protected"]);
    let r = patch(
        &mut e,
        one(json!({"op":"set_visibility","ids":[u],"visibility":"hidden"})),
    );
    assert_eq!(rules(&r), ["protected_hidden"]);
    let r = patch(
        &mut e,
        one(json!({"op":"set_visibility","ids":[u],"visibility":"archived"})),
    );
    assert!(r.ok, "{r:?}");
    assert_eq!(visibility(&e, &u), Visibility::Archived);
}

#[test]
fn replace_is_gated_off_by_default() {
    let mut e = engine();
    user(&mut e, "q");
    let a = reply(&mut e, "an answer");
    let r = patch(
        &mut e,
        json!({"reason":"r","operations":[{"op":"replace","ids":[a],"content":"x"}]}),
    );
    assert_eq!(rules(&r), ["op_disabled"]);
}

#[test]
fn reasoning_trace_is_api_required_during_an_open_chain_and_released_after() {
    let mut e = engine();
    user(&mut e, "q");
    let ids = e
        .ingest(Message::Assistant {
            text: String::new(),
            tool_calls: vec![call("c1", "read_file")],
            reasoning: Some("I should read the file".into()),
        })
        .unwrap();
    let (head, trace) = (&ids[0], &ids[1]);
    assert_eq!(visibility(&e, trace), Visibility::ApiRequired);
    assert_eq!(block(&e, trace).source_ids, std::slice::from_ref(head));
    let r = patch(
        &mut e,
        json!({"reason":"r","operations":[{"op":"set_visibility","ids":[trace],"visibility":"hidden"}]}),
    );
    assert_eq!(rules(&r), ["protected_kind"]);
    let replayed = |e: &frontier::context::Engine| {
        e.view()
            .messages
            .iter()
            .any(|m| m.reasoning_content.as_deref() == Some("I should read the file"))
    };
    assert!(replayed(&e));
    e.ingest(Message::ToolResult {
        tool_call_id: "c1".into(),
        name: "read_file".into(),
        text: "x".into(),
    })
    .unwrap();
    reply(&mut e, "done");
    assert_eq!(visibility(&e, trace), Visibility::Hidden);
    assert!(!replayed(&e));
}

#[test]
fn an_empty_operations_list_is_an_explicit_accepted_no_op() {
    let mut e = engine();
    user(&mut e, "q");
    let before = snapshot(&e);
    let r = patch(&mut e, json!({"reason":"nothing to do","operations":[]}));
    assert!(r.ok);
    assert_eq!(r.applied, 0);
    assert_eq!(snapshot(&e), before);
}

#[test]
fn offloaded_tool_results_remain_chain_members_regression_api_400() {
    let mut e = engine();
    system(&mut e, "sys");
    user(&mut e, "old question");
    let (h, tools) = chain(&mut e, &[("c1", &"one ".repeat(500)), ("c2", "two")]);
    user(&mut e, "current question");
    let offload = json!({"reason":"r","operations":[{"op":"payload_offload","ids":[tools[0]],
        "description":"d","content":"s","retrieval_hint":"h"}]});
    assert!(patch(&mut e, offload).ok);
    let compact = |ids: Vec<&String>| {
        json!({"reason":"r","operations":[{"op":"compact","ids":ids,"description":"d",
            "content":"the files were read","preserve":["facts"],"drop":["noise"]}]})
    };
    let r = patch(&mut e, compact(vec![&h, &tools[1]]));
    assert_eq!(rules(&r), ["chain_atomicity"], "{r:?}");
    assert!(view_chains_paired(&e));
    let r = patch(&mut e, compact(vec![&h, &tools[0], &tools[1]]));
    assert!(r.ok, "{r:?}");
    assert!(view_chains_paired(&e));
    assert!(e.view().messages.iter().all(|m| m.role != "tool"));
}

#[test]
fn restore_re_inlines_an_offloaded_payload() {
    let mut e = engine();
    user(&mut e, "q");
    let (_, tools) = chain(&mut e, &[("c1", "the exact payload")]);
    let t = &tools[0];
    let op = |name: &str| json!({"reason":"r","operations":[{"op":name,"ids":[t],"description":"d","content":"s","retrieval_hint":"h"}]});
    assert!(patch(&mut e, op("payload_offload")).ok);
    let r = patch(&mut e, op("restore"));
    assert!(r.ok, "{r:?}");
    let b = block(&e, t);
    assert_eq!(b.content, Content::Inline("the exact payload".into()));
    assert_eq!(b.kind, Kind::ToolResult);
    assert_eq!(b.description, "Restored payload: the exact payload");
    assert_eq!(b.api.as_ref().unwrap().tool_call_id.as_deref(), Some("c1"));
    assert_eq!(rules(&patch(&mut e, op("restore"))), ["not_offloaded"]);
}

#[test]
fn merge_consolidates_overlapping_blocks() {
    let mut e = engine();
    user(&mut e, "q");
    let a = reply(&mut e, "the file says x");
    let b = reply(&mut e, "the file says x and y");
    user(&mut e, "next");
    let merge = |ids: Vec<&String>| json!({"reason":"r","operations":[{"op":"merge","ids":ids,"description":"what the file says","content":"x and y"}]});
    assert_eq!(rules(&patch(&mut e, merge(vec![&a]))), ["merge_arity"]);
    let r = patch(&mut e, merge(vec![&a, &b]));
    assert!(r.ok, "{r:?}");
    assert_eq!(visibility(&e, &a), Visibility::Archived);
    assert_eq!(visibility(&e, &b), Visibility::Archived);
    let s = block(&e, &r.created_block_ids[0]);
    assert_eq!(s.source_ids, [a, b]);
    assert!(s.description.contains("merged"), "{}", s.description);
}

#[test]
fn fold_collapses_a_contiguous_range_into_a_scope_summary() {
    let mut e = engine();
    user(&mut e, "q");
    let steps: Vec<String> = (0..4)
        .map(|i| reply(&mut e, &format!("step {i}")))
        .collect();
    user(&mut e, "next");
    let fold = |ids: Vec<&String>, scope: &str| {
        json!({"reason":"r","operations":[{"op":"fold","ids":ids,"description":"warmed up",
            "content":"the warm-up is done","scope_label":scope}]})
    };
    let r = patch(&mut e, fold(vec![&steps[0], &steps[1]], ""));
    assert_eq!(rules(&r), ["fold_scope"]);
    let r = patch(&mut e, fold(vec![&steps[0], &steps[2]], "warm-up steps"));
    assert_eq!(rules(&r), ["fold_range"]);
    let r = patch(
        &mut e,
        fold(vec![&steps[2], &steps[0], &steps[1]], "warm-up steps"),
    );
    assert!(r.ok, "{r:?}");
    let s = block(&e, &r.created_block_ids[0]);
    assert!(
        s.description.contains("folded scope: warm-up steps"),
        "{}",
        s.description
    );
}

#[test]
fn compact_cannot_swallow_the_current_question() {
    let mut e = engine();
    system(&mut e, "sys");
    let old_q = user(&mut e, "old question");
    let old_a = reply(&mut e, "old answer");
    let q = user(&mut e, "current question");
    let before = snapshot(&e);
    let compact = |ids: Vec<&String>| {
        json!({"reason":"r","operations":[{"op":"compact","ids":ids,"description":"d",
            "content":"an old turn","preserve":["facts"],"drop":[]}]})
    };
    let r = patch(&mut e, compact(vec![&old_a, &q]));
    assert_eq!(rules(&r), ["protected_current_question"]);
    assert_eq!(snapshot(&e), before);
    let r = patch(&mut e, compact(vec![&old_q, &old_a]));
    assert!(r.ok, "{r:?}");
    assert_eq!(visibility(&e, &q), Visibility::Model);
}

#[test]
fn semantic_drift_guard_a_runtime_reminder_is_not_the_current_question() {
    let mut e = engine();
    let q = user(&mut e, "the real question");
    reply(&mut e, "working");
    e.ingest(Message::User {
        text: "Reminder: manage your context".into(),
        origin: Some(frontier::context::block::Origin::Runtime),
    })
    .unwrap();
    let r = patch(
        &mut e,
        json!({"reason":"r","operations":[{"op":"compact","ids":[q],"description":"d",
            "content":"c","preserve":["p"],"drop":[]}]}),
    );
    assert_eq!(rules(&r), ["protected_current_question"]);
}

#[test]
fn maps_flat_payload_fields_to_typed_operations() {
    let update = args::normalise(&json!({"reason":"why","operations":[
        {"op":"payload_offload","ids":["t"],"description":"d","content":"s","retrieval_hint":"h"},
        {"op":"restore","ids":["t"]},
        {"op":"merge","ids":["a","b"],"description":"d","content":"c"},
        {"op":"fold","ids":["a","b"],"description":"d","content":"c","scope_label":"s"},
        {"op":"set_visibility","ids":["a"]},
        {"op":"replace","ids":["a","b"],"content":"new"}
    ]}))
    .unwrap();
    let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let out = Output {
        description: "d".into(),
        content: "c".into(),
    };
    assert_eq!(update.reason, "why");
    let ops: Vec<Operation> = update.operations.into_iter().map(Result::unwrap).collect();
    assert_eq!(
        ops,
        [
            Operation::PayloadOffload {
                ids: ids(&["t"]),
                store: "file".into(),
                replace_with: ReplaceWith {
                    description: "d".into(),
                    summary: "s".into(),
                    retrieval_hint: "h".into()
                }
            },
            Operation::Restore { ids: ids(&["t"]) },
            Operation::Merge {
                ids: ids(&["a", "b"]),
                output: out.clone(),
                resolution: "update".into()
            },
            Operation::Fold {
                ids: ids(&["a", "b"]),
                output: out,
                scope_label: "s".into()
            },
            Operation::SetVisibility {
                ids: ids(&["a"]),
                visibility: "archived".into()
            },
            Operation::Replace {
                id: "a".into(),
                content: "new".into(),
                description: None
            },
        ]
    );
    // The journal's form is CPAT's normalised shape.
    assert_eq!(
        serde_json::to_value(&ops[0]).unwrap(),
        json!({"op":"payload_offload","ids":["t"],"store":"file",
            "replace_with":{"description":"d","summary":"s","retrieval_hint":"h"}})
    );
}

#[test]
fn preserves_the_explicit_no_op_and_rejects_an_unknown_op() {
    let update = args::parse(r#"{"reason":"r","operations":[]}"#).unwrap();
    assert!(update.operations.is_empty());
    let e = args::parse(r#"{"reason":"r","operations":[{"op":"clear","ids":["a"]}]}"#).unwrap_err();
    assert_eq!(e.to_string(), "unknown op \"clear\"");
}

#[test]
fn budget_monitor_critical_pressure_force_offloads() {
    // CPAT's test also checks the budget report the runtime injects; the reports belong to
    // the loop's ladder and are not built here.
    use frontier::context::fallback::critical_fallback;
    use frontier::context::Pressure;
    let config = Config {
        max_tokens: 2000,
        ..Config::default()
    };
    let mut e = engine_with(config);
    system(&mut e, "sys");
    user(&mut e, "q");
    let huge = "x".repeat(20_000);
    let (_, tools) = chain(&mut e, &[("c1", &huge), ("c2", "small")]);
    assert_ne!(e.budget().pressure, Pressure::Ok);
    assert_eq!(e.budget().pressure, Pressure::Critical);
    assert_eq!(critical_fallback(&mut e).unwrap(), 1);
    let b = block(&e, &tools[0]);
    let Content::Ref(r) = &b.content else {
        panic!("not offloaded")
    };
    assert!(r
        .summary
        .starts_with("Auto-offloaded under critical budget pressure. Head of payload:\nxxx"));
    assert_eq!(
        b.description,
        format!(
            "Tool result (read_file): {}… (runtime auto-offloaded)",
            "x".repeat(110)
        )
    );
    assert!(e.budget().used < 1400, "{:?}", e.budget());
    assert_eq!(e.artifact_get(&r.uri, Some(1 << 20)), huge);
    // Below the soft limit, nothing more to do.
    assert_eq!(critical_fallback(&mut e).unwrap(), 0);
}
