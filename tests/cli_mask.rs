//! `frontier mask` as a command: every step's line agrees with the library's matcher, `--text`
//! tokenizes with the vocabulary's own tokenizer, a refused token stops the run with exit 1,
//! and bad arguments are usage errors.

mod mask_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use frontier::language::ParserSpec;
use frontier::mask::vocab::tiktoken::{self, Builtin};
use frontier::mask::{dynamic, Vocabulary};
use sha2::{Digest, Sha256};

fn frontier(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_frontier"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

fn lines(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// What the library says at every step: (allowed count, accepting, sha256 of the LE words).
fn expected(spec: &ParserSpec, vocab: Arc<Vocabulary>, tokens: &[u32]) -> Vec<(u64, bool, String)> {
    let grammar = dynamic::compile(spec, vocab);
    let mut matcher = grammar.matcher();
    let mut words = vec![0u32; grammar.mask_words()];
    let mut out = Vec::new();
    for step in 0..=tokens.len() {
        matcher.fill_mask(&mut words).unwrap();
        let mut hash = Sha256::new();
        for w in &words {
            hash.update(w.to_le_bytes());
        }
        let hex: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
        let count = words.iter().map(|w| w.count_ones() as u64).sum();
        out.push((count, matcher.accepting(), hex));
        if let Some(&t) = tokens.get(step) {
            matcher.consume(t).unwrap();
        }
    }
    out
}

fn check_steps(out: &Output, expected: &[(u64, bool, String)]) {
    let lines = lines(out);
    assert_eq!(
        lines.len(),
        expected.len() + 1,
        "a line per step and the summary"
    );
    for (i, (line, (count, accepting, hex))) in lines.iter().zip(expected).enumerate() {
        assert_eq!(line["step"], i as u64);
        assert_eq!(line["allowed"], *count, "step {i}");
        assert_eq!(line["accepting"], *accepting, "step {i}");
        assert_eq!(line["sha256"], hex.as_str(), "step {i}");
    }
    let summary = &lines.last().unwrap()["summary"];
    assert_eq!(
        summary["steps"],
        expected.len() as u64 - 1,
        "the tokens consumed"
    );
    for key in ["p50_us", "p99_us", "p999_us", "max_us"] {
        assert!(summary[key].as_f64().unwrap() >= 0.0, "{key}");
    }
    assert!(summary["p50_us"].as_f64() <= summary["max_us"].as_f64());
}

#[test]
fn every_step_agrees_with_the_library_for_each_language() {
    let dir = tempfile::tempdir().unwrap();
    let vocab = Arc::new(tiktoken::builtin(Builtin::O200kBase).unwrap());
    for (lang, file) in [
        ("ctl", "corpora/ctl/valid/05_apply_patch.ctl"),
        ("apply_patch", "corpora/apply_patch/multi_chunk.patch"),
        ("udiff", "corpora/udiff/git_basic.diff"),
    ] {
        let text =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
        let tokens = vocab.encode(&text).unwrap();
        let ids = write(
            dir.path(),
            "ids.json",
            &serde_json::to_string(&tokens).unwrap(),
        );
        let spec = ParserSpec::parse(lang, None).unwrap();
        let want = expected(&spec, vocab.clone(), &tokens);
        let args = ["mask", "--lang", lang, "--vocab", "tiktoken:o200k_base"];
        let out = frontier(&[&args[..], &["--token-ids", ids.to_str().unwrap()]].concat());
        assert_eq!(out.status.code(), Some(0), "{lang}: {:?}", out);
        check_steps(&out, &want);
        // --text gives the same ids, so the same lines; --reps keeps the masks.
        let by_text = frontier(&[&args[..], &["--text", file, "--reps", "2"]].concat());
        assert_eq!(by_text.status.code(), Some(0));
        check_steps(&by_text, &want);
        let last = lines(&out).pop().unwrap();
        assert_eq!(last["summary"]["steps"], tokens.len() as u64);
        // `-` is standard input, for the ids and for the text.
        for (flag, stdin) in [
            ("--token-ids", serde_json::to_string(&tokens).unwrap()),
            ("--text", text.clone()),
        ] {
            let piped = with_stdin(&[&args[..], &[flag, "-"]].concat(), stdin.as_bytes());
            assert_eq!(piped.status.code(), Some(0), "{lang} {flag} -: {piped:?}");
            check_steps(&piped, &want);
        }
    }
}

fn with_stdin(args: &[&str], stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_frontier"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn a_refused_token_is_named_and_stops_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let vocab = tiktoken::builtin(Builtin::Cl100kBase).unwrap();
    let mut tokens = vocab.encode("call c1 read_file\n").unwrap();
    let good = tokens.len();
    tokens.extend(vocab.encode("\n\n").unwrap()); // a blank line is not CTL
    let ids = write(
        dir.path(),
        "ids.json",
        &serde_json::to_string(&tokens).unwrap(),
    );
    let args = ["mask", "--lang", "ctl", "--vocab", "tiktoken:cl100k_base"];
    let out = frontier(&[&args[..], &["--token-ids", ids.to_str().unwrap()]].concat());
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "step {good}: token_refused: token {}",
            tokens[good]
        )),
        "{stderr}"
    );
    let lines = lines(&out);
    assert_eq!(lines.len(), good + 2, "steps 0..={good} and the summary");
    assert_eq!(lines.last().unwrap()["summary"]["steps"], good as u64);

    // An id past the vocabulary, and EOS too early.
    let eos = vocab.eos()[0];
    for (bad, kind) in [(vocab.size(), "token_out_of_range"), (eos, "eos_too_early")] {
        let ids = write(dir.path(), "bad.json", &format!("[{}, {bad}]", tokens[0]));
        let out = frontier(&[&args[..], &["--token-ids", ids.to_str().unwrap()]].concat());
        assert_eq!(out.status.code(), Some(1));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&format!("step 1: {kind}")), "{stderr}");
    }
}

