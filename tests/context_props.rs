//! Properties of random sessions and random patches: no patch leaves a tool-call chain
//! half in the view, no payload is ever lost (every artifact reference resolves, every inline
//! block's text is at its version key), the budget kept up to date equals the rendered view's
//! estimate, and the journal replays to the same store and the same view (in the
//! generational layout too, with its fallback retiring tool results between patches).

mod context_support;

use std::sync::Arc;

use context_support::{call, view_chains_paired};
use frontier::context::block::Content;
use frontier::context::durable::Durability;
use frontier::context::fallback::generational_fallback;
use frontier::context::replay::replay;
use frontier::context::tokens::CpatEstimator;
use frontier::context::{view, Actor, Config, Engine, Message};
use proptest::prelude::*;
use serde_json::{json, Value};

/// A message of a random session.
#[derive(Clone, Debug)]
enum Msg {
    User(String),
    Reply(String),
    /// An assistant message with this many calls, their results.
    Calls(Vec<String>, bool),
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,12}",
        "\\{\"a\":[0-9]{1,3},\"b\":\"[a-z]{0,4}\"\\}",
        "[a-z😀中 ]{200,400}",
        // Over 300 tokens: the fallbacks' candidates, the generational tail.
        "[a-z ]{1000,1100}",
    ]
}

fn msg() -> impl Strategy<Value = Msg> {
    prop_oneof![
        text().prop_map(Msg::User),
        text().prop_map(Msg::Reply),
        (prop::collection::vec(text(), 1..4), any::<bool>()).prop_map(|(r, t)| Msg::Calls(r, t)),
    ]
}

/// An op of a random patch: its kind, target indexes into the store, and a selector for
/// its other fields.
#[derive(Clone, Debug)]
struct Op {
    kind: u8,
    targets: Vec<usize>,
    variant: u8,
}

fn op() -> impl Strategy<Value = Op> {
    (
        prop_oneof![3 => 0u8..3, 2 => 0u8..8],
        prop::collection::vec(0usize..48, 1..3),
        0u8..4,
    )
        .prop_map(|(kind, targets, variant)| Op {
            kind,
            targets,
            variant,
        })
}

/// The op's JSON; unless its variant is 3, each target brings its whole tool-call chain, so
/// that more patches pass the chain check.
fn op_json(op: &Op, e: &Engine) -> Value {
    let store = e.store();
    let all: Vec<String> = store.iter().map(|b| b.id.clone()).collect();
    let mut ids: Vec<String> = Vec::new();
    for &i in &op.targets {
        if i == 47 {
            ids.push("nope".into());
            continue;
        }
        let id = &all[i % all.len()];
        if op.variant == 3 {
            ids.push(id.clone());
            continue;
        }
        let slot = store.slot(id).unwrap();
        for m in store.chain_of(slot) {
            let mid = store.block(m).id.clone();
            if !ids.contains(&mid) {
                ids.push(mid);
            }
        }
    }
    let vis = ["model", "archived", "hidden", "model"][op.variant as usize];
    match op.kind {
        0 => json!({"op":"set_visibility","ids":ids,"visibility":vis}),
        1 => {
            json!({"op":"payload_offload","ids":ids,"description":"d","content":"s","retrieval_hint":"h"})
        }
        2 => json!({"op":"restore","ids":ids}),
        3 => {
            json!({"op":"compact","ids":ids,"description":"d","content":"c","preserve":["p"],"drop":[]})
        }
        4 => json!({"op":"merge","ids":ids,"description":"d","content":"c",
                    "resolution": if op.variant == 1 { "contradiction" } else { "update" }}),
        5 => json!({"op":"fold","ids":ids,"description":"d","content":"c","scope_label":"s"}),
        6 => json!({"op":"redact","ids":ids,"drop":["a"]}),
        _ => json!({"op":"replace","ids":ids,"content": format!("new {}", op.variant)}),
    }
}

