//! CPAT's generational layout (`cpat_reference.md` §10, "Generational tail") and its fallback
//! (§9): CPAT's three tests of `test/generational.test.ts`, rewritten against frontier's
//! engine, then the fallback's gate and order, a generational run replayed (the same store and
//! the same view, through the journal), and a property: the layout of random stores never
//! separates a tool-call chain.

mod context_support;

use std::sync::{Arc, Mutex};

use context_support::*;
use frontier::context::block::{ArtifactRef, Block, Content, Visibility};
use frontier::context::durable::{Durability, Memory, JOURNAL_FILE};
use frontier::context::fallback::{
    cached_fraction, critical_fallback, generational_fallback, generational_gate,
};
use frontier::context::generational::{layout, Generations};
use frontier::context::replay::replay;
use frontier::context::store::BlockStore;
use frontier::context::tokens::CpatEstimator;
use frontier::context::view::{self, Message as ViewMessage};
use frontier::context::{Config, Engine, Pressure};
use proptest::prelude::*;
use serde_json::{json, Value};

fn generational(max_tokens: u64) -> Config {
    Config {
        max_tokens,
        generational: true,
        ..Config::default()
    }
}

/// A tool result of 360 tokens (the tail starts at 300).
fn bulky(c: char) -> String {
    c.to_string().repeat(1200)
}

/// The index of the tool message answering `call`.
fn tool_message(messages: &[ViewMessage], call: &str) -> usize {
    messages
        .iter()
        .position(|m| m.role == "tool" && m.tool_call_id.as_deref() == Some(call))
        .unwrap_or_else(|| panic!("no tool message for {call}"))
}

fn bytes(messages: &[ViewMessage]) -> String {
    serde_json::to_string(messages).unwrap()
}

#[test]
fn stable_prefix_is_byte_identical_after_a_tail_offload_i2() {
    let mut e = engine_with(generational(16_000));
    system(&mut e, "sys");
    user(&mut e, "compare the two files");
    let (_, a) = chain(&mut e, &[("call_a", &bulky('a'))]);
    let (_, _b) = chain(&mut e, &[("call_b", &bulky('b'))]);
    let before = e.view();
    let (a_at, b_at) = (
        tool_message(&before.messages, "call_a"),
        tool_message(&before.messages, "call_b"),
    );
    assert!(
        b_at < a_at,
        "the older bulky turn renders after the newer one"
    );
    // Offload A, then promote it to a new generation.
    let r = patch(
        &mut e,
        json!({"reason":"retire A","operations":[{"op":"payload_offload","ids":[a[0]],
            "description":"file a","content":"1200 a's","retrieval_hint":"artifact_get"}]}),
    );
    assert!(r.ok, "{r:?}");
    let g = e.alloc_generation();
    e.set_generation(&a[0], g);
    let after = e.view();
    assert_eq!(
        bytes(&after.messages[..=b_at]),
        bytes(&before.messages[..=b_at]),
        "the prefix up to B's tool message is byte-identical"
    );
    assert!(
        tool_message(&after.messages, "call_a") > b_at,
        "A stays after B"
    );
    assert!(matches!(block(&e, &a[0]).content, Content::Ref(_)));
    // The estimate does not depend on the order.
    assert_eq!(
        after.estimated_tokens,
        view::count(&after.messages, e.store().tokens().as_ref())
    );
}

