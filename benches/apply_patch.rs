//! apply_patch benchmarks: a constrained decoder's loop (query `allowed()`, check the byte,
//! push it) for frontier's strict and codex modes against llguidance 1.9 running Codex's
//! grammar with its single-byte tokenizer, in one criterion group; and whole-buffer and
//! byte-at-a-time throughput.
//!
//! Input: a synthetic but realistic 1 MiB patch (updates with `@@` contexts and several
//! chunks, moves, adds, deletes, some non-ASCII text), built deterministically below.
//! llguidance runs on its first 16 KiB (it costs microseconds per byte); compare per-byte
//! costs (criterion's time divided by the bytes in its throughput line).

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use frontier::apply_patch::{CodexParser, StrictMachine, StrictParser};
use frontier::contract::PushParser;
use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::ApproximateTokEnv;
use llguidance::{Matcher, ParserFactory};

fn patch(size: usize) -> Vec<u8> {
    let mut p = String::from("*** Begin Patch\n");
    let mut i = 0;
    while p.len() < size {
        i += 1;
        match i % 4 {
            0 => {
                p += &format!("*** Add File: src/generated/module_{i}.rs\n");
                for j in 0..12 {
                    p += &format!(
                        "+pub fn helper_{j}(x: u32) -> u32 {{ x.wrapping_mul({j}) + {i} }} // ok\n"
                    );
                }
            }
            1 => p += &format!("*** Delete File: old/legacy_{i}.txt\n"),
            2 => {
                p +=
                    &format!("*** Update File: src/lib_{i}.rs\n*** Move to: src/core/lib_{i}.rs\n");
                p += "@@ impl Config {\n     pub fn new() -> Self {\n-        Config { verbose: false }\n+        Config { verbose: true, name: \"café ✓\".into() }\n     }\n";
            }
            _ => {
                p += &format!("*** Update File: docs/guide_{i}.md\n");
                for c in 0..3 {
                    p += &format!("@@ ## Section {c}\n Some context that stays the same.\n-Old wording of paragraph {c}.\n+New wording of paragraph {c}, with “quotes”.\n");
                }
                p += " trailing line\n*** End of File\n";
            }
        }
    }
    p += "*** End Patch\n";
    p.into_bytes()
}

fn decoder_loop<P: PushParser>(mut parser: P, input: &[u8]) -> bool {
    for &b in input {
        if !parser.allowed().contains(b) {
            return false;
        }
        if parser.push(&[b], &mut |_| {}).is_err() {
            return false;
        }
    }
    parser.accepting()
}

/// The recogniser alone: what a decoder that only needs the mask runs.
fn machine_loop(input: &[u8]) -> bool {
    let mut m = StrictMachine::default();
    for &b in input {
        if !m.allowed().contains(b) || m.step(b).is_err() {
            return false;
        }
    }
    m.accepting()
}

fn llguidance_loop(factory: &ParserFactory, grammar: &TopLevelGrammar, input: &[u8]) -> bool {
    let mut m = Matcher::new(factory.create_parser(grammar.clone()));
    for &b in input {
        let mask = m.compute_mask_or_eos().unwrap();
        if !mask.is_allowed(b as u32) {
            return false;
        }
        m.consume_token(b as u32).unwrap();
    }
    !m.is_error()
}

fn benches(c: &mut Criterion) {
    let big = patch(1 << 20);
    let small = &big[..16 << 10];
    assert!(decoder_loop(StrictParser::default(), &big));
    assert!(decoder_loop(CodexParser::new(), &big));

    let env = ApproximateTokEnv::single_byte_env();
    let mut factory = ParserFactory::new_simple(&env).unwrap();
    factory.set_stderr_log_level(0);
    let grammar =
        TopLevelGrammar::from_lark(include_str!("../grammars/apply_patch.lark").to_owned());
    assert!(llguidance_loop(&factory, &grammar, small));

    let mut g = c.benchmark_group("apply_patch_decoder_loop");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(big.len() as u64));
    g.bench_function(BenchmarkId::new("frontier_strict", "1MiB"), |b| {
        b.iter(|| decoder_loop(StrictParser::default(), black_box(&big)))
    });
    g.bench_function(BenchmarkId::new("frontier_strict_machine", "1MiB"), |b| {
        b.iter(|| machine_loop(black_box(&big)))
    });
    g.bench_function(BenchmarkId::new("frontier_codex", "1MiB"), |b| {
        b.iter(|| decoder_loop(CodexParser::new(), black_box(&big)))
    });
    g.throughput(Throughput::Bytes(small.len() as u64));
    g.bench_function(BenchmarkId::new("frontier_strict", "16KiB"), |b| {
        b.iter(|| decoder_loop(StrictParser::default(), black_box(small)))
    });
    g.bench_function(BenchmarkId::new("llguidance_1.9", "16KiB"), |b| {
        b.iter(|| llguidance_loop(&factory, &grammar, black_box(small)))
    });
    g.finish();

    let mut g = c.benchmark_group("apply_patch_throughput");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(big.len() as u64));
    g.bench_function("strict_whole_buffer", |b| {
        b.iter(|| {
            let mut p = StrictParser::default();
            let mut n = 0u64;
            p.push(black_box(&big), &mut |_| n += 1).unwrap();
            n
        })
    });
    g.bench_function("codex_whole_buffer", |b| {
        b.iter(|| {
            let mut p = CodexParser::new();
            let mut n = 0u64;
            p.push(black_box(&big), &mut |_| n += 1).unwrap();
            n
        })
    });
    g.bench_function("strict_1_byte_chunks", |b| {
        b.iter(|| {
            let mut p = StrictParser::default();
            let mut n = 0u64;
            for piece in black_box(&big).chunks(1) {
                p.push(piece, &mut |_| n += 1).unwrap();
            }
            n
        })
    });
    g.bench_function("codex_1_byte_chunks", |b| {
        b.iter(|| {
            let mut p = CodexParser::new();
            let mut n = 0u64;
            for piece in black_box(&big).chunks(1) {
                p.push(piece, &mut |_| n += 1).unwrap();
            }
            n
        })
    });
    g.finish();
}

criterion_group!(apply_patch, benches);
criterion_main!(apply_patch);
