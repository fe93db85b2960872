//! An audit of the masks against `masks.md` by its own definition, computed from the push
//! parser itself (not from its recogniser): a normal token is allowed iff a clone of the
//! parser takes all its bytes, an EOS token iff the parser accepts, nothing else ever. Over
//! made vocabularies with tokens longer than the trie's short rows, on hand-made inputs of
//! every language and mode (whole, cut and broken), with the refused token checked against the
//! parser's own error.

mod mask_support;

use std::sync::Arc;

use frontier::contract::PushParser;
use frontier::ctl::Limits;
use frontier::language::{ParserSpec, ParserVisitor};
use frontier::mask::{dynamic, MaskError, TokenKind, Vocabulary};
use mask_support::Rng;

/// The mask of `parser`'s state by definition.
fn parser_mask<P: PushParser>(vocab: &Vocabulary, parser: &P) -> Vec<u32> {
    let mut words = vec![0u32; vocab.mask_words()];
    for id in 0..vocab.size() {
        let allowed = match vocab.kind(id).unwrap() {
            TokenKind::Normal => parser.clone().push(vocab.bytes(id), &mut |_| {}).is_ok(),
            TokenKind::Eos => parser.accepting(),
            TokenKind::Special | TokenKind::Hole => false,
        };
        if allowed {
            words[id as usize / 32] |= 1 << (id % 32);
        }
    }
    words
}

/// Longest-match tokenization over the vocabulary's normal tokens (every byte is a token).
fn tokenize(vocab: &Vocabulary, bytes: &[u8]) -> Vec<u32> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let best = (0..vocab.size())
            .filter(|&id| vocab.kind(id) == Some(TokenKind::Normal))
            .filter(|&id| bytes[at..].starts_with(vocab.bytes(id)))
            .max_by_key(|&id| vocab.bytes(id).len())
            .expect("every byte is a token");
        at += vocab.bytes(best).len();
        out.push(best);
    }
    out
}

/// Walks `tokens` with a matcher and the parser side by side: every step's mask equals the
/// parser's by definition, and the first token the parser refuses is the one the matcher
/// refuses, at the parser's offset and byte.
struct Walk<'a> {
    spec: &'a ParserSpec,
    vocab: Arc<Vocabulary>,
    tokens: &'a [u32],
    what: &'a str,
}

impl ParserVisitor for Walk<'_> {
    type Output = ();
    fn visit<P: PushParser>(self, mut parser: P) {
        let grammar = dynamic::compile(self.spec, self.vocab.clone());
        let mut matcher = grammar.matcher();
        let mut words = vec![0u32; grammar.mask_words()];
        let mut text = 0u64;
        for (step, &token) in self.tokens.iter().enumerate() {
            matcher.fill_mask(&mut words).unwrap();
            let expected = parser_mask(&self.vocab, &parser);
            assert_eq!(words, expected, "{}: step {step}", self.what);
            let bytes = self.vocab.bytes(token);
            let mut next = parser.clone();
            match (next.push(bytes, &mut |_| {}), matcher.consume(token)) {
                (Ok(()), Ok(())) => {
                    parser = next;
                    text += bytes.len() as u64;
                }
                (Err(e), Err(MaskError::TokenRefused { offset, byte, .. })) => {
                    assert_eq!(
                        (e.offset, e.byte),
                        (text + u64::from(offset), byte),
                        "{}: step {step}",
                        self.what
                    );
                    return;
                }
                (p, m) => panic!("{}: step {step}: parser {p:?}, matcher {m:?}", self.what),
            }
        }
        matcher.fill_mask(&mut words).unwrap();
        assert_eq!(
            words,
            parser_mask(&self.vocab, &parser),
            "{}: end",
            self.what
        );
        assert_eq!(matcher.accepting(), parser.accepting(), "{}", self.what);
    }
}

