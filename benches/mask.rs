//! Token masks for CTL over real vocabularies (cl100k_base, o200k_base): per-mask latency
//! percentiles, cold and warm cache, and the token trie's build time.
//!
//! Workload: every file of `corpora/ctl/valid` back to back, then one `apply_patch` call per
//! `corpora/apply_patch/*.patch` (the patch as its `patch` argument's body), tokenized with the
//! vocabulary's own tokenizer. Latency: one `fill_mask` per step, each step's minimum over five
//! passes (a loaded 2-core machine preempts a few percent of steps). Cold: every pass starts
//! with an empty cache (a new grammar), so each new key pays a trie walk; warm: one untimed
//! pass first; prepared: every pass starts with a new grammar given `warm_up` of a short CTL
//! sample that is not the workload (one long argument, two header shapes). The percentiles
//! are printed (`mask latency …` lines); criterion measures the whole warm sequence
//! (`Throughput::Elements`: masks) and the trie build.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use frontier::ctl::CtlMachine;
use frontier::mask::vocab::tiktoken::{self, Builtin};
use frontier::mask::{CompiledGrammar, TokenTrie, Vocabulary};

const PASSES: usize = 5;

fn workload() -> Vec<u8> {
    let mut out = Vec::new();
    let read_sorted = |dir: &str, ext: &str| {
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .collect();
        paths.sort();
        paths
    };
    for path in read_sorted("corpora/ctl/valid", "ctl") {
        out.extend(std::fs::read(path).unwrap());
    }
    for (i, path) in read_sorted("corpora/apply_patch", "patch")
        .into_iter()
        .enumerate()
    {
        let patch = std::fs::read(path).unwrap();
        out.extend(format!("call p{i} apply_patch\narg patch {}\n", patch.len()).as_bytes());
        out.extend(patch);
        out.extend(b"end\n");
    }
    out
}

fn tokens(vocab: &Vocabulary, text: &[u8]) -> Vec<u32> {
    // Patches may hold bytes that are not UTF-8: encode the UTF-8 runs, and other bytes alone.
    let mut ids = Vec::new();
    for chunk in text.utf8_chunks() {
        ids.extend(vocab.encode(chunk.valid()).unwrap());
        for &byte in chunk.invalid() {
            let id = (0..vocab.size())
                .find(|&id| vocab.bytes(id) == [byte])
                .unwrap();
            ids.push(id);
        }
    }
    ids
}

/// How each pass's grammar starts.
#[derive(Clone, Copy, PartialEq)]
enum Start {
    /// An empty cache.
    Cold,
    /// An empty cache given [`prepare_sample`] with `warm_up`: a sample that is not the
    /// workload, so only the keys they share are hits.
    Prepared,
    /// The cache of an untimed pass over the workload itself.
    Warm,
}

/// A CTL sample for `warm_up`: one call whose argument body is longer than any token, so it
/// passes through every body state near an end; then short header shapes.
fn prepare_sample(longest_token: u32) -> Vec<u8> {
    let body = vec![b'x'; longest_token as usize + 2];
    let mut out = format!("call c1 shell\narg command {}\n", body.len()).into_bytes();
    out.extend(body);
    out.extend(b"end\ncall c2 read_file\narg path 8\nsrc/a.rsend\n");
    out
}

/// Each step's fill time, the minimum over [`PASSES`] passes.
fn latencies(vocab: &Arc<Vocabulary>, ids: &[u32], start: Start) -> Vec<Duration> {
    let mut best = vec![Duration::MAX; ids.len() + 1];
    let mut mask = vec![0u32; vocab.mask_words()];
    let shared = CompiledGrammar::new(Arc::clone(vocab), CtlMachine::default());
    let warm = start == Start::Warm;
    let passes = if warm { PASSES + 1 } else { PASSES };
    for pass in 0..passes {
        let grammar = if warm {
            Arc::clone(&shared)
        } else {
            let grammar = CompiledGrammar::new(Arc::clone(vocab), CtlMachine::default());
            if start == Start::Prepared {
                grammar.warm_up(&prepare_sample(vocab.max_token_len()));
            }
            grammar
        };
        let mut matcher = grammar.matcher();
        for (step, slot) in best.iter_mut().enumerate() {
            let start = Instant::now();
            matcher.fill_mask(&mut mask).unwrap();
            let took = start.elapsed();
            black_box(&mask);
            if !(warm && pass == 0) {
                *slot = (*slot).min(took);
            }
            if let Some(&id) = ids.get(step) {
                matcher.consume(id).unwrap();
            }
        }
    }
    best
}

