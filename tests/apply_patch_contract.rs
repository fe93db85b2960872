//! The confirmation contract for both apply_patch modes on every corpus file and every Codex
//! conformance patch: every prefix, every 2-way split, byte-at-a-time feeding with all 256
//! next bytes tried, pending within `K`; plus snapshots of the event streams, the units, the
//! error kinds and offsets of the invalid files, and the assembler.

use frontier::apply_patch::units::{ChangeLine, Chunk, FileOperation};
use frontier::apply_patch::{CodexParser, OperationAssembler, StrictOptions, StrictParser};
use frontier::contract::{PushParser, Verdict};
use frontier::harness;

fn corpus() -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir("corpora/apply_patch")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "patch"))
        .map(|p| {
            (
                p.file_stem().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

fn conformance() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/conformance/codex-apply-patch"
    ))
    .unwrap()
    {
        let dir = entry.unwrap().path();
        if let Ok(bytes) = std::fs::read(dir.join("patch.txt")) {
            out.push((
                dir.file_name().unwrap().to_string_lossy().into_owned(),
                bytes,
            ));
        }
    }
    out.sort();
    out
}

fn check_contract<P: PushParser>(parser: &P, name: &str, bytes: &[u8]) {
    // O(n^2) checks: every split and prefix for small files, a stride for the long one.
    let stride = (bytes.len() / 400).max(1);
    harness::check_chunking(parser, bytes, stride).unwrap_or_else(|e| panic!("{name}: {e}"));
    harness::check_prefixes(parser, bytes, stride).unwrap_or_else(|e| panic!("{name}: {e}"));
    harness::check_byte_at_a_time(parser.clone(), bytes, true)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    for chunk in [1, 2, 3, 7, 64] {
        let t = harness::run(parser.clone(), bytes, Some(chunk));
        assert_eq!(
            t,
            harness::run(parser.clone(), bytes, None),
            "{name}: chunk {chunk}"
        );
    }
}

#[test]
fn strict_contract_on_corpus_and_conformance() {
    for (name, bytes) in corpus().iter().chain(&conformance()) {
        check_contract(&StrictParser::default(), name, bytes);
    }
}

#[test]
fn codex_contract_on_corpus_and_conformance() {
    for (name, bytes) in corpus().iter().chain(&conformance()) {
        check_contract(&CodexParser::new(), name, bytes);
    }
}

#[test]
fn strict_pending_stays_small_on_long_lines() {
    let mut patch = b"*** Begin Patch\n*** Add File: big.txt\n+".to_vec();
    patch.extend(std::iter::repeat_n("ü".as_bytes(), 200_000).flatten());
    patch.extend_from_slice(b"\n*** End Patch\n");
    let mut parser = StrictParser::default();
    let mut max_pending = 0;
    for piece in patch.chunks(4093) {
        parser.push(piece, &mut |_| {}).unwrap();
        max_pending = max_pending.max(parser.pending());
    }
    assert!(
        max_pending <= 1,
        "a cut character is all that waits: {max_pending}"
    );
    assert_eq!(parser.pending_bound(), 19);
    assert_eq!(parser.finish(&mut |_| {}).verdict, Verdict::Complete);
}

fn snapshot<P: PushParser>(parser: P, bytes: &[u8]) -> serde_json::Value {
    let t = harness::run(parser, bytes, None);
    let error = t.outcome.verdict.error().map(|e| {
        serde_json::json!({"offset": e.offset, "byte": e.byte, "kind": frontier::ErrorKind::as_str(e.kind)})
    });
    serde_json::json!({
        "verdict": t.outcome.verdict.as_str(),
        "consumed": t.outcome.consumed,
        "confirmed": t.outcome.confirmed,
        "error": error,
        "events": t.records,
    })
}

#[test]
fn event_snapshots() {
    for (name, bytes) in corpus() {
        if name == "long_lines" {
            continue;
        }
        insta::assert_json_snapshot!(
            format!("apply_patch_strict__{name}"),
            snapshot(StrictParser::default(), &bytes)
        );
        insta::assert_json_snapshot!(
            format!("apply_patch_codex__{name}"),
            snapshot(CodexParser::new(), &bytes)
        );
    }
}

