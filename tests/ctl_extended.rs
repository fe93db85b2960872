//! Extended CTL (inline and heredoc arguments) on its corpus and on hand-made edges: the
//! contract (chunking invariance, every prefix, exact allowed sets), snapshots of the event
//! streams, every bad input of issue 14 with its kind and offset, and the limits.

mod ctl_support;

use ctl_support::{corpus as corpus_in, snapshot_name, snapshot_with_unclosed as snapshot};
use frontier::contract::{ErrorKind, PushParser, Verdict};
use frontier::ctl::{CallAssembler, CtlMode, CtlParser, Limits, ToolCall, MAX_TAG};
use frontier::harness;

fn extended(limits: Limits) -> CtlParser {
    CtlParser::with_mode(limits, CtlMode::Extended)
}

fn corpus() -> Vec<std::path::PathBuf> {
    corpus_in("corpora/ctl/extended")
}

#[test]
fn every_chunking_gives_the_same_transcript() {
    ctl_support::every_chunking_gives_the_same_transcript(&extended(Limits::default()), &corpus());
}

#[test]
fn every_prefix_is_a_stream_of_its_own() {
    ctl_support::every_prefix_is_a_stream_of_its_own(&extended(Limits::default()), &corpus());
}

#[test]
fn allowed_is_exact_for_every_next_byte() {
    ctl_support::allowed_is_exact_for_every_next_byte(&extended(Limits::default()), &corpus());
}

#[test]
fn event_streams_match_their_snapshots() {
    for path in corpus() {
        let input = std::fs::read(&path).unwrap();
        let transcript = harness::run(extended(Limits::default()), &input, Some(5));
        insta::assert_json_snapshot!(snapshot_name(&path), snapshot(&transcript));
    }
}

/// The calls `input` confirms in `mode` with `limits`, fed in chunks of `chunk`, and the
/// outcome.
fn calls(
    input: &[u8],
    limits: Limits,
    chunk: usize,
) -> (
    Vec<ToolCall>,
    frontier::contract::Outcome<frontier::ctl::CtlErrorKind>,
) {
    let mut parser = extended(limits);
    let mut assembler = CallAssembler::default();
    let mut out = Vec::new();
    for piece in input.chunks(chunk.max(1)) {
        if parser
            .push(piece, &mut |e| out.extend(assembler.on_event(&e).unwrap()))
            .is_err()
        {
            break;
        }
    }
    (out, parser.finish(&mut |_| {}))
}

#[test]
fn every_bad_input_of_the_issue_has_its_kind_at_the_exact_byte() {
    let first = b"call c1 read_file\narg path = src/lib.rs\nend\ncall c2 w\n".len() as u64;
    for (file, at, kind) in [
        ("01_tag_not_a_token", first + 15, "unexpected_byte"),
        ("02_no_tag", first + 14, "unexpected_byte"),
        ("03_space_before_tag", first + 14, "unexpected_byte"),
        // `arg content = ` is 14 bytes: the line holds 241 value bytes and its LF.
        ("04_inline_too_long", first + 14 + 241, "line_too_long"),
        (
            "05_tag_too_long",
            first + 14 + MAX_TAG as u64,
            "line_too_long",
        ),
        ("06_quoted_tag", first + 14, "unexpected_byte"),
        ("07_no_space_after_equals", first + 10, "unexpected_byte"),
        ("08_space_in_tag_line_header", first + 17, "unexpected_byte"),
    ] {
        let path = format!(
            "{}/corpora/ctl/extended/invalid/{file}.ctl",
            env!("CARGO_MANIFEST_DIR")
        );
        let input = std::fs::read(&path).unwrap();
        for chunk in [1, 3, input.len()] {
            let (confirmed, outcome) = calls(&input, Limits::default(), chunk);
            let Verdict::Error(e) = outcome.verdict else {
                panic!("{file}: {:?}", outcome.verdict)
            };
            assert_eq!((e.offset, e.kind.as_str()), (at, kind), "{file}");
            assert_eq!(
                confirmed.len(),
                1,
                "{file}: the call before stays confirmed"
            );
            assert_eq!(confirmed[0].arg("path").unwrap().as_ref(), b"src/lib.rs");
        }
    }
}

