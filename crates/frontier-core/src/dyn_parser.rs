//! A push parser named at run time, behind an object-safe trait.
//!
//! [`PushParser`] is generic (its events borrow, its callbacks are generic, its error kind is
//! the language's type), so a front end that learns the language from a string (the C ABI,
//! the Python package) needs one erased form: [`DynParser`], implemented for every
//! `P: PushParser` and built from a [`ParserSpec`] by [`build`]. Events leave it as the JSON
//! text `frontier events` prints for them ([`crate::event`]), written into one buffer the
//! parser reuses, so an event costs no allocation beyond its record; errors and verdicts keep
//! their structure (offset, byte, and the kind by its stable name, [`ErasedError`]).

use crate::apply_patch::{CodexParser, StrictOptions, StrictParser};
use crate::contract::{ErrorKind, Outcome, ParseError, PushParser, Verdict};
use crate::ctl::CtlParser;
use crate::event::Record;
use crate::language::{ApplyPatchMode, ParserSpec};
use crate::udiff::UdiffParser;

/// A parse error whose kind is its stable name (`unexpected_byte`, …): the same fields and
/// the same message as the language's own error.
pub type ErasedError = ParseError<&'static str>;

/// A stream's outcome with its error kind erased to its name.
pub type ErasedOutcome = Outcome<&'static str>;

/// A kind that is already its stable name: what lets [`ErasedError`] print as the
/// language's error does.
impl ErrorKind for &'static str {
    fn as_str(self) -> &'static str {
        self
    }
}

/// `error` with its kind replaced by the kind's name.
pub fn erase_error<K: ErrorKind>(error: ParseError<K>) -> ErasedError {
    ParseError {
        offset: error.offset,
        byte: error.byte,
        kind: error.kind.as_str(),
    }
}

/// `outcome` with its error kind replaced by the kind's name.
pub fn erase_outcome<K: ErrorKind>(outcome: Outcome<K>) -> ErasedOutcome {
    let verdict = match outcome.verdict {
        Verdict::Complete => Verdict::Complete,
        Verdict::Incomplete(unclosed) => Verdict::Incomplete(unclosed),
        Verdict::Error(error) => Verdict::Error(erase_error(error)),
    };
    Outcome {
        verdict,
        consumed: outcome.consumed,
        confirmed: outcome.confirmed,
    }
}

/// A push parser whose language is known only at run time.
pub trait DynParser: Send + Sync {
    /// [`PushParser::push`]; each confirmed event reaches `on_event` as its JSON text.
    fn push(&mut self, chunk: &[u8], on_event: &mut dyn FnMut(&[u8])) -> Result<(), ErasedError>;
    /// [`PushParser::finish`], events likewise.
    fn finish(self: Box<Self>, on_event: &mut dyn FnMut(&[u8])) -> ErasedOutcome;
    /// [`PushParser::allowed`] as 32 bytes: bit `b % 8` of byte `b / 8` is byte `b`.
    fn allowed(&self) -> [u8; 32];
    /// [`PushParser::accepting`].
    fn accepting(&self) -> bool;
}

struct Erased<P> {
    parser: P,
    json: Vec<u8>,
}

/// Writes `record` as JSON into `json` (cleared first) and hands it to `on_event`.
fn emit(record: &Record, json: &mut Vec<u8>, on_event: &mut dyn FnMut(&[u8])) {
    json.clear();
    // Writing a `Record` into a Vec cannot fail: its keys are strings and its values numbers,
    // flags, strings or base64 maps.
    if serde_json::to_writer(&mut *json, record).is_ok() {
        on_event(json);
    }
}

impl<P: PushParser + Send + Sync> DynParser for Erased<P> {
    fn push(&mut self, chunk: &[u8], on_event: &mut dyn FnMut(&[u8])) -> Result<(), ErasedError> {
        let json = &mut self.json;
        self.parser
            .push(chunk, &mut |e| emit(&Record::of(&e), json, on_event))
            .map_err(erase_error)
    }

    fn finish(self: Box<Self>, on_event: &mut dyn FnMut(&[u8])) -> ErasedOutcome {
        let Erased { parser, mut json } = *self;
        erase_outcome(parser.finish(&mut |e| emit(&Record::of(&e), &mut json, on_event)))
    }

