//! Masks over made vocabularies, for every language and mode: random tokens (corpus slices,
//! random bytes, partial UTF-8, duplicates, specials, holes, empty strings) and random walks that
//! sample the next token from the mask itself, so that states no corpus reaches are met.
//! Every step's mask (cached, with the default cache and with a 3-mask one, and the uncached
//! walk) equals the brute-force definition. CTL also under small limits. One vocabulary by
//! default (about 20 s at the test profile's opt-level 1); `MASK_RANDOM_SEEDS=N` runs N.

mod mask_support;

use std::sync::Arc;

use frontier::contract::PushParser;
use frontier::ctl::Limits;
use frontier::language::{ParserSpec, ParserVisitor};
use frontier::mask::{CompiledGrammar, Vocabulary};
use frontier::recognizer::Recognizer;
use mask_support::Rng;

fn corpus_texts() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for dir in [
        "corpora/ctl/valid",
        "corpora/ctl/extended",
        "corpora/apply_patch",
        "corpora/udiff",
    ] {
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .collect();
        paths.sort();
        for p in paths {
            out.push(std::fs::read(p).unwrap());
        }
    }
    out
}

fn made_vocab(rng: &mut Rng, texts: &[Vec<u8>], size: usize) -> (Vocabulary, Vec<u32>) {
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    while tokens.len() < size {
        let t = match rng.below(10) {
            0..=5 => {
                let text = &texts[rng.below(texts.len())];
                let longest = if rng.below(8) == 0 { 40 } else { 8 };
                let len = 1 + rng.below(longest);
                if text.len() <= len {
                    continue;
                }
                let at = rng.below(text.len() - len);
                text[at..at + len].to_vec()
            }
            6 => (0..1 + rng.below(4)).map(|_| rng.next() as u8).collect(),
            7 => {
                // A duplicate of an earlier token.
                tokens[rng.below(tokens.len())].clone()
            }
            8 => Vec::new(), // a hole
            _ => {
                let words: &[&[u8]] = &[
                    b"*** ",
                    b"***",
                    b"*** End Patch",
                    b"@@",
                    b"@@ -",
                    b"\n",
                    b"\n\n",
                    b"end\n",
                    b"call ",
                    b"arg ",
                    b"diff --git ",
                    b"--- ",
                    b"+++ ",
                    b"index ",
                    b" 1",
                    b",",
                    b"\r\n",
                    b"\xe2\x80",
                    b"\x94",
                    b"\xff",
                    b"+",
                    b"-",
                    b" ",
                ];
                words[rng.below(words.len())].to_vec()
            }
        };
        tokens.push(t);
    }
    let special = vec![tokens.len() as u32];
    tokens.push(b"<|special|>".to_vec());
    let eos = vec![tokens.len() as u32, tokens.len() as u32 + 1];
    tokens.push(b"<|eos|>".to_vec());
    tokens.push(b"*** ".to_vec()); // an EOS spelled like a normal token
    (
        Vocabulary::from_raw(&tokens, &special, &eos).unwrap(),
        tokens.iter().map(|t| t.len() as u32).collect(),
    )
}

struct Check<'a> {
    vocab: Arc<Vocabulary>,
    texts: &'a [Vec<u8>],
    seed: u64,
}

impl ParserVisitor for Check<'_> {
    type Output = usize;
    fn visit<P: PushParser>(self, parser: P) -> usize {
        let init = parser.recognizer();
        run(self.vocab, init, self.texts, self.seed)
    }
}

