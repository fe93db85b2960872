//! apply_patch (strict, codex), unified-diff (strict, git, recount) and extended CTL masks over
//! real vocabularies at every step of the corpora: the cached mask equals the brute-force
//! definition (each token's bytes pushed into a copy of the state) and so does the uncached
//! walk; rollback restores the exact mask; the EOS bits equal `accepting`; an invalid file is
//! refused at the token holding the parser's error, at the parser's byte; a complete file
//! ends with EOS, after which the mask holds EOS only. Then the id-level edges of both
//! languages.
//!
//! Inputs: every file of `corpora/apply_patch` and every `patch.txt` of
//! `tests/conformance/codex-apply-patch` for apply_patch; every file of `corpora/udiff` and a
//! made diff whose `---` line is 300 bytes long, under the default `max_line` and the smallest
//! (256), for unified diff; every file of `corpora/ctl/extended` and `corpora/ctl/valid`, under
//! the default limits and small ones (`max_line` 20, `max_arg` 16), for extended CTL (strict
//! CTL has `tests/mask_ctl.rs`). Vocabularies: cl100k and o200k (their own tokenizer; longest match
//! for bytes that are not UTF-8) and the made byte-level `tokenizer.json` (longest match).
//! One grammar, so one cache, serves all the files of a (vocabulary, language, mode, limits):
//! later files are answered from masks computed for earlier ones, which is what puts each
//! recogniser's `mask_key` to the test (a key clipped too far shows as cache != brute force).
//!
//! Cost: the brute force shares the pushes of common token prefixes, and a state met again
//! (offset aside: every token boundary of a long content line) reuses its brute-force mask;
//! every eighth repeat is recomputed to check that an offset changes nothing. A cache miss is
//! the uncached walk, so the walk is run separately after hits only.

mod mask_support;

use std::collections::HashMap;
use std::sync::Arc;

use frontier::apply_patch::{CodexParser, StrictOptions, StrictParser};
use frontier::contract::{PushParser, Verdict};
use frontier::ctl::{CtlMode, CtlParser, Limits as CtlLimits};
use frontier::mask::{CompiledGrammar, MaskError, Matcher};
use frontier::recognizer::Recognizer;
use frontier::udiff::{Limits, Mode, UdiffParser};
use mask_support::bit;
use mask_support::shared::{byte_level, cl100k, o200k, Shared};

type Files = Vec<(String, Vec<u8>)>;

fn paths(dir: &str, keep: impl Fn(&std::path::Path) -> bool) -> Vec<std::path::PathBuf> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| keep(p))
        .collect();
    paths.sort();
    paths
}

fn read(paths: Vec<std::path::PathBuf>) -> Files {
    paths
        .into_iter()
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect()
}

fn patch_files() -> Files {
    let mut all = paths("corpora/apply_patch", |p| {
        p.extension().is_some_and(|e| e == "patch")
    });
    let scenarios = paths("tests/conformance/codex-apply-patch", |p| p.is_dir());
    all.extend(
        scenarios
            .into_iter()
            .map(|dir| dir.join("patch.txt"))
            .filter(|p| p.is_file()),
    );
    let files = read(all);
    assert!(files.len() > 40, "{} patches", files.len());
    files
}

/// A `---` line longer than the smallest `max_line` (256): garbage in git and recount modes
/// (the file patch that follows never starts), `line_too_long` in strict mode.
fn long_header_diff() -> Vec<u8> {
    let path = "d/".repeat(150);
    format!("--- a/{path}f\n+++ b/{path}f\n@@ -1 +1 @@\n-x\n+y\n").into_bytes()
}

fn diff_files() -> Files {
    let mut files = read(paths("corpora/udiff", |p| {
        p.extension().is_some_and(|e| e == "diff")
    }));
    assert!(files.len() >= 16, "{} diffs", files.len());
    files.push(("long_header (made)".into(), long_header_diff()));
    files
}

