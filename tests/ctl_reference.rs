//! The push parser against a naive whole-buffer reference written with `nom`.
//!
//! The reference knows nothing of states or `allowed()`: it parses a whole buffer, and says a
//! prefix is viable when it parses as complete frames followed by at most one unfinished frame
//! that can still be finished. An unfinished header line is finished by trying every suffix of
//! the shortest lines of each kind (`call a a\n`, `arg a 0\n`, `end\n`); the shortest
//! completion of any partial header is one of them. `allowed(p)` is then, by definition, the
//! set of bytes `b` with `p·b` viable, and the error offset the first byte that is not.
//!
//! Extended CTL is the same reference with two more `arg` lines (`arg a = ` LF and
//! `arg a <<T` LF among the shortest lines) and a heredoc body read line by line until a line
//! equal to the tag; a body cut off is viable when it can still be closed within `max_arg`,
//! either by finishing the tag line its last line begins or by an LF and the tag line.

use nom::bytes::streaming::{tag, take, take_till, take_while1};
use nom::character::streaming::digit1;
use nom::sequence::tuple;
use nom::IResult;
use proptest::prelude::*;

use frontier::contract::{ErrorKind, PushParser, Verdict};
use frontier::ctl::{CallAssembler, CallBounds, CtlMode, CtlParser, Limits, ToolCall, MAX_TAG};
use frontier::ByteSet;

fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"_.:-".contains(&b)
}

