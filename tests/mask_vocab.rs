//! Vocabulary loading: the built-in tiktoken encodings, `.tiktoken` files, byte-level and
//! SentencePiece `tokenizer.json` files made here, raw bytes; and every bad input's error.

mod mask_support;

use std::sync::Arc;

use frontier::mask::vocab::hf::{self, EosSpec};
use frontier::mask::vocab::tiktoken::{self, Builtin};
use frontier::mask::{CompiledGrammar, TokenKind, VocabErrorKind, Vocabulary};
use mask_support::*;

#[test]
fn o200k_known_tokens_and_specials() {
    let vocab = tiktoken::builtin(Builtin::O200kBase).unwrap();
    assert_eq!(vocab.size(), 200_019);
    assert_eq!(vocab.bytes(13225), b"Hello");
    assert_eq!(vocab.kind(13225), Some(TokenKind::Normal));
    assert_eq!(vocab.eos(), &[199_999]);
    assert_eq!(vocab.special_name(199_999), Some("<|endoftext|>"));
    assert_eq!(vocab.kind(200_018), Some(TokenKind::Special));
    assert_eq!(vocab.special_name(200_018), Some("<|endofprompt|>"));
    // The ids the encoding does not use are holes.
    let holes: Vec<u32> = (0..vocab.size())
        .filter(|&id| vocab.kind(id) == Some(TokenKind::Hole))
        .collect();
    let expected: Vec<u32> = std::iter::once(199_998).chain(200_000..=200_017).collect();
    assert_eq!(holes, expected);
    assert_eq!(vocab.kind(200_019), None);
    assert_eq!(vocab.encode("Hello").unwrap(), vec![13225]);
    // The default cache: 64 MiB of 25,004-byte masks.
    let grammar = CompiledGrammar::new(Arc::new(vocab), frontier::ctl::CtlMachine::default());
    assert_eq!(grammar.cache_stats().capacity, 2683);
}

#[test]
fn cl100k_agrees_with_its_encoder() {
    let vocab = tiktoken::builtin(Builtin::Cl100kBase).unwrap();
    let bpe = tiktoken_rs::cl100k_base_singleton();
    let hello = bpe.encode_ordinary("Hello");
    assert_eq!(hello.len(), 1);
    assert_eq!(vocab.bytes(hello[0]), b"Hello");
    let eot = bpe.encode_with_special_tokens("<|endoftext|>");
    assert_eq!(vocab.eos(), &eot[..]);
    assert_eq!(vocab.size(), 100_277);
    let holes = (0..vocab.size())
        .filter(|&id| vocab.kind(id) == Some(TokenKind::Hole))
        .count();
    assert_eq!(holes, 16, "100,256 and 100,261–100,275");
    assert_eq!(vocab.kind(100_256), Some(TokenKind::Hole));
    // Every token of an encoded text spells the text back.
    let text = "call c1 read_file\narg path 10\nsrc/lib.rsend\n— déjà vu 🦀\n";
    let ids = vocab.encode(text).unwrap();
    let spelled: Vec<u8> = ids
        .iter()
        .flat_map(|&id| vocab.bytes(id).to_vec())
        .collect();
    assert_eq!(spelled, text.as_bytes());
}

#[test]
fn byte_level_tokenizer_json() {
    let vocab =
        hf::from_json_text(&byte_level_json(), &[EosSpec::Name("<|eot_id|>".into())]).unwrap();
    let base = 256 + BYTE_LEVEL_WORDS.len() as u32;
    assert_eq!(vocab.size(), base + 4);
    for byte in 0..=255u8 {
        assert_eq!(vocab.bytes(byte as u32), [byte], "single byte {byte}");
    }
    assert_eq!(vocab.bytes(byte_level_id(" Hello")), b" Hello");
    assert_eq!(vocab.bytes(byte_level_id("end\n")), b"end\n");
    assert_eq!(vocab.bytes(byte_level_id("🦀")), "🦀".as_bytes());
    assert_eq!(vocab.kind(base), Some(TokenKind::Special));
    assert_eq!(vocab.special_name(base), Some("<|begin_of_text|>"));
    assert_eq!(vocab.kind(base + 1), Some(TokenKind::Eos));
    assert_eq!(vocab.eos(), &[base + 1]);
    // An added token that is not special is its content's bytes.
    assert_eq!(vocab.kind(base + 2), Some(TokenKind::Normal));
    assert_eq!(vocab.bytes(base + 2), b"<tool>");
    assert_eq!(vocab.kind(base + 3), Some(TokenKind::Special));
}