/// Every single byte, then `words`, then a hole, a special token and an EOS token.
fn made_vocab(words: &[Vec<u8>]) -> (Arc<Vocabulary>, u32) {
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    tokens.extend(words.iter().cloned());
    tokens.push(Vec::new());
    let special = tokens.len() as u32;
    tokens.push(b"<s>".to_vec());
    let eos = tokens.len() as u32;
    tokens.push(b"</s>".to_vec());
    (
        Arc::new(Vocabulary::from_raw(&tokens, &[special], &[eos]).unwrap()),
        eos,
    )
}

fn walk(spec: &ParserSpec, vocab: &Arc<Vocabulary>, input: &[u8], what: &str) {
    let tokens = tokenize(vocab, input);
    spec.run(Walk {
        spec,
        vocab: vocab.clone(),
        tokens: &tokens,
        what,
    });
}

#[test]
fn tokens_longer_than_the_short_rows_are_judged_on_all_their_bytes() {
    // A body of 600 bytes, with tokens of 300 and 700 bytes that run into the next header.
    let body = vec![b'x'; 600];
    let mut stream = b"call c1 write\narg content 600\n".to_vec();
    stream.extend_from_slice(&body);
    stream.extend_from_slice(b"end\n");
    let mut long_into_end = vec![b'x'; 297];
    long_into_end.extend_from_slice(b"end");
    let mut too_long = vec![b'x'; 700];
    too_long.extend_from_slice(b"end\n");
    let mut heredoc = b"call c1 write\narg content <<EOF\n".to_vec();
    heredoc.extend_from_slice(&[b'y'; 400]);
    heredoc.extend_from_slice(b"\nEOF\nend\n");
    let mut y_then_tag = vec![b'y'; 299];
    y_then_tag.extend_from_slice(b"\nEOF\n");
    let words = vec![
        vec![b'x'; 300],
        long_into_end,
        too_long,
        vec![b'y'; 300],
        y_then_tag,
        b"call".to_vec(),
        b"end\n".to_vec(),
    ];
    let (vocab, _) = made_vocab(&words);
    for mode in ["strict", "extended"] {
        let spec = ParserSpec::parse("ctl", Some(mode)).unwrap();
        walk(&spec, &vocab, &stream, &format!("ctl {mode} counted"));
        if mode == "extended" {
            walk(&spec, &vocab, &heredoc, "ctl extended heredoc");
        }
    }
    let spec = ParserSpec::parse("ctl", Some("strict"))
        .unwrap()
        .with_ctl_limits(Limits {
            max_line: 40,
            max_arg: 650,
        });
    walk(&spec, &vocab, &stream, "ctl strict small limits");
}

fn corpus(dirs: &[&str]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for dir in dirs {
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file() && p.extension().is_none_or(|e| e != "md" && e != "sh"))
            .collect();
        paths.sort();
        for p in paths {
            let mut text = std::fs::read(p).unwrap();
            text.truncate(3000);
            out.push(text);
        }
    }
    out
}

/// Random walks from the mask (each step's mask checked by definition against the parser):
/// from the start of each corpus text after following it for a random number of tokens.
struct RandomWalk<'a> {
    spec: &'a ParserSpec,
    vocab: Arc<Vocabulary>,
    texts: &'a [Vec<u8>],
    seed: u64,
}

