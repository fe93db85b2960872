//! The CTL push parser: [`CtlMachine`] plus a bounded line buffer, emitting [`CtlEvent`]s.
//!
//! Body bytes never pass through the machine one by one: the parser hands the whole run that
//! belongs to the current argument to the consumer as one borrowed slice. A header line that
//! arrives whole in one chunk is checked in one pass ([`CtlMachine::take_line`]) and its tokens
//! are read straight from the chunk; any other line is stepped ([`CtlMachine::step_line`]), and
//! only its part in earlier chunks is kept in the line buffer. A one-byte push, what a decoder
//! sends, goes straight through [`CtlMachine::step`].

use crate::byteset::ByteSet;
use crate::contract::{Outcome, Owed, ParseError, PushParser, Unclosed, Verdict};
use crate::event::{Event, Value};

use super::machine::{Construct, CtlMachine, Step};
use super::{CtlErrorKind, Limits, Token};

/// A confirmed piece of a CTL stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CtlEvent<'a> {
    /// A `call` line, confirmed at its LF: the tool's identity is final.
    CallStart {
        /// The call's id.
        id: Token<'a>,
        /// The tool's name.
        name: Token<'a>,
    },
    /// An `arg` header, confirmed at its LF.
    ArgStart {
        /// The argument's key.
        key: Token<'a>,
        /// Its length in bytes.
        len: u64,
    },
    /// Body bytes of the current argument, as they arrive.
    ArgData(&'a [u8]),
    /// The current argument's last body byte arrived.
    ArgEnd,
    /// `end` LF: the call is complete and executable.
    CallEnd,
}

impl Event for CtlEvent<'_> {
    fn name(&self) -> &'static str {
        match self {
            CtlEvent::CallStart { .. } => "call_start",
            CtlEvent::ArgStart { .. } => "arg_start",
            CtlEvent::ArgData(_) => "arg_data",
            CtlEvent::ArgEnd => "arg_end",
            CtlEvent::CallEnd => "call_end",
        }
    }

    fn data(&self) -> Option<&[u8]> {
        match self {
            CtlEvent::ArgData(data) => Some(data),
            _ => None,
        }
    }

    fn unit(&self) -> Option<&'static str> {
        matches!(self, CtlEvent::CallEnd).then_some("calls")
    }

    fn fields(&self, visit: &mut dyn FnMut(&'static str, Value<'_>)) {
        match *self {
            CtlEvent::CallStart { id, name } => {
                visit("id", Value::Str(id.as_str()));
                visit("name", Value::Str(name.as_str()));
            }
            CtlEvent::ArgStart { key, len } => {
                visit("key", Value::Str(key.as_str()));
                visit("len", Value::U64(len));
            }
            CtlEvent::ArgData(_) | CtlEvent::ArgEnd | CtlEvent::CallEnd => {}
        }
    }
}

/// The strict CTL push parser.
#[derive(Clone, Debug, Default)]
pub struct CtlParser {
    machine: CtlMachine,
    /// The part of the current header line that arrived in earlier chunks.
    line: Vec<u8>,
    /// Where the open call and body began, for an incomplete verdict.
    opened: Opened,
}

/// Where the constructs that outlive a line began: recorded as their header line's events are
/// emitted (a store per `call` or `arg` line), since no line holds them at the end.
#[derive(Clone, Copy, Debug, Default)]
struct Opened {
    /// The current call's `call` line.
    frame_at: u64,
    /// The current argument's first body byte.
    body_at: u64,
}

impl CtlParser {
    /// A parser with the given limits.
    pub fn new(limits: Limits) -> CtlParser {
        CtlParser {
            machine: CtlMachine::new(limits),
            line: Vec::new(),
            opened: Opened::default(),
        }
    }

    /// The recogniser inside, for callers that only need `allowed()` (a decoder's mask).
    pub fn machine(&self) -> &CtlMachine {
        &self.machine
    }

    /// One byte, as a decoder pushes it: straight through the machine's step.
    #[inline]
    fn push_byte<F>(
        &mut self,
        byte: u8,
        chunk: &[u8],
        on_event: &mut F,
    ) -> Result<(), ParseError<CtlErrorKind>>
    where
        F: for<'e> FnMut(CtlEvent<'e>),
    {
        match self.machine.step(byte)? {
            Step::Header => self.line.push(byte),
            Step::Body { last } => emit_body(chunk, last, on_event),
            step => self.stepped_line(chunk, step, on_event),
        }
        Ok(())
    }

    /// Emits the events of a header line that was stepped to its end; `tail` is its part in
    /// the current chunk, LF included.
    #[inline(never)]
    fn stepped_line<F>(&mut self, tail: &[u8], step: Step, on_event: &mut F)
    where
        F: for<'e> FnMut(CtlEvent<'e>),
    {
        let mut line = std::mem::take(&mut self.line);
        let whole: &[u8] = if line.is_empty() {
            tail
        } else {
            line.extend_from_slice(tail);
            &line
        };
        // The machine checked the line: "call ID NAME\n" or "arg KEY N\n", so the first SP
        // after the keyword ends the first token.
        let keyword = if step == Step::CallLine { 5 } else { 4 };
        let separator = whole
            .iter()
            .skip(keyword)
            .position(|&b| b == b' ')
            .map_or(0, |i| keyword + i);
        let end = self.machine.consumed();
        emit_line(whole, step, separator, end, &mut self.opened, on_event);
        line.clear();
        self.line = line;
    }

    /// What a stream ending here leaves open; `None` when it is a sentence or an error.
    fn unclosed(&self) -> Option<Unclosed> {
        let construct = self.machine.open_construct()?;
        let name = construct.as_str();
        Some(match construct {
            Construct::Frame => Unclosed::at(name, self.opened.frame_at),
            Construct::ArgBody => Unclosed {
                construct: name,
                began_at: self.opened.body_at,
                owed: Some(Owed::Bytes(self.machine.body_remaining())),
            },
            // A header line: it began where the pending bytes begin.
            Construct::CallLine | Construct::ArgLine | Construct::EndLine => {
                Unclosed::at(name, self.confirmed())
            }
        })
    }
}

