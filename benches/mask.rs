//! Token masks over real vocabularies, side by side with llguidance 1.9 in the same run.
//!
//! Vocabularies: tiktoken's o200k_base and cl100k_base (built in), and, when
//! `benches/vocabs/fetch.py` has written them into `target/vocabs/`, Meta's Llama-3 (128,256
//! ids, a tiktoken rank file), Mistral's Tekken (131,072 ids, byte-level BPE in tiktoken's
//! style) and its SentencePiece v1 model (32,000 ids, byte fallback) as a `tokenizer.json`;
//! an absent file is said so and skipped.
//!
//! Workloads, each a list of sequences (every sequence starts a new matcher), tokenized with
//! the vocabulary's own BPE (Llama-3, Tekken: tiktoken-rs's BPE over its ranks and split pattern; the
//! SentencePiece file has no encoder here, so its text is cut by longest match):
//! - `apply_patch`: strict mode on every `corpora/apply_patch/*.patch` and conformance
//!   `patch.txt` that strict mode accepts whole, except the large one below;
//! - `apply_patch_git`: `corpora/apply_patch/git_history.patch` (33.8 KB of this repository's
//!   history);
//! - `ctl`: every file of `corpora/ctl/valid` back to back;
//! - `ctl_extended`: every file of `corpora/ctl/extended/valid` back to back, in extended mode;
//! - `udiff`: `corpora/udiff/git_log.diff` in git mode.
//!
//! Per-step latency (`mask latency …` lines): one `fill_mask` per step, each step's minimum
//! over [`PASSES`] passes (a loaded 2-core machine preempts a few percent of steps), then
//! p50 / p99 / p99.9 / max over the steps. Frontier runs four ways: `cold` (a new grammar,
//! empty cache, every pass), `prepared` (a new grammar given `warm_up` of a short sample of the
//! language that is not the workload, every pass), `warm` (the cache of an untimed pass over
//! the workload). llguidance (apply_patch only: it has the Lark grammar,
//! `grammars/apply_patch.lark` with `no_forcing`) runs `Matcher::compute_mask` on the same
//! tokens, a new matcher per sequence, with a `TokTrie` built from the same vocabulary
//! (special tokens as 0xFF + name); its masks are compared with frontier's and the
//! disagreements counted. Trie build: frontier's `TokenTrie::build` against llguidance's
//! `TokTrie::from`. Criterion measures the whole warm sequence (`Throughput::Elements`: masks)
//! and both trie builds.
//!
//! Run with short criterion settings on a shared machine:
//! `cargo bench --bench mask -- --warm-up-time 1 --measurement-time 3`.
//!
//! While iterating, two environment variables narrow the run: `MASK_BENCH_ONLY` (a
//! comma-separated list of workloads and vocabularies, e.g. `ctl,udiff,o200k_base`: a workload
//! or vocabulary runs when the list names it or names none of its kind), and
//! `MASK_BENCH_SLOW_US` (print every cold step whose minimum is over that many microseconds,
//! with the recogniser's key: which states cost).

use std::collections::HashMap;
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use frontier::apply_patch::StrictMachine;
use frontier::ctl::{CtlMachine, CtlMode, Limits as CtlLimits};
use frontier::mask::line_text::LineTextTable;
use frontier::mask::vocab::hf::{self, EosSpec};
use frontier::mask::vocab::tiktoken::{self, Builtin};
use frontier::mask::vocab::Encoder;
use frontier::mask::{CompiledGrammar, Matcher, TokenKind, TokenTrie, Vocabulary};
use frontier::recognizer::{LineText, Recognizer};
use frontier::udiff::{Limits as UdiffLimits, Mode, UdiffMachine};
use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{ApproximateTokEnv, TokEnv, TokRxInfo, TokTrie};
use llguidance::{Matcher as LlgMatcher, ParserFactory};

const PASSES: usize = 5;
const VOCAB_DIR: &str = "target/vocabs";

/// The Lark grammar of strict mode, with llguidance's forcing turned off so that its masks
/// are the plain definition (`masks.md`).
fn lark() -> String {
    format!(
        "%llguidance {{\"no_forcing\": true}}\n{}",
        include_str!("../grammars/apply_patch.lark")
    )
}