#[test]
fn a_heredoc_never_closed_is_incomplete_and_never_executed() {
    let path = format!(
        "{}/corpora/ctl/extended/truncated/04_heredoc_never_closed.ctl",
        env!("CARGO_MANIFEST_DIR")
    );
    let input = std::fs::read(path).unwrap();
    for chunk in [1, 4, input.len()] {
        let (confirmed, outcome) = calls(&input, Limits::default(), chunk);
        let unclosed = outcome.verdict.unclosed().expect("incomplete").to_string();
        assert!(unclosed.contains("heredoc_body"), "{unclosed}");
        assert_eq!(confirmed.len(), 1);
        assert_eq!(confirmed[0].id, "c1");
    }
}

#[test]
fn the_three_forms_assemble_the_same_call() {
    let counted = b"call c1 w\narg path 4\na.rsarg content 6\nx\ny=z\nend\n";
    let inline_heredoc = b"call c1 w\narg path = a.rs\narg content <<EOF\nx\ny=z\nEOF\nend\n";
    let (a, _) = calls(counted, Limits::default(), 64);
    for chunk in [1, 2, 5, 64] {
        let (b, outcome) = calls(inline_heredoc, Limits::default(), chunk);
        assert_eq!(outcome.verdict, Verdict::Complete);
        assert_eq!(a, b, "chunks of {chunk}");
    }
}

#[test]
fn strict_mode_refuses_the_extended_forms_after_the_key() {
    for (input, at) in [
        (&b"call c1 w\narg path = a\nend\n"[..], 19),
        (b"call c1 w\narg c <<EOF\nEOF\nend\n", 16),
    ] {
        let t = harness::run(CtlParser::new(Limits::default()), input, None);
        let e = t.outcome.verdict.error().expect("strict refuses it");
        assert_eq!((e.offset, e.kind.as_str()), (at, "unexpected_byte"));
        let t = harness::run(extended(Limits::default()), input, None);
        assert_eq!(t.outcome.verdict, Verdict::Complete);
    }
}

/// `arg c <<T` LF, `body`, `T` LF, `end` LF in one call, with `max_arg`.
fn heredoc_call(body: &[u8]) -> Vec<u8> {
    let mut input = b"call c1 w\narg c <<T\n".to_vec();
    input.extend_from_slice(body);
    input.extend_from_slice(b"T\nend\n");
    input
}

#[test]
fn a_heredoc_value_of_exactly_max_arg_is_allowed_and_one_more_byte_is_not() {
    let limits = Limits {
        max_line: 256,
        max_arg: 6,
    };
    // Six bytes, the last an LF: exactly max_arg. Only the tag line may follow.
    let exact = heredoc_call(b"ab\ncd\n");
    let t = harness::check_chunking(&extended(limits), &exact, 1).unwrap();
    assert_eq!(t.outcome.verdict, Verdict::Complete);
    let mut parser = extended(limits);
    parser.push(&exact[..exact.len() - 6], &mut |_| {}).unwrap();
    assert_eq!(parser.allowed(), frontier::ByteSet::of(b"T"));
    // A sixth byte that is not an LF leaves no room for the LF its line needs.
    for body in [&b"ab\ncde\n"[..], b"abcdef\n", b"ab\ncd\n\n"] {
        let input = heredoc_call(body);
        let t = harness::check_chunking(&extended(limits), &input, 1).unwrap();
        let e = t.outcome.verdict.error().expect("over max_arg");
        assert_eq!(e.kind.as_str(), "arg_too_large");
        assert_eq!(e.offset, 20 + 5 + (body[5] == b'\n') as u64, "{body:?}");
    }
    // Held tag bytes count once the line departs: `TX` is two value bytes.
    let input = heredoc_call(b"abcd\nTX\n");
    let t = harness::check_chunking(&extended(limits), &input, 1).unwrap();
    let e = t.outcome.verdict.error().unwrap();
    assert_eq!((e.offset, e.kind.as_str()), (26, "arg_too_large"));
    // With max_arg 0 only the empty value fits.
    let zero = Limits {
        max_line: 256,
        max_arg: 0,
    };
    let t = harness::check_chunking(&extended(zero), &heredoc_call(b""), 1).unwrap();
    assert_eq!(t.outcome.verdict, Verdict::Complete);
    let t = harness::check_chunking(&extended(zero), &heredoc_call(b"\n"), 1).unwrap();
    assert_eq!(t.outcome.verdict.error().unwrap().offset, 20);
}

