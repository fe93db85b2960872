//! What a decoder pays the recogniser layer per query: `allowed()` at the states where it is
//! computed rather than looked up (a unified-diff line start outside a hunk body, a keyword in
//! progress), against finding the same set by trying all 256 bytes on copies (what the
//! unified-diff machine did before it probed one byte per class), and `try_byte` per byte over
//! a whole input (the trie walk's step).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use frontier::apply_patch::StrictParser;
use frontier::contract::PushParser;
use frontier::ctl::CtlParser;
use frontier::recognizer::Recognizer;
use frontier::udiff::UdiffParser;
use frontier::ByteSet;

/// `allowed()` found by trying every byte on a copy.
fn probed<R: Recognizer>(state: &R) -> ByteSet {
    let mut set = ByteSet::EMPTY;
    for b in 0..=255u8 {
        if state.clone().try_byte(b) {
            set = set.with(b);
        }
    }
    set
}

fn after<R: Recognizer>(mut state: R, bytes: &[u8]) -> R {
    assert_eq!(state.try_bytes(bytes), bytes.len());
    state
}

fn allowed(c: &mut Criterion) {
    let udiff = UdiffParser::git().recognizer();
    let states = [
        ("udiff/top", after(udiff, b"")),
        ("udiff/git_header", after(udiff, b"diff --git a/f b/f\n")),
        (
            "udiff/between_hunks",
            after(udiff, b"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n"),
        ),
        (
            "udiff/in_hunk",
            after(udiff, b"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n"),
        ),
    ];
    let mut group = c.benchmark_group("recognizer_allowed");
    for (name, state) in states {
        assert_eq!(state.allowed(), probed(&state), "{name}");
        group.bench_function(format!("{name}/allowed"), |b| {
            b.iter(|| black_box(&state).allowed())
        });
        group.bench_function(format!("{name}/256_probes"), |b| {
            b.iter(|| probed(black_box(&state)))
        });
    }
    group.finish();
}

fn try_byte<R: Recognizer>(c: &mut Criterion, name: &str, start: R, input: &[u8]) {
    let mut group = c.benchmark_group("recognizer_try_byte");
    group.throughput(Throughput::Bytes(input.len() as u64));
    group.bench_function(name, |b| {
        b.iter(|| {
            let mut state = start;
            for &byte in black_box(input) {
                if !state.try_byte(byte) {
                    break;
                }
            }
            state.accepting()
        })
    });
    group.finish();
}

fn stepping(c: &mut Criterion) {
    let root = env!("CARGO_MANIFEST_DIR");
    let read = |p: &str| std::fs::read(format!("{root}/{p}")).unwrap();
    try_byte(
        c,
        "ctl/01_agent_turn",
        CtlParser::default().recognizer(),
        &read("corpora/ctl/valid/01_agent_turn.ctl"),
    );
    try_byte(
        c,
        "apply_patch/multi_chunk",
        StrictParser::default().recognizer(),
        &read("corpora/apply_patch/multi_chunk.patch"),
    );
    try_byte(
        c,
        "udiff/git_log",
        UdiffParser::git().recognizer(),
        &read("corpora/udiff/git_log.diff"),
    );
}

criterion_group!(benches, allowed, stepping);
criterion_main!(benches);