    fn allowed(&self) -> [u8; 32] {
        let table = self.parser.allowed().table();
        let mut out = [0u8; 32];
        for (b, _) in table.iter().enumerate().filter(|(_, &on)| on) {
            out[b / 8] |= 1 << (b % 8);
        }
        out
    }

    fn accepting(&self) -> bool {
        self.parser.accepting()
    }
}

/// The parser `spec` names, erased.
///
/// This matches on the spec rather than going through [`ParserSpec::run`]: a
/// [`ParserVisitor`](crate::language::ParserVisitor) receives a `P: PushParser` with no `'static` bound, which cannot be boxed
/// as a `dyn DynParser`, while each concrete parser here is `'static`. The match is exhaustive,
/// so a language or mode added to [`ParserSpec`] fails to compile here instead of being missed.
pub fn build(spec: &ParserSpec) -> Box<dyn DynParser> {
    match *spec {
        ParserSpec::Ctl { mode, limits } => erase(CtlParser::with_mode(limits, mode)),
        ParserSpec::ApplyPatch(ApplyPatchMode::Strict) => erase(StrictParser::default()),
        ParserSpec::ApplyPatch(ApplyPatchMode::Codex) => erase(CodexParser::new()),
        ParserSpec::ApplyPatch(ApplyPatchMode::Environment) => {
            erase(StrictParser::new(StrictOptions { environment: true }))
        }
        ParserSpec::Udiff(udiff) => erase(UdiffParser::new(udiff.mode, udiff.limits)),
    }
}

fn erase<P: PushParser + Send + Sync + 'static>(parser: P) -> Box<dyn DynParser> {
    Box::new(Erased {
        parser,
        json: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(parser: &mut dyn DynParser, input: &[u8]) -> (Vec<String>, Result<(), ErasedError>) {
        let mut out = Vec::new();
        let r = parser.push(input, &mut |json| {
            out.push(String::from_utf8(json.to_vec()).unwrap())
        });
        (out, r)
    }

    #[test]
    fn events_arrive_as_json_and_finish_gives_the_verdict() {
        let spec = ParserSpec::parse("apply_patch", None).unwrap();
        let mut parser = build(&spec);
        let (first, r) = events(&mut *parser, b"*** Begin Patch\n*** Add File: a\n+x\n");
        r.unwrap();
        assert_eq!(first[0], r#"{"event":"begin_patch"}"#);
        let (second, r) = events(&mut *parser, b"*** End Patch");
        r.unwrap();
        assert!(parser.accepting());
        let mut last = Vec::new();
        let finished =
            parser.finish(&mut |json| last.push(String::from_utf8(json.to_vec()).unwrap()));
        assert_eq!(finished.verdict, Verdict::Complete);
        let all: Vec<String> = first.into_iter().chain(second).chain(last).collect();
        assert_eq!(all.last().unwrap(), r#"{"event":"end_patch"}"#);
        assert!(
            all.contains(&r#"{"event":"path","data":"a"}"#.to_owned()),
            "{all:?}"
        );
    }

    #[test]
    fn allowed_has_one_bit_per_byte() {
        let spec = ParserSpec::parse("apply_patch", None).unwrap();
        let parser = build(&spec);
        let allowed = parser.allowed();
        // A patch starts with `*** Begin Patch`: the first byte is `*` (0x2A = 42).
        assert_eq!(allowed[42 / 8], 1 << (42 % 8));
        assert_eq!(allowed.iter().map(|b| b.count_ones()).sum::<u32>(), 1);
    }

    #[test]
    fn a_push_outside_the_language_is_an_error_with_its_offset() {
        let spec = ParserSpec::parse("apply_patch", None).unwrap();
        let mut parser = build(&spec);
        let (_, r) = events(&mut *parser, b"x");
        let error = r.unwrap_err();
        assert_eq!((error.offset, error.byte), (0, b'x'));
        assert_eq!(error.kind, "expected_begin_patch");
        assert!(
            error
                .to_string()
                .starts_with("expected_begin_patch at byte 0 (0x78 'x')"),
            "{error}"
        );
        let outcome = parser.finish(&mut |_| {});
        assert_eq!(outcome.verdict, Verdict::Error(error));
        assert_eq!(outcome.consumed, 0);
    }
}
