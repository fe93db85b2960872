//! What a runtime pays per byte when a turn streams in: frontier's CTL parser against the
//! JSON runtimes of the truncation experiment, on the same calls (the shipped
//! `corpora/truncation` streams), in the same run.
//!
//! - `frontier_ctl`: push each chunk into the CTL parser and assemble confirmed calls;
//! - `serde_json_reparse`: the seed's JSON buffer: re-parse the whole buffer after each chunk;
//! - `jiter_partial`: jiter re-parsing its buffer in partial mode (trailing strings kept) after
//!   each chunk, as the Anthropic SDK does to show partial tool input;
//! - `heal_then_parse`: the healing runtime: close what is open, then parse, after each chunk.
//!
//! Throughput is in bytes of each framing's own stream.

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use frontier::contract::PushParser;
use frontier::ctl::{CallAssembler, CtlParser};
use frontier::truncation::framing::{load_dir, Framed};
use frontier::truncation::heal::heal;

fn corpus() -> Vec<Framed> {
    load_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/truncation")).unwrap()
}

fn ctl(streams: &[Vec<u8>], chunk: usize) -> usize {
    let mut calls = 0;
    for stream in streams {
        let mut parser = CtlParser::default();
        let mut assembler = CallAssembler::default();
        for piece in stream.chunks(chunk) {
            parser
                .push(piece, &mut |e| {
                    calls += matches!(assembler.on_event(&e), Ok(Some(_))) as usize
                })
                .unwrap();
        }
    }
    calls
}

/// Re-parses the growing buffer after every chunk with `parse`; counts successful parses.
fn reparse(streams: &[Vec<u8>], chunk: usize, parse: impl Fn(&[u8]) -> bool) -> usize {
    let mut parsed = 0;
    for stream in streams {
        let mut buffer = Vec::with_capacity(stream.len());
        for piece in stream.chunks(chunk) {
            buffer.extend_from_slice(piece);
            parsed += parse(&buffer) as usize;
        }
    }
    parsed
}

fn streaming(c: &mut Criterion) {
    let corpus = corpus();
    let ctl_streams: Vec<Vec<u8>> = corpus.iter().map(|f| f.ctl.clone()).collect();
    let json_streams: Vec<Vec<u8>> = corpus.iter().map(|f| f.json.clone()).collect();
    let ctl_bytes: usize = ctl_streams.iter().map(Vec::len).sum();
    let json_bytes: usize = json_streams.iter().map(Vec::len).sum();
    let calls: usize = corpus.iter().map(|f| f.calls.len()).sum();

    let mut group = c.benchmark_group("streaming");
    group.sample_size(20);
    for chunk in [1usize, 16, 256] {
        group.throughput(Throughput::Bytes(ctl_bytes as u64));
        group.bench_with_input(
            BenchmarkId::new("frontier_ctl", chunk),
            &chunk,
            |b, &chunk| b.iter(|| assert_eq!(ctl(black_box(&ctl_streams), chunk), calls)),
        );
        group.throughput(Throughput::Bytes(json_bytes as u64));
        group.bench_with_input(
            BenchmarkId::new("serde_json_reparse", chunk),
            &chunk,
            |b, &chunk| {
                b.iter(|| {
                    reparse(black_box(&json_streams), chunk, |buf| {
                        serde_json::from_slice::<serde_json::Value>(buf).is_ok()
                    })
                })
            },
        );
        group.bench_with_input(
            BenchmarkId::new("jiter_partial", chunk),
            &chunk,
            |b, &chunk| {
                b.iter(|| {
                    reparse(black_box(&json_streams), chunk, |buf| {
                        jiter::JsonValue::parse_with_config(
                            buf,
                            false,
                            jiter::PartialMode::TrailingStrings,
                        )
                        .is_ok()
                    })
                })
            },
        );
        group.bench_with_input(
            BenchmarkId::new("heal_then_parse", chunk),
            &chunk,
            |b, &chunk| {
                b.iter(|| {
                    reparse(black_box(&json_streams), chunk, |buf| {
                        serde_json::from_slice::<serde_json::Value>(&heal(buf)).is_ok()
                    })
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, streaming);
criterion_main!(benches);