/// Extended CTL's corpus (valid, truncated, invalid) and strict CTL's valid files, which are
/// extended CTL too.
fn ctl_files() -> Files {
    let mut all = Vec::new();
    for dir in ["valid", "truncated", "invalid"] {
        all.extend(paths(&format!("corpora/ctl/extended/{dir}"), |_| true));
    }
    all.extend(paths("corpora/ctl/valid", |_| true));
    let files = read(all);
    assert!(files.len() >= 28, "{} CTL files", files.len());
    files
}

/// What one language's run over the files saw.
#[derive(Debug, Default)]
struct Seen {
    steps: usize,
    /// Files refused mid-stream (each at the parser's error).
    refused: usize,
    /// Files that ended complete, with EOS taken.
    complete: usize,
}

/// Checks every step of every file with `parser`'s recogniser; see the module docs.
fn check<P: PushParser>(shared: &Shared, parser: P, files: &Files) -> Seen {
    let vocab = &shared.vocab;
    let grammar = CompiledGrammar::new(Arc::clone(vocab), parser.recognizer());
    let mut cached = vec![0u32; vocab.mask_words()];
    let mut uncached = vec![0u32; vocab.mask_words()];
    let mut seen = Seen::default();
    let mut memo = Memo::default();
    for (name, bytes) in files {
        let tokens = shared.tokenize(bytes);
        let mut matcher = grammar.matcher();
        let mut previous: Option<Vec<u32>> = None;
        let mut at = 0usize; // bytes consumed before token `i`
        let mut refused = false;
        for (i, &token) in tokens.iter().enumerate() {
            let expected = check_step(
                shared,
                &mut memo,
                &matcher,
                &mut cached,
                &mut uncached,
                name,
                i,
            );
            seen.steps += 1;
            if let Some(before) = &previous {
                check_rollback(&matcher, before, &mut uncached, name, i);
            }
            let len = vocab.bytes(token).len();
            match matcher.consume(token) {
                Ok(()) => assert!(
                    bit(&expected, token),
                    "{name} step {i}: took a masked token"
                ),
                Err(err) => {
                    assert!(!bit(&expected, token), "{name} step {i}: refused {err}");
                    check_refusal(parser.clone(), bytes, at, len, err, name, i);
                    refused = true;
                    break;
                }
            }
            at += len;
            previous = Some(expected);
        }
        if refused {
            seen.refused += 1;
            continue;
        }
        // The whole file was taken: the parser says no error, and the end agrees with it.
        let step = tokens.len();
        let expected = check_step(
            shared,
            &mut memo,
            &matcher,
            &mut cached,
            &mut uncached,
            name,
            step,
        );
        seen.steps += 1;
        let mut whole = parser.clone();
        let pushed = whole.push(bytes, &mut |_| {});
        assert!(
            pushed.is_ok(),
            "{name}: the parser refuses what the masks took"
        );
        assert_eq!(
            matcher.accepting(),
            whole.accepting(),
            "{name}: accepting at the end"
        );
        let verdict = whole.finish(&mut |_| {}).verdict;
        assert_eq!(
            matches!(verdict, Verdict::Complete),
            matcher.accepting(),
            "{name}: {verdict:?}"
        );
        let Some(&eos) = vocab.eos().first() else {
            continue;
        };
        assert_eq!(bit(&expected, eos), matcher.accepting(), "{name}: EOS bit");
        if matcher.accepting() {
            matcher.consume(eos).unwrap();
            assert!(matcher.is_terminated());
            matcher.fill_mask(&mut cached).unwrap();
            let mut eos_only = vec![0u32; vocab.mask_words()];
            for &id in vocab.eos() {
                eos_only[id as usize / 32] |= 1 << (id % 32);
            }
            assert_eq!(
                cached, eos_only,
                "{name}: after EOS the mask holds EOS only"
            );
            seen.complete += 1;
        } else {
            let err = matcher.consume(eos).unwrap_err();
            assert_eq!(err, MaskError::EosTooEarly { token: eos }, "{name}");
        }
    }
    seen
}

/// The brute-force masks of the states seen so far, by the state without its offset.
///
/// A state repeats, offset aside, at every token boundary of a long content line; its mask is
/// computed once. That an offset changes no mask is checked too: every eighth repeat is
/// computed again and compared.
#[derive(Default)]
struct Memo {
    masks: HashMap<String, Vec<u32>>,
    repeats: usize,
}