fn sorted(dir: &str, keep: impl Fn(&Path) -> bool) -> Vec<std::path::PathBuf> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| keep(p))
        .collect();
    paths.sort();
    paths
}

fn strict_accepts(bytes: &[u8]) -> bool {
    let mut m = StrictMachine::default();
    m.try_bytes(bytes) == bytes.len() && Recognizer::accepting(&m)
}

/// The apply_patch sequences: the corpus and the conformance patches strict mode accepts.
fn apply_patch_texts() -> Vec<Vec<u8>> {
    let mut paths = sorted("corpora/apply_patch", |p| {
        p.extension().is_some_and(|e| e == "patch") && !p.ends_with("git_history.patch")
    });
    for dir in sorted("tests/conformance/codex-apply-patch", |p| p.is_dir()) {
        paths.push(dir.join("patch.txt"));
    }
    paths
        .into_iter()
        .filter_map(|p| std::fs::read(p).ok())
        .filter(|b| strict_accepts(b))
        .collect()
}

fn ctl_text(dir: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for path in sorted(dir, |p| p.extension().is_some_and(|e| e == "ctl")) {
        out.extend(std::fs::read(path).unwrap());
    }
    out
}

/// Warm-up samples, one per language, none of them part of a workload.
const CTL_SAMPLE_HEAD: &str = "call c1 shell\narg command ";
const PATCH_SAMPLE: &[u8] = "*** Begin Patch\n*** Add File: docs/a b.md\n+# Título\n+\n\
+ 一行 ✓ 😀 — “q”\n*** Update File: src/x.rs\n*** Move to: src/y.rs\n@@ fn main() {\n \
    let a = 1;\n-    old(é);\n+    new(ü);\n \n@@\n-x\n+y\n*** End of File\n\
*** Update File: z.txt\n context\n-a\n+b\n*** Delete File: c.txt\n*** End Patch\n"
    .as_bytes();
const UDIFF_SAMPLE: &[u8] = b"commit 0123456789abcdef\nAuthor: A <a@b>\n\n    msg\n\n\
diff --git a/x.txt b/x.txt\nindex 1111111..2222222 100644\n--- a/x.txt\n+++ b/x.txt\n\
@@ -1,3 +1,3 @@ ctx\n one\n-two\n+zwei\n three\n";

/// A CTL sample whose argument body is longer than any token (it passes through every body
/// state near an end), then a short call.
fn ctl_sample(longest_token: u32) -> Vec<u8> {
    let body = vec![b'x'; longest_token as usize + 2];
    let mut out = format!("{CTL_SAMPLE_HEAD}{}\n", body.len()).into_bytes();
    out.extend(body);
    out.extend(b"end\ncall c2 read_file\narg path 8\nsrc/a.rsend\n");
    out
}

/// BPE over a rank file's ranks and split pattern (Llama-3, Tekken), through tiktoken-rs.
struct RankEncoder(tiktoken_rs::CoreBPE);

impl Encoder for RankEncoder {
    fn encode(&self, text: &str) -> Result<Vec<u32>, frontier::mask::vocab::VocabError> {
        Ok(self.0.encode_ordinary(text))
    }
}

/// A rank file written by `benches/vocabs/fetch.py` (`NAME.tiktoken`, with `.specials` and
/// `.pattern` beside it), its EOS the special tokens named `eos`, with its own BPE attached.
fn load_rank_vocab(name: &str, eos: &[&str]) -> Option<Vocabulary> {
    let base = Path::new(VOCAB_DIR).join(name);
    let ranks = base.with_extension("tiktoken");
    let (Ok(specials), Ok(pattern)) = (
        std::fs::read_to_string(base.with_extension("specials")),
        std::fs::read_to_string(base.with_extension("pattern")),
    ) else {
        return None;
    };
    let specials: Vec<(String, u32)> = specials
        .lines()
        .map(|l| {
            let (id, name) = l.split_once(' ').unwrap();
            (name.to_owned(), id.parse().unwrap())
        })
        .collect();
    let eos: Vec<u32> = eos
        .iter()
        .map(|e| specials.iter().find(|(n, _)| n == e).unwrap().1)
        .collect();
    let vocab = tiktoken::from_rank_file(&ranks, &specials, &eos).ok()?;
    // tiktoken-rs's maps use its own hasher: `collect` and `default` infer it.
    let encoder = vocab
        .normal_tokens()
        .map(|(id, bytes)| (bytes.to_vec(), id))
        .collect();
    let bpe = tiktoken_rs::CoreBPE::new(encoder, Default::default(), &pattern).unwrap();
    Some(vocab.with_encoder(Arc::new(RankEncoder(bpe))))
}