#[test]
fn invalid_files_fail_where_and_how_expected() {
    let expect: &[(&str, u64, &str)] = &[
        ("invalid_no_begin", 4, "bad_marker"),
        ("invalid_empty_context", 42, "empty_context"),
        ("invalid_bad_marker", 20, "bad_marker"),
        ("invalid_utf8", 41, "invalid_utf8"),
        ("invalid_trailing", 49, "trailing_data"),
        ("invalid_add_without_lines", 32, "expected_add_line"),
    ];
    let corpus = corpus();
    for &(name, offset, kind) in expect {
        let bytes = &corpus.iter().find(|(n, _)| n == name).unwrap().1;
        let t = harness::run(StrictParser::default(), bytes, Some(1));
        let e = t
            .outcome
            .verdict
            .error()
            .copied()
            .unwrap_or_else(|| panic!("{name}: no error"));
        assert_eq!(
            (e.offset, frontier::ErrorKind::as_str(e.kind)),
            (offset, kind),
            "{name}"
        );
        assert_eq!(e.byte, bytes[offset as usize]);
    }
    for (name, bytes) in &corpus {
        let verdict = harness::run(StrictParser::default(), bytes, None)
            .outcome
            .verdict;
        if name.starts_with("truncated") {
            assert_eq!(verdict.as_str(), "incomplete", "{name}");
        } else if !name.starts_with("invalid") && !name.starts_with("codex") {
            assert_eq!(verdict, Verdict::Complete, "{name}");
        }
    }
}

fn units<P: PushParser>(parser: P, bytes: &[u8]) -> (u64, u64) {
    let t = harness::run(parser, bytes, None);
    let count = |u: &str| t.records.iter().filter(|r| r.unit == Some(u)).count() as u64;
    (count("files"), count("chunks"))
}

#[test]
fn units_are_counted_once() {
    let corpus = corpus();
    let get = |n: &str| corpus.iter().find(|(name, _)| name == n).unwrap().1.clone();
    assert_eq!(units(StrictParser::default(), &get("multi_chunk")), (2, 4));
    assert_eq!(units(CodexParser::new(), &get("multi_chunk")), (2, 4));
    assert_eq!(units(StrictParser::default(), &get("add_delete")), (3, 0));
    assert_eq!(units(CodexParser::new(), &get("codex_lenient")), (3, 2));
    // A truncated stream confirms only the units that were complete before the cut.
    assert_eq!(
        units(StrictParser::default(), &get("truncated_mid_line")),
        (0, 1)
    );
}

/// Strict mode's Update ends at the LF of `*** End of File` (nothing of it can follow in the
/// grammar); codex mode's stays open there, since Codex's parser takes more chunks after it.
#[test]
fn strict_update_ends_with_its_end_of_file_line() {
    let cut = b"*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n*** End of File\n";
    assert_eq!(units(StrictParser::default(), cut), (1, 1));
    assert_eq!(units(CodexParser::new(), cut), (0, 1));
    let mut parser = StrictParser::default();
    parser.push(cut, &mut |_| {}).unwrap();
    assert_eq!(parser.confirmed(), cut.len() as u64);
    let verdict = parser.finish(&mut |_| {}).verdict;
    assert_eq!(verdict.as_str(), "incomplete");
    assert_eq!(verdict.unclosed().map(|u| u.construct), Some("patch"));
}

fn assemble<P: PushParser>(parser: P, bytes: &[u8]) -> Vec<FileOperation>
where
    for<'e> P::Event<'e>: Into<frontier::apply_patch::PatchEvent<'e>>,
{
    let mut parser = parser;
    let mut a = OperationAssembler::default();
    let mut ops = Vec::new();
    let _ = parser.push(bytes, &mut |e| ops.extend(a.on_event(&e.into())));
    parser.finish(&mut |e| ops.extend(a.on_event(&e.into())));
    ops
}

#[test]
fn assembler_builds_operations() {
    let patch = b"*** Begin Patch\n*** Update File: src/app.py\n*** Move to: src/main.py\n@@ def greet():\n-print(\"Hi\")\n+print(\"Hello\")\n*** End of File\n*** Add File: a\n+1\n+\n*** Delete File: b\n*** End Patch\n";
    let expected = vec![
        FileOperation::Update {
            path: "src/app.py".into(),
            move_to: Some("src/main.py".into()),
            chunks: vec![Chunk {
                context: Some("def greet():".into()),
                lines: vec![
                    ChangeLine::Remove("print(\"Hi\")".into()),
                    ChangeLine::Add("print(\"Hello\")".into()),
                ],
                end_of_file: true,
            }],
        },
        FileOperation::Add {
            path: "a".into(),
            lines: vec!["1".into(), "".into()],
        },
        FileOperation::Delete { path: "b".into() },
    ];
    assert_eq!(assemble(StrictParser::default(), patch), expected);
    assert_eq!(assemble(CodexParser::new(), patch), expected);
    let crlf = String::from_utf8_lossy(patch).replace('\n', "\r\n");
    assert_eq!(assemble(CodexParser::new(), crlf.as_bytes()), expected);
    // Byte at a time, the operations arrive at the same points.
    let mut parser = StrictParser::default();
    let mut a = OperationAssembler::default();
    let mut arrivals = Vec::new();
    for (i, b) in patch.iter().enumerate() {
        parser
            .push(&[*b], &mut |e| {
                if a.on_event(&e).is_some() {
                    arrivals.push(i)
                }
            })
            .unwrap();
    }
    let at = |s: &str| String::from_utf8_lossy(patch).find(s).unwrap();
    // The Update at the LF of its `*** End of File` (the strict grammar ends an Update's
    // change there), the Add when the next header's marker is complete, the Delete at the LF
    // of its own header (nothing can belong to a Delete).
    let delete = at("*** Delete File: b");
    assert_eq!(
        arrivals,
        vec![at("*** Add File: a") - 1, delete + 16, delete + 18]
    );
}