fn token(i: &[u8]) -> IResult<&[u8], &[u8]> {
    take_while1(is_token)(i)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// The language judged: the limits, the mode, and the longest heredoc tag (part of the
/// language like `max_line`, and relaxed with it when the reference names an error's kind).
#[derive(Clone, Copy, Debug)]
struct Spec {
    limits: Limits,
    extended: bool,
    max_tag: usize,
}

impl Spec {
    fn new(limits: Limits, extended: bool) -> Spec {
        Spec {
            limits,
            extended,
            max_tag: MAX_TAG,
        }
    }

    fn mode(&self) -> CtlMode {
        if self.extended {
            CtlMode::Extended
        } else {
            CtlMode::Strict
        }
    }
}

/// A complete header line and what it says.
enum Line {
    Call(String, String),
    Arg(String, u64),
    Inline(String, Vec<u8>),
    Heredoc(String, Vec<u8>),
    End,
}

fn wrong<T>(i: &[u8]) -> IResult<&[u8], T> {
    Err(nom::Err::Error(nom::error::Error::new(
        i,
        nom::error::ErrorKind::Verify,
    )))
}

/// Extended CTL's two `arg` lines: inline and heredoc.
fn extended_arg(i: &[u8], spec: Spec) -> IResult<&[u8], Line> {
    let inline = tuple((
        tag("arg "),
        token,
        tag(" = "),
        take_till(|b| b == b'\n'),
        tag("\n"),
    ))(i)
    .map(|(rest, (_, key, _, value, _))| (rest, Line::Inline(text(key), value.to_vec())));
    let heredoc = tuple((tag("arg "), token, tag(" <<"), token, tag("\n")))(i).and_then(
        |(rest, (_, key, _, tag, _))| {
            if tag.len() <= spec.max_tag {
                Ok((rest, Line::Heredoc(text(key), tag.to_vec())))
            } else {
                wrong(i)
            }
        },
    );
    // Parsed by either, else cut off for either, else wrong.
    match (inline, heredoc) {
        (Ok(done), _) | (_, Ok(done)) => Ok(done),
        (Err(nom::Err::Incomplete(n)), _) | (_, Err(nom::Err::Incomplete(n))) => {
            Err(nom::Err::Incomplete(n))
        }
        (Err(e), _) => Err(e),
    }
}

/// One header line, checked against the limits. `Err(true)` means "cut off", `Err(false)` "wrong".
fn header(i: &[u8], spec: Spec, in_frame: bool) -> Result<(&[u8], Line), bool> {
    let limits = spec.limits;
    let parsed: IResult<&[u8], Line> = if in_frame {
        if i.first() == Some(&b'a') {
            let counted = tuple((tag("arg "), token, tag(" "), digit1, tag("\n")))(i).and_then(
                |(rest, (_, key, _, n, _))| {
                    let leading_zero = n.len() > 1 && n[0] == b'0';
                    let value = std::str::from_utf8(n).unwrap().parse::<u64>().ok();
                    match value {
                        Some(v) if !leading_zero && v <= limits.max_arg => {
                            Ok((rest, Line::Arg(text(key), v)))
                        }
                        _ => wrong(i),
                    }
                },
            );
            match counted {
                Err(nom::Err::Error(_)) if spec.extended => extended_arg(i, spec),
                // `arg k ` is cut off for the counted form and for the other two.
                Err(nom::Err::Incomplete(n)) if spec.extended => match extended_arg(i, spec) {
                    Ok(done) => Ok(done),
                    _ => Err(nom::Err::Incomplete(n)),
                },
                other => other,
            }
        } else {
            tag("end\n")(i).map(|(rest, _)| (rest, Line::End))
        }
    } else {
        tuple((tag("call "), token, tag(" "), token, tag("\n")))(i)
            .map(|(rest, (_, id, _, name, _))| (rest, Line::Call(text(id), text(name))))
    };
    match parsed {
        Ok((rest, line)) if i.len() - rest.len() <= limits.max_line as usize => Ok((rest, line)),
        Ok(_) => Err(false),
        Err(nom::Err::Incomplete(_)) => Err(true),
        Err(_) => Err(false),
    }
}

/// Whether a cut-off header line can still be finished within the limits.
fn line_can_finish(partial: &[u8], spec: Spec, in_frame: bool) -> bool {
    let shortest: &[&[u8]] = match (in_frame, spec.extended) {
        (true, false) => &[b"arg a 0\n", b"end\n"],
        (true, true) => &[b"arg a 0\n", b"end\n", b"arg a = \n", b"arg a <<T\n"],
        (false, _) => &[b"call a a\n"],
    };
    shortest.iter().any(|line| {
        (0..=line.len()).any(|k| {
            let mut attempt = partial.to_vec();
            attempt.extend_from_slice(&line[k..]);
            matches!(header(&attempt, spec, in_frame), Ok((rest, _)) if rest.is_empty())
        })
    })
}

/// A heredoc body: its value and the bytes after its tag line, or the status of a body that
/// never reaches its tag line.
fn heredoc_body<'i>(
    body: &'i [u8],
    tag: &[u8],
    max_arg: u64,
) -> Result<(&'i [u8], &'i [u8]), Status> {
    let mut line_start = 0;
    while let Some(lf) = body[line_start..].iter().position(|&b| b == b'\n') {
        if &body[line_start..line_start + lf] == tag {
            let value = &body[..line_start];
            if value.len() as u64 > max_arg {
                return Err(Status::Error);
            }
            return Ok((value, &body[line_start + lf + 1..]));
        }
        line_start += lf + 1;
    }
    // Cut off: the last line may still become the tag line, or end and be followed by it.
    let last = &body[line_start..];
    let can_close = tag.starts_with(last) && line_start as u64 <= max_arg;
    let can_go_on = (body.len() as u64) < max_arg;
    Err(if can_close || can_go_on {
        Status::Incomplete
    } else {
        Status::Error
    })
}

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum Status {
    Complete,
    Incomplete,
    Error,
}

/// Parses a whole buffer: the complete calls, and whether the buffer is viable.
fn reference(input: &[u8], spec: Spec) -> (Status, Vec<ToolCall>) {
    let mut calls = Vec::new();
    let mut rest = input;
    loop {
        if rest.is_empty() {
            return (Status::Complete, calls);
        }
        let (after, id, name) = match header(rest, spec, false) {
            Ok((after, Line::Call(id, name))) => (after, id, name),
            Ok(_) => unreachable!("outside a frame only call lines parse"),
            Err(true) if line_can_finish(rest, spec, false) => return (Status::Incomplete, calls),
            Err(_) => return (Status::Error, calls),
        };
        rest = after;
        let mut call = ToolCall {
            id,
            name,
            args: Vec::new(),
        };
        loop {
            if rest.is_empty() {
                let status = if line_can_finish(rest, spec, true) {
                    Status::Incomplete
                } else {
                    Status::Error
                };
                return (status, calls);
            }
            match header(rest, spec, true) {
                Ok((after, Line::End)) => {
                    rest = after;
                    calls.push(call);
                    break;
                }
                Ok((after, Line::Arg(key, n))) => {
                    match take::<u64, &[u8], nom::error::Error<&[u8]>>(n)(after) {
                        Ok((after_body, body)) => {
                            call.args.push((key, bytes::Bytes::copy_from_slice(body)));
                            rest = after_body;
                        }
                        Err(_) => return (Status::Incomplete, calls),
                    }
                }
                Ok((after, Line::Inline(key, value))) => {
                    call.args.push((key, bytes::Bytes::from(value)));
                    rest = after;
                }
                Ok((after, Line::Heredoc(key, tag))) => {
                    match heredoc_body(after, &tag, spec.limits.max_arg) {
                        Ok((value, after_tag)) => {
                            call.args.push((key, bytes::Bytes::copy_from_slice(value)));
                            rest = after_tag;
                        }
                        Err(status) => return (status, calls),
                    }
                }
                Ok((_, Line::Call(..))) => unreachable!(),
                Err(true) if line_can_finish(rest, spec, true) => {
                    return (Status::Incomplete, calls)
                }
                Err(_) => return (Status::Error, calls),
            }
        }
    }
}