/// The state's `Debug` text without its `consumed: N` field.
fn without_offset<R: Recognizer>(state: &R) -> String {
    let text = format!("{state:?}");
    let start = text.find("consumed: ").expect("the state has an offset");
    let end = start + text[start..].find(',').expect("a field follows it");
    format!("{}{}", &text[..start], &text[end..])
}

/// The step's masks are equal (the cached fill to the brute force at every step, the
/// uncached walk too at each new state), and its EOS bits are `accepting`; returns the mask.
/// A fill the cache missed is itself the uncached walk, so the walk is run again only after
/// a hit.
fn check_step<R: Recognizer>(
    shared: &Shared,
    memo: &mut Memo,
    matcher: &Matcher<R>,
    cached: &mut [u32],
    uncached: &mut [u32],
    name: &str,
    i: usize,
) -> Vec<u32> {
    let state = matcher.state();
    let misses = matcher.grammar().cache_stats().misses;
    matcher.fill_mask(cached).unwrap();
    let hit = matcher.grammar().cache_stats().misses == misses;
    let key = without_offset(&state);
    let expected = match memo.masks.get(&key) {
        Some(mask) => {
            memo.repeats += 1;
            if memo.repeats % 8 == 0 {
                let again = shared.brute_mask(&state);
                assert!(
                    &again == mask,
                    "{name} step {i}: the offset changes the mask"
                );
            }
            mask.clone()
        }
        None => {
            let mask = shared.brute_mask(&state);
            if hit {
                matcher.fill_mask_uncached(uncached).unwrap();
                assert!(uncached == mask, "{name} step {i}: walk vs brute force");
            }
            memo.masks.insert(key, mask.clone());
            mask
        }
    };
    if cached != expected {
        let differ: Vec<u32> = (0..shared.vocab.size())
            .filter(|&id| bit(cached, id) != bit(&expected, id))
            .take(8)
            .collect();
        panic!(
            "{name} step {i}: cache vs brute force, ids {differ:?} (cached: {:?}), state {state:?}",
            differ.iter().map(|&id| bit(cached, id)).collect::<Vec<_>>(),
        );
    }
    for &eos in shared.vocab.eos() {
        assert_eq!(
            bit(cached, eos),
            matcher.accepting(),
            "{name} step {i}: EOS"
        );
    }
    expected
}

/// Rolling back the last token gives back the previous step's exact mask.
fn check_rollback<R: Recognizer>(
    matcher: &Matcher<R>,
    before: &[u32],
    scratch: &mut [u32],
    name: &str,
    i: usize,
) {
    let mut again = matcher.clone();
    again.rollback(1).unwrap();
    again.fill_mask(scratch).unwrap();
    assert!(scratch == before, "{name} step {i}: rollback");
}

/// The token of `len` bytes at `at` was refused: the parser, fed the file up to its end,
/// errors inside it, at the byte the refusal names.
fn check_refusal<P: PushParser>(
    mut parser: P,
    bytes: &[u8],
    at: usize,
    len: usize,
    err: MaskError,
    name: &str,
    i: usize,
) {
    let MaskError::TokenRefused { offset, byte, .. } = err else {
        panic!("{name} step {i}: {err}");
    };
    let parse_err = parser
        .push(&bytes[..at + len], &mut |_| {})
        .expect_err("the parser takes a token the mask refused");
    assert_eq!(
        parse_err.offset,
        (at + offset as usize) as u64,
        "{name} step {i}: the refusal is at the parser's error ({parse_err:?}, {err})"
    );
    assert_eq!(byte, parse_err.byte, "{name} step {i}");
}

fn strict() -> StrictParser {
    StrictParser::new(StrictOptions::default())
}

/// The apply_patch checks for one vocabulary, both modes.
fn apply_patch(shared: &Shared) {
    let files = patch_files();
    let s = check(shared, strict(), &files);
    // Six invalid files, `invalid_utf8` among them, and the codex-only ones.
    assert!(s.refused >= 10 && s.complete >= 20, "strict {s:?}");
    let c = check(shared, CodexParser::new(), &files);
    assert!(c.complete > s.complete && c.refused >= 3, "codex {c:?}");
    assert!(s.steps > 1000 && c.steps > s.steps, "{s:?} {c:?}");
}

