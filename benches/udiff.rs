//! Parsing a multi-megabyte `git log -p` (this repository's history, repeated until it is at
//! least 4 MiB; a synthetic history when git or the history is unavailable) with frontier's
//! push parser, streamed in 64 KiB chunks and byte by byte, against diffy 0.5.2 parsing the
//! whole buffer at once (zero copy).

use std::hint::black_box;
use std::process::Command;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use diffy::patch_set::{ParseOptions, PatchSet};
use frontier::contract::PushParser;
use frontier::udiff::{Mode, UdiffEvent, UdiffParser};

const TARGET: usize = 4 << 20;

fn synthetic() -> Vec<u8> {
    let mut out = Vec::new();
    for c in 0..200 {
        out.extend_from_slice(
            format!("commit {c:040x}\nAuthor: A <a@b>\n\n    change {c}\n\n").as_bytes(),
        );
        for f in 0..5 {
            out.extend_from_slice(
                format!("diff --git a/src/f{f}.rs b/src/f{f}.rs\nindex 1234567..89abcde 100644\n--- a/src/f{f}.rs\n+++ b/src/f{f}.rs\n@@ -10,7 +10,8 @@ fn f{f}() {{\n").as_bytes(),
            );
            for l in 0..3 {
                out.extend_from_slice(format!("     let x{l} = compute({l}, {c});\n").as_bytes());
            }
            out.extend_from_slice(b"-    old_call(x0);\n+    new_call(x0, x1);\n+    another();\n");
            for l in 0..3 {
                out.extend_from_slice(format!("     println!(\"{{}}\", x{l});\n").as_bytes());
            }
        }
    }
    out
}

fn input() -> (Vec<u8>, &'static str) {
    let log = Command::new("git")
        .args(["log", "-p", "--no-color", "--no-ext-diff"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success() && o.stdout.len() > 4096)
        .map(|o| o.stdout);
    let (unit, what) = match log {
        Some(log) => (log, "git log -p of this repository, repeated"),
        None => (synthetic(), "synthetic git log -p"),
    };
    let mut out = Vec::with_capacity(TARGET + unit.len());
    while out.len() < TARGET {
        out.extend_from_slice(&unit);
    }
    (out, what)
}

fn frontier_units(input: &[u8], chunk: usize) -> (u64, u64) {
    let mut parser = UdiffParser::new(Mode::Git, Default::default());
    let (mut files, mut hunks) = (0u64, 0u64);
    let mut on_event = |e: UdiffEvent<'_>| match e {
        UdiffEvent::FileEnd => files += 1,
        UdiffEvent::HunkEnd { .. } => hunks += 1,
        _ => {}
    };
    for piece in input.chunks(chunk) {
        parser.push(piece, &mut on_event).unwrap();
    }
    let outcome = parser.finish(&mut on_event);
    assert_eq!(outcome.verdict.as_str(), "complete");
    (files, hunks)
}

fn diffy_units(input: &[u8]) -> (u64, u64) {
    let (mut files, mut hunks) = (0u64, 0u64);
    for patch in PatchSet::parse_bytes(input, ParseOptions::gitdiff()) {
        let patch = patch.unwrap();
        files += 1;
        hunks += patch
            .patch()
            .as_text()
            .map_or(0, |p| p.hunks().len() as u64);
    }
    (files, hunks)
}

fn bench(c: &mut Criterion) {
    let (input, what) = input();
    eprintln!("udiff bench input: {what}, {} bytes", input.len());
    // Both parsers must see the same file patches and hunks, or the comparison is void.
    assert_eq!(frontier_units(&input, 64 * 1024), diffy_units(&input));
    let mut group = c.benchmark_group("udiff_git_log");
    group.throughput(Throughput::Bytes(input.len() as u64));
    group.sample_size(10);
    group.bench_function("frontier_64k_chunks", |b| {
        b.iter(|| black_box(frontier_units(&input, 64 * 1024)))
    });
    group.bench_function("frontier_1_byte", |b| {
        b.iter(|| black_box(frontier_units(&input, 1)))
    });
    group.bench_function("diffy_0.5.2_whole", |b| {
        b.iter(|| black_box(diffy_units(&input)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