fn viable(input: &[u8], spec: Spec) -> bool {
    reference(input, spec).0 != Status::Error
}

fn reference_allowed(prefix: &[u8], spec: Spec) -> ByteSet {
    let mut set = ByteSet::EMPTY;
    let mut attempt = prefix.to_vec();
    attempt.push(0);
    for b in 0..=255u8 {
        *attempt.last_mut().unwrap() = b;
        if viable(&attempt, spec) {
            set = set.with(b);
        }
    }
    set
}

/// The kind the reference gives a refused byte: which limit, relaxed, would have let it in.
/// The tag's bound is a line bound.
fn reference_kind(prefix_and_byte: &[u8], spec: Spec) -> &'static str {
    let limits = spec.limits;
    let no_arg_bound = Spec {
        limits: Limits {
            max_arg: u64::MAX / 16,
            ..limits
        },
        ..spec
    };
    let no_line_bound = Spec {
        limits: Limits {
            max_line: u32::MAX,
            ..limits
        },
        max_tag: usize::MAX,
        ..spec
    };
    let neither = Spec {
        limits: Limits {
            max_line: u32::MAX,
            max_arg: u64::MAX / 16,
        },
        max_tag: usize::MAX,
        ..spec
    };
    if viable(prefix_and_byte, no_arg_bound)
        || (viable(prefix_and_byte, neither) && !viable(prefix_and_byte, no_line_bound))
    {
        "arg_too_large"
    } else if viable(prefix_and_byte, no_line_bound) {
        "line_too_long"
    } else {
        "unexpected_byte"
    }
}

/// Compares parser and reference on one input, prefix by prefix.
fn compare(input: &[u8], spec: Spec) -> Result<(), TestCaseError> {
    let limits = spec.limits;
    let new_parser = || CtlParser::with_mode(limits, spec.mode());
    let mut parser = new_parser();
    // Unbounded: the reference knows no per-call bounds.
    let mut assembler = CallAssembler::new(CallBounds {
        max_args: usize::MAX,
        max_bytes: u64::MAX,
    });
    let mut calls = Vec::new();
    for k in 0..=input.len() {
        let prefix = &input[..k];
        prop_assert_eq!(
            parser.allowed(),
            reference_allowed(prefix, spec),
            "allowed after {:?}",
            String::from_utf8_lossy(prefix)
        );
        prop_assert_eq!(
            parser.accepting(),
            reference(prefix, spec).0 == Status::Complete
        );
        let Some(&byte) = input.get(k) else { break };
        if let Err(e) = parser.push(&[byte], &mut |e| {
            calls.extend(assembler.on_event(&e).unwrap())
        }) {
            prop_assert_eq!(e.offset, k as u64);
            prop_assert!(!viable(&input[..=k], spec));
            prop_assert_eq!(e.kind.as_str(), reference_kind(&input[..=k], spec));
            break;
        }
    }
    let (status, expected_calls) = {
        let cut = parser.error().map_or(input.len(), |e| e.offset as usize);
        let (status, calls) = reference(&input[..cut], spec);
        let status = if parser.error().is_some() {
            Status::Error
        } else {
            status
        };
        (status, calls)
    };
    let outcome = parser.finish(&mut |_| {});
    // Chunks take the bulk paths (whole lines, runs of a line, body slices), which update the
    // allowed set once per run: it must be the reference's after every chunk all the same.
    for size in [3, 7, 64] {
        let mut chunked = new_parser();
        let mut end = 0;
        for chunk in input.chunks(size) {
            end += chunk.len();
            if chunked.push(chunk, &mut |_| {}).is_err() {
                break;
            }
            prop_assert_eq!(
                chunked.allowed(),
                reference_allowed(&input[..end], spec),
                "allowed after {:?} in chunks of {}",
                String::from_utf8_lossy(&input[..end]),
                size
            );
        }
    }
    // Whole-buffer feeding takes the fast paths (whole lines, token runs, body slices): the
    // same events and outcome as byte-at-a-time feeding, and as every split in two.
    let whole =
        frontier::harness::check_chunking(&new_parser(), input, 1).map_err(TestCaseError::fail)?;
    prop_assert_eq!(&whole.outcome, &outcome);
    // And as chunks of every small size: a chunk that begins and ends inside one line (a
    // stream's token) takes paths of its own.
    for size in (2..=9).chain([16, 64]) {
        let chunked = frontier::harness::run(new_parser(), input, Some(size));
        prop_assert_eq!(&chunked, &whole, "in chunks of {}", size);
    }
    let verdict = outcome.verdict;
    let got = match verdict {
        Verdict::Complete => Status::Complete,
        Verdict::Incomplete(_) => Status::Incomplete,
        Verdict::Error(_) => Status::Error,
    };
    prop_assert_eq!(got, status);
    prop_assert_eq!(calls, expected_calls);
    Ok(())
}