#[test]
fn an_inline_line_of_exactly_max_line_is_allowed_and_one_more_byte_is_not() {
    let limits = Limits {
        max_line: 16,
        max_arg: 0,
    };
    // `arg k = ` is 8 bytes: 7 value bytes and the LF make 16. max_arg does not bound it.
    let exact = b"call c1 w\narg k = 1234567\nend\n";
    let t = harness::check_chunking(&extended(limits), exact, 1).unwrap();
    assert_eq!(t.outcome.verdict, Verdict::Complete);
    let over = b"call c1 w\narg k = 12345678\nend\n";
    let t = harness::check_chunking(&extended(limits), over, 1).unwrap();
    let e = t.outcome.verdict.error().unwrap();
    assert_eq!((e.offset, e.kind.as_str()), (25, "line_too_long"));
}

#[test]
fn the_tag_is_bounded_by_max_line_and_by_max_tag() {
    // `arg k <<` is 8 bytes: with max_line 12 the tag may have 3 bytes.
    let small = Limits {
        max_line: 12,
        max_arg: 100,
    };
    let ok = b"call c w\narg k <<ABC\nx\nABC\nend\n";
    let t = harness::check_chunking(&extended(small), ok, 1).unwrap();
    assert_eq!(t.outcome.verdict, Verdict::Complete);
    let over = b"call c w\narg k <<ABCD\nx\nABCD\nend\n";
    let t = harness::run(extended(small), over, None);
    let e = t.outcome.verdict.error().unwrap();
    assert_eq!((e.offset, e.kind.as_str()), (20, "line_too_long"));
    // A tag of `MAX_TAG` bytes (more than the 20 an earlier machine held) is a tag.
    let long = "END_OF_FILE_CONTENTS_".repeat(4);
    let long = &long[..MAX_TAG];
    let stream = format!("call c w\narg k <<{long}\nx\n{long}x\n{long}\nend\n");
    let t = harness::check_chunking(&extended(Limits::default()), stream.as_bytes(), 1).unwrap();
    assert_eq!(t.outcome.verdict, Verdict::Complete);
    // With room to spare on the line, MAX_TAG bounds it.
    let mut parser = extended(Limits::default());
    let mut header = b"call c w\narg k <<".to_vec();
    header.extend(std::iter::repeat_n(b'T', MAX_TAG));
    parser.push(&header, &mut |_| {}).unwrap();
    assert_eq!(parser.allowed(), frontier::ByteSet::of(b"\n"));
}

#[test]
fn pending_bytes_are_the_held_tag_prefix_and_become_data_when_the_line_departs() {
    let input = b"call c w\narg k <<EOF\nEOF\r\nEOFX\nEOF\nend\n";
    let mut parser = extended(Limits::default());
    let mut data = Vec::new();
    for (at, &byte) in input.iter().enumerate() {
        parser
            .push(&[byte], &mut |e| {
                if let frontier::ctl::CtlEvent::ArgData(d) = e {
                    data.extend_from_slice(d)
                }
            })
            .unwrap();
        let prefix = &input[..=at];
        // Confirmed is everything but the held bytes of a possible tag line.
        let pending = parser.consumed() - parser.confirmed();
        match prefix {
            [.., b'\n', b'E'] if at > 20 => assert_eq!(pending, 1),
            [.., b'\n', b'E', b'O', b'F'] if at > 20 => assert_eq!(pending, 3),
            _ if at >= 21 && prefix.ends_with(b"\r") => assert_eq!(pending, 0),
            _ => {}
        }
    }
    assert_eq!(data, b"EOF\r\nEOFX\n");
    assert!(parser.accepting());
}

/// Found by the `ctl_extended` fuzz target: a run of heredoc content cut by `max_arg` right
/// after a line start took the bytes of a possible tag line as content, so fed whole the error
/// was at `O` of `EOFX`, a byte at a time (where `EOF` is held) at `X`.
#[test]
fn a_run_cut_by_max_arg_never_takes_a_held_tag_prefix() {
    let limits = Limits {
        max_line: 256,
        max_arg: 6,
    };
    let input = b"call c1 w\narg c <<EOF\nabc\nEOFX\nEOF\nend\n";
    let t = harness::check_chunking(&extended(limits), input, 1).unwrap();
    let e = t.outcome.verdict.error().unwrap();
    assert_eq!((e.offset, e.kind.as_str()), (29, "arg_too_large"));
}