/// The unified-diff checks for one vocabulary, every mode, the default and the smallest
/// `max_line`.
fn udiff(shared: &Shared) {
    let files = diff_files();
    for max_line in [Limits::DEFAULT_MAX_LINE, Limits::MIN_MAX_LINE] {
        let limits = Limits { max_line };
        let s = check(shared, UdiffParser::new(Mode::Strict, limits), &files);
        let g = check(shared, UdiffParser::new(Mode::Git, limits), &files);
        let r = check(shared, UdiffParser::new(Mode::Recount, limits), &files);
        assert!(
            s.refused > g.refused && g.refused > r.refused,
            "{s:?} {g:?} {r:?}"
        );
        assert!(
            r.complete >= 15 && r.steps > 2000,
            "{max_line}: recount {r:?}"
        );
    }
}

/// The extended-CTL checks for one vocabulary, default and small limits.
fn ctl_extended(shared: &Shared) {
    let files = ctl_files();
    let parser = |limits| CtlParser::with_mode(limits, CtlMode::Extended);
    let d = check(shared, parser(CtlLimits::default()), &files);
    assert!(d.complete >= 15 && d.refused >= 8, "default {d:?}");
    let small = CtlLimits {
        max_line: 20,
        max_arg: 16,
    };
    let s = check(shared, parser(small), &files);
    assert!(s.refused > d.refused && s.steps > 200, "small {s:?}");
}

#[test]
fn ctl_extended_masks_byte_level() {
    ctl_extended(byte_level());
}

#[test]
fn ctl_extended_masks_cl100k() {
    ctl_extended(cl100k());
}

#[test]
fn ctl_extended_masks_o200k() {
    ctl_extended(o200k());
}

#[test]
fn apply_patch_masks_byte_level() {
    apply_patch(byte_level());
}

#[test]
fn apply_patch_masks_cl100k() {
    apply_patch(cl100k());
}

#[test]
fn apply_patch_masks_o200k() {
    apply_patch(o200k());
}

#[test]
fn udiff_masks_byte_level() {
    udiff(byte_level());
}

#[test]
fn udiff_masks_cl100k() {
    udiff(cl100k());
}

#[test]
fn udiff_masks_o200k() {
    udiff(o200k());
}

/// What a caller can observe of a matcher.
fn snapshot<R: Recognizer + PartialEq>(m: &Matcher<R>) -> (R, bool, usize, Vec<u32>) {
    let mut mask = vec![0; m.grammar().vocab().mask_words()];
    m.fill_mask(&mut mask).unwrap();
    (m.state(), m.is_terminated(), m.history_len(), mask)
}

/// Consumes `text`'s tokens one by one.
fn feed<R: Recognizer>(shared: &Shared, m: &mut Matcher<R>, text: &[u8]) {
    for token in shared.tokenize(text) {
        m.consume(token).unwrap();
    }
}