#[test]
fn sentencepiece_tokenizer_json_with_byte_fallback() {
    let vocab = hf::from_json_text(&sentencepiece_json(), &[EosSpec::Id(2)]).unwrap();
    assert_eq!(vocab.size(), 265);
    assert_eq!(vocab.kind(0), Some(TokenKind::Special));
    assert_eq!(vocab.kind(1), Some(TokenKind::Special));
    assert_eq!(vocab.kind(2), Some(TokenKind::Eos));
    assert_eq!(vocab.bytes(3 + 0x41), b"A");
    assert_eq!(vocab.bytes(3 + 0xFF), [0xFF]);
    assert_eq!(vocab.bytes(3 + 0x20), b" ");
    assert_eq!(vocab.bytes(259), b" ");
    assert_eq!(vocab.bytes(260), b" call");
    assert_eq!(vocab.bytes(262), "é".as_bytes());
    assert_eq!(vocab.bytes(263), b"  ");
    assert_eq!(vocab.bytes(264), b"<0x4>");
    // Two ids with the same bytes (`▁` and `<0x20>`) are both kept and both allowed.
    let grammar = CompiledGrammar::new(Arc::new(vocab), frontier::ctl::CtlMachine::default());
    let mut matcher = grammar.matcher();
    for id in greedy_tokenize(grammar.vocab(), b"call c1") {
        matcher.consume(id).unwrap();
    }
    let mut mask = vec![0; grammar.vocab().mask_words()];
    matcher.fill_mask(&mut mask).unwrap();
    assert!(bit(&mask, 259) && bit(&mask, 3 + 0x20));
}

#[test]
fn tokenizer_config_beside_the_file_names_eos() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokenizer.json");
    std::fs::write(&path, sentencepiece_json()).unwrap();
    // No config: no EOS token.
    assert_eq!(hf::from_file(&path, &[]).unwrap().eos(), &[] as &[u32]);
    std::fs::write(
        dir.path().join("tokenizer_config.json"),
        r#"{"eos_token": {"content": "</s>", "special": true}, "bos_token": "<s>"}"#,
    )
    .unwrap();
    assert_eq!(hf::from_file(&path, &[]).unwrap().eos(), &[2]);
    // The caller's choice wins over the config's.
    assert_eq!(hf::from_file(&path, &[EosSpec::Id(1)]).unwrap().eos(), &[1]);
    let path = dir.path().join("byte_level").join("tokenizer.json");
    std::fs::create_dir(path.parent().unwrap()).unwrap();
    std::fs::write(&path, byte_level_json()).unwrap();
    std::fs::write(
        path.with_file_name("tokenizer_config.json"),
        r#"{"eos_token": "<|eot_id|>"}"#,
    )
    .unwrap();
    let vocab = hf::from_file(&path, &[]).unwrap();
    assert_eq!(vocab.eos(), &[256 + BYTE_LEVEL_WORDS.len() as u32 + 1]);
}

#[test]
fn rank_file_by_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny.tiktoken");
    // "Hello", " world", "\n"
    std::fs::write(&path, "SGVsbG8= 0\nIHdvcmxk 1\nCg== 3\n").unwrap();
    let vocab = tiktoken::from_rank_file(&path, &[("<|endoftext|>".into(), 4)], &[4]).unwrap();
    assert_eq!(vocab.size(), 5);
    assert_eq!(vocab.bytes(0), b"Hello");
    assert_eq!(vocab.bytes(1), b" world");
    assert_eq!(vocab.kind(2), Some(TokenKind::Hole));
    assert_eq!(vocab.bytes(3), b"\n");
    assert_eq!(vocab.eos(), &[4]);
    assert_eq!(
        vocab.encode("Hello").unwrap_err().kind,
        VocabErrorKind::NoEncoder
    );
}

/// A `.tiktoken` file's text: one `base64 SP rank` line per `(rank, bytes)`.
fn rank_text<'a>(ranks: impl IntoIterator<Item = (u32, &'a [u8])>) -> String {
    use base64::Engine as _;
    let engine = base64::engine::general_purpose::STANDARD;
    ranks
        .into_iter()
        .map(|(rank, bytes)| format!("{} {rank}\n", engine.encode(bytes)))
        .collect()
}