#[test]
fn environment_option() {
    let patch = b"*** Begin Patch\n*** Environment ID: prod-1\n*** Delete File: a\n*** End Patch";
    assert!(harness::run(StrictParser::default(), patch, None)
        .outcome
        .verdict
        .error()
        .is_some());
    let t = harness::run(
        StrictParser::new(StrictOptions { environment: true }),
        patch,
        None,
    );
    assert_eq!(t.outcome.verdict, Verdict::Complete);
    let mut a = OperationAssembler::default();
    let mut parser = StrictParser::new(StrictOptions { environment: true });
    parser
        .push(patch, &mut |e| {
            a.on_event(&e);
        })
        .unwrap();
    assert_eq!(a.environment(), Some("prod-1"));
    assert_eq!(
        harness::run(CodexParser::new(), patch, None)
            .outcome
            .verdict,
        Verdict::Complete
    );
}

/// Feeds `bytes` to a codex parser in `chunk`-byte pieces, returning the events (adjacent data
/// of one kind merged, as `name` or `name:data`) and the largest pending seen between pieces.
fn codex_feed(parser: &mut CodexParser, bytes: &[u8], chunk: usize) -> (Vec<String>, u64) {
    use frontier::event::Event;
    let mut log: Vec<(&'static str, Option<Vec<u8>>)> = Vec::new();
    let mut max_pending = 0;
    for piece in bytes.chunks(chunk.max(1)) {
        parser
            .push(piece, &mut |e| match (e.data(), log.last_mut()) {
                (Some(d), Some((name, Some(last)))) if *name == e.name() => {
                    last.extend_from_slice(d)
                }
                (d, _) => log.push((e.name(), d.map(<[u8]>::to_vec))),
            })
            .unwrap();
        max_pending = max_pending.max(parser.pending());
    }
    let log = log
        .into_iter()
        .map(|(name, d)| match d {
            Some(d) => format!("{name}:{}", String::from_utf8_lossy(&d)),
            None => name.to_owned(),
        })
        .collect();
    (log, max_pending)
}

#[test]
fn codex_confirms_content_as_it_arrives() {
    let mut long = b"*** Begin Patch\n*** Add File: a\n+".to_vec();
    long.extend(std::iter::repeat_n(b'x', 100_000));
    let inputs: [(&[u8], &str); 5] = [
        (&long, "text"),
        (b"*** Begin Patch\n*** Add File: abcdef", "path:abcdef"),
        (
            b"*** Begin Patch\n*** Update File: a\n@@ ctx long",
            "context:ctx long",
        ),
        (
            b"*** Begin Patch\n*** Update File: a\n-gone\xc3\xa9",
            "text:gone\u{e9}",
        ),
        (
            b"*** Begin Patch\n*** Update File: a\n@@\n  kept",
            "text: kept",
        ),
    ];
    for (input, last) in inputs {
        for chunk in [1, 7, 4093, input.len()] {
            let mut parser = CodexParser::new();
            let (events, _) = codex_feed(&mut parser, input, chunk);
            assert_eq!(parser.confirmed(), input.len() as u64, "{last} in {chunk}");
            assert!(events.last().unwrap().starts_with(last), "{events:?}");
        }
    }
    // The same through `check --json`'s numbers: the whole Add line is confirmed.
    let outcome = harness::run(CodexParser::new(), &long, None).outcome;
    assert_eq!((outcome.confirmed, outcome.consumed), (100_033, 100_033));
}

#[test]
fn codex_pending_stays_small_on_long_lines() {
    let line: Vec<u8> = "ü".repeat(100_000).into_bytes(); // 200,000 bytes
    let shapes: [(&[u8], &[u8]); 7] = [
        (b"*** Begin Patch\n*** Add File: big.txt\n+", b"\n"),
        (b"*** Begin Patch\n*** Update File: a\n-x\n ", b"\n"),
        (b"*** Begin Patch\n*** Update File: a\n-", b"\n"),
        (b"*** Begin Patch\n*** Update File: a\n@@\n ", b"\n"),
        (b"*** Begin Patch\n*** Update File: a\n@@ ", b"\n+x\n"),
        (b"*** Begin Patch\n*** Add File: ", b"\n+x\n"),
        (
            b"*** Begin Patch\n*** Update File: a\n*** Move to: ",
            b"\n@@\n+x\n",
        ),
    ];
    for (head, tail) in shapes {
        let mut patch = head.to_vec();
        patch.extend_from_slice(&line);
        let mut parser = CodexParser::new();
        let (mut events, max_pending) = codex_feed(&mut parser, &patch, 4093);
        assert!(
            max_pending <= 1,
            "{}: a cut character is all that waits: {max_pending}",
            String::from_utf8_lossy(head)
        );
        // The closing line is confirmed at the end of the stream (the last line decides).
        let (rest, _) = codex_feed(&mut parser, &[tail, b"*** End Patch\n"].concat(), 4093);
        events.extend(rest);
        let content = events.iter().find(|e| e.len() > 100_000).unwrap();
        assert!(content.ends_with(std::str::from_utf8(&line).unwrap()));
        assert_eq!(parser.finish(&mut |_| {}).verdict, Verdict::Complete);
    }
}

#[test]
fn codex_cr_waits_for_the_next_byte() {
    let head = b"*** Begin Patch\n*** Add File: a\n+x\r";
    for chunk in [1, 2, head.len()] {
        let mut parser = CodexParser::new();
        let (events, _) = codex_feed(&mut parser, head, chunk);
        assert_eq!(parser.pending(), 1, "the CR may be the CR of a CRLF");
        assert_eq!(events.last().unwrap(), "text:x");
        // An LF: the CR was the line ending's, dropped.
        let mut crlf = parser.clone();
        let (events, _) = codex_feed(&mut crlf, b"\n", 1);
        assert_eq!(events, ["line_end"]);
        assert_eq!(crlf.pending(), 0);
        // Anything else: the CR is content.
        let mut content = parser.clone();
        let (events, _) = codex_feed(&mut content, b"y", 1);
        assert_eq!(events, ["text:\ry"]);
        assert_eq!(content.pending(), 0);
        // A second CR: the first is content, the second waits.
        let mut two = parser.clone();
        let (events, _) = codex_feed(&mut two, b"\r", 1);
        assert_eq!(events, ["text:\r"]);
        assert_eq!(two.pending(), 1);
        let (events, _) = codex_feed(&mut two, b"\n", 1);
        assert_eq!(events, ["line_end"]);
        // A multi-byte character after the CR: the CR is final at its lead byte.
        let mut multi = parser;
        let (events, _) = codex_feed(&mut multi, b"\xc3", 1);
        assert_eq!((events, multi.pending()), (vec!["text:\r".to_owned()], 1));
    }
    // The same in an `@@` context.
    let mut parser = CodexParser::new();
    let (events, _) = codex_feed(
        &mut parser,
        b"*** Begin Patch\n*** Update File: a\n@@ c\r",
        3,
    );
    assert_eq!(
        (events.last().unwrap().as_str(), parser.pending()),
        ("context:c", 1)
    );
}

#[test]
fn codex_path_trailing_whitespace_waits() {
    let head = "*** Begin Patch\n*** Add File: a b  \t\u{3000}".as_bytes();
    for chunk in [1, 2, head.len()] {
        let mut parser = CodexParser::new();
        let (events, _) = codex_feed(&mut parser, head, chunk);
        assert_eq!(
            parser.pending(),
            6,
            "trailing whitespace is trimmed at the LF"
        );
        assert_eq!(events.last().unwrap(), "path:a b");
        let mut more = parser.clone();
        let (events, _) = codex_feed(&mut more, "c\u{3000}".as_bytes(), 1);
        assert_eq!(events, ["path:  \t\u{3000}c"]);
        assert_eq!(more.pending(), 3);
        let mut end = parser;
        let (events, _) = codex_feed(&mut end, b"\n", 1);
        assert_eq!(events, ["header_end"]);
        assert_eq!(end.pending(), 0);
    }
}

#[test]
fn codex_possible_closing_line_waits_until_it_cannot_be() {
    let head = b"*** Begin Patch\n*** Update File: a\n@@\n-x\n  *** End Pa";
    let mut parser = CodexParser::new();
    let (events, _) = codex_feed(&mut parser, head, 1);
    assert_eq!(parser.pending(), 12, "the line may still close the patch");
    assert_eq!(events.last().unwrap(), "line_end");
    let (events, _) = codex_feed(&mut parser, b"ss", 1);
    assert_eq!(events, ["line_start", "text: *** End Pass"]);
    assert_eq!(parser.pending(), 0);
}