fn report(name: &str, mut times: Vec<Duration>) {
    times.sort_unstable();
    let at = |q: f64| {
        let i = ((times.len() as f64 * q).ceil() as usize).clamp(1, times.len()) - 1;
        times[i].as_secs_f64() * 1e6
    };
    println!(
        "mask latency {name}: steps {} p50 {:.2} us p99 {:.2} us p99.9 {:.2} us max {:.2} us",
        times.len(),
        at(0.50),
        at(0.99),
        at(0.999),
        at(1.0)
    );
}

fn bench(c: &mut Criterion) {
    let text = workload();
    for which in [Builtin::Cl100kBase, Builtin::O200kBase] {
        let start = Instant::now();
        let vocab = Arc::new(tiktoken::builtin(which).unwrap());
        let load = start.elapsed();
        let start = Instant::now();
        let trie = TokenTrie::build(&vocab);
        println!(
            "mask {}: load {:.1} ms, trie build {:.1} ms, {} nodes, {} ids, longest {} bytes",
            which.name(),
            load.as_secs_f64() * 1e3,
            start.elapsed().as_secs_f64() * 1e3,
            trie.node_count(),
            vocab.size(),
            vocab.max_token_len()
        );
        let ids = tokens(&vocab, &text);
        let grammar = CompiledGrammar::new(Arc::clone(&vocab), CtlMachine::default());
        report(
            &format!("{} cold", which.name()),
            latencies(&vocab, &ids, Start::Cold),
        );
        let grammar_prep = CompiledGrammar::new(Arc::clone(&vocab), CtlMachine::default());
        let start = Instant::now();
        let states = grammar_prep.warm_up(&prepare_sample(vocab.max_token_len()));
        println!(
            "mask {}: warm_up over {states} states, {} keys, {:.1} ms",
            which.name(),
            grammar_prep.cache_stats().entries,
            start.elapsed().as_secs_f64() * 1e3
        );
        report(
            &format!("{} prepared", which.name()),
            latencies(&vocab, &ids, Start::Prepared),
        );
        report(
            &format!("{} warm", which.name()),
            latencies(&vocab, &ids, Start::Warm),
        );
        let mut m = grammar.matcher();
        let mut mask = vec![0u32; vocab.mask_words()];
        for &id in &ids {
            m.fill_mask(&mut mask).unwrap();
            m.consume(id).unwrap();
        }
        let stats = grammar.cache_stats();
        println!(
            "mask {}: {} bytes, {} tokens, {} distinct keys",
            which.name(),
            text.len(),
            ids.len(),
            stats.entries
        );

        let mut group = c.benchmark_group("mask_fill_warm");
        group.throughput(Throughput::Elements(ids.len() as u64 + 1));
        group.bench_function(BenchmarkId::from_parameter(which.name()), |b| {
            b.iter(|| {
                let mut m = grammar.matcher();
                for &id in &ids {
                    m.fill_mask(&mut mask).unwrap();
                    m.consume(id).unwrap();
                }
                m.fill_mask(&mut mask).unwrap();
                black_box(&mask);
            })
        });
        group.finish();

        let mut group = c.benchmark_group("mask_trie_build");
        group.sample_size(10);
        group.bench_function(BenchmarkId::from_parameter(which.name()), |b| {
            b.iter(|| black_box(TokenTrie::build(&vocab)))
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