#[test]
fn a_rank_file_by_path_gets_endoftext_past_its_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny.tiktoken");
    // Two ids skipped (one would be where tiktoken's p50k_base has its `<|endoftext|>`).
    let ranks: [(u32, &[u8]); 3] = [(0, b"Hello"), (1, b" world"), (4, b"\n")];
    std::fs::write(&path, rank_text(ranks)).unwrap();
    let vocab = tiktoken::from_path(&path, &[]).unwrap();
    assert_eq!(vocab.size(), 6, "the ranks' ids 0-4, then <|endoftext|>");
    assert_eq!(vocab.bytes(1), b" world");
    assert_eq!(vocab.kind(2), Some(TokenKind::Hole));
    assert_eq!(vocab.kind(3), Some(TokenKind::Hole));
    assert_eq!(vocab.eos(), &[5]);
    assert_eq!(vocab.special_name(5), Some("<|endoftext|>"));
    assert!(
        !vocab.has_encoder(),
        "the file does not say its split pattern"
    );
    assert_eq!(
        vocab.encode("Hello").unwrap_err().kind,
        VocabErrorKind::NoEncoder
    );
    // By name or path: a path that is no built-in name is the file.
    let by_name = tiktoken::from_name_or_path(path.to_str().unwrap(), &[]).unwrap();
    assert_eq!((by_name.size(), by_name.eos()), (6, &[5][..]));
    // The first mask over it: CTL's empty text is a sentence and none of the ranks starts a
    // call, so EOS is all there is.
    let grammar = CompiledGrammar::new(Arc::new(vocab), frontier::ctl::CtlMachine::default());
    let mut mask = vec![0u32; 1];
    grammar.matcher().fill_mask(&mut mask).unwrap();
    assert_eq!(mask[0], 1 << 5);
}

#[test]
fn a_rank_spelling_endoftext_is_the_eos() {
    let ranks: [(u32, &[u8]); 3] = [(0, b"a"), (1, b"<|endoftext|>"), (2, b"b")];
    let vocab = tiktoken::from_path_text(&rank_text(ranks), &[]).unwrap();
    assert_eq!(vocab.size(), 3, "nothing is added");
    assert_eq!(vocab.kind(1), Some(TokenKind::Eos));
    assert_eq!(vocab.special_name(1), Some("<|endoftext|>"));
    assert_eq!(vocab.bytes(1), b"", "a special token stands for no bytes");
    assert_eq!(vocab.eos(), &[1]);
}

#[test]
fn eos_ids_given_for_a_rank_file_replace_endoftext() {
    let ranks: [(u32, &[u8]); 2] = [(0, b"a"), (1, b"b")];
    let text = rank_text(ranks);
    let vocab = tiktoken::from_path_text(&text, &[5, 3]).unwrap();
    assert_eq!(vocab.size(), 6);
    assert_eq!(vocab.eos(), &[3, 5]);
    assert_eq!(vocab.special_name(5), Some("<|eos:5|>"));
    assert_eq!(vocab.kind(2), Some(TokenKind::Hole));
    assert_eq!(vocab.kind(4), Some(TokenKind::Hole));
    assert_eq!(vocab.special_id("<|endoftext|>"), None);
    let err = tiktoken::from_path_text(&text, &[1]).unwrap_err();
    assert_eq!(err.kind, VocabErrorKind::UnknownEos, "a rank is no EOS");
    let err = tiktoken::from_path_text(&text, &[1 << 30]).unwrap_err();
    assert_eq!(err.kind, VocabErrorKind::IdOutOfRange);
}

#[test]
fn a_builtin_encodings_own_rank_file_is_that_encoding() {
    let builtin = tiktoken::builtin(Builtin::Cl100kBase).unwrap();
    let normal: Vec<(u32, &[u8])> = builtin.normal_tokens().collect();
    assert_eq!(normal.len(), Builtin::Cl100kBase.ranks() as usize);
    assert_eq!(normal.last().unwrap().0, Builtin::Cl100kBase.ranks() - 1);
    // OpenAI's cl100k_base.tiktoken, as tiktoken downloads it (lines in any order).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cl100k_base.tiktoken");
    std::fs::write(&path, rank_text(normal.iter().rev().copied())).unwrap();
    let vocab = tiktoken::from_path(&path, &[]).unwrap();
    assert_eq!(vocab.size(), builtin.size());
    assert_eq!(vocab.eos(), builtin.eos());
    for id in 0..builtin.size() {
        assert_eq!(vocab.kind(id), builtin.kind(id), "id {id}");
        assert_eq!(vocab.bytes(id), builtin.bytes(id), "id {id}");
        assert_eq!(vocab.special_name(id), builtin.special_name(id), "id {id}");
    }
    let text = "call c1 read_file\n— déjà vu\n";
    assert_eq!(vocab.encode(text).unwrap(), builtin.encode(text).unwrap());
    let endofprompt = builtin.special_id("<|endofprompt|>").unwrap();
    let given = tiktoken::from_path(&path, &[endofprompt]).unwrap();
    assert_eq!(given.eos(), &[endofprompt]);
    // One byte off, and it is a file of its own: <|endoftext|> past its ranks.
    let mut changed = normal.clone();
    changed[7].1 = b"not cl100k";
    let other = tiktoken::from_path_text(&rank_text(changed), &[]).unwrap();
    assert_eq!(other.size(), Builtin::Cl100kBase.ranks() + 1);
    assert_eq!(other.eos(), &[Builtin::Cl100kBase.ranks()]);
    assert!(!other.has_encoder());
    let o200k = tiktoken::builtin(Builtin::O200kBase).unwrap();
    assert_eq!(
        (
            o200k.normal_tokens().count(),
            o200k.normal_tokens().last().unwrap().0
        ),
        (
            Builtin::O200kBase.ranks() as usize,
            Builtin::O200kBase.ranks() - 1
        )
    );
}

