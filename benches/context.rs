//! What the context engine costs on a long session: a 10-op patch on a store of 10,000
//! blocks, checked, committed and journaled to a run directory (with `fdatasync` and without,
//! next to the bare cost of appending one record of that size and syncing it), and rendering
//! the view: of 1,000 and of 10,000 visible blocks, and of 10,000 blocks with nine chains in
//! ten hidden.
//!
//! A store of `n` turns: a system prompt, then `n` turns of an assistant message calling one
//! tool and its result (660 to 2,618 bytes), with a user message every tenth turn; 4,761 turns
//! make 10,000 blocks. The patch holds 5
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

const TURNS: usize = 4_761;
const BLOCKS: usize = 10_000;

fn session(dir: &std::path::Path, turns: usize) -> Engine {
    let config = Config {
        max_tokens: 10_000_000,
        ..Config::default()
    };
    let mut e = Engine::create(dir, config, Arc::new(CpatEstimator), Durability::Flush).unwrap();
    e.ingest(Message::System {
        text: "You are a research agent.".into(),
    })
    .unwrap();
    for t in 0..turns {
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
        let mut e = session(dir.path(), TURNS);
        assert_eq!(e.store().len(), BLOCKS);
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
    // The disk's part: one append of a patch record's size, then fdatasync.
    let dir = tempfile::tempdir().unwrap();
    let mut file = std::fs::File::create(dir.path().join("bare.jsonl")).unwrap();
    let record = vec![b'x'; 2_000];
    group.bench_function("bare_append_and_fdatasync_2000_bytes", |b| {
        b.iter(|| {
            std::io::Write::write_all(&mut file, &record).unwrap();
            file.sync_data().unwrap();
        })
    });
    group.finish();
}

fn view(c: &mut Criterion) {
    let mut group = c.benchmark_group("context_view");
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let small = session(dirs[0].path(), TURNS / 10);
    let full = session(dirs[1].path(), TURNS);
    let mut parked = session(dirs[2].path(), TURNS);
    parked.set_storage(Box::new(frontier::context::durable::Memory::default()));
    // Hide nine chains in ten (whole chains, in patches of 100 ops): hidden blocks are
    // neither rendered nor listed.
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
    for engine in [&small, &full, &parked] {
        let total = engine.store().len();
        let visible = engine.store().iter().filter(|b| b.is_visible()).count();
        let bytes: usize = engine.view().messages.iter().map(|m| m.content.len()).sum();
        group.throughput(Throughput::Elements(visible as u64));
        group.bench_function(
            BenchmarkId::new(
                format!("render_of_{total}_blocks"),
                format!("{visible}_visible_{bytes}_bytes"),
            ),
            |b| b.iter(|| black_box(engine.view())),
        );
        // The floor: copying the visible blocks' texts, nothing else.
        let texts: Vec<String> = engine
            .store()
            .iter()
            .filter(|b| b.is_visible())
            .map(|b| b.content.rendered().into_owned())
            .collect();
        group.bench_function(
            BenchmarkId::new(
                format!("copy_of_{total}_blocks"),
                format!("{visible}_visible"),
            ),
            |b| b.iter(|| black_box(texts.clone())),
        );
    }
    group.finish();
}

criterion_group!(benches, patch, view);
criterion_main!(benches);
