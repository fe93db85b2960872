//! The writer against the parser: whatever calls are framed, in either mode and under any
//! limits, the parser of that mode assembles exactly those calls; a call the writer refuses is
//! one the language cannot carry.

use bytes::Bytes;
use proptest::prelude::*;

use frontier::contract::{PushParser, Verdict};
use frontier::ctl::{arg_form, write_call, ArgForm, CallAssembler, CtlParser, Field, FrameError};
use frontier::ctl::{Limits, ToolCall};
use frontier::language::CtlMode;

/// Parses `stream` in `mode`, split in two at `split`, into calls; the verdict must be
/// complete.
fn parse(stream: &[u8], mode: CtlMode, limits: Limits, split: usize) -> Vec<ToolCall> {
    let mut parser = CtlParser::with_mode(limits, mode);
    let mut assembler = CallAssembler::default();
    let mut calls = Vec::new();
    let split = split % (stream.len() + 1);
    for piece in [&stream[..split], &stream[split..]] {
        parser
            .push(piece, &mut |e| {
                calls.extend(assembler.on_event(&e).unwrap())
            })
            .unwrap_or_else(|e| panic!("{e} in {:?}", String::from_utf8_lossy(stream)));
    }
    assert_eq!(parser.finish(&mut |_| {}).verdict, Verdict::Complete);
    calls
}

fn token() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_.:-]{1,10}"
}

/// Values built from pieces that stress the forms: lines equal to the tags (with and without
/// CR), `end` lines, lone CR and LF, and arbitrary bytes.
fn value() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"EOF\n".to_vec()),
        Just(b"EOF1\n".to_vec()),
        Just(b"EOF2\n".to_vec()),
        Just(b"EOF\r\n".to_vec()),
        Just(b"end\n".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"EOF".to_vec()),
        prop::collection::vec(any::<u8>(), 0..40),
    ];
    prop::collection::vec(piece, 0..8).prop_map(|pieces| pieces.concat())
}

fn call() -> impl Strategy<Value = ToolCall> {
    (
        token(),
        token(),
        prop::collection::vec((token(), value()), 0..5),
    )
        .prop_map(|(id, name, args)| ToolCall {
            id,
            name,
            args: args.into_iter().map(|(k, v)| (k, Bytes::from(v))).collect(),
        })
}

fn mode() -> impl Strategy<Value = CtlMode> {
    prop_oneof![Just(CtlMode::Strict), Just(CtlMode::Extended)]
}

fn limits() -> impl Strategy<Value = Limits> {
    (
        prop_oneof![9u32..40, Just(256u32)],
        prop_oneof![0u64..300, Just(1 << 24)],
    )
        .prop_map(|(max_line, max_arg)| Limits { max_line, max_arg })
}

/// Whether a refusal is what the language demands: the bound named is really crossed.
fn justified(call: &ToolCall, error: &FrameError, limits: Limits) -> bool {
    let max_line = limits.max_line as usize;
    match *error {
        FrameError::NotAToken { .. } => false,
        FrameError::ArgTooLarge { arg, len, max_arg } => {
            len == call.args[arg].1.len() as u64 && len > max_arg && max_arg == limits.max_arg
        }
        FrameError::LineTooLong {
            field: Field::Id,
            len,
            ..
        } => len == 5 + call.id.len() + 1 + call.name.len() + 1 && len > max_line,
        FrameError::LineTooLong {
            field: Field::Key(i),
            len,
            ..
        } => {
            let (key, value) = &call.args[i];
            // Only the counted form was left, and even its header does not fit.
            let counted = 4 + key.len() + 1 + value.len().to_string().len() + 1;
            len == counted && counted > max_line
        }
        FrameError::LineTooLong { .. } => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn the_parser_assembles_exactly_the_calls_framed(
        calls in prop::collection::vec(call(), 1..4),
        mode in mode(),
        limits in limits(),
        split in any::<usize>(),
    ) {
        let mut stream = Vec::new();
        let mut framed = Vec::new();
        for call in &calls {
            match write_call(call, mode, limits, &mut stream) {
                Ok(()) => framed.push(call.clone()),
                Err(e) => prop_assert!(justified(call, &e, limits), "{e} for {call:?}"),
            }
        }
        prop_assert_eq!(parse(&stream, mode, limits, split), framed.clone());
        // Extended CTL keeps the counted form: what strict framing wrote reads the same.
        if mode == CtlMode::Strict {
            prop_assert_eq!(parse(&stream, CtlMode::Extended, limits, split), framed);
        }
    }

    /// Extended framing counts only what the other forms cannot carry.
    #[test]
    fn extended_framing_counts_only_what_it_must(key in token(), value in value()) {
        let limits = Limits::default();
        let form = arg_form(key.as_bytes(), &value, CtlMode::Extended, limits);
        let has_lf = value.contains(&b'\n');
        // `arg KEY = VALUE` LF within max_line.
        let inline_line = "arg ".len() + key.len() + " = ".len() + value.len() + "\n".len();
        let fits_inline = inline_line <= limits.max_line as usize;
        match form {
            ArgForm::Inline => prop_assert!(!has_lf && fits_inline),
            ArgForm::Heredoc(tag) => {
                prop_assert!(value.ends_with(b"\n"));
                let tag = tag.to_string();
                prop_assert!(value.split(|&b| b == b'\n').all(|line| line != tag.as_bytes()));
            }
            ArgForm::Counted => prop_assert!(
                (has_lf || !fits_inline) && !value.ends_with(b"\n")
            ),
        }
    }
}

#[test]
fn values_with_every_tag_as_a_line_fall_back_to_the_counted_form() {
    let mut value = Vec::new();
    for n in 0..frontier::ctl::TAG_CANDIDATES {
        value.extend_from_slice(
            if n == 0 {
                "EOF\n".to_owned()
            } else {
                format!("EOF{n}\n")
            }
            .as_bytes(),
        );
    }
    let call = ToolCall {
        id: "c1".into(),
        name: "write_file".into(),
        args: vec![("content".into(), Bytes::from(value.clone()))],
    };
    let mut stream = Vec::new();
    write_call(&call, CtlMode::Extended, Limits::default(), &mut stream).unwrap();
    let header = format!("call c1 write_file\narg content {}\n", value.len());
    assert!(stream.starts_with(header.as_bytes()));
    assert_eq!(
        parse(&stream, CtlMode::Extended, Limits::default(), 7),
        [call]
    );
}