#[test]
fn a_name_that_is_neither_built_in_nor_a_file_names_the_built_ins() {
    let vocab = tiktoken::from_name_or_path("o200k_base", &[]).unwrap();
    assert_eq!(vocab.size(), 200_019);
    let err = tiktoken::from_name_or_path("p50k_base", &[]).unwrap_err();
    assert_eq!(err.kind, VocabErrorKind::Io);
    assert!(
        err.message.starts_with(
            "unknown tiktoken encoding \"p50k_base\" (built in: cl100k_base, o200k_base)"
        ),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.tiktoken");
    std::fs::write(&bad, "SGVsbG8= 0\nnot-a-line\n").unwrap();
    let err = tiktoken::from_name_or_path(bad.to_str().unwrap(), &[]).unwrap_err();
    assert_eq!(err.kind, VocabErrorKind::BadRankFile, "{err}");
}

#[test]
fn raw_bytes_with_special_and_eos_ids() {
    let tokens: Vec<Vec<u8>> = vec![b"a".to_vec(), vec![], b"<s>".to_vec(), b"</s>".to_vec()];
    let vocab = Vocabulary::from_raw(&tokens, &[2], &[3]).unwrap();
    assert_eq!(vocab.kind(0), Some(TokenKind::Normal));
    assert_eq!(vocab.kind(1), Some(TokenKind::Hole));
    assert_eq!(vocab.kind(2), Some(TokenKind::Special));
    assert_eq!(vocab.kind(3), Some(TokenKind::Eos));
    assert_eq!(vocab.bytes(2), b"", "a special token stands for no bytes");
    assert_eq!(vocab.special_name(3), Some("</s>"));
    assert_eq!(vocab.mask_words(), 1);
    fn is_send_sync<T: Send + Sync>() {}
    is_send_sync::<Vocabulary>();
}

/// `masks.md`: a hole is "an id with no token (unused ids, an empty string)", in every source:
/// a `tokenizer.json` entry or added token spelled `""`, a rank line with no bytes. Never
/// allowed, and the id may still not be given twice.
#[test]
fn an_empty_string_is_a_hole_in_every_source() {
    let byte_level = r#"{"decoder": {"type": "ByteLevel"}, "model": {"type": "BPE",
        "vocab": {"": 0, "a": 1, "\u0120b": 2}},
        "added_tokens": [{"id": 4, "content": "", "special": false},
                         {"id": 5, "content": "<eos>", "special": true}]}"#;
    let sentencepiece = r#"{"decoder": {"type": "Metaspace"}, "model": {"type": "Unigram",
        "vocab": [["a", 0.0], ["", 0.0], ["\u2581b", 0.0], ["</s>", 0.0], ["x", 0.0],
                  ["<eos>", 0.0]]},
        "added_tokens": [{"id": 5, "content": "<eos>", "special": true}]}"#;
    for (text, hole, normal) in [(byte_level, 0, 2), (sentencepiece, 1, 2)] {
        let vocab = hf::from_json_text(text, &[EosSpec::Name("<eos>".into())]).unwrap();
        assert_eq!(vocab.kind(hole), Some(TokenKind::Hole), "{text}");
        assert_eq!(vocab.bytes(normal), b" b");
        assert_eq!(vocab.size(), 6);
        let grammar = CompiledGrammar::new(Arc::new(vocab), frontier::ctl::CtlMachine::default());
        let mut mask = vec![0u32; 1];
        grammar.matcher().fill_mask(&mut mask).unwrap();
        assert_eq!(mask[0] & (1 << hole), 0, "a hole is never allowed");
    }
    let vocab = hf::from_json_text(byte_level, &[]).unwrap();
    assert_eq!(vocab.kind(4), Some(TokenKind::Hole), "an added token \"\"");
    assert_eq!(vocab.kind(3), Some(TokenKind::Hole), "an id no entry gives");
    // A rank line with no bytes.
    let vocab = tiktoken::from_rank_text("YQ== 0\n 1\nYg== 2\n", &[], &[]).unwrap();
    assert_eq!(
        (vocab.kind(0), vocab.kind(1), vocab.kind(2)),
        (
            Some(TokenKind::Normal),
            Some(TokenKind::Hole),
            Some(TokenKind::Normal)
        )
    );
    let vocab = tiktoken::from_path_text("YQ== 0\n 1\n", &[]).unwrap();
    assert_eq!(vocab.kind(1), Some(TokenKind::Hole));
    assert_eq!(
        vocab.special_id("<|endoftext|>"),
        Some(2),
        "EOS past the ranks, the empty one included"
    );
    // One id the ranks skip (p50k_base's 50,256) is where tiktoken puts `<|endoftext|>`;
    // with two skipped, it goes past the ranks.
    let vocab = tiktoken::from_path_text("YQ== 0\nYg== 2\n", &[]).unwrap();
    assert_eq!(vocab.special_id("<|endoftext|>"), Some(1));
    assert_eq!((vocab.size(), vocab.eos()), (3, &[1][..]));
    let vocab = tiktoken::from_path_text("YQ== 0\nYg== 3\n", &[]).unwrap();
    assert_eq!(vocab.special_id("<|endoftext|>"), Some(4));
    assert_eq!(vocab.kind(1), Some(TokenKind::Hole));
    // Given twice, an empty string is still a duplicate.
    assert_eq!(
        tiktoken::from_rank_text(" 0\nYQ== 0\n", &[], &[])
            .unwrap_err()
            .kind,
        VocabErrorKind::DuplicateId
    );
    let twice =
        r#"{"decoder": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {"": 0, "a": 0}}}"#;
    assert_eq!(json_error(twice), VocabErrorKind::DuplicateId);
}

