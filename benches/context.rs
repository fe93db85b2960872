//! What the context engine costs on a long session: a 10-op patch on a store of 10,000
//! blocks, checked, committed and journaled to a run directory (with `fdatasync` and without),
//! and rendering the view of that store with all of it visible and with nine chains in ten
//! hidden.
//!
//! The store: a system prompt, then 3,333 turns of an assistant message calling one tool and
//! its result (600 to 2,400 bytes), with a user message every tenth turn. The patch holds 5
//! `set_visibility` ops on whole chains and 5 `payload_offload` ops on other results; the
//! next iteration's patch undoes it (5 `set_visibility model`, 5 `restore`), so that every
//! iteration commits 10 ops on a store of the same size.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use frontier::context::block::{FunctionCall, ToolCall};
use frontier::context::durable::{Durability, RunDir};
use frontier::context::tokens::CpatEstimator;
use frontier::context::{Actor, Config, Engine, Message};
use serde_json::json;

const TURNS: usize = 3_333;

fn session(dir: &std::path::Path) -> Engine {
    let config = Config {
        max_tokens: 10_000_000,
        ..Config::default()
    };
    let mut e = Engine::create(dir, config, Arc::new(CpatEstimator), Durability::Flush).unwrap();
    e.ingest(Message::System {
        text: "You are a research agent.".into(),
    })
    .unwrap();
    for t in 0..TURNS {
        if t % 10 == 0 {
            e.ingest(Message::User {
                text: format!("question {t}"),
                origin: None,
            })
            .unwrap();
        }
        let id = format!("call_{t}");
        e.ingest(Message::Assistant {
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: id.clone(),
                kind: "function".into(),
                function: FunctionCall {
                    name: "read_file".into(),
                    arguments: "{}".into(),
                },
            }],
            reasoning: None,
        })
        .unwrap();
        e.ingest(Message::ToolResult {
            tool_call_id: id,
            name: "read_file".into(),
            text: "result line of a file\n".repeat(30 + t % 90),
        })
        .unwrap();
    }
    e
}

/// (head, result) ids of chain `n`.
fn chain_ids(e: &Engine, n: usize) -> (String, String) {
    let call = format!("call_{n}");
    let result = e
        .store()
        .iter()
        .find(|b| b.api.as_ref().and_then(|a| a.tool_call_id.as_deref()) == Some(call.as_str()))
        .unwrap();
    let slot = e.store().slot(&result.id).unwrap();
    let head = e.store().chain_of(slot)[0];
    (e.store().block(head).id.clone(), result.id.clone())
}

fn patches(e: &Engine) -> [String; 2] {
    let parked: Vec<(String, String)> = (0..5).map(|i| chain_ids(e, 100 + i * 600)).collect();
    let offloaded: Vec<String> = (0..5).map(|i| chain_ids(e, 400 + i * 600).1).collect();
    let make = |visibility: &str, op: &str| {
        let mut ops: Vec<serde_json::Value> = parked
            .iter()
            .map(|(h, t)| json!({"op":"set_visibility","ids":[h, t],"visibility":visibility}))
            .collect();
        ops.extend(offloaded.iter().map(|t| {
            json!({"op":op,"ids":[t],"description":"offloaded","content":"a summary","retrieval_hint":"artifact_get"})
        }));
        json!({"reason":"bench","operations":ops}).to_string()
    };
    [
        make("archived", "payload_offload"),
        make("model", "restore"),
    ]
}

fn patch(c: &mut Criterion) {
    let mut group = c.benchmark_group("context_patch");
    group.throughput(Throughput::Elements(10));
    for (name, durability) in [("fsync", Durability::Fsync), ("flush", Durability::Flush)] {
        let dir = tempfile::tempdir().unwrap();
        let mut e = session(dir.path());
        assert_eq!(e.store().len(), 1 + TURNS * 2 + TURNS.div_ceil(10));
        e.set_storage(Box::new(RunDir::open(dir.path(), durability).unwrap()));
        let [there, back] = patches(&e);
        let mut flip = false;
        group.bench_function(BenchmarkId::new("10_ops_on_10000_blocks", name), |b| {
            b.iter(|| {
                flip = !flip;
                let r = e
                    .apply_args(if flip { &there } else { &back }, Actor::Agent)
                    .unwrap();
                assert!(r.ok, "{r:?}");
                black_box(r)
            })
        });
    }
    group.finish();
}

fn view(c: &mut Criterion) {
    let mut group = c.benchmark_group("context_view");
    let dir = tempfile::tempdir().unwrap();
    let full = session(dir.path());
    let dir = tempfile::tempdir().unwrap();
    let mut parked = session(dir.path());
    parked.set_storage(Box::new(frontier::context::durable::Memory::default()));
    // Hide nine chains in ten (whole chains, in patches of 100 ops): hidden blocks are
    // neither rendered nor listed, so the two views differ only in their visible blocks.
    let chains: Vec<(String, String)> = (0..TURNS)
        .filter(|t| t % 10 != 0)
        .map(|t| chain_ids(&parked, t))
        .collect();
    for batch in chains.chunks(100) {
        let ops: Vec<_> = batch
            .iter()
            .map(|(h, t)| json!({"op":"set_visibility","ids":[h, t],"visibility":"hidden"}))
            .collect();
        let args = json!({"reason":"park","operations":ops}).to_string();
        assert!(parked.apply_args(&args, Actor::Agent).unwrap().ok);
    }
    let total = full.store().len();
    for engine in [&full, &parked] {
        let visible = engine.store().iter().filter(|b| b.is_visible()).count();
        group.throughput(Throughput::Elements(visible as u64));
        group.bench_function(
            BenchmarkId::new(
                format!("render_of_{total}_blocks"),
                format!("{visible}_visible"),
            ),
            |b| b.iter(|| black_box(engine.view())),
        );
    }
    group.finish();
}

criterion_group!(benches, patch, view);
criterion_main!(benches);
