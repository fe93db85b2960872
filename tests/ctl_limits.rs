//! Exact-boundary behaviour of strict CTL: the limits, leading zeros, CR, blank lines, noise.

use frontier::contract::{ErrorKind, PushParser, Verdict};
use frontier::ctl::{CtlErrorKind, CtlParser, Limits};

/// Parses `input` whole and returns (verdict name, error offset and kind).
fn verdict(input: &[u8], limits: Limits) -> (&'static str, Option<(u64, &'static str)>) {
    let mut parser = CtlParser::new(limits);
    let _ = parser.push(input, &mut |_| {});
    let outcome = parser.finish(&mut |_| {});
    let error = match outcome.verdict {
        Verdict::Error(e) => Some((e.offset, e.kind.as_str())),
        _ => None,
    };
    (outcome.verdict.as_str(), error)
}

/// A call line of exactly `len` bytes, LF included.
fn call_line_of(len: usize) -> Vec<u8> {
    let mut line = b"call c ".to_vec();
    line.resize(len - 1, b'n');
    line.push(b'\n');
    line
}

#[test]
fn a_header_line_of_exactly_max_line_bytes_is_accepted() {
    for max_line in [9u32, 10, 64, 256] {
        let limits = Limits {
            max_line,
            ..Limits::default()
        };
        let mut input = call_line_of(max_line as usize);
        input.extend_from_slice(b"end\n");
        assert_eq!(
            verdict(&input, limits),
            ("complete", None),
            "max_line {max_line}"
        );
    }
}

#[test]
fn one_byte_more_is_refused_where_the_lf_no_longer_fits() {
    for max_line in [9u32, 10, 64, 256] {
        let limits = Limits {
            max_line,
            ..Limits::default()
        };
        let input = call_line_of(max_line as usize + 1);
        // The name byte at offset max_line - 1 would leave no room for the LF.
        assert_eq!(
            verdict(&input, limits),
            ("error", Some((max_line as u64 - 1, "line_too_long"))),
            "max_line {max_line}"
        );
        // At that point only the LF is allowed.
        let mut parser = CtlParser::new(limits);
        parser
            .push(&input[..max_line as usize - 1], &mut |_| {})
            .unwrap();
        assert_eq!(parser.allowed().iter().collect::<Vec<_>>(), vec![b'\n']);
    }
}

#[test]
fn limits_too_small_for_any_frame_allow_only_the_empty_stream() {
    // The shortest call line, "call a b\n", is 9 bytes.
    let limits = Limits {
        max_line: 8,
        ..Limits::default()
    };
    let parser = CtlParser::new(limits);
    assert!(parser.allowed().is_empty());
    assert!(parser.accepting());
    assert_eq!(verdict(b"c", limits), ("error", Some((0, "line_too_long"))));
}

#[test]
fn the_id_keeps_room_for_the_name() {
    // With max_line 10, "call " + id + " " + name + LF: the id may be 2 bytes, not 3.
    let limits = Limits {
        max_line: 10,
        ..Limits::default()
    };
    assert_eq!(verdict(b"call ab c\nend\n", limits), ("complete", None));
    assert_eq!(
        verdict(b"call abc", limits),
        ("error", Some((7, "line_too_long")))
    );
}

#[test]
fn nbytes_equal_to_max_arg_is_accepted_and_one_more_is_refused() {
    let limits = Limits {
        max_arg: 10,
        ..Limits::default()
    };
    let mut ok = b"call c1 w\narg k 10\n".to_vec();
    ok.extend_from_slice(&[b'x'; 10]);
    ok.extend_from_slice(b"end\n");
    assert_eq!(verdict(&ok, limits), ("complete", None));
    assert_eq!(
        verdict(b"call c1 w\narg k 11\n", limits),
        ("error", Some((17, "arg_too_large")))
    );
    assert_eq!(
        verdict(b"call c1 w\narg k 100", limits),
        ("error", Some((18, "arg_too_large")))
    );

    let default = Limits::default();
    let max = Limits::DEFAULT_MAX_ARG;
    let header = format!("call c1 w\narg k {max}\n");
    assert_eq!(verdict(header.as_bytes(), default), ("incomplete", None));
    let over = format!("call c1 w\narg k {}\n", max + 1);
    assert_eq!(
        verdict(over.as_bytes(), default),
        ("error", Some((over.len() as u64 - 2, "arg_too_large")))
    );
}