/// Emits body bytes of the current argument; `last` when they complete it.
#[inline]
fn emit_body<F>(data: &[u8], last: bool, on_event: &mut F)
where
    F: for<'e> FnMut(CtlEvent<'e>),
{
    on_event(CtlEvent::ArgData(data));
    if last {
        on_event(CtlEvent::ArgEnd);
    }
}

/// Emits the events of a complete, checked header line that ends at offset `end`; `separator`
/// is the SP after its first token (`id` or `key`). Records in `opened` where the call or the
/// body it opens begins.
#[inline]
fn emit_line<F>(
    line: &[u8],
    step: Step,
    separator: usize,
    end: u64,
    opened: &mut Opened,
    on_event: &mut F,
) where
    F: for<'e> FnMut(CtlEvent<'e>),
{
    // The machine checked the line, so these ranges are its tokens; `get` keeps even a broken
    // invariant from panicking.
    let token = |range: std::ops::Range<usize>| Token::new(line.get(range).unwrap_or_default());
    let lf = line.len().saturating_sub(1);
    match step {
        Step::CallLine => {
            opened.frame_at = end - line.len() as u64;
            on_event(CtlEvent::CallStart {
                id: token(5..separator),
                name: token(separator + 1..lf),
            })
        }
        Step::ArgLine { len } => {
            on_event(CtlEvent::ArgStart {
                key: token(4..separator),
                len,
            });
            if len == 0 {
                on_event(CtlEvent::ArgEnd);
            } else {
                opened.body_at = end;
            }
        }
        Step::CallEnd => on_event(CtlEvent::CallEnd),
        Step::Header | Step::Body { .. } => {}
    }
}

impl PushParser for CtlParser {
    type Event<'e> = CtlEvent<'e>;
    type ErrorKind = CtlErrorKind;
    const UNITS: &'static [&'static str] = &["calls"];
    type Recognizer = crate::ctl::CtlMachine;

    fn recognizer(&self) -> crate::ctl::CtlMachine {
        self.machine
    }

    #[inline]
    fn push<F>(&mut self, chunk: &[u8], on_event: &mut F) -> Result<(), ParseError<CtlErrorKind>>
    where
        F: for<'e> FnMut(CtlEvent<'e>),
    {
        if let [byte] = *chunk {
            return self.push_byte(byte, chunk, on_event);
        }
        if let Some(error) = self.machine.error() {
            return Err(error);
        }
        let mut at = 0;
        while at < chunk.len() {
            let rest = &chunk[at..];
            let (taken, last) = self.machine.skip_body(rest.len() as u64);
            if taken > 0 {
                emit_body(&rest[..taken as usize], last, on_event);
                at += taken as usize;
                continue;
            }
            // A line that starts here: whole at once when it is all here.
            if let Some((len, step, separator)) = self.machine.take_line(rest) {
                let end = self.machine.consumed();
                emit_line(
                    &rest[..len],
                    step,
                    separator,
                    end,
                    &mut self.opened,
                    on_event,
                );
                at += len;
                continue;
            }
            // Else the line is stepped until it ends or the chunk does.
            let (taken, step) = self.machine.step_line(rest)?;
            at += taken;
            if step == Step::Header {
                self.line.extend_from_slice(rest);
                return Ok(());
            }
            self.stepped_line(&rest[..taken], step, on_event);
        }
        Ok(())
    }

    fn finish<F>(self, _on_event: &mut F) -> Outcome<CtlErrorKind>
    where
        F: for<'e> FnMut(CtlEvent<'e>),
    {
        let verdict = Verdict::at_end(self.machine.error(), self.unclosed());
        Outcome {
            verdict,
            consumed: self.consumed(),
            confirmed: self.confirmed(),
        }
    }

    fn allowed(&self) -> ByteSet {
        self.machine.allowed()
    }

    fn accepting(&self) -> bool {
        self.machine.accepting()
    }

    fn consumed(&self) -> u64 {
        self.machine.consumed()
    }

    fn confirmed(&self) -> u64 {
        self.machine.consumed() - self.machine.line_len() as u64
    }

    fn error(&self) -> Option<ParseError<CtlErrorKind>> {
        self.machine.error()
    }

    fn pending_bound(&self) -> u64 {
        self.machine.limits().max_line.saturating_sub(1) as u64
    }
}