#[test]
fn eos_ends_a_complete_stream_and_can_be_chosen() {
    let dir = tempfile::tempdir().unwrap();
    let vocab = tiktoken::builtin(Builtin::Cl100kBase).unwrap();
    let mut tokens = vocab.encode("call c1 x\nend\n").unwrap();
    let eos = vocab.special_id("<|endoftext|>").unwrap();
    tokens.push(eos);
    let ids = write(
        dir.path(),
        "ids.json",
        &serde_json::to_string(&tokens).unwrap(),
    );
    let args = ["mask", "--lang", "ctl", "--vocab", "tiktoken:cl100k_base"];
    let out = frontier(&[&args[..], &["--token-ids", ids.to_str().unwrap()]].concat());
    assert_eq!(out.status.code(), Some(0));
    let lines = lines(&out);
    // After EOS the mask holds EOS only.
    assert_eq!(lines[tokens.len()]["allowed"], 1);
    // With another EOS chosen, <|endoftext|> is an ordinary special token: refused.
    let other = vocab.special_id("<|endofprompt|>").unwrap().to_string();
    let out = frontier(
        &[
            &args[..],
            &["--token-ids", ids.to_str().unwrap(), "--eos", &other],
        ]
        .concat(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("special_token"));
}

#[test]
fn a_tokenizer_json_is_a_vocabulary_with_its_own_tokenizer() {
    let dir = tempfile::tempdir().unwrap();
    // The test's Llama-3-style file, with the fields `tokenizers` also requires of real ones.
    let mut full: serde_json::Value =
        serde_json::from_str(&mask_support::byte_level_json()).unwrap();
    for added in full["added_tokens"].as_array_mut().unwrap() {
        for field in ["single_word", "lstrip", "rstrip"] {
            added[field] = false.into();
        }
    }
    full["pre_tokenizer"]["pretokenizers"][0]["invert"] = false.into();
    let json = write(dir.path(), "tokenizer.json", &full.to_string());
    let text = write(dir.path(), "in.ctl", "call c1 read_file\nend\n");
    let tokenizer = tokenizers::Tokenizer::from_file(&json).unwrap();
    let ids: Vec<u32> = tokenizer
        .encode("call c1 read_file\nend\n", false)
        .unwrap()
        .get_ids()
        .to_vec();
    assert!(ids.len() > 5, "{ids:?}");
    let vocab = Arc::new(frontier::mask::vocab::hf::from_file(&json, &[]).unwrap());
    let want = expected(&ParserSpec::parse("ctl", None).unwrap(), vocab, &ids);
    let out = frontier(&[
        "mask",
        "--lang",
        "ctl",
        "--vocab",
        json.to_str().unwrap(),
        "--text",
        text.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    check_steps(&out, &want);
}

/// A `.tiktoken` file's text: one `base64 SP rank` line per token, ranks `0 …` in order.
fn rank_text(tokens: &[&[u8]]) -> String {
    use base64::Engine as _;
    let engine = base64::engine::general_purpose::STANDARD;
    tokens
        .iter()
        .enumerate()
        .map(|(rank, bytes)| format!("{} {rank}\n", engine.encode(bytes)))
        .collect()
}

/// CTL pieces as ranks 0-7; `<|endoftext|>` is id 8, past them.
const CTL_RANKS: [&[u8]; 8] = [b"call", b" ", b"c1", b" read", b"\n", b"end", b"\n\n", b"x"];

#[test]
fn a_tiktoken_rank_file_by_path_is_a_vocabulary() {
    let dir = tempfile::tempdir().unwrap();
    let rank_file = write(dir.path(), "ctl.tiktoken", &rank_text(&CTL_RANKS));
    let vocab = Arc::new(tiktoken::from_path(&rank_file, &[]).unwrap());
    assert_eq!((vocab.size(), vocab.eos()), (9, &[8][..]));
    let tokens = [0, 1, 2, 3, 4, 5, 4, 8];
    let ids = write(
        dir.path(),
        "ids.json",
        &serde_json::to_string(&tokens).unwrap(),
    );
    let want = expected(&ParserSpec::parse("ctl", None).unwrap(), vocab, &tokens);
    assert!(want.last().unwrap().1, "the call ends with EOS");
    // A path ending in `.tiktoken`, and `tiktoken:PATH`.
    let plain = rank_file.to_str().unwrap().to_owned();
    for given in [plain.clone(), format!("tiktoken:{plain}")] {
        let out = frontier(&[
            "mask",
            "--lang",
            "ctl",
            "--vocab",
            &given,
            "--token-ids",
            ids.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{given}: {out:?}");
        check_steps(&out, &want);
    }
    // --eos replaces <|endoftext|>: id 10, past the ranks, becomes the EOS; 8 is a hole.
    let with_eos = write(dir.path(), "eos.json", "[0, 1, 2, 3, 4, 5, 4, 10]");
    let out = frontier(&[
        "mask",
        "--lang",
        "ctl",
        "--vocab",
        &plain,
        "--eos",
        "10",
        "--token-ids",
        with_eos.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let steps = lines(&out);
    assert_eq!(steps[8]["accepting"], true);
    let old_eos = write(dir.path(), "old.json", "[0, 1, 2, 3, 4, 5, 4, 8]");
    let out = frontier(&[
        "mask",
        "--lang",
        "ctl",
        "--vocab",
        &plain,
        "--eos",
        "10",
        "--token-ids",
        old_eos.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "8 is no token now: {out:?}");
    // A file with no split pattern has no tokenizer: --text is refused, saying why.
    let text = write(dir.path(), "call.ctl", "call c1 read\nend\n");
    let out = frontier(&[
        "mask",
        "--lang",
        "ctl",
        "--vocab",
        &plain,
        "--text",
        text.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("split pattern") && stderr.contains("--token-ids"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn openais_own_rank_file_is_the_builtin_encoding_and_tokenizes_text() {
    let dir = tempfile::tempdir().unwrap();
    let builtin = tiktoken::builtin(Builtin::Cl100kBase).unwrap();
    let ranks: Vec<&[u8]> = builtin.normal_tokens().map(|(_, bytes)| bytes).collect();
    let rank_file = write(dir.path(), "cl100k_base.tiktoken", &rank_text(&ranks));
    let file = "corpora/ctl/valid/05_apply_patch.ctl";
    let by_name = frontier(&[
        "mask",
        "--lang",
        "ctl",
        "--vocab",
        "tiktoken:cl100k_base",
        "--text",
        file,
    ]);
    assert_eq!(by_name.status.code(), Some(0), "{by_name:?}");
    let by_path = frontier(&[
        "mask",
        "--lang",
        "ctl",
        "--vocab",
        rank_file.to_str().unwrap(),
        "--text",
        file,
    ]);
    assert_eq!(by_path.status.code(), Some(0), "{by_path:?}");
    let steps = |out: &Output| {
        let mut l = lines(out);
        l.pop(); // the summary's times differ
        l
    };
    assert_eq!(steps(&by_path), steps(&by_name));
}

#[test]
fn bad_arguments_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let ids = write(dir.path(), "ids.json", "[1, 2");
    let not_json = write(dir.path(), "tokenizer.json", "not json");
    let bad_ranks = write(dir.path(), "bad.tiktoken", "SGVsbG8= 0\nnot-a-line\n");
    let cases: Vec<Vec<&str>> = vec![
        vec!["--vocab", "tiktoken:p50k_base", "--token-ids", "x"],
        vec!["--vocab", "missing.tiktoken", "--token-ids", "x"],
        vec!["--vocab", bad_ranks.to_str().unwrap(), "--token-ids", "x"],
        vec![
            "--vocab",
            "tiktoken:o200k_base",
            "--token-ids",
            ids.to_str().unwrap(),
        ],
        vec!["--vocab", not_json.to_str().unwrap(), "--token-ids", "x"],
        vec!["--vocab", "tiktoken:o200k_base"],
        vec![
            "--vocab",
            "tiktoken:o200k_base",
            "--token-ids",
            "x",
            "--text",
            "y",
        ],
        vec![
            "--vocab",
            "tiktoken:o200k_base",
            "--token-ids",
            "x",
            "--reps",
            "0",
        ],
        vec![
            "--vocab",
            "tiktoken:o200k_base",
            "--token-ids",
            "x",
            "--eos",
            "0",
        ],
        vec![
            "--vocab",
            "tiktoken:o200k_base",
            "--token-ids",
            "x",
            "--mode",
            "loose",
        ],
    ];
    for case in cases {
        let out = frontier(&[&["mask", "--lang", "ctl"][..], &case].concat());
        assert_eq!(out.status.code(), Some(2), "{case:?}: {out:?}");
        assert!(!out.stderr.is_empty(), "{case:?}");
        assert!(out.stdout.is_empty(), "{case:?}");
    }
}

/// A refused token's message says where the text the tokens spell fails, as `frontier check`
/// reports the same bytes (`contract.md`: the absolute offset, the byte, the kind), and an id
/// too large for `u32` is refused at its step like any id past the vocabulary.
#[test]
fn a_refused_token_says_where_the_text_fails() {
    let dir = tempfile::tempdir().unwrap();
    let vocab = tiktoken::builtin(Builtin::Cl100kBase).unwrap();
    let args = ["mask", "--lang", "ctl", "--vocab", "tiktoken:cl100k_base"];
    let head = "call c1 read_file\narg path 3\nabc";
    let mut tokens: Vec<u64> = vocab
        .encode(head)
        .unwrap()
        .into_iter()
        .map(u64::from)
        .collect();
    let good = tokens.len();
    // `xend` after the body: `x` is no `arg` or `end`.
    let bad = vocab.encode("xend\n").unwrap()[0];
    tokens.push(bad.into());
    let ids = write(
        dir.path(),
        "ids.json",
        &serde_json::to_string(&tokens).unwrap(),
    );
    let out = frontier(&[&args[..], &["--token-ids", ids.to_str().unwrap()]].concat());
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    // What `check` says of the text up to the token's refused byte.
    let mut text = head.as_bytes().to_vec();
    text.extend_from_slice(vocab.bytes(bad));
    let file = dir.path().join("text.ctl");
    std::fs::write(&file, &text).unwrap();
    let check = frontier(&["check", "--lang", "ctl", "--json", file.to_str().unwrap()]);
    let report: serde_json::Value = serde_json::from_slice(&check.stdout).unwrap();
    let error = &report["error"];
    let (offset, byte, kind) = (
        error["offset"].as_u64().unwrap(),
        error["byte"].as_u64().unwrap(),
        error["kind"].as_str().unwrap(),
    );
    assert_eq!(offset, head.len() as u64);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("step {good}: token_refused: token {bad}")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("the text: {kind} at byte {offset} (0x{byte:02x}")),
        "{stderr}"
    );
    // EOS before the call's end: how far the text got.
    let eos = vocab.eos()[0];
    let early = write(
        dir.path(),
        "early.json",
        &serde_json::to_string(&[&tokens[..good], &[eos.into()]].concat()).unwrap(),
    );
    let out = frontier(&[&args[..], &["--token-ids", early.to_str().unwrap()]].concat());
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("step {good}: eos_too_early"))
            && stderr.contains(&format!("{} bytes, not a sentence", head.len())),
        "{stderr}"
    );
    // An id past u32: refused at its step (exit 1), not a usage error.
    let huge = write(
        dir.path(),
        "huge.json",
        &format!("[{}, 4294967296]", tokens[0]),
    );
    let out = frontier(&[&args[..], &["--token-ids", huge.to_str().unwrap()]].concat());
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("step 1: token_out_of_range: token 4294967296"),
        "{stderr}"
    );
    let lines = lines(&out);
    assert_eq!(lines.len(), 3, "steps 0 and 1, then the summary");
    assert_eq!(lines[2]["summary"]["steps"], 1);
    // Past u64 too; a negative or fractional number is no token id at all (a usage error).
    let past = write(
        dir.path(),
        "past.json",
        &format!("[{}, 18446744073709551616]", tokens[0]),
    );
    let out = frontier(&[&args[..], &["--token-ids", past.to_str().unwrap()]].concat());
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("step 1: token_out_of_range: token 18446744073709551616 is past"),
        "{stderr}"
    );
    for (name, ids) in [
        ("neg.json", "[0, -1]"),
        ("frac.json", "[0, 1.5]"),
        ("exp.json", "[1e3]"),
    ] {
        let file = write(dir.path(), name, ids);
        let out = frontier(&[&args[..], &["--token-ids", file.to_str().unwrap()]].concat());
        assert_eq!(out.status.code(), Some(2), "{ids}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("is not a token id"), "{ids}: {stderr}");
    }
}

/// `--text` masks the file's bytes: a tokenizer that puts a dummy space before the text
/// (Llama-2's `Prepend` of `▁`, a `Metaspace` prepend scheme, a byte-level
/// `add_prefix_space`) encodes it with that space turned off, so a CTL file is not refused at
/// step 0 for a space it does not have.
#[test]
fn text_is_encoded_without_the_tokenizers_prefix_space() {
    let dir = tempfile::tempdir().unwrap();
    let added = |id: u32, content: &str| {
        serde_json::json!({"id": id, "content": content, "special": true, "single_word": false,
                           "lstrip": false, "rstrip": false, "normalized": false})
    };
    // Llama-2 style: `<unk> <s> </s>`, the 256 byte tokens, a few pieces; no merges, so words
    // fall back to pieces and bytes.
    let mut vocab = serde_json::Map::new();
    for (i, name) in ["<unk>", "<s>", "</s>"].iter().enumerate() {
        vocab.insert(name.to_string(), (i as u32).into());
    }
    for byte in 0..=255u32 {
        vocab.insert(format!("<0x{byte:02X}>"), (3 + byte).into());
    }
    for (i, piece) in ["\u{2581}", "c", "1", "x", "e"].iter().enumerate() {
        vocab.insert(piece.to_string(), (259 + i as u32).into());
    }
    let model = serde_json::json!({"type": "BPE", "dropout": null, "unk_token": "<unk>",
        "continuing_subword_prefix": null, "end_of_word_suffix": null, "fuse_unk": true,
        "byte_fallback": true, "ignore_merges": false, "vocab": vocab, "merges": []});
    let decoder = serde_json::json!({"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "\u{2581}"}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]});
    let legacy = serde_json::json!({"version": "1.0", "truncation": null, "padding": null,
        "added_tokens": [added(0, "<unk>"), added(1, "<s>"), added(2, "</s>")],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "\u{2581}"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "\u{2581}"}]},
        "pre_tokenizer": null, "post_processor": null, "decoder": decoder, "model": model});
    let mut metaspace = legacy.clone();
    metaspace["normalizer"] = serde_json::Value::Null;
    metaspace["pre_tokenizer"] = serde_json::json!({"type": "Metaspace", "replacement": "\u{2581}",
        "prepend_scheme": "first", "split": false});
    // Byte-level with RoBERTa's add_prefix_space.
    let mut byte_level: serde_json::Value =
        serde_json::from_str(&mask_support::byte_level_json()).unwrap();
    for added in byte_level["added_tokens"].as_array_mut().unwrap() {
        for field in ["single_word", "lstrip", "rstrip"] {
            added[field] = false.into();
        }
    }
    byte_level["pre_tokenizer"]["pretokenizers"][0]["invert"] = false.into();
    byte_level["pre_tokenizer"]["pretokenizers"][1]["add_prefix_space"] = true.into();
    let text = "call c1 x\nend\n";
    let input = write(dir.path(), "in.ctl", text);
    let eot = (256 + mask_support::BYTE_LEVEL_WORDS.len() + 1).to_string();
    for (name, json, eos) in [
        ("legacy", legacy, "2"),
        ("metaspace", metaspace, "2"),
        ("byte_level", byte_level, eot.as_str()),
    ] {
        let path = write(dir.path(), &format!("{name}.json"), &json.to_string());
        // The file's own tokenizer does put the space first.
        let tokenizer = tokenizers::Tokenizer::from_file(&path).unwrap();
        let ids = tokenizer.encode(text, false).unwrap().get_ids().to_vec();
        let vocab = frontier::mask::vocab::hf::from_file(&path, &[]).unwrap();
        assert_eq!(vocab.bytes(ids[0])[0], b' ', "{name}: {ids:?}");
        let out = frontier(&[
            "mask",
            "--lang",
            "ctl",
            "--vocab",
            path.to_str().unwrap(),
            "--eos",
            eos,
            "--text",
            input.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{name}: {out:?}");
        let lines = lines(&out);
        let last = &lines[lines.len() - 2];
        assert_eq!(last["accepting"], true, "{name}: the whole call was read");
    }
}