impl ParserVisitor for RandomWalk<'_> {
    type Output = usize;
    fn visit<P: PushParser>(self, start: P) -> usize {
        let grammar = dynamic::compile(self.spec, self.vocab.clone());
        let vocab = &self.vocab;
        let mut rng = Rng(self.seed);
        let mut words = vec![0u32; grammar.mask_words()];
        let mut steps = 0;
        for (ti, text) in self.texts.iter().enumerate() {
            let tokens = tokenize(vocab, text);
            let follow = rng.below(tokens.len() + 1);
            let mut parser = start.clone();
            let mut matcher = grammar.matcher();
            for &t in &tokens[..follow] {
                // A token the language refuses ends the text; the walk starts before it.
                let mut next = parser.clone();
                if next.push(vocab.bytes(t), &mut |_| {}).is_err() {
                    assert!(matcher.consume(t).is_err(), "text {ti}: token {t}");
                    break;
                }
                parser = next;
                matcher.consume(t).unwrap();
            }
            for _ in 0..60 {
                matcher.fill_mask(&mut words).unwrap();
                steps += 1;
                let expected = parser_mask(vocab, &parser);
                if words != expected {
                    let diff: Vec<String> = (0..vocab.size())
                        .filter(|&id| bit(&words, id) != bit(&expected, id))
                        .take(8)
                        .map(|id| {
                            format!(
                                "{id} got {} want {} {:?}",
                                bit(&words, id),
                                bit(&expected, id),
                                String::from_utf8_lossy(vocab.bytes(id))
                            )
                        })
                        .collect();
                    panic!("seed {} text {ti}: mask differs: {diff:?}", self.seed);
                }
                assert_eq!(matcher.accepting(), parser.accepting(), "text {ti}");
                let mut forced = Vec::new();
                matcher.forced_bytes(&mut forced);
                assert_eq!(forced, parser_forced(&parser), "text {ti}");
                let allowed: Vec<u32> = (0..vocab.size())
                    .filter(|&id| bit(&words, id) && vocab.kind(id) == Some(TokenKind::Normal))
                    .collect();
                if allowed.is_empty() {
                    break;
                }
                let t = allowed[rng.below(allowed.len())];
                parser.push(vocab.bytes(t), &mut |_| {}).unwrap();
                matcher.consume(t).unwrap();
            }
        }
        steps
    }
}

/// `masks.md`'s forced bytes from the parser: the longest string every viable continuation
/// starts with (none once the text may end here).
fn parser_forced<P: PushParser>(parser: &P) -> Vec<u8> {
    let mut parser = parser.clone();
    let mut out = Vec::new();
    while !parser.accepting() && parser.allowed().len() == 1 && out.len() < 4096 {
        let byte = parser.allowed().iter().next().unwrap();
        parser.push(&[byte], &mut |_| {}).unwrap();
        out.push(byte);
    }
    out
}

fn bit(words: &[u32], id: u32) -> bool {
    words[id as usize / 32] & (1 << (id % 32)) != 0
}

/// Slices of the texts of 1 to 600 bytes (a few over the trie's 256 short rows), keywords
/// and odd bytes.
fn random_words(rng: &mut Rng, texts: &[Vec<u8>], n: usize) -> Vec<Vec<u8>> {
    let keywords: &[&[u8]] = &[
        b"*** ",
        b"*** End Patch",
        b"*** End Patch\n",
        b"@@ ",
        b"@@\n",
        b"\n\n",
        b"end\n",
        b"call ",
        b"arg ",
        b" = ",
        b" <<EOF\n",
        b"EOF\n",
        b"\nEOF\n",
        b"diff --git a/",
        b"--- a/",
        b"+++ b/",
        b"\n@@ -1",
        b",0 +",
        b" @@\n",
        b"\\ No newline",
        b"\r\n",
        b"\xe2\x80",
        b"\x94",
        b"\xff",
        b"\x00",
        b"\n+",
        b"\n-",
        b"\n ",
    ];
    let mut out = Vec::new();
    while out.len() < n {
        let word = match rng.below(6) {
            0 => keywords[rng.below(keywords.len())].to_vec(),
            _ => {
                let text = &texts[rng.below(texts.len())];
                let longest = if rng.below(10) == 0 { 600 } else { 12 };
                let len = 2 + rng.below(longest);
                if text.len() <= len {
                    continue;
                }
                let at = rng.below(text.len() - len);
                text[at..at + len].to_vec()
            }
        };
        out.push(word);
    }
    out
}