#[test]
fn tool_call_chains_stay_paired_after_reorder() {
    let mut e = engine_with(generational(16_000));
    system(&mut e, "sys");
    user(&mut e, "q");
    let (_, first) = chain(&mut e, &[("c1", &bulky('a')), ("c2", "small")]);
    chain(&mut e, &[("c3", "small"), ("c4", "small too")]);
    chain(&mut e, &[("c5", "tiny"), ("c6", &bulky('b')), ("c7", "x")]);
    reply(&mut e, "thinking aloud");
    chain(&mut e, &[("c8", &bulky('c'))]);
    let r = patch(
        &mut e,
        json!({"reason":"r","operations":[{"op":"payload_offload","ids":[first[0]],
            "description":"d","content":"s","retrieval_hint":"h"}]}),
    );
    assert!(r.ok, "{r:?}");
    let g = e.alloc_generation();
    e.set_generation(&first[0], g);
    let view = e.view();
    // The layout moved something (or this test would prove nothing).
    let store_order = frontier::context::view::render(e.store());
    assert_ne!(bytes(&view.messages), bytes(&store_order.messages));
    for (i, m) in view.messages.iter().enumerate() {
        let Some(calls) = &m.tool_calls else { continue };
        for (k, c) in calls.iter().enumerate() {
            let next = &view.messages[i + 1 + k];
            assert_eq!(next.role, "tool", "message {i}'s call {k}");
            assert_eq!(next.tool_call_id.as_deref(), Some(c.id.as_str()));
        }
    }
    assert!(view_chains_paired(&e));
}

#[test]
fn small_tool_results_stay_in_the_stable_prefix() {
    let mut e = engine_with(generational(16_000));
    system(&mut e, "sys");
    user(&mut e, "q");
    chain(&mut e, &[("big", &bulky('a'))]);
    chain(&mut e, &[("small", "three lines")]);
    let view = e.view();
    assert!(tool_message(&view.messages, "small") < tool_message(&view.messages, "big"));
    // Without the layout, store order.
    let plain = view::render(e.store());
    assert!(tool_message(&plain.messages, "small") > tool_message(&plain.messages, "big"));
}

#[test]
fn the_layout_is_off_by_default() {
    let mut e = engine();
    system(&mut e, "sys");
    user(&mut e, "q");
    chain(&mut e, &[("big", &bulky('a'))]);
    chain(&mut e, &[("small", "three lines")]);
    assert_eq!(
        bytes(&e.view().messages),
        bytes(&view::render(e.store()).messages)
    );
}

#[test]
fn retired_groups_follow_the_inline_ones_by_ascending_generation() {
    let mut e = engine_with(generational(16_000));
    system(&mut e, "sys");
    user(&mut e, "q");
    let (_, a) = chain(&mut e, &[("a", &bulky('a'))]);
    let (_, b) = chain(&mut e, &[("b", &bulky('b'))]);
    chain(&mut e, &[("c", &bulky('c'))]);
    chain(&mut e, &[("d", &bulky('d'))]);
    // Retire B before A: B's generation is the older one.
    e.set_generation(&b[0], 0);
    e.set_generation(&a[0], 1);
    let m = e.view().messages;
    let order: Vec<usize> = ["d", "c", "b", "a"]
        .iter()
        .map(|c| tool_message(&m, c))
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
}

/// A store under a window of `max`: an older tool result of 330 tokens and a newer one of
/// 900 (1,537 tokens in all).
fn pressured(max: u64) -> (Engine, String, String, Arc<Mutex<Memory>>) {
    let memory = Arc::new(Mutex::new(Memory::default()));
    let mut e = engine_with(generational(max));
    e.set_storage(Box::new(memory.clone()));
    system(&mut e, "sys");
    user(&mut e, "q");
    let (_, mut old) = chain(&mut e, &[("old", &"o".repeat(1100))]);
    let (_, mut new) = chain(&mut e, &[("new", &"n".repeat(3000))]);
    assert_eq!(e.budget().used, 1537);
    (e, old.remove(0), new.remove(0), memory)
}

/// The ids offloaded by the journal's patches, in order.
fn offloaded(memory: &Mutex<Memory>) -> Vec<(String, Option<u64>)> {
    memory
        .lock()
        .unwrap()
        .journal
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["type"] == "patch" && r["result"]["ok"] == true)
        .map(|r| {
            (
                r["operations"][0]["ids"][0].as_str().unwrap().to_owned(),
                r.get("generation").and_then(Value::as_u64),
            )
        })
        .collect()
}

