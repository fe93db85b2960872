//! The eight places where frontier deliberately differs from CPAT (`docs/context.md`), each
//! in a test named after it (divergence 7's text cuts and JSON text are also tested in the
//! library's unit tests; 2, 3 and 4 in `context_rules.rs`).

mod context_support;

use context_support::*;
use frontier::context::block::{Content, Origin, Visibility};
use frontier::context::{Actor, Config, EngineError, Message};
use serde_json::json;

fn gated() -> Config {
    let mut c = Config::default();
    c.options.allow_replace = true;
    c.options.allow_redact = true;
    c
}

#[test]
fn divergence_1_replace_then_offload_in_one_patch_keeps_the_payload() {
    let mut e = engine_with(gated());
    user(&mut e, "q");
    let a = reply(&mut e, "first draft");
    let r = patch(
        &mut e,
        json!({"reason":"r","operations":[
            {"op":"replace","ids":[a],"content":"second draft"},
            {"op":"payload_offload","ids":[a],"description":"d","content":"s","retrieval_hint":"h"}]}),
    );
    assert!(r.ok, "{r:?}");
    let Content::Ref(reference) = &block(&e, &a).content else {
        panic!("not offloaded")
    };
    assert_eq!(reference.artifact_id, format!("{a}@v2"));
    assert_eq!(e.artifact_get(&reference.uri, None), "second draft");
    let r = patch(
        &mut e,
        json!({"reason":"r","operations":[{"op":"restore","ids":[a]}]}),
    );
    assert!(r.ok, "{r:?}");
    assert_eq!(
        block(&e, &a).content,
        Content::Inline("second draft".into())
    );
}