/// The rank-file vocabularies of `fetch.py`: bench name, file name, EOS names.
const RANK_VOCABS: [(&str, &str, &[&str]); 2] = [
    // One EOS each: llguidance's `TokRxInfo` takes one, and the masks are compared.
    ("llama3", "llama3", &["<|eot_id|>"]),
    ("tekken", "tekken_240911", &["</s>"]),
];

const WORKLOADS: [&str; 5] = [
    "apply_patch",
    "apply_patch_git",
    "ctl",
    "ctl_extended",
    "udiff",
];
const VOCABS: [&str; 5] = [
    "o200k_base",
    "cl100k_base",
    "llama3",
    "tekken",
    "sentencepiece",
];

/// Whether `MASK_BENCH_ONLY` lets `name` (one of `kind`) run: it names it, or names none of
/// `kind`.
fn selected(name: &str, kind: &[&str]) -> bool {
    let Ok(only) = std::env::var("MASK_BENCH_ONLY") else {
        return true;
    };
    let names: Vec<&str> = only.split(',').map(str::trim).collect();
    names.contains(&name) || !names.iter().any(|n| kind.contains(n))
}

/// The vocabularies present, by name.
fn vocabularies() -> Vec<(String, Arc<Vocabulary>)> {
    let mut out = Vec::new();
    for which in [Builtin::O200kBase, Builtin::Cl100kBase] {
        if !selected(which.name(), &VOCABS) {
            continue;
        }
        let start = Instant::now();
        let vocab = tiktoken::builtin(which).unwrap();
        println!(
            "mask vocab {}: load {:.1} ms",
            which.name(),
            ms(start.elapsed())
        );
        out.push((which.name().to_owned(), Arc::new(vocab)));
    }
    for (name, file, eos) in RANK_VOCABS {
        if !selected(name, &VOCABS) {
            continue;
        }
        let start = Instant::now();
        match load_rank_vocab(file, eos) {
            Some(vocab) => {
                println!("mask vocab {name}: load {:.1} ms", ms(start.elapsed()));
                out.push((name.to_owned(), Arc::new(vocab)));
            }
            None => println!(
                "mask vocab {name}: absent ({VOCAB_DIR}/{file}.*; run benches/vocabs/fetch.py)"
            ),
        }
    }
    let sp = Path::new(VOCAB_DIR).join("sp_v1/tokenizer.json");
    if !selected("sentencepiece", &VOCABS) {
        return out;
    }
    let start = Instant::now();
    match hf::from_file(&sp, &[EosSpec::Name("</s>".to_owned())]) {
        Ok(vocab) => {
            println!(
                "mask vocab sentencepiece: load {:.1} ms",
                ms(start.elapsed())
            );
            out.push(("sentencepiece".to_owned(), Arc::new(vocab)));
        }
        Err(e) => println!(
            "mask vocab sentencepiece: absent ({}: {e}; run benches/vocabs/fetch.py)",
            sp.display()
        ),
    }
    out
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The ids of each text: the vocabulary's encoder on UTF-8 runs (the bytes between them by
/// longest match), or longest match throughout where it has no encoder.
fn tokenize(vocab: &Vocabulary, texts: &[Vec<u8>]) -> Vec<Vec<u32>> {
    let mut by_bytes: HashMap<&[u8], u32> = HashMap::new();
    for (id, bytes) in vocab.normal_tokens() {
        by_bytes.entry(bytes).or_insert(id);
    }
    texts
        .iter()
        .map(|text| tokenize_one(vocab, &by_bytes, text))
        .collect()
}

fn tokenize_one(vocab: &Vocabulary, by_bytes: &HashMap<&[u8], u32>, text: &[u8]) -> Vec<u32> {
    let longest_match = |piece: &[u8], ids: &mut Vec<u32>| {
        let mut at = 0;
        while at < piece.len() {
            let max = (piece.len() - at).min(vocab.max_token_len() as usize);
            let (len, id) = (1..=max)
                .rev()
                .find_map(|len| by_bytes.get(&piece[at..at + len]).map(|&id| (len, id)))
                .expect("every byte has a token");
            ids.push(id);
            at += len;
        }
    };
    let mut ids = Vec::new();
    if !vocab.has_encoder() {
        longest_match(text, &mut ids);
        return ids;
    }
    for chunk in text.utf8_chunks() {
        ids.extend(vocab.encode(chunk.valid()).unwrap());
        longest_match(chunk.invalid(), &mut ids);
    }
    ids
}

/// How each pass's grammar starts.
#[derive(Clone, Copy, PartialEq)]
enum Start {
    Cold,
    Prepared,
    Warm,
}

/// Each step's fill time over every sequence, the minimum over [`PASSES`] passes.
fn latencies<R: Recognizer>(
    vocab: &Arc<Vocabulary>,
    initial: R,
    sample: &[u8],
    seqs: &[Vec<u32>],
    start: Start,
) -> Vec<Duration> {
    let steps: usize = seqs.iter().map(|s| s.len() + 1).sum();
    let mut best = vec![Duration::MAX; steps];
    let mut mask = vec![0u32; vocab.mask_words()];
    let shared = CompiledGrammar::new(Arc::clone(vocab), initial);
    let warm = start == Start::Warm;
    for pass in 0..PASSES + usize::from(warm) {
        let grammar = if warm {
            Arc::clone(&shared)
        } else {
            let grammar = CompiledGrammar::new(Arc::clone(vocab), initial);
            if start == Start::Prepared {
                grammar.warm_up(sample);
            }
            grammar
        };
        let mut slots = best.iter_mut();
        for ids in seqs {
            let mut matcher = grammar.matcher();
            for step in 0..=ids.len() {
                let begun = Instant::now();
                matcher.fill_mask(&mut mask).unwrap();
                let took = begun.elapsed();
                black_box(&mask);
                let slot = slots.next().unwrap();
                if !(warm && pass == 0) {
                    *slot = (*slot).min(took);
                }
                if pass + 1 == PASSES && start == Start::Cold {
                    slow_step(vocab, &matcher, *slot);
                }
                if let Some(&id) = ids.get(step) {
                    matcher.consume(id).unwrap();
                }
            }
        }
    }
    best
}

/// Prints a cold step over `MASK_BENCH_SLOW_US` with its key (see the module docs).
fn slow_step<R: Recognizer>(vocab: &Vocabulary, matcher: &Matcher<R>, took: Duration) {
    let Some(limit) = std::env::var("MASK_BENCH_SLOW_US")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
    else {
        return;
    };
    let us = took.as_secs_f64() * 1e6;
    if us > limit {
        let key = matcher.state().mask_key(vocab.max_token_len());
        // The same walk again, its tables now in the CPU's caches.
        let mut mask = vec![0u32; vocab.mask_words()];
        let again = (0..3)
            .map(|_| {
                let begun = Instant::now();
                matcher.fill_mask_uncached(&mut mask).unwrap();
                begun.elapsed().as_secs_f64() * 1e6
            })
            .fold(f64::MAX, f64::min);
        println!("mask slow step {us:.1} us (walked again {again:.1} us): {key:?}");
    }
}

/// llguidance's words for the same ids: normal tokens' bytes, special tokens as 0xFF + name,
/// holes empty.
fn llg_words(vocab: &Vocabulary) -> Vec<Vec<u8>> {
    (0..vocab.size())
        .map(|id| match vocab.kind(id) {
            Some(TokenKind::Normal) => vocab.bytes(id).to_vec(),
            Some(TokenKind::Special | TokenKind::Eos) => {
                let mut w = vec![0xFF];
                w.extend(vocab.special_name(id).unwrap_or("").as_bytes());
                w
            }
            _ => Vec::new(),
        })
        .collect()
}

/// llguidance's environment over [`llg_words`], and its trie's build time.
fn llg_env(vocab: &Vocabulary) -> (TokEnv, Duration) {
    let words = llg_words(vocab);
    let info = TokRxInfo::new(vocab.size(), vocab.eos().first().copied().unwrap_or(0));
    let start = Instant::now();
    let trie = TokTrie::from(&info, &words);
    let took = start.elapsed();
    (Arc::new(ApproximateTokEnv::new(trie)), took)
}

/// llguidance's per-step times (minimum over [`PASSES`]) and how many of its masks differ
/// from frontier's.
fn llg_latencies(
    vocab: &Arc<Vocabulary>,
    env: &TokEnv,
    seqs: &[Vec<u32>],
) -> (Vec<Duration>, usize) {
    let mut factory = ParserFactory::new_simple(env).unwrap();
    factory.set_stderr_log_level(0);
    let grammar = TopLevelGrammar::from_lark(lark());
    let ours = CompiledGrammar::new(Arc::clone(vocab), StrictMachine::default());
    let words = vocab.mask_words();
    let mut mask = vec![0u32; words];
    let steps: usize = seqs.iter().map(|s| s.len() + 1).sum();
    let mut best = vec![Duration::MAX; steps];
    let mut differ = 0;
    for pass in 0..PASSES {
        let mut slots = best.iter_mut();
        for ids in seqs {
            let mut theirs = LlgMatcher::new(factory.create_parser(grammar.clone()));
            let mut matcher = ours.matcher();
            for step in 0..=ids.len() {
                let begun = Instant::now();
                let got = theirs.compute_mask_or_eos().unwrap();
                let took = begun.elapsed();
                let slot = slots.next().unwrap();
                *slot = (*slot).min(took);
                if pass == 0 {
                    matcher.fill_mask(&mut mask).unwrap();
                    let same = (0..vocab.size())
                        .all(|t| got.is_allowed(t) == (mask[t as usize >> 5] >> (t & 31) & 1 == 1));
                    differ += usize::from(!same);
                }
                if let Some(&id) = ids.get(step) {
                    theirs.consume_token(id).unwrap();
                    matcher.consume(id).unwrap();
                }
            }
        }
    }
    (best, differ)
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

/// One language over one vocabulary: cold, prepared and warm latencies, and criterion's
/// whole warm run.
fn language<R: Recognizer>(
    c: &mut Criterion,
    label: &str,
    vocab: &Arc<Vocabulary>,
    initial: R,
    sample: &[u8],
    texts: &[Vec<u8>],
) -> Vec<Vec<u32>> {
    let seqs = tokenize(vocab, texts);
    let bytes: usize = texts.iter().map(Vec::len).sum();
    let tokens: usize = seqs.iter().map(Vec::len).sum();
    for start in [Start::Cold, Start::Prepared, Start::Warm] {
        let how = match start {
            Start::Cold => "cold",
            Start::Prepared => "prepared",
            Start::Warm => "warm",
        };
        report(
            &format!("{label} frontier {how}"),
            latencies(vocab, initial, sample, &seqs, start),
        );
    }
    let grammar = CompiledGrammar::new(Arc::clone(vocab), initial);
    let begun = Instant::now();
    let states = grammar.warm_up(sample);
    assert_eq!(
        states,
        sample.len() + 1,
        "{label}: the warm-up sample is refused"
    );
    println!(
        "mask {label}: {} sequences, {bytes} bytes, {tokens} tokens; warm_up {states} states, {} keys, {:.1} ms",
        seqs.len(),
        grammar.cache_stats().entries,
        ms(begun.elapsed())
    );
    let mut mask = vec![0u32; vocab.mask_words()];
    let run = |mask: &mut [u32]| {
        for ids in &seqs {
            let mut m = grammar.matcher();
            for &id in ids {
                m.fill_mask(mask).unwrap();
                m.consume(id).unwrap();
            }
            m.fill_mask(mask).unwrap();
        }
    };
    run(&mut mask);
    println!(
        "mask {label}: {} distinct keys; a matcher is {} bytes, rollback history aside",
        grammar.cache_stats().entries,
        std::mem::size_of::<Matcher<R>>()
    );
    let mut group = c.benchmark_group("mask_fill_warm");
    group.throughput(Throughput::Elements((tokens + seqs.len()) as u64));
    group.bench_function(BenchmarkId::from_parameter(label), |b| {
        b.iter(|| {
            run(&mut mask);
            black_box(&mask);
        })
    });
    group.finish();
    seqs
}

fn bench(c: &mut Criterion) {
    let patches = apply_patch_texts();
    let git_patch = std::fs::read("corpora/apply_patch/git_history.patch").unwrap();
    assert!(strict_accepts(&git_patch));
    let ctl = ctl_text("corpora/ctl/valid");
    let ctl_extended = ctl_text("corpora/ctl/extended/valid");
    let udiff = std::fs::read("corpora/udiff/git_log.diff").unwrap();
    let udiff_machine = UdiffMachine::new(Mode::Git, UdiffLimits::default());
    for (name, vocab) in vocabularies() {
        let begun = Instant::now();
        let trie = TokenTrie::build(&vocab);
        let ours = begun.elapsed();
        let (env, theirs) = llg_env(&vocab);
        println!(
            "mask {name}: {} ids, {} trie nodes, longest {} bytes; trie build frontier {:.1} ms ({:.1} MB), llguidance {:.1} ms",
            vocab.size(),
            trie.node_count(),
            vocab.max_token_len(),
            ms(ours),
            trie.heap_bytes() as f64 / 1e6,
            ms(theirs)
        );
        for kind in LineText::ALL {
            let begun = Instant::now();
            let table = LineTextTable::build(&vocab, kind);
            println!(
                "mask {name}: run tables {kind:?} {:.1} ms, {:.1} MB, exit tries {:?} nodes, {} prefix rows",
                ms(begun.elapsed()),
                table.heap_bytes() as f64 / 1e6,
                table.exit_nodes(),
                table.prefix_rows()
            );
        }
        let strict = StrictMachine::default();
        if selected("apply_patch", &WORKLOADS) {
            let seqs = language(
                c,
                &format!("apply_patch/{name}"),
                &vocab,
                strict,
                PATCH_SAMPLE,
                &patches,
            );
            let (times, differ) = llg_latencies(&vocab, &env, &seqs);
            report(&format!("apply_patch/{name} llguidance"), times);
            println!(
                "mask apply_patch/{name}: llguidance masks differing from frontier's: {differ}"
            );
        }
        if selected("apply_patch_git", &WORKLOADS) {
            let label = format!("apply_patch_git/{name}");
            let seqs = language(
                c,
                &label,
                &vocab,
                strict,
                PATCH_SAMPLE,
                std::slice::from_ref(&git_patch),
            );
            let (times, differ) = llg_latencies(&vocab, &env, &seqs);
            report(&format!("{label} llguidance"), times);
            println!("mask {label}: llguidance masks differing from frontier's: {differ}");
        }
        if selected("ctl", &WORKLOADS) {
            let sample = ctl_sample(vocab.max_token_len());
            language(
                c,
                &format!("ctl/{name}"),
                &vocab,
                CtlMachine::default(),
                &sample,
                std::slice::from_ref(&ctl),
            );
        }
        if selected("ctl_extended", &WORKLOADS) {
            // The sample's counted form is extended CTL too.
            let sample = ctl_sample(vocab.max_token_len());
            language(
                c,
                &format!("ctl_extended/{name}"),
                &vocab,
                CtlMachine::with_mode(CtlLimits::default(), CtlMode::Extended),
                &sample,
                std::slice::from_ref(&ctl_extended),
            );
        }
        if selected("udiff", &WORKLOADS) {
            language(
                c,
                &format!("udiff/{name}"),
                &vocab,
                udiff_machine,
                UDIFF_SAMPLE,
                std::slice::from_ref(&udiff),
            );
        }

        let words = llg_words(&vocab);
        let info = TokRxInfo::new(vocab.size(), vocab.eos().first().copied().unwrap_or(0));
        let mut group = c.benchmark_group("mask_trie_build");
        group.sample_size(10);
        group.bench_function(BenchmarkId::new("frontier", &name), |b| {
            b.iter(|| black_box(TokenTrie::build(&vocab)))
        });
        group.bench_function(BenchmarkId::new("llguidance", &name), |b| {
            b.iter(|| black_box(TokTrie::from(&info, &words)))
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
