//! What `fill_mask` allocates, counted: this test binary's global allocator counts the
//! allocations each thread makes. The bound (`docs/masks.md`): one allocation per cache slot a
//! fill fills for the first time (its mask buffer), nothing else, so nothing on a hit, an
//! eviction, a walk that bypasses the cache, or once the cache is full. Every language and
//! mode runs over the corpora with a real vocabulary (cl100k) from a new grammar (misses at
//! first: walks, run tables, blind-state checks, insertions), then again with the cache warm,
//! through a cache of two masks (an eviction on almost every step), bypassing the cache, and
//! from as many threads at once as the machine has cores. `consume`, `validate_tokens` and
//! `rollback` are counted too. Making the grammar, the matcher and the buffer is not.

mod mask_support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;
use std::sync::Arc;

use frontier::contract::PushParser;
use frontier::ctl::CtlMachine;
use frontier::language::ParserSpec;
use frontier::mask::dynamic::{self, DynMatcher};
use frontier::mask::vocab::tiktoken::{self, Builtin};
use frontier::mask::{CompiledGrammar, Vocabulary};
use frontier::recognizer::Recognizer;
use frontier::udiff::{Limits, Mode, UdiffParser};
use mask_support::greedy_tokenize;

/// Passes every call to the system allocator, counting the allocations of each thread.
struct Counting;

thread_local! {
    /// Const-initialised and without a destructor: reading it never allocates.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: each method passes its arguments to `System`, which upholds `GlobalAlloc`'s
// contract; counting touches only a thread-local `Cell`, which neither allocates nor unwinds.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The allocations this thread makes while `f` runs.
fn allocations_in<T>(f: impl FnOnce() -> T) -> (u64, T) {
    let before = ALLOCATIONS.with(Cell::get);
    let out = f();
    (ALLOCATIONS.with(Cell::get) - before, out)
}

fn vocab() -> Arc<Vocabulary> {
    Arc::new(tiktoken::builtin(Builtin::Cl100kBase).unwrap())
}

/// Every corpus file of `dir` (relative to the repository) with `ext`, as token ids.
fn corpus(vocab: &Vocabulary, dir: &str, ext: &str) -> Vec<(String, Vec<u32>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no {ext} files in {}", root.display());
    files
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path).unwrap();
            let ids = match std::str::from_utf8(&bytes) {
                Ok(text) => vocab.encode(text).unwrap(),
                Err(_) => greedy_tokenize(vocab, &bytes),
            };
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                ids,
            )
        })
        .collect()
}

/// Fills and consumes `tokens` until one is refused (then EOS if the text is a sentence),
/// checking `validate_tokens` and a `rollback(1)` on the way; returns the steps filled.
fn run(matcher: &mut dyn DynMatcher, mask: &mut [u32], tokens: &[u32], eos: u32) -> usize {
    let mut steps = 0;
    for (i, &token) in tokens.iter().enumerate() {
        matcher.fill_mask(mask).unwrap();
        steps += 1;
        if i % 16 == 0 {
            let _ = matcher.validate_tokens(&tokens[i..tokens.len().min(i + 4)]);
        }
        if matcher.consume(token).is_err() {
            return steps;
        }
        if i % 16 == 8 {
            matcher.rollback(1).unwrap();
            matcher.consume(token).unwrap();
        }
    }
    matcher.fill_mask(mask).unwrap();
    if matcher.consume(eos).is_ok() {
        matcher.fill_mask(mask).unwrap();
        steps += 1;
    }
    steps + 1
}

#[test]
fn the_counter_counts() {
    let (n, boxed) = allocations_in(|| std::hint::black_box(Box::new(7u64)));
    assert_eq!((n, *boxed), (1, 7));
    let (n, _) = allocations_in(|| std::hint::black_box(vec![0u32; 3]));
    assert_eq!(n, 1);
}