/// A generated call: id, name, and (key, body, form) arguments. The form is a wish: 0 counted,
/// 1 inline, 2 and up a heredoc with one of [`TAGS`]; a value the form cannot carry is counted.
type GenCall = (String, String, Vec<(String, Vec<u8>, u8)>);

const TAGS: [&[u8]; 5] = [
    b"EOF",
    b"end",
    b"T",
    b"ABCDEFGHIJKLMNOPQRST",
    // `MAX_TAG` bytes: the longest tag the machine holds.
    b"END_OF_THE_FILE_CONTENTS_WRITTEN_BY_THE_MODEL_0123456789abcdefgh",
];

fn encode(calls: &[GenCall], extended: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for (id, name, args) in calls {
        out.extend_from_slice(format!("call {id} {name}\n").as_bytes());
        for (key, body, form) in args {
            let form = if extended { *form } else { 0 };
            let tag = TAGS[form as usize % TAGS.len()];
            let heredoc_fits = (body.is_empty() || body.ends_with(b"\n"))
                && !body.split(|&b| b == b'\n').any(|line| line == tag);
            if form == 1 && !body.contains(&b'\n') {
                out.extend_from_slice(format!("arg {key} = ").as_bytes());
                out.extend_from_slice(body);
                out.push(b'\n');
            } else if form >= 2 && heredoc_fits {
                out.extend_from_slice(format!("arg {key} <<").as_bytes());
                out.extend_from_slice(tag);
                out.push(b'\n');
                out.extend_from_slice(body);
                out.extend_from_slice(tag);
                out.push(b'\n');
            } else {
                out.extend_from_slice(format!("arg {key} {}\n", body.len()).as_bytes());
                out.extend_from_slice(body);
            }
        }
        out.extend_from_slice(b"end\n");
    }
    out
}

fn token_strategy() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[a-zA-Z0-9_.:-]{1,6}").unwrap()
}

fn body_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..12),
        Just(b"end\n".to_vec()),
        Just(b"call a b\nend\n".to_vec()),
        Just(b"EOF\nEOFX\nEOF\r\n".to_vec()),
        Just(b"EO\nT \nTT\n".to_vec()),
        Just(b"x = y << EOF".to_vec()),
        Just(b"\n".to_vec()),
    ]
}

fn stream_strategy(extended: bool) -> impl Strategy<Value = Vec<u8>> {
    let call = (
        token_strategy(),
        token_strategy(),
        proptest::collection::vec((token_strategy(), body_strategy(), 0u8..6), 0..3),
    );
    proptest::collection::vec(call, 0..4).prop_map(move |calls| encode(&calls, extended))
}

fn limits_strategy() -> impl Strategy<Value = Limits> {
    (
        prop_oneof![4u32..=24, Just(256u32)],
        prop_oneof![0u64..=20, Just(1000u64)],
    )
        .prop_map(|(max_line, max_arg)| Limits { max_line, max_arg })
}

#[derive(Debug, Clone)]
enum Mutation {
    None,
    Truncate(usize),
    Replace(usize, u8),
    Insert(usize, u8),
    Delete(usize),
}