fn run<R: Recognizer>(vocab: Arc<Vocabulary>, init: R, texts: &[Vec<u8>], seed: u64) -> usize {
    let grammar = CompiledGrammar::new(vocab.clone(), init);
    let small = CompiledGrammar::with_cache_capacity(vocab.clone(), init, 3);
    let mut rng = Rng(seed);
    let mut words = vec![0u32; vocab.mask_words()];
    let mut uncached = vec![0u32; vocab.mask_words()];
    let mut steps = 0;
    let check = |m: &frontier::mask::Matcher<R>,
                 words: &mut Vec<u32>,
                 uncached: &mut Vec<u32>,
                 what: &str| {
        m.fill_mask(words).unwrap();
        m.fill_mask_uncached(uncached).unwrap();
        let brute = if m.is_terminated() {
            let mut w = vec![0u32; vocab.mask_words()];
            for &e in vocab.eos() {
                w[e as usize / 32] |= 1 << (e % 32);
            }
            w
        } else {
            mask_support::brute_mask(&vocab, &m.state())
        };
        if *words != brute || *uncached != brute {
            let diff: Vec<(u32, bool, bool, Vec<u8>)> = (0..vocab.size())
                .filter(|&id| {
                    mask_support::bit(words, id) != mask_support::bit(&brute, id)
                        || mask_support::bit(uncached, id) != mask_support::bit(&brute, id)
                })
                .take(10)
                .map(|id| {
                    (
                        id,
                        mask_support::bit(words, id),
                        mask_support::bit(&brute, id),
                        vocab.bytes(id).to_vec(),
                    )
                })
                .collect();
            panic!(
                "{what}: seed {seed}: state {:?}: mask differs (id, got, want, bytes): {:?}",
                m.state(),
                diff.iter()
                    .map(|(i, g, w, b)| format!("{i} {g} {w} {:?}", String::from_utf8_lossy(b)))
                    .collect::<Vec<_>>()
            );
        }
    };
    for (ti, text) in texts.iter().enumerate() {
        // Along a corpus text (tokenized by longest match), then a random walk from the mask.
        let tokens = mask_support::greedy_tokenize(&vocab, text);
        for g in [&grammar, &small] {
            let mut m = g.matcher();
            for &t in &tokens {
                check(&m, &mut words, &mut uncached, &format!("text {ti}"));
                steps += 1;
                if m.consume(t).is_err() {
                    break;
                }
            }
            // A random walk.
            for _ in 0..60 {
                check(
                    &m,
                    &mut words,
                    &mut uncached,
                    &format!("walk after text {ti}"),
                );
                steps += 1;
                let allowed: Vec<u32> = (0..vocab.size())
                    .filter(|&id| mask_support::bit(&words, id))
                    .collect();
                if allowed.is_empty() {
                    break;
                }
                let t = allowed[rng.below(allowed.len())];
                m.consume(t)
                    .unwrap_or_else(|e| panic!("allowed token {t} refused: {e}"));
            }
        }
    }
    steps
}

fn specs() -> Vec<(String, ParserSpec)> {
    let mut out = Vec::new();
    for (lang, modes) in [
        ("ctl", &["strict", "extended"][..]),
        ("apply_patch", &["strict", "codex"][..]),
        ("udiff", &["strict", "git", "recount"][..]),
    ] {
        for mode in modes {
            let spec = ParserSpec::parse(lang, Some(mode)).unwrap();
            out.push((format!("{lang}/{mode}"), spec));
            if lang == "ctl" {
                for (max_line, max_arg) in [(9, 0), (12, 3), (20, 16)] {
                    out.push((
                        format!("{lang}/{mode} {max_line}/{max_arg}"),
                        spec.with_ctl_limits(Limits { max_line, max_arg }),
                    ));
                }
            }
        }
    }
    out
}

#[test]
fn random_vocabularies_and_walks_match_the_definition() {
    let texts = corpus_texts();
    let seeds: u64 = std::env::var("MASK_RANDOM_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    for seed in 1..=seeds {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ seed);
        let size = 600 + rng.below(800);
        let (vocab, _) = made_vocab(&mut rng, &texts, size);
        let vocab = Arc::new(vocab);
        for (name, spec) in specs() {
            let steps = spec.run(Check {
                vocab: vocab.clone(),
                texts: &texts,
                seed: seed * 7919 + 1,
            });
            eprintln!("seed {seed} {name}: {steps} steps");
        }
    }
}