#[test]
fn random_walks_match_the_parsers_own_definition() {
    let all = [
        ("ctl", "strict", &["corpora/ctl/valid"][..]),
        (
            "ctl",
            "extended",
            &["corpora/ctl/extended/valid", "corpora/ctl/valid"][..],
        ),
        ("apply_patch", "strict", &["corpora/apply_patch"][..]),
        ("apply_patch", "codex", &["corpora/apply_patch"][..]),
        ("udiff", "strict", &["corpora/udiff"][..]),
        ("udiff", "git", &["corpora/udiff"][..]),
        ("udiff", "recount", &["corpora/udiff"][..]),
    ];
    let seeds: u64 = std::env::var("MASK_AUDIT_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    for seed in 0..seeds {
        let mut rng = Rng(0x5eed_cafe ^ (seed * 0x9e37_79b9));
        for (lang, mode, dirs) in all {
            let texts = corpus(dirs);
            let words = random_words(&mut rng, &texts, 300);
            let (vocab, _) = made_vocab(&words);
            let mut specs = vec![ParserSpec::parse(lang, Some(mode)).unwrap()];
            if lang == "ctl" {
                specs.push(specs[0].with_ctl_limits(Limits {
                    max_line: 24,
                    max_arg: 300,
                }));
            }
            for spec in &specs {
                let steps = spec.run(RandomWalk {
                    spec,
                    vocab: vocab.clone(),
                    texts: &texts,
                    seed: rng.next(),
                });
                eprintln!("{lang}/{mode}: {steps} steps");
            }
        }
    }
}

/// The same walks over cl100k_base (`MASK_AUDIT_CL100K=N` seeds; off by default, slow), or
/// o200k_base with `MASK_AUDIT_O200K=1`.
#[test]
fn random_walks_over_cl100k() {
    use frontier::mask::vocab::tiktoken::{self, Builtin};
    let seeds: u64 = std::env::var("MASK_AUDIT_CL100K")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    if seeds == 0 {
        return;
    }
    let which = match std::env::var("MASK_AUDIT_O200K").as_deref() {
        Ok("1") => Builtin::O200kBase,
        _ => Builtin::Cl100kBase,
    };
    let vocab = Arc::new(tiktoken::builtin(which).unwrap());
    let all = [
        ("ctl", "strict", &["corpora/ctl/valid"][..]),
        ("ctl", "extended", &["corpora/ctl/extended/valid"][..]),
        ("apply_patch", "strict", &["corpora/apply_patch"][..]),
        ("apply_patch", "codex", &["corpora/apply_patch"][..]),
        ("udiff", "strict", &["corpora/udiff"][..]),
        ("udiff", "git", &["corpora/udiff"][..]),
        ("udiff", "recount", &["corpora/udiff"][..]),
    ];
    for seed in 0..seeds {
        for (lang, mode, dirs) in all {
            let texts = corpus(dirs);
            let spec = ParserSpec::parse(lang, Some(mode)).unwrap();
            let mut specs = vec![spec];
            if lang == "ctl" {
                specs.push(spec.with_ctl_limits(Limits {
                    max_line: 20,
                    max_arg: 100,
                }));
            }
            for spec in &specs {
                let steps = spec.run(RandomWalk {
                    spec,
                    vocab: vocab.clone(),
                    texts: &texts,
                    seed: 77 + seed * 1_000_003,
                });
                eprintln!("cl100k {lang}/{mode}: {steps} steps");
            }
        }
    }
}