#[test]
fn the_generational_fallback_retires_oldest_first() {
    let (mut e, old, new, memory) = pressured(1300);
    assert_eq!(e.budget().pressure, Pressure::Critical);
    assert_eq!(generational_fallback(&mut e, 50, 2, 0.0).unwrap(), 2);
    // Oldest first, each in its own patch with its own generation.
    assert_eq!(
        offloaded(&memory),
        [(old.clone(), Some(0)), (new.clone(), Some(1))]
    );
    assert_eq!(e.generations().get(&old), Some(0));
    assert_eq!(e.generations().get(&new), Some(1));
    let Content::Ref(r) = &block(&e, &old).content else {
        panic!("not offloaded")
    };
    assert_eq!(
        r.summary,
        format!(
            "Batch-offloaded under budget pressure (generational tail). Head of payload:\n{}",
            "o".repeat(300)
        )
    );
    assert!(block(&e, &old)
        .description
        .ends_with("… (runtime auto-offloaded)"));
    assert!(e.budget().used < e.budget().soft_limit);
    // The critical fallback on the same store takes the largest first, and stops there.
    let (mut e, old, new, memory) = pressured(1300);
    assert_eq!(critical_fallback(&mut e).unwrap(), 1);
    assert_eq!(offloaded(&memory), [(new, None)]);
    assert!(matches!(block(&e, &old).content, Content::Inline(_)));
    assert_eq!(e.generations().get(&old), None);
}

#[test]
fn the_generational_fallback_stops_below_the_soft_limit() {
    let (mut e, old, new, memory) = pressured(2000);
    // The soft limit is 1,400; after the old result is offloaded the estimate is below it.
    assert_eq!(generational_fallback(&mut e, 50, 2, 0.0).unwrap(), 1);
    assert_eq!(offloaded(&memory), [(old, Some(0))]);
    assert!(matches!(block(&e, &new).content, Content::Inline(_)));
}

#[test]
fn the_generational_gate_skips_when_few_uncached_turns_remain() {
    // estRemainingTurns = max(1, max_turns − llm_calls); skip when × (1 − cached) ≤ 1.
    assert!(!generational_gate(10, 9, 0.0)); // 1 × 1
    assert!(!generational_gate(3, 10, 0.0)); // max(1, 0) × 1
    assert!(!generational_gate(10, 6, 0.75)); // 4 × 0.25 = 1
    assert!(!generational_gate(10, 0, 1.0)); // all cached
    assert!(generational_gate(10, 8, 0.0)); // 2 × 1
    assert!(generational_gate(10, 6, 0.5)); // 4 × 0.5
                                            // Skipping offloads nothing and journals nothing, even at critical pressure.
    let (mut e, _, _, memory) = pressured(1300);
    let seq = e.seq();
    let before = snapshot(&e);
    assert_eq!(generational_fallback(&mut e, 10, 9, 0.0).unwrap(), 0);
    assert_eq!(generational_fallback(&mut e, 10, 6, 0.75).unwrap(), 0);
    assert_eq!((e.seq(), snapshot(&e)), (seq, before));
    assert!(offloaded(&memory).is_empty());
    assert_eq!(e.budget().pressure, Pressure::Critical);
    // With the gate open it does offload.
    assert_eq!(generational_fallback(&mut e, 10, 6, 0.5).unwrap(), 2);
}

#[test]
fn cached_fraction_is_hits_over_prompt_tokens() {
    let usage = json!({"prompt_tokens": 400, "prompt_cache_hit_tokens": 300});
    assert_eq!(cached_fraction(&usage), 0.75);
    assert_eq!(cached_fraction(&json!({"prompt_tokens": 400})), 0.0);
    assert_eq!(
        cached_fraction(&json!({"prompt_tokens": 0, "prompt_cache_hit_tokens": 3})),
        0.0
    );
    assert_eq!(cached_fraction(&json!(null)), 0.0);
}

