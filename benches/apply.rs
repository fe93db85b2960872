//! What applying costs: locating chunks in a 100,000-line file full of similar lines (the
//! indexed search against Codex's linear-per-position scan), and whole applications (read,
//! locate, render, write) against the bare cost of reading and writing the file.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use frontier::apply::seek::{Lines, Pass};
use frontier::apply::udiff::apply_file_patches;
use frontier::apply::{apply_operations, DiffOptions, Policy, Workspace};
use frontier::apply_patch::units::{ChangeLine, Chunk, FileOperation};
use frontier::udiff::units::{FileHeader, FilePatch, Hunk, HunkLine, LineKind};

const LINES: usize = 100_000;

/// Lines that repeat a lot (`}` and a few statement shapes), with a unique marker every 1,000.
fn big_file() -> String {
    let mut s = String::new();
    for i in 0..LINES {
        match i % 5 {
            0 if i % 1000 == 0 => s.push_str(&format!("fn f{i}() {{\n")),
            0 => s.push_str("    let x = 1;\n"),
            1 => s.push_str("    x += 1;\n"),
            2 => s.push_str("    println!(\"{x}\");\n"),
            3 => s.push_str("}\n"),
            _ => s.push('\n'),
        }
    }
    s
}

/// Codex's search: each position, each line, pass after pass.
fn naive_seek(lines: &[&str], pattern: &[&str], start: usize) -> Option<usize> {
    for pass in Pass::ALL {
        for i in start..=lines.len().saturating_sub(pattern.len()) {
            if (0..pattern.len()).all(|k| pass.key(lines[i + k]) == pass.key(pattern[k])) {
                return Some(i);
            }
        }
    }
    None
}

fn chunks(n: usize) -> Vec<Chunk> {
    (0..n)
        .map(|k| {
            let i = (k + 1) * (LINES / (n + 1)) / 1000 * 1000;
            Chunk {
                context: None,
                lines: vec![
                    ChangeLine::Context(format!("fn f{i}() {{")),
                    ChangeLine::Remove("    x += 1;".into()),
                    ChangeLine::Add("    x += 2;".into()),
                    ChangeLine::Context("    println!(\"{x}\");".into()),
                ],
                end_of_file: false,
            }
        })
        .collect()
}

fn bench_seek(c: &mut Criterion) {
    let text = big_file();
    let mut g = c.benchmark_group("seek_100k_lines");
    g.throughput(Throughput::Bytes(text.len() as u64));
    // A pattern of common lines that only occurs at the end: the worst case for a scan.
    let pattern = [
        "    x += 1;",
        "    println!(\"{x}\");",
        "}",
        "",
        "    let x = 1;",
        "    x += 1;",
        "    println!(\"{x}\");",
        "}",
        "",
        "fn f99000() {",
    ];
    g.bench_function("indexed_build_and_find", |b| {
        b.iter(|| {
            let mut lines = Lines::new(text.clone(), true);
            black_box(
                Pass::ALL
                    .iter()
                    .find_map(|&p| lines.find(p, &pattern, 0, false, 2).first().copied()),
            )
        })
    });
    let mut lines = Lines::new(text.clone(), true);
    g.bench_function("indexed_find_prebuilt", |b| {
        b.iter(|| {
            black_box(
                Pass::ALL
                    .iter()
                    .find_map(|&p| lines.find(p, &pattern, 0, false, 2).first().copied()),
            )
        })
    });
    let refs: Vec<&str> = text.lines().collect();
    g.sample_size(10);
    g.bench_function("codex_scan", |b| {
        b.iter(|| black_box(naive_seek(&refs, &pattern, 0)))
    });
    g.finish();
}

fn bench_apply(c: &mut Criterion) {
    let text = big_file();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.rs");
    let mut g = c.benchmark_group("apply_100k_lines");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.sample_size(20);
    g.bench_function("read_and_write_only", |b| {
        b.iter(|| {
            std::fs::write(&path, &text).unwrap();
            let data = std::fs::read(&path).unwrap();
            std::fs::write(dir.path().join("copy.rs"), &data).unwrap();
        })
    });
    let op = FileOperation::Update {
        path: "big.rs".into(),
        move_to: None,
        chunks: chunks(50),
    };
    for policy in [Policy::Safe, Policy::Codex] {
        g.bench_function(format!("apply_patch_{policy:?}_50_chunks"), |b| {
            b.iter(|| {
                std::fs::write(&path, &text).unwrap();
                let ws = Workspace::new(dir.path()).unwrap();
                apply_operations(ws, policy, std::slice::from_ref(&op)).unwrap();
            })
        });
    }
    let hunks: Vec<Hunk> = (1..=50)
        .map(|k| {
            let i = k * 1000;
            let line = |kind, t: &str| HunkLine {
                kind,
                content: t.as_bytes().to_vec(),
                no_newline: false,
            };
            Hunk {
                old_start: i as u64 + 1,
                old_count: 3,
                new_start: i as u64 + 1,
                new_count: 3,
                section: Vec::new(),
                lines: vec![
                    line(LineKind::Context, &format!("fn f{i}() {{")),
                    line(LineKind::Remove, "    x += 1;"),
                    line(LineKind::Add, "    x += 2;"),
                    line(LineKind::Context, "    println!(\"{x}\");"),
                ],
                ranges_stated: true,
            }
        })
        .collect();
    let patch = FilePatch {
        header: FileHeader {
            old_path: Some(b"a/big.rs".to_vec()),
            new_path: Some(b"b/big.rs".to_vec()),
            ..FileHeader::default()
        },
        hunks,
    };
    g.bench_function("udiff_50_hunks", |b| {
        b.iter(|| {
            std::fs::write(&path, &text).unwrap();
            let ws = Workspace::new(dir.path()).unwrap();
            apply_file_patches(ws, DiffOptions::default(), std::slice::from_ref(&patch)).unwrap();
        })
    });
    // The peers, on the same diff written out as text: `git apply` and GNU `patch`, each a
    // process (their start-up included, as a runtime calling them would pay it).
    let diff_file = dir.path().join("p.diff");
    std::fs::write(&diff_file, render(&patch)).unwrap();
    for (name, program, args) in [
        ("git_apply_50_hunks", "git", vec!["apply", "p.diff"]),
        (
            "gnu_patch_50_hunks",
            "patch",
            vec!["-s", "-p1", "-i", "p.diff"],
        ),
    ] {
        let available = std::process::Command::new(program)
            .arg("--version")
            .output()
            .is_ok();
        if !available {
            continue;
        }
        g.bench_function(name, |b| {
            b.iter(|| {
                std::fs::write(&path, &text).unwrap();
                let st = std::process::Command::new(program)
                    .args(&args)
                    .current_dir(dir.path())
                    .status()
                    .unwrap();
                assert!(st.success());
            })
        });
    }
    g.finish();
}

/// The diff as `git diff` would print it.
fn render(p: &FilePatch) -> Vec<u8> {
    let mut out = b"--- a/big.rs\n+++ b/big.rs\n".to_vec();
    for h in &p.hunks {
        out.extend_from_slice(
            format!(
                "@@ -{},{} +{},{} @@\n",
                h.old_start, h.old_count, h.new_start, h.new_count
            )
            .as_bytes(),
        );
        for l in &h.lines {
            out.push(match l.kind {
                LineKind::Context => b' ',
                LineKind::Remove => b'-',
                LineKind::Add => b'+',
            });
            out.extend_from_slice(&l.content);
            out.push(b'\n');
        }
    }
    out
}

criterion_group!(benches, bench_seek, bench_apply);
criterion_main!(benches);