/// A byte-level `tokenizer.json` (DeepSeek's shape) whose model vocabulary holds its special
/// tokens as written, with characters outside GPT-2's byte map: `masks.md`'s "added tokens
/// marked special are special" makes them special tokens, not a `bad_token` error.
#[test]
fn special_tokens_written_into_a_byte_level_vocabulary_are_special() {
    use frontier::mask::vocab::hf::{self, EosSpec};
    use frontier::mask::VocabErrorKind;
    let bos = "<｜begin▁of▁sentence｜>";
    let eos = "<｜end▁of▁sentence｜>";
    let json = |extra_model: &str, added: &str| {
        format!(
            r#"{{"added_tokens": [{added}],
                "pre_tokenizer": {{"type": "ByteLevel"}}, "decoder": {{"type": "ByteLevel"}},
                "model": {{"type": "BPE", "unk_token": null, "vocab": {{
                    "{bos}": 0, "{eos}": 1, "a": 2, "b": 3, "ab": 4, "Ġ": 5{extra_model}}}}}}}"#
        )
    };
    let added = format!(
        r#"{{"id": 0, "content": "{bos}", "special": true}},
           {{"id": 1, "content": "{eos}", "special": true}}"#
    );
    let vocab = hf::from_json_text(&json("", &added), &[EosSpec::Name(eos.into())]).unwrap();
    assert_eq!(vocab.size(), 6);
    assert_eq!(vocab.kind(0), Some(TokenKind::Special));
    assert_eq!(vocab.kind(1), Some(TokenKind::Eos));
    assert_eq!(vocab.eos(), [1]);
    assert_eq!(vocab.bytes(4), b"ab");
    assert_eq!(vocab.bytes(5), b" ");
    // An added token that is not special gives the id its content's bytes.
    let added_normal = format!(
        r#"{{"id": 0, "content": "{bos}", "special": false}},
           {{"id": 1, "content": "{eos}", "special": true}}"#
    );
    let vocab = hf::from_json_text(&json("", &added_normal), &[]).unwrap();
    assert_eq!(vocab.kind(0), Some(TokenKind::Normal));
    assert_eq!(vocab.bytes(0), bos.as_bytes());
    // Without an added token the id has no meaning: still an error, naming the token.
    let err = hf::from_json_text(&json("", ""), &[]).unwrap_err();
    assert_eq!(err.kind, VocabErrorKind::BadToken, "{err}");
    assert!(err.message.contains("begin"), "{err}");
    // Nor may another model token take the id.
    let err = hf::from_json_text(&json(r#", "c": 0"#, &added), &[]).unwrap_err();
    assert_eq!(err.kind, VocabErrorKind::DuplicateId, "{err}");
    // The mask never allows the special ones and allows EOS only at the end.
    let vocab =
        Arc::new(hf::from_json_text(&json("", &added), &[EosSpec::Name(eos.into())]).unwrap());
    let spec = ParserSpec::parse("ctl", None).unwrap();
    let grammar = dynamic::compile(&spec, vocab);
    let mut words = vec![0u32; grammar.mask_words()];
    grammar.matcher().fill_mask(&mut words).unwrap();
    assert_eq!(words, [0b10], "the empty CTL stream: EOS only");
}

fn frontier(args: &[&std::ffi::OsStr]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_frontier"))
        .args(args)
        .output()
        .unwrap()
}

/// A `.tiktoken` rank file given by path (`masks.md`) loads whatever its name: tiktoken's own
/// cache keeps the files under a hash, with no extension. A `tokenizer.json` is still one.
#[test]
fn a_rank_file_by_path_needs_no_extension() {
    use base64::Engine as _;
    let dir = tempfile::tempdir().unwrap();
    let ranks: [&[u8]; 7] = [b"call", b" c1", b" read", b"\n", b"end", b"x", b"c"];
    let engine = base64::engine::general_purpose::STANDARD;
    let text: String = ranks
        .iter()
        .enumerate()
        .map(|(rank, bytes)| format!("{} {rank}\n", engine.encode(bytes)))
        .collect();
    let hashed = dir.path().join("9b5ad71b2ce5302211f9c61530b329a4922fc6a4");
    let named = dir.path().join("ctl.tiktoken");
    std::fs::write(&hashed, &text).unwrap();
    std::fs::write(&named, &text).unwrap();
    let mask = |vocab: &std::path::Path, ids: &str| {
        let file = dir.path().join("ids.json");
        std::fs::write(&file, ids).unwrap();
        frontier(&[
            "mask".as_ref(),
            "--lang".as_ref(),
            "ctl".as_ref(),
            "--vocab".as_ref(),
            vocab.as_os_str(),
            "--token-ids".as_ref(),
            file.as_os_str(),
        ])
    };
    let steps = |out: std::process::Output| {
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        lines.pop(); // the summary's times
        lines
    };
    // `<|endoftext|>` is id 7, past the ranks.
    let call = "[0, 1, 2, 3, 4, 3, 7]";
    let by_hash = steps(mask(&hashed, call));
    assert_eq!(by_hash, steps(mask(&named, call)));
    assert_eq!(by_hash.len(), 8);
    assert!(
        by_hash[7].contains(r#""allowed":1,"accepting":true"#),
        "{by_hash:?}"
    );
    // EOS too early: the message counts the text's bytes in the right number.
    for (ids, bytes) in [("[6, 7]", "1 byte,"), ("[0, 7]", "4 bytes,")] {
        let out = mask(&hashed, ids);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!("the text: {bytes} not a sentence")),
            "{stderr}"
        );
    }
    // A file that is not a rank file is read as a tokenizer.json, and says so.
    let not_json = dir.path().join("vocab");
    std::fs::write(&not_json, "hello world\n").unwrap();
    let out = mask(&not_json, "[]");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("not_tokenizer_json"));
}