/// A generational run on disk: two tool results retired by the fallback (generations 0 and
/// 1), a newer bulky one inline, an agent patch, a rejected one, a model call.
fn generational_run(dir: &std::path::Path) -> Engine {
    let mut e = Engine::create(
        dir,
        generational(1300),
        Arc::new(CpatEstimator),
        Durability::Flush,
    )
    .unwrap();
    e.set_clock(|| "2026-01-01T00:00:00.000Z".to_owned());
    system(&mut e, "sys");
    user(&mut e, "q");
    chain(&mut e, &[("old", &"o".repeat(1100))]);
    chain(&mut e, &[("new", &"n".repeat(3000))]);
    e.record_llm_call("m", &json!({"prompt_tokens": 1300}))
        .unwrap();
    assert_eq!(generational_fallback(&mut e, 50, 1, 0.0).unwrap(), 2);
    chain(&mut e, &[("newest", &bulky('z'))]);
    let (_, small) = chain(&mut e, &[("small", "ok")]);
    let (a, _) = chain(&mut e, &[("gone", "obsolete")]);
    let gone: Vec<String> = e
        .store()
        .chain_of(e.store().slot(&a).unwrap())
        .into_iter()
        .map(|s| e.store().block(s).id.clone())
        .collect();
    assert!(patch(
        &mut e,
        json!({"reason":"r","operations":[{"op":"set_visibility","ids":gone,"visibility":"archived"}]}),
    )
    .ok);
    assert!(!patch(
        &mut e,
        json!({"reason":"rejected","operations":[{"op":"set_visibility","ids":[small[0]],"visibility":"archived"}]}),
    )
    .ok);
    e
}

#[test]
fn a_replayed_generational_run_renders_the_same_view() {
    let dir = tempfile::tempdir().unwrap();
    let e = generational_run(dir.path());
    // The view: the small group in the prefix, then the inline bulky group, then the retired
    // ones by generation (without their generations they would come out new before old).
    let m = e.view().messages;
    let order: Vec<usize> = ["small", "newest", "old", "new"]
        .iter()
        .map(|c| tool_message(&m, c))
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    let replayed = replay(dir.path(), Arc::new(CpatEstimator)).unwrap();
    assert_eq!(replayed.stopped, None);
    let r = &replayed.engine;
    assert_eq!(snapshot(r), snapshot(&e));
    assert_eq!(r.generations(), e.generations());
    assert_eq!(bytes(&r.view().messages), bytes(&m));
    assert_eq!(r.view(), e.view());
    // A run picked up again hands out the next generation.
    let mut reopened =
        Engine::open(dir.path(), Arc::new(CpatEstimator), Durability::Flush).unwrap();
    assert_eq!(reopened.alloc_generation(), 2);
}

#[test]
fn the_generations_come_from_the_journal() {
    // Without the records' "generation" the replayed view differs: the field is what
    // carries the layout through a replay.
    let dir = tempfile::tempdir().unwrap();
    let e = generational_run(dir.path());
    let path = dir.path().join(JOURNAL_FILE);
    let journal = std::fs::read_to_string(&path).unwrap();
    assert_eq!(journal.matches("\"generation\":").count(), 2);
    let stripped: String = journal
        .lines()
        .map(|l| {
            let mut r: Value = serde_json::from_str(l).unwrap();
            r.as_object_mut().unwrap().shift_remove("generation");
            r.to_string() + "\n"
        })
        .collect();
    std::fs::write(&path, stripped).unwrap();
    let replayed = replay(dir.path(), Arc::new(CpatEstimator)).unwrap();
    assert_eq!(snapshot(&replayed.engine), snapshot(&e));
    assert_ne!(replayed.engine.view(), e.view());
}