fn mutate(mut input: Vec<u8>, m: &Mutation) -> Vec<u8> {
    let at = |i: usize, len: usize| if len == 0 { 0 } else { i % len };
    match *m {
        Mutation::None => {}
        Mutation::Truncate(i) => input.truncate(at(i, input.len() + 1)),
        Mutation::Replace(i, b) if !input.is_empty() => {
            let i = at(i, input.len());
            input[i] = b;
        }
        Mutation::Insert(i, b) => {
            let i = at(i, input.len() + 1);
            input.insert(i, b);
        }
        Mutation::Delete(i) if !input.is_empty() => {
            input.remove(at(i, input.len()));
        }
        _ => {}
    }
    input
}

fn mutation_strategy() -> impl Strategy<Value = Mutation> {
    let byte = prop_oneof![
        any::<u8>(),
        proptest::sample::select(b" \n\r0123456789acdegln=<EOFT".to_vec())
    ];
    prop_oneof![
        Just(Mutation::None),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), byte.clone()).prop_map(|(i, b)| Mutation::Replace(i, b)),
        (any::<usize>(), byte).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<usize>().prop_map(Mutation::Delete),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn parser_agrees_with_the_reference(
        stream in stream_strategy(false),
        limits in limits_strategy(),
        mutation in mutation_strategy(),
    ) {
        let input = mutate(stream, &mutation);
        compare(&input, Spec::new(limits, false))?;
    }

    #[test]
    fn extended_parser_agrees_with_the_reference(
        stream in stream_strategy(true),
        limits in limits_strategy(),
        mutation in mutation_strategy(),
    ) {
        let input = mutate(stream, &mutation);
        compare(&input, Spec::new(limits, true))?;
    }
}

#[test]
fn reference_agrees_on_hand_written_edges() {
    let default = Limits::default();
    let small = Limits {
        max_line: 12,
        max_arg: 99,
    };
    for (input, limits) in [
        (&b"call a b\narg k 007"[..], default),
        (b"call abcd efgh\n", small),
        (b"call a bcd\narg k 99\n", small),
        (b"call a bcd\narg k 100", small),
        (b"call a b\r\n", default),
        (b"\n", default),
        (b"call a b\nend\nend\n", default),
    ] {
        compare(input, Spec::new(limits, false)).unwrap();
        compare(input, Spec::new(limits, true)).unwrap();
    }
}

#[test]
fn a_heredoc_line_begun_at_a_chunk_boundary_is_content_to_its_end() {
    // A chunk that starts a body line departing from the tag and ends inside it: the tag's
    // bytes at the start of the next chunk are content, not the tag line.
    let input = b"call c1 w\narg c <<T\nab\nxyT\nT\nend\n";
    let spec = Spec::new(Limits::default(), true);
    compare(input, spec).unwrap();
    let whole = frontier::harness::run(
        CtlParser::with_mode(Limits::default(), CtlMode::Extended),
        input,
        None,
    );
    for size in 1..input.len() {
        let parser = CtlParser::with_mode(Limits::default(), CtlMode::Extended);
        assert_eq!(
            frontier::harness::run(parser, input, Some(size)),
            whole,
            "chunks of {size}"
        );
    }
}

#[test]
fn reference_agrees_on_extended_edges() {
    let default = Limits::default();
    let small = Limits {
        max_line: 12,
        max_arg: 4,
    };
    for (input, limits) in [
        (&b"call a b\narg k = \nend\n"[..], default),
        (b"call a b\narg k = x y\nend\n", small),
        (b"call a b\narg k = xyzw\n", small),
        (b"call a b\narg k <<EOF\nab\nEOFX\nEOF\nend\n", default),
        (b"call a b\narg k <<EOF\nEOF\r\nEOF\nend\n", default),
        (b"call a b\narg k <<end\nend\nend\n", default),
        (b"call a b\narg k <<T\nab\ncd\nT\nend\n", small),
        (b"call a b\narg k <<T\nabcd\nT\nend\n", small),
        (b"call a b\narg k <<T\nabc\nTX\nT\n", small),
        (b"call a b\narg k <<ABCD\n", small),
        (b"call a b\narg k <<\n", default),
        (b"call a b\narg k <<ABCDEFGHIJKLMNOPQRSTU\n", default),
        (b"call a b\narg k =x\n", default),
    ] {
        compare(input, Spec::new(limits, true)).unwrap();
    }
}