/// The id-level edges with strict apply_patch: EOS too early, specials, holes and ids past
/// the vocabulary refused mid-patch (each changing nothing), `forced_bytes` through the
/// matcher, EOS at the end and the EOS-only mask after it.
fn apply_patch_id_edges(shared: &Shared, other_special: u32, hole: Option<u32>) {
    let vocab = &shared.vocab;
    let eos = vocab.eos()[0];
    let grammar = CompiledGrammar::new(Arc::clone(vocab), strict().recognizer());
    let mut m = grammar.matcher();
    assert_eq!(
        m.consume(eos),
        Err(MaskError::EosTooEarly { token: eos }),
        "the empty text is no patch"
    );
    feed(shared, &mut m, b"*** Begin Patch\n");
    let mut forced = Vec::new();
    m.forced_bytes(&mut forced);
    assert_eq!(
        forced, b"*** ",
        "after the first line every marker starts with `*** `"
    );

    let before = snapshot(&m);
    let refusals = [
        (eos, MaskError::EosTooEarly { token: eos }),
        (
            other_special,
            MaskError::SpecialToken {
                token: other_special,
            },
        ),
        (
            vocab.size(),
            MaskError::TokenOutOfRange {
                token: vocab.size(),
                vocab_size: vocab.size(),
            },
        ),
        (
            u32::MAX,
            MaskError::TokenOutOfRange {
                token: u32::MAX,
                vocab_size: vocab.size(),
            },
        ),
    ];
    for (token, refusal) in refusals
        .into_iter()
        .chain(hole.map(|h| (h, MaskError::SpecialToken { token: h })))
    {
        assert_eq!(m.consume(token), Err(refusal));
        assert_eq!(snapshot(&m), before, "refusing {token} changed the matcher");
    }
    assert!(!bit(&before.3, eos) && !bit(&before.3, other_special));

    feed(shared, &mut m, b"*** Delete File: a.txt\n*** End Patch\n");
    assert!(m.accepting());
    let at_end = snapshot(&m);
    assert!(
        bit(&at_end.3, eos),
        "EOS is allowed at the end of a complete patch"
    );
    m.consume(eos).unwrap();
    assert!(m.is_terminated() && m.accepting());
    let mut mask = vec![0u32; vocab.mask_words()];
    m.fill_mask(&mut mask).unwrap();
    let allowed: Vec<u32> = (0..vocab.size()).filter(|&id| bit(&mask, id)).collect();
    assert_eq!(allowed, vocab.eos(), "after EOS the mask holds EOS only");
    let newline = shared.tokenize(b"\n")[0];
    assert_eq!(
        m.consume(newline),
        Err(MaskError::Terminated { token: newline })
    );
    // EOS after EOS is taken, the sequence still ended; rollback undoes it first.
    m.consume(eos).unwrap();
    assert!(m.is_terminated());
    m.rollback(1).unwrap();
    assert!(m.is_terminated(), "the first EOS is still there");
    m.rollback(1).unwrap();
    let back = snapshot(&m);
    assert_eq!(
        (back.0, back.1, back.3),
        (at_end.0, at_end.1, at_end.3),
        "rollback undoes EOS"
    );
}

#[test]
fn apply_patch_id_edges_o200k() {
    let shared = o200k();
    let prompt = shared.vocab.special_id("<|endofprompt|>").unwrap();
    apply_patch_id_edges(shared, prompt, Some(199_998));
}

#[test]
fn apply_patch_id_edges_byte_level() {
    let shared = byte_level();
    let bos = shared.vocab.special_id("<|begin_of_text|>").unwrap();
    apply_patch_id_edges(shared, bos, None);
}

/// Unified diff, every mode: EOS where the parser accepts, at the start and in a hunk one
/// line short (recount mode ignores counts: ends there; strict and git: refused, changing
/// nothing), and once the hunk is whole.
#[test]
fn udiff_eos_edges_cl100k() {
    let shared = cl100k();
    let eos = shared.vocab.eos()[0];
    let hunk = b"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-x\n+y\n";
    for mode in [Mode::Strict, Mode::Git, Mode::Recount] {
        let mut parser = UdiffParser::new(mode, Limits::default());
        let grammar = CompiledGrammar::new(Arc::clone(&shared.vocab), parser.recognizer());
        let mut m = grammar.matcher();
        assert_eq!(m.accepting(), parser.accepting(), "{mode:?}");
        feed(shared, &mut m, hunk);
        parser.push(hunk, &mut |_| {}).unwrap();
        assert_eq!(m.accepting(), parser.accepting(), "{mode:?}");
        assert_eq!(m.accepting(), mode == Mode::Recount, "{mode:?}");
        if !m.accepting() {
            let before = snapshot(&m);
            assert_eq!(m.consume(eos), Err(MaskError::EosTooEarly { token: eos }));
            assert_eq!(snapshot(&m), before);
        }
        feed(shared, &mut m, b" z\n");
        m.consume(eos).unwrap();
        assert!(m.is_terminated(), "{mode:?}");
    }
}