#[test]
fn frontier_context_replay_prints_the_generational_view() {
    let dir = tempfile::tempdir().unwrap();
    let e = generational_run(dir.path());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_frontier"))
        .args(["context", "replay"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(line["view"], serde_json::to_value(e.view()).unwrap());
}

// The property: random stores, random visibility, offloaded blocks and generations.

/// A message of a random session: a user message, a reply, or calls with their results
/// (`true`: bulky).
#[derive(Clone, Debug)]
enum Msg {
    User,
    Reply,
    Calls(Vec<bool>),
}

fn msg() -> impl Strategy<Value = Msg> {
    prop_oneof![
        Just(Msg::User),
        Just(Msg::Reply),
        prop::collection::vec(any::<bool>(), 1..4).prop_map(Msg::Calls),
    ]
}

/// Per block: its visibility (0 model … ), whether it is offloaded, its generation.
fn tweak() -> impl Strategy<Value = (u8, bool, Option<u8>)> {
    (
        prop_oneof![6 => Just(0u8), 1 => Just(1u8), 1 => Just(2u8)],
        prop::bool::weighted(0.15),
        prop::option::weighted(0.2, 0u8..4),
    )
}

fn session_blocks(session: &[Msg]) -> Vec<Block> {
    let mut e = engine();
    system(&mut e, "sys");
    let mut n = 0;
    for m in session {
        match m {
            Msg::User => {
                user(&mut e, "q");
            }
            Msg::Reply => {
                reply(&mut e, "r");
            }
            Msg::Calls(results) => {
                let ids: Vec<(String, String)> = results
                    .iter()
                    .map(|&big| {
                        n += 1;
                        (
                            format!("c{n}"),
                            if big { bulky('x') } else { "ok".to_owned() },
                        )
                    })
                    .collect();
                let calls: Vec<(&str, &str)> =
                    ids.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
                chain(&mut e, &calls);
            }
        }
    }
    e.store().iter().cloned().collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_generational_layout_never_separates_a_chain(
        session in prop::collection::vec(msg(), 1..16),
        tweaks in prop::collection::vec(tweak(), 64),
    ) {
        let mut blocks = session_blocks(&session);
        let mut generations = Generations::default();
        for (b, &(vis, offloaded, generation)) in blocks.iter_mut().zip(&tweaks) {
            b.visibility = [Visibility::Model, Visibility::Archived, Visibility::Hidden][vis as usize];
            if offloaded {
                b.content = Content::Ref(ArtifactRef::new(&b.content_key(), "s", "h"));
            }
            if let Some(g) = generation {
                generations.set(&b.id, u64::from(g));
            }
        }
        let store = BlockStore::from_blocks(blocks, None, Arc::new(CpatEstimator)).unwrap();
        let order = layout(&store, &generations);
        // A permutation of the visible blocks.
        let mut sorted = order.clone();
        sorted.sort_unstable();
        let visible: Vec<u32> = (0..store.len() as u32).filter(|&s| store.block(s).is_visible()).collect();
        prop_assert_eq!(&sorted, &visible);
        // Every chain's visible members stand together, in chain order.
        let at = |s: u32| order.iter().position(|&o| o == s);
        for &s in &visible {
            let members: Vec<u32> = store.chain_of(s).into_iter().filter(|&m| store.block(m).is_visible()).collect();
            let first = at(members[0]).unwrap();
            for (k, &m) in members.iter().enumerate() {
                prop_assert_eq!(at(m), Some(first + k), "chain of {}", store.block(s).id);
            }
        }
        // The prefix keeps store order, and the estimate is the rendered view's.
        let in_tail = |s: u32| store.chain_of(s).into_iter().filter(|&m| store.block(m).is_visible()).any(|m| {
            let b = store.block(m);
            b.content.is_ref() || (b.kind == frontier::context::block::Kind::ToolResult && b.token_count >= 300)
        });
        let prefix: Vec<u32> = order.iter().copied().take_while(|&s| !in_tail(s)).collect();
        prop_assert!(order[prefix.len()..].iter().all(|&s| in_tail(s)));
        // (each group's place: its first visible member's in the store)
        let place = |s: u32| store.chain_of(s).into_iter().filter(|&m| store.block(m).is_visible()).map(|m| store.position(m)).min();
        prop_assert!(prefix.windows(2).all(|w| place(w[0]) <= place(w[1])));
        let view = view::render_in_order(&store, &order);
        prop_assert_eq!(view.estimated_tokens, view::count(&view.messages, store.tokens().as_ref()));
        prop_assert_eq!(view.estimated_tokens, view::render(&store).estimated_tokens);
    }
}
