//! A push parser named at run time, behind an object-safe trait.
//!
//! [`PushParser`] is generic (its events borrow, its callbacks are generic), so a handle that
//! C holds needs one erased form: [`DynParser`], implemented for every `P: PushParser` and
//! built from a [`ParserSpec`] by [`build`]. Events leave it as the JSON text
//! `frontier events` prints for them (`frontier_core::event`), written into one buffer the
//! parser reuses, so an event costs no allocation beyond its record.

use frontier_core::apply_patch::{CodexParser, StrictParser};
use frontier_core::contract::{PushParser, Verdict};
use frontier_core::ctl::CtlParser;
use frontier_core::event::Record;
use frontier_core::language::{ApplyPatchMode, ParserSpec};
use frontier_core::udiff::UdiffParser;

/// How `finish` ended a stream: the verdict as the C ABI numbers it and its description.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finished {
    /// 0 complete, 1 incomplete, 2 error.
    pub verdict: i32,
    /// What was left open or the error, for the handle's message; empty when complete.
    pub detail: String,
}

/// A push parser whose language is known only at run time.
pub trait DynParser {
    /// [`PushParser::push`]; each confirmed event reaches `on_event` as its JSON text. An
    /// error is returned as its message (kind, offset and byte).
    fn push(&mut self, chunk: &[u8], on_event: &mut dyn FnMut(&[u8])) -> Result<(), String>;
    /// [`PushParser::finish`], events likewise.
    fn finish(self: Box<Self>, on_event: &mut dyn FnMut(&[u8])) -> Finished;
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

impl<P: PushParser> DynParser for Erased<P> {
    fn push(&mut self, chunk: &[u8], on_event: &mut dyn FnMut(&[u8])) -> Result<(), String> {
        let json = &mut self.json;
        self.parser
            .push(chunk, &mut |e| emit(&Record::of(&e), json, on_event))
            .map_err(|e| e.to_string())
    }

    fn finish(self: Box<Self>, on_event: &mut dyn FnMut(&[u8])) -> Finished {
        let Erased { parser, mut json } = *self;
        let outcome = parser.finish(&mut |e| emit(&Record::of(&e), &mut json, on_event));
        match outcome.verdict {
            Verdict::Complete => Finished {
                verdict: 0,
                detail: String::new(),
            },
            Verdict::Incomplete(unclosed) => Finished {
                verdict: 1,
                detail: format!("incomplete: {unclosed}"),
            },
            Verdict::Error(error) => Finished {
                verdict: 2,
                detail: error.to_string(),
            },
        }
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
/// [`ParserVisitor`] receives a `P: PushParser` with no `'static` bound, which cannot be boxed
/// as a `dyn DynParser`, while each concrete parser here is `'static`. The match is exhaustive,
/// so a language or mode added to [`ParserSpec`] fails to compile here instead of being missed.
pub fn build(spec: &ParserSpec) -> Box<dyn DynParser> {
    match *spec {
        ParserSpec::Ctl { mode, limits } => erase(CtlParser::with_mode(limits, mode)),
        ParserSpec::ApplyPatch(ApplyPatchMode::Strict) => erase(StrictParser::default()),
        ParserSpec::ApplyPatch(ApplyPatchMode::Codex) => erase(CodexParser::new()),
        ParserSpec::Udiff(udiff) => erase(UdiffParser::new(udiff.mode, udiff.limits)),
    }
}

fn erase<P: PushParser + 'static>(parser: P) -> Box<dyn DynParser> {
    Box::new(Erased {
        parser,
        json: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(parser: &mut dyn DynParser, input: &[u8]) -> (Vec<String>, Result<(), String>) {
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
        assert_eq!(finished.verdict, 0);
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
        let message = r.unwrap_err();
        assert!(message.contains("at byte 0 (0x78 'x')"), "{message}");
        assert_eq!(parser.finish(&mut |_| {}).verdict, 2);
    }
}