#[test]
fn every_language_allocates_only_the_cache_slots_it_fills_first() {
    let vocab = vocab();
    let eos = vocab.eos()[0];
    let cases = [
        ("ctl", Some("strict"), "corpora/ctl/valid", "ctl"),
        ("ctl", Some("extended"), "corpora/ctl/valid", "ctl"),
        (
            "apply_patch",
            Some("strict"),
            "corpora/apply_patch",
            "patch",
        ),
        ("apply_patch", Some("codex"), "corpora/apply_patch", "patch"),
        ("udiff", Some("strict"), "corpora/udiff", "diff"),
        ("udiff", Some("git"), "corpora/udiff", "diff"),
        ("udiff", Some("recount"), "corpora/udiff", "diff"),
    ];
    for (lang, mode, dir, ext) in cases {
        let files = corpus(&vocab, dir, ext);
        let spec = ParserSpec::parse(lang, mode).unwrap();
        let grammar = dynamic::compile(&spec, Arc::clone(&vocab));
        let mut mask = vec![0u32; grammar.mask_words()];
        for pass in ["cold", "warm"] {
            let (mut steps, mut slots) = (0, 0);
            for (name, tokens) in &files {
                let mut matcher = grammar.matcher();
                let before = grammar.cache_stats().entries;
                let (n, filled) = allocations_in(|| run(&mut *matcher, &mut mask, tokens, eos));
                let new_slots = (grammar.cache_stats().entries - before) as u64;
                assert_eq!(n, new_slots, "{lang} {mode:?} {pass}: {name}: allocations");
                steps += filled;
                slots += new_slots;
            }
            assert!(steps > 100, "{lang} {mode:?}: {steps} steps");
            match pass {
                "cold" => assert!(slots > 10, "{lang} {mode:?}: {slots} slots filled"),
                _ => assert_eq!(slots, 0, "{lang} {mode:?}: the warm pass only hits"),
            }
        }
    }
}

/// The same sequences through a grammar of the generic API with a cache of two masks (its
/// two buffers allocated by the first fills, then reused), and through `fill_mask_uncached`.
fn evicting_and_uncached<R: Recognizer>(
    vocab: &Arc<Vocabulary>,
    initial: R,
    files: &[(String, Vec<u32>)],
) {
    let grammar = CompiledGrammar::with_cache_capacity(Arc::clone(vocab), initial, 2);
    let mut mask = vec![0u32; vocab.mask_words()];
    let mut total = 0;
    for (name, tokens) in files {
        let mut matcher = grammar.matcher();
        let (n, _) = allocations_in(|| run(&mut matcher, &mut mask, tokens, vocab.eos()[0]));
        total += n;
        assert!(total <= 2, "evicting: {name}: {total} allocations in all");
        let mut matcher = grammar.matcher();
        let (n, _) = allocations_in(|| {
            for &token in tokens.iter().take(200) {
                matcher.fill_mask_uncached(&mut mask).unwrap();
                if matcher.consume(token).is_err() {
                    break;
                }
            }
        });
        assert_eq!(n, 0, "uncached: {name}");
    }
    assert_eq!((total, grammar.cache_stats().entries), (2, 2));
}

#[test]
fn a_cache_that_evicts_and_walks_past_it_allocate_nothing_more() {
    let vocab = vocab();
    evicting_and_uncached(
        &vocab,
        CtlMachine::default(),
        &corpus(&vocab, "corpora/ctl/valid", "ctl"),
    );
    let udiff = UdiffParser::new(Mode::Git, Limits::default()).recognizer();
    evicting_and_uncached(&vocab, udiff, &corpus(&vocab, "corpora/udiff", "diff"));
}

#[test]
fn threads_sharing_a_grammar_allocate_only_new_slots_up_to_the_cores() {
    let vocab = vocab();
    let files = corpus(&vocab, "corpora/udiff", "diff");
    let spec = ParserSpec::parse("udiff", None).unwrap();
    let grammar = dynamic::compile(&spec, Arc::clone(&vocab));
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let eos = vocab.eos()[0];
    let allocations: u64 = std::thread::scope(|scope| {
        let spawned: Vec<_> = (0..threads)
            .map(|t| {
                let (grammar, files) = (&grammar, &files);
                scope.spawn(move || {
                    let mut mask = vec![0u32; grammar.mask_words()];
                    let mut total = 0;
                    // Each thread starts at another file: they miss different states at once.
                    for k in 0..files.len() {
                        let (_, tokens) = &files[(k + t) % files.len()];
                        let mut matcher = grammar.matcher();
                        total += allocations_in(|| run(&mut *matcher, &mut mask, tokens, eos)).0;
                    }
                    total
                })
            })
            .collect();
        spawned.into_iter().map(|h| h.join().unwrap()).sum()
    });
    // A key two threads miss at once is computed twice and kept once: one buffer a slot.
    assert_eq!(allocations, grammar.cache_stats().entries as u64);
}