#[test]
fn a_huge_nbytes_is_refused_before_anything_is_allocated() {
    let (v, e) = verdict(
        b"call c1 w\narg k 999999999999999999999999\n",
        Limits::default(),
    );
    assert_eq!(v, "error");
    // 16777216 has 8 digits: the 8th 9 crosses it.
    assert_eq!(e, Some((16 + 7, "arg_too_large")));
    // A bound of u64::MAX does not overflow either.
    let limits = Limits {
        max_arg: u64::MAX,
        ..Limits::default()
    };
    let (_, e) = verdict(b"call c1 w\narg k 99999999999999999999\n", limits);
    assert_eq!(e, Some((16 + 19, "arg_too_large")));
}

#[test]
fn leading_zeros_are_refused_but_zero_is_fine() {
    let limits = Limits::default();
    assert_eq!(
        verdict(b"call c1 w\narg k 0\nend\n", limits),
        ("complete", None)
    );
    assert_eq!(
        verdict(b"call c1 w\narg k 00\n", limits),
        ("error", Some((17, "unexpected_byte")))
    );
    assert_eq!(
        verdict(b"call c1 w\narg k 01\n", limits),
        ("error", Some((17, "unexpected_byte")))
    );
    let mut parser = CtlParser::new(limits);
    parser.push(b"call c1 w\narg k 0", &mut |_| {}).unwrap();
    assert_eq!(parser.allowed().iter().collect::<Vec<_>>(), vec![b'\n']);
}

#[test]
fn cr_blank_lines_and_noise_are_unexpected() {
    let limits = Limits::default();
    assert_eq!(
        verdict(b"call c1 w\r\n", limits),
        ("error", Some((9, "unexpected_byte")))
    );
    assert_eq!(
        verdict(b"call c1 w\nend\r\n", limits),
        ("error", Some((13, "unexpected_byte")))
    );
    assert_eq!(
        verdict(b"\ncall c1 w\nend\n", limits),
        ("error", Some((0, "unexpected_byte")))
    );
    assert_eq!(
        verdict(b"call c1 w\n\nend\n", limits),
        ("error", Some((10, "unexpected_byte")))
    );
    assert_eq!(
        verdict(b"call  c1 w\n", limits),
        ("error", Some((5, "unexpected_byte")))
    );
    assert_eq!(
        verdict(b"call c1 w x\n", limits),
        ("error", Some((9, "unexpected_byte")))
    );
    assert_eq!(
        verdict(b"Here you go:\ncall c1 w\nend\n", limits),
        ("error", Some((0, "unexpected_byte")))
    );
    assert_eq!(
        verdict(b"CALL c1 w\n", limits),
        ("error", Some((0, "unexpected_byte")))
    );
}

#[test]
fn errors_carry_offset_byte_and_kind_and_stay() {
    let mut parser = CtlParser::default();
    let mut events = 0;
    parser
        .push(b"call c1 w\nend\n", &mut |_| events += 1)
        .unwrap();
    let e = parser
        .push(b"call c2 w\r", &mut |_| events += 1)
        .unwrap_err();
    assert_eq!(
        (e.offset, e.byte, e.kind),
        (23, b'\r', CtlErrorKind::UnexpectedByte)
    );
    assert_eq!(e.to_string(), "unexpected_byte at byte 23 (0x0d)");
    assert_eq!(events, 2, "call_start and call_end of c1 only");
    assert_eq!(parser.push(b"", &mut |_| {}), Err(e));
    assert_eq!(parser.confirmed(), 14);
    assert_eq!(parser.finish(&mut |_| {}).verdict, Verdict::Error(e));
}

#[test]
fn pending_never_exceeds_max_line_minus_one() {
    let limits = Limits {
        max_line: 32,
        ..Limits::default()
    };
    let mut parser = CtlParser::new(limits);
    let input = b"call abcdefghij klmnopqrstuvwxy\narg kkkkkkkkkkkkkkkkkkkkkkkkk 3\nabcend\n";
    for &b in input {
        parser.push(&[b], &mut |_| {}).unwrap();
        assert!(parser.pending() <= 31, "pending {}", parser.pending());
    }
    assert!(parser.accepting());
}

#[test]
fn a_clone_is_an_independent_snapshot() {
    let mut parser = CtlParser::default();
    parser.push(b"call c1 w\narg k 3\nab", &mut |_| {}).unwrap();
    let snapshot = parser.clone();
    parser.push(b"cend\n", &mut |_| {}).unwrap();
    assert!(parser.accepting());
    assert!(!snapshot.accepting());
    assert_eq!(snapshot.consumed(), 20);
    assert_eq!(snapshot.machine().body_remaining(), 1);
}