fn ingest(e: &mut Engine, m: &Msg, calls: &mut usize) {
    match m {
        Msg::User(t) => {
            e.ingest(Message::User {
                text: t.clone(),
                origin: None,
            })
            .unwrap();
        }
        Msg::Reply(t) => {
            e.ingest(Message::Assistant {
                text: t.clone(),
                tool_calls: vec![],
                reasoning: None,
            })
            .unwrap();
        }
        Msg::Calls(results, thinking) => {
            let ids: Vec<String> = results
                .iter()
                .map(|_| {
                    *calls += 1;
                    format!("call_{calls}")
                })
                .collect();
            e.ingest(Message::Assistant {
                text: String::new(),
                tool_calls: ids.iter().map(|id| call(id, "f")).collect(),
                reasoning: thinking.then(|| "thinking".to_owned()),
            })
            .unwrap();
            for (id, r) in ids.iter().zip(results) {
                e.ingest(Message::ToolResult {
                    tool_call_id: id.clone(),
                    name: "f".into(),
                    text: r.clone(),
                })
                .unwrap();
            }
        }
    }
}

/// Checks the invariants; a description of the first that fails.
fn invariants(e: &Engine) -> Result<(), String> {
    if !view_chains_paired(e) {
        return Err("a tool-call chain is broken in the view".into());
    }
    for (slot, b) in e.store().iter().enumerate() {
        let _ = slot;
        match &b.content {
            Content::Ref(r) => {
                if e.content().get(&r.uri).is_none() {
                    return Err(format!("{} points at nothing", r.uri));
                }
            }
            Content::Inline(t) => {
                if e.content().get(&b.content_key()) != Some(t.as_str()) {
                    return Err(format!("{} is not at its version key", b.id));
                }
            }
        }
    }
    let rendered = view::count(&e.view().messages, e.store().tokens().as_ref());
    let kept = view::estimate(&e.store().totals(), e.store().tokens().as_ref());
    if rendered != kept {
        return Err(format!(
            "the kept estimate {kept} differs from the view's {rendered}"
        ));
    }
    Ok(())
}

fn state(e: &Engine) -> String {
    let blocks: Vec<_> = e.store().iter().collect();
    json!({"blocks": blocks, "content": e.content().sorted(), "seq": e.seq(), "budget": e.budget(),
           "view": e.view()})
    .to_string()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn random_patches_keep_chains_whole_lose_nothing_and_replay(
        session in prop::collection::vec(msg(), 1..14),
        patches in prop::collection::vec(prop::collection::vec(op(), 0..4), 1..10),
        gated in prop::bool::weighted(0.75),
        generational in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::default();
        config.options.allow_replace = gated;
        config.options.allow_redact = gated;
        if generational {
            // The generational layout, and a window its fallback has to act in.
            config.generational = true;
            config.max_tokens = 2000;
        }
        let mut e = Engine::create(dir.path(), config, Arc::new(CpatEstimator), Durability::Flush).unwrap();
        e.ingest(Message::System { text: "sys".into() }).unwrap();
        let mut calls = 0;
        for m in &session {
            ingest(&mut e, m, &mut calls);
        }
        prop_assert_eq!(invariants(&e), Ok(()));
        for ops in &patches {
            let before = state(&e);
            let args = json!({"reason":"r","operations": ops.iter().map(|o| op_json(o, &e)).collect::<Vec<_>>()});
            let r = e.apply_args(&args.to_string(), Actor::Agent).unwrap();
            if !r.ok {
                // Nothing of a rejected patch is applied (only the journal's seq moves).
                let after: Value = serde_json::from_str(&state(&e)).unwrap();
                let mut before: Value = serde_json::from_str(&before).unwrap();
                before["seq"] = after["seq"].clone();
                prop_assert_eq!(before, after);
                prop_assert!(!r.rejections.is_empty());
            }
            prop_assert_eq!(invariants(&e), Ok(()), "after {}", args);
            if generational {
                generational_fallback(&mut e, 50, 0, 0.0).unwrap();
                prop_assert_eq!(invariants(&e), Ok(()), "after the fallback");
            }
        }
        let replayed = replay(dir.path(), Arc::new(CpatEstimator)).unwrap();
        prop_assert_eq!(replayed.stopped, None);
        prop_assert_eq!(state(&replayed.engine), state(&e));
    }
}