/// Vocabularies at the edges: no id at all, only special tokens and holes, one token of the
/// longest length allowed; every language and mode, masks by definition, nothing panics.
#[test]
fn edge_vocabularies_have_exact_masks() {
    let huge = [
        b"call c1 x\narg k 70000\n".to_vec(),
        vec![b'z'; 65_535 - 22],
    ]
    .concat();
    let vocabs: Vec<(&str, Vocabulary)> = vec![
        ("empty", Vocabulary::from_raw(&[], &[], &[]).unwrap()),
        (
            "eos only",
            Vocabulary::from_raw(&[b"</s>".to_vec()], &[], &[0]).unwrap(),
        ),
        (
            "holes and specials",
            Vocabulary::from_raw(
                &[vec![], b"<s>".to_vec(), vec![], b"</s>".to_vec()],
                &[1],
                &[3],
            )
            .unwrap(),
        ),
        (
            "one huge token",
            Vocabulary::from_raw(&[huge.clone(), b"z".to_vec(), b"</s>".to_vec()], &[], &[2])
                .unwrap(),
        ),
    ];
    let specs = [
        ("ctl", "strict"),
        ("ctl", "extended"),
        ("apply_patch", "strict"),
        ("apply_patch", "codex"),
        ("udiff", "strict"),
        ("udiff", "git"),
        ("udiff", "recount"),
    ];
    for (name, vocab) in vocabs {
        let vocab = Arc::new(vocab);
        for (lang, mode) in specs {
            let spec = ParserSpec::parse(lang, Some(mode))
                .unwrap()
                .with_ctl_limits(Limits {
                    max_line: 256,
                    max_arg: 100_000,
                });
            struct Edge<'a>(&'a ParserSpec, Arc<Vocabulary>, String);
            impl ParserVisitor for Edge<'_> {
                type Output = ();
                fn visit<P: PushParser>(self, parser: P) {
                    let Edge(spec, vocab, what) = self;
                    let grammar = dynamic::compile(spec, vocab.clone());
                    let mut m = grammar.matcher();
                    let mut words = vec![0u32; grammar.mask_words()];
                    assert_eq!(words.len(), (vocab.size() as usize).div_ceil(32));
                    m.fill_mask(&mut words).unwrap();
                    assert_eq!(words, parser_mask(&vocab, &parser), "{what}");
                    // Every allowed normal token taken in turn, then the mask again.
                    let mut p = parser.clone();
                    for id in 0..vocab.size() {
                        if bit(&words, id) && vocab.kind(id) == Some(TokenKind::Normal) {
                            m.consume(id).unwrap();
                            p.push(vocab.bytes(id), &mut |_| {}).unwrap();
                            let mut after = vec![0u32; words.len()];
                            m.fill_mask(&mut after).unwrap();
                            assert_eq!(after, parser_mask(&vocab, &p), "{what}: after {id}");
                            break;
                        }
                    }
                    // Stuck: not ended, and no token (EOS included) may come.
                    let mut now = vec![0u32; words.len()];
                    m.fill_mask(&mut now).unwrap();
                    assert_eq!(m.is_error(), now.iter().all(|&w| w == 0), "{what}");
                    assert!(m.consume(vocab.size()).is_err());
                    assert!(m.consume(u32::MAX).is_err());
                }
            }
            spec.run(Edge(&spec, vocab.clone(), format!("{name}: {lang}/{mode}")));
        }
    }
}