fn json_error(text: &str) -> VocabErrorKind {
    hf::from_json_text(text, &[]).unwrap_err().kind
}

#[test]
fn bad_tokenizer_json_is_a_clear_error() {
    assert_eq!(json_error("not json"), VocabErrorKind::NotTokenizerJson);
    assert_eq!(
        json_error(r#"{"foo": 1}"#),
        VocabErrorKind::NotTokenizerJson
    );
    assert_eq!(json_error(r#"[1, 2]"#), VocabErrorKind::NotTokenizerJson);
    let byte_level =
        |model: &str| format!(r#"{{"decoder": {{"type": "ByteLevel"}}, "model": {model}}}"#);
    assert_eq!(
        json_error(&byte_level(r#"{"type": "BPE"}"#)),
        VocabErrorKind::NotTokenizerJson
    );
    assert_eq!(
        json_error(&byte_level(r#"{"type": "WordPiece", "vocab": {"a": 0}}"#)),
        VocabErrorKind::UnknownModel
    );
    assert_eq!(
        json_error(
            r#"{"decoder": {"type": "WordPiece"}, "model": {"type": "BPE", "vocab": {"a": 0}}}"#
        ),
        VocabErrorKind::UnknownModel
    );
    assert_eq!(
        json_error(&byte_level(r#"{"type": "BPE", "vocab": {"a": 5, "b": 5}}"#)),
        VocabErrorKind::DuplicateId
    );
    assert_eq!(
        json_error(&byte_level(
            r#"{"type": "BPE", "vocab": {"a": 1073741824}}"#
        )),
        VocabErrorKind::IdOutOfRange
    );
    assert_eq!(
        json_error(&byte_level(r#"{"type": "BPE", "vocab": {"a": -1}}"#)),
        VocabErrorKind::IdOutOfRange
    );
    // A space is not a character of the byte-level map (it is spelled `Ġ`).
    assert_eq!(
        json_error(&byte_level(r#"{"type": "BPE", "vocab": {"a b": 0}}"#)),
        VocabErrorKind::BadToken
    );
    // An added token over an id the model gives other bytes.
    let clash = r#"{"decoder": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {"a": 0}},
                    "added_tokens": [{"id": 0, "content": "b", "special": false}]}"#;
    assert_eq!(json_error(clash), VocabErrorKind::DuplicateId);
    let err =
        hf::from_json_text(&sentencepiece_json(), &[EosSpec::Name("<nope>".into())]).unwrap_err();
    assert_eq!(err.kind, VocabErrorKind::UnknownEos);
    assert!(err.to_string().contains("<nope>"), "{err}");
    let err = hf::from_json_text(&sentencepiece_json(), &[EosSpec::Id(5000)]).unwrap_err();
    assert_eq!(err.kind, VocabErrorKind::UnknownEos);
    let err = hf::from_json_text(&sentencepiece_json(), &[EosSpec::Id(100)]).unwrap_err();
    assert_eq!(
        err.kind,
        VocabErrorKind::UnknownEos,
        "a normal token is no EOS"
    );
    let err = hf::from_file(std::path::Path::new("/nonexistent/tokenizer.json"), &[]).unwrap_err();
    assert_eq!(err.kind, VocabErrorKind::Io);
}

#[test]
fn bad_rank_files_and_raw_ids_are_clear_errors() {
    let rank = |text: &str| tiktoken::from_rank_text(text, &[], &[]).unwrap_err();
    let err = rank("SGVsbG8= 0\nnot-a-line\n");
    assert_eq!(err.kind, VocabErrorKind::BadRankFile);
    assert!(err.message.starts_with("line 2"), "{err}");
    assert_eq!(rank("SGVsbG8= x\n").kind, VocabErrorKind::BadRankFile);
    assert_eq!(rank("!!!! 0\n").kind, VocabErrorKind::BadRankFile);
    assert_eq!(
        rank("SGVsbG8= 0\nIHdvcmxk 0\n").kind,
        VocabErrorKind::DuplicateId
    );
    assert_eq!(
        rank("SGVsbG8= 99999999999\n").kind,
        VocabErrorKind::BadRankFile
    );
    assert_eq!(
        rank("SGVsbG8= 4000000000\n").kind,
        VocabErrorKind::IdOutOfRange
    );
    let tokens = vec![b"a".to_vec(), b"b".to_vec()];
    let err = Vocabulary::from_raw(&tokens, &[2], &[]).unwrap_err();
    assert_eq!(err.kind, VocabErrorKind::IdOutOfRange);
    let err = Vocabulary::from_raw(&tokens, &[], &[7]).unwrap_err();
    assert_eq!(err.kind, VocabErrorKind::IdOutOfRange);
    let err = tiktoken::from_rank_text("SGVsbG8= 0\n", &[], &[0]).unwrap_err();
    assert_eq!(
        err.kind,
        VocabErrorKind::UnknownEos,
        "EOS must be a special token"
    );
}

/// An encoder that answers these ids whatever the text.
struct FixedIds(Vec<u32>);

impl frontier::mask::vocab::Encoder for FixedIds {
    fn encode(&self, _: &str) -> Result<Vec<u32>, frontier::mask::VocabError> {
        Ok(self.0.clone())
    }
}

#[test]
fn ids_that_do_not_spell_the_text_are_an_encoder_mismatch() {
    use frontier::contract::ErrorKind as _;
    use frontier::mask::vocab::VocabBuilder;
    let with = |ids: &[u32]| {
        let mut builder = VocabBuilder::new();
        builder.normal(0, b"ab".to_vec()).unwrap();
        builder.normal(1, b"c".to_vec()).unwrap();
        builder.special(3, "<|eot|>").unwrap();
        builder.eos(3);
        let vocab = builder.build().unwrap();
        vocab.with_encoder(Arc::new(FixedIds(ids.to_vec())))
    };
    // Normal tokens by their bytes, special ones by their names.
    assert_eq!(with(&[0, 1, 3]).encode("abc<|eot|>").unwrap(), [0, 1, 3]);
    for (ids, text) in [
        (&[1, 0][..], "abc"), // another order
        (&[0, 2, 1], "abc"),  // a hole
        (&[0, 9], "abc"),     // past the vocabulary
        (&[0], "abc"),        // the text's end not reached
        (&[0, 1, 1], "abc"),  // past the text's end
        (&[3], "abc"),        // a special token for text
    ] {
        let e = with(ids).encode(text).unwrap_err();
        assert_eq!(e.kind, VocabErrorKind::EncoderMismatch, "{ids:?}");
        assert_eq!(e.kind.as_str(), "encoder_mismatch");
    }
}