#[test]
fn divergence_1_redact_then_offload_in_one_patch_keeps_the_payload() {
    let mut e = engine_with(gated());
    user(&mut e, "q");
    let (_, t) = chain(&mut e, &[("c1", r#"{"keep":1,"secret":2}"#)]);
    let r = patch(
        &mut e,
        json!({"reason":"r","operations":[
            {"op":"redact","ids":[t[0]],"drop":["secret"]},
            {"op":"payload_offload","ids":[t[0]],"description":"d","content":"s","retrieval_hint":"h"}]}),
    );
    assert!(r.ok, "{r:?}");
    assert_eq!(
        e.artifact_get(&format!("artifact://{}@v2", t[0]), None),
        r#"{"keep":1}"#
    );
    // Every reference of the store resolves.
    for b in e.store().iter() {
        if let Content::Ref(r) = &b.content {
            assert!(e.content().get(&r.uri).is_some(), "{} dangles", r.uri);
        }
    }
}

#[test]
fn divergence_5_interleaved_chains_are_symmetric() {
    let mut e = engine();
    user(&mut e, "q");
    let h1 = e
        .ingest(Message::Assistant {
            text: String::new(),
            tool_calls: vec![call("c1", "f")],
            reasoning: None,
        })
        .unwrap()
        .remove(0);
    let (_h2, t2) = chain(&mut e, &[("c2", "two")]);
    let t1 = e
        .ingest(Message::ToolResult {
            tool_call_id: "c1".into(),
            name: "f".into(),
            text: "one".into(),
        })
        .unwrap()
        .remove(0);
    let archive = |ids: Vec<&String>| json!({"reason":"r","operations":[{"op":"set_visibility","ids":ids,"visibility":"archived"}]});
    // CPAT: chainOf(h1) = [h1, t1] but chainOf(t1) = [t1], so archiving h1 alone passes and
    // leaves an orphan tool message.
    let r = patch(&mut e, archive(vec![&h1]));
    assert_eq!(rules(&r), ["chain_atomicity"], "{r:?}");
    assert!(r.rejections[0]
        .message
        .contains(&format!("\"{t1}\" stays visible")));
    let r = patch(&mut e, archive(vec![&t1]));
    assert_eq!(rules(&r), ["chain_atomicity"]);
    assert!(patch(&mut e, archive(vec![&h1, &t1])).ok);
    assert!(view_chains_paired(&e));
    assert_eq!(visibility(&e, &t2[0]), Visibility::Model);
}

#[test]
fn divergence_5_a_chain_broken_before_the_patch_does_not_block_unrelated_patches() {
    // A store whose chain is already broken (two calls: the head and one result archived,
    // the other result visible).
    let text = json!({"blocks":[
        {"id":"user_001","role":"user","kind":"user_message","content":"q","protected":true},
        {"id":"assistant_002","role":"assistant","kind":"assistant_message","content":"","visibility":"archived",
         "api":{"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},
                              {"id":"c2","type":"function","function":{"name":"f","arguments":"{}"}}]}},
        {"id":"tool_003","role":"tool","kind":"tool_result","content":"r","api":{"tool_call_id":"c1","name":"f"}},
        {"id":"tool_004","role":"tool","kind":"tool_result","content":"r2","visibility":"archived","api":{"tool_call_id":"c2","name":"f"}},
        {"id":"assistant_005","role":"assistant","kind":"assistant_message","content":"unrelated"}],
        "args":{"reason":"r","operations":[]}})
    .to_string();
    let out = frontier::context::case::run("broken", &text, 16_000).unwrap();
    assert_eq!(out["ok"], true, "CPAT rejects even the empty patch: {out}");
    let with = |ops: serde_json::Value| {
        let mut case: serde_json::Value = serde_json::from_str(&text).unwrap();
        case["args"]["operations"] = ops;
        frontier::context::case::run("broken", &case.to_string(), 16_000).unwrap()
    };
    let out =
        with(json!([{"op":"set_visibility","ids":["assistant_005"],"visibility":"archived"}]));
    assert_eq!(out["ok"], true, "{out}");
    // Touching the broken chain without mending it is refused; mending it is accepted.
    let out = with(json!([{"op":"set_visibility","ids":["assistant_002"],"visibility":"model"}]));
    assert_eq!(out["ok"], false, "{out}");
    assert_eq!(out["rejections"][0]["rule"], "chain_atomicity");
    assert_eq!(
        out["rejections"][0]["message"],
        "tool-call chain would be broken: \"assistant_002\" stays visible but its chain member \"tool_004\" would not. Patch the whole chain together (e.g. compact all of: assistant_002, tool_003, tool_004)."
    );
    let out = with(json!([{"op":"set_visibility","ids":["tool_003"],"visibility":"archived"}]));
    assert_eq!(out["ok"], true, "{out}");
    let out = with(
        json!([{"op":"set_visibility","ids":["assistant_002","tool_004"],"visibility":"model"}]),
    );
    assert_eq!(out["ok"], true, "{out}");
}

#[test]
fn divergence_6_a_summary_of_the_first_block_goes_first() {
    let mut e = engine();
    let a = reply(&mut e, "a first note");
    user(&mut e, "q");
    let r = patch(
        &mut e,
        json!({"reason":"r","operations":[{"op":"compact","ids":[a],"description":"d","content":"c","preserve":["p"],"drop":[]}]}),
    );
    assert!(r.ok);
    let first = e.store().iter().next().unwrap();
    assert_eq!(
        first.id, r.created_block_ids[0],
        "CPAT appends it at the end"
    );
}

#[test]
fn divergence_6_two_summaries_anchored_on_one_block_keep_their_creation_order() {
    let mut e = engine();
    let u = user(&mut e, "old q");
    let a = reply(&mut e, "a");
    let b = reply(&mut e, "b");
    user(&mut e, "q");
    let r = patch(
        &mut e,
        json!({"reason":"r","operations":[
            {"op":"compact","ids":[a],"description":"d","content":"first","preserve":["p"],"drop":[]},
            {"op":"fold","ids":[a, b],"description":"d","content":"second","scope_label":"s"}]}),
    );
    assert!(r.ok, "{r:?}");
    let order: Vec<&str> = e.store().iter().map(|b| b.id.as_str()).collect();
    let at = |id: &str| order.iter().position(|x| *x == id).unwrap();
    let (s1, s2) = (&r.created_block_ids[0], &r.created_block_ids[1]);
    assert_eq!(at(s1), at(&u) + 1);
    assert_eq!(at(s2), at(s1) + 1, "{order:?}");
}

#[test]
fn divergence_7_redact_keeps_key_order_and_the_text_of_numbers() {
    let mut e = engine_with(gated());
    user(&mut e, "q");
    let (_, t) = chain(
        &mut e,
        &[(
            "c1",
            r#"{"z": 1.50, "10": 1e3, "token": "s3cr3t", "2": 12345678901234567890}"#,
        )],
    );
    let r = patch(
        &mut e,
        json!({"reason":"r","operations":[{"op":"redact","ids":[t[0]],"drop":["token"]}]}),
    );
    assert!(r.ok, "{r:?}");
    let b = block(&e, &t[0]);
    assert_eq!(
        b.content,
        Content::Inline(r#"{"z":1.50,"10":1e3,"2":12345678901234567890}"#.into())
    );
    assert_eq!(b.version, 2);
    assert_eq!(
        e.content().get(&format!("{}@v2", t[0])),
        Some(r#"{"z":1.50,"10":1e3,"2":12345678901234567890}"#)
    );
}

#[test]
fn divergence_7_descriptions_are_cut_at_character_boundaries() {
    let mut e = engine();
    let text = format!("{}😀 and more", "a".repeat(109));
    let u = user(&mut e, &text);
    assert_eq!(
        block(&e, &u).description,
        format!("User message: {}…", "a".repeat(109))
    );
}

#[test]
fn divergence_8_a_runtime_reminder_is_marked_and_never_the_current_question() {
    let mut e = engine();
    let q = user(&mut e, "real question");
    let old = reply(&mut e, "thinking");
    let nudge = e
        .ingest(Message::User {
            text: "remember to manage your context".into(),
            origin: Some(Origin::Runtime),
        })
        .unwrap()
        .remove(0);
    assert_eq!(block(&e, &nudge).origin, Some(Origin::Runtime));
    assert_eq!(
        serde_json::to_value(block(&e, &nudge)).unwrap()["origin"],
        "runtime"
    );
    let compact = |ids: Vec<&String>| json!({"reason":"r","operations":[{"op":"compact","ids":ids,"description":"d","content":"c","preserve":["p"],"drop":[]}]});
    assert_eq!(
        rules(&patch(&mut e, compact(vec![&old, &q]))),
        ["protected_current_question"]
    );
    // The reminder itself can be collapsed.
    assert!(patch(&mut e, compact(vec![&old, &nudge])).ok);
}

#[test]
fn divergence_8_a_malformed_context_update_is_an_error_result_never_a_crash() {
    let mut e = engine();
    user(&mut e, "q");
    let before = snapshot(&e);
    for bad in [
        "",
        "{",
        "42",
        r#"{"operations":"all"}"#,
        r#"{"operations":[{"op":"nope"}]}"#,
    ] {
        match e.apply_args(bad, Actor::Runtime) {
            Err(EngineError::Args(_)) => {}
            other => panic!("{bad}: {other:?}"),
        }
    }
    assert_eq!(snapshot(&e), before);
    assert_eq!(e.seq(), 1, "nothing journaled");
}

#[test]
fn a_released_reasoning_trace_cannot_come_back_between_a_head_and_its_results() {
    // Found by tests/context_props.rs: CPAT accepts this and renders the trace between the
    // calls and their results, which an OpenAI-style endpoint refuses.
    let mut e = engine();
    user(&mut e, "q");
    let ids = e
        .ingest(Message::Assistant {
            text: String::new(),
            tool_calls: vec![call("c1", "f")],
            reasoning: Some("think".into()),
        })
        .unwrap();
    e.ingest(Message::ToolResult {
        tool_call_id: "c1".into(),
        name: "f".into(),
        text: "r".into(),
    })
    .unwrap();
    reply(&mut e, "done");
    let trace = &ids[1];
    assert_eq!(visibility(&e, trace), Visibility::Hidden);
    let r = patch(
        &mut e,
        json!({"reason":"r","operations":[{"op":"set_visibility","ids":[trace],"visibility":"model"}]}),
    );
    assert_eq!(rules(&r), ["chain_atomicity"]);
    assert_eq!(
        r.rejections[0].message,
        format!("tool-call chain would be broken: \"{trace}\" would stand between \"{}\" and its results. Keep it out of the view or patch the whole chain together (e.g. compact all of: {}, tool_004).", ids[0], ids[0])
    );
    assert!(view_chains_paired(&e));
}

#[test]
fn staging_copies_only_the_blocks_a_patch_changes() {
    use frontier::context::args;
    use frontier::context::ops::{self, Options};
    use frontier::context::stage::Stage;
    let mut e = engine();
    user(&mut e, "q");
    let mut results = Vec::new();
    for i in 0..200 {
        let (_, t) = chain(&mut e, &[(&format!("c{i}"), "payload")]);
        results.push(t[0].clone());
    }
    let update = args::normalise(&json!({"reason":"r","operations":[
        {"op":"payload_offload","ids":[results[3], results[9]],"description":"d","content":"s","retrieval_hint":"h"},
        {"op":"restore","ids":[results[3]]}]}))
    .unwrap();
    let mut stage = Stage::new(e.store(), e.content());
    for item in &update.operations {
        let ok = ops::check(&mut stage, item.as_ref().unwrap(), Options::default()).is_ok();
        stage.end_op(ok);
    }
    assert_eq!(stage.touched().len(), 2, "of {} blocks", e.store().len());
}
