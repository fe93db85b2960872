//! What the loop costs over the bare CTL parser: a replayed turn of `write_file` calls, all
//! refused (the loop's own work: parse, assemble, judge, record) against the parser alone on
//! the same bytes, at 1-byte and 4 KiB chunks; the same turn writing its 50 files; and the
//! hard-line guard on typical commands.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use frontier::agent::replay::{Replay, Turn};
use frontier::agent::{guard, Config, Finish, Toolset};
use frontier::apply::Workspace;
use frontier::contract::PushParser;
use frontier::ctl::CtlParser;

/// 50 `write_file` calls of 4 KiB each, with a `list_dir` after every tenth (a parallel batch).
fn turn() -> Vec<u8> {
    let content = "let x = 1; // a line of code in a file the model writes\n".repeat(72);
    let mut out = Vec::new();
    for i in 0..50 {
        let path = format!("src/f{i}.rs");
        out.extend_from_slice(
            format!(
                "call c{i} write_file\narg path {}\n{path}arg content {}\n{content}end\n",
                path.len(),
                content.len()
            )
            .as_bytes(),
        );
        if i % 10 == 9 {
            out.extend_from_slice(format!("call l{i} list_dir\narg path 3\nsrcend\n").as_bytes());
        }
    }
    out
}

fn bench_loop(c: &mut Criterion) {
    let bytes = turn();
    let dir = tempfile::tempdir().unwrap();
    let config = Config::new(Workspace::new(dir.path()).unwrap());
    // Under the webhook toolset every write is refused: the loop's own cost (parse, assemble,
    // judge, record), without the filesystem.
    let mut refusing = config.clone();
    refusing.toolset = Toolset::Webhook;
    let run = |config: &Config, chunk: usize| {
        let turns = vec![Turn::Output {
            bytes: bytes.clone(),
            finish: Finish::ToolCalls,
        }];
        let mut model = Replay::new("bench", turns, chunk);
        let mut sink = std::io::sink();
        black_box(frontier::agent::run(config, &mut model, &mut sink).unwrap())
    };
    let mut group = c.benchmark_group("agent_loop");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    for chunk in [1usize, 4096] {
        group.bench_function(format!("loop_refusing/chunk_{chunk}"), |b| {
            b.iter(|| run(&refusing, chunk))
        });
        group.bench_function(format!("parser_only/chunk_{chunk}"), |b| {
            b.iter(|| {
                let mut parser = CtlParser::default();
                let mut n = 0u64;
                for piece in bytes.chunks(chunk) {
                    parser.push(piece, &mut |_| n += 1).unwrap();
                }
                black_box(n)
            })
        });
    }
    group.bench_function("loop_writing/chunk_4096", |b| b.iter(|| run(&config, 4096)));
    group.finish();
}

fn bench_guard(c: &mut Criterion) {
    let commands = [
        "cargo test --workspace -- --nocapture",
        "git diff --stat && git status --short",
        "sh -c 'cd build && make -j2 && ./run_tests.sh \"$(ls tests)\"'",
        "find . -name '*.rs' | xargs grep -n 'TODO' | head -50",
        "rm -rf /",
    ];
    let total: usize = commands.iter().map(|c| c.len()).sum();
    let mut group = c.benchmark_group("agent_guard");
    group.throughput(Throughput::Bytes(total as u64));
    group.bench_function("check", |b| {
        b.iter(|| {
            for command in commands {
                let _ = black_box(guard::check(black_box(command)));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench_loop, bench_guard);
criterion_main!(benches);
