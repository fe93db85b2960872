//! The CTL push parser: [`CtlMachine`] plus a bounded line buffer, emitting [`CtlEvent`]s.
//!
//! Body bytes never pass through the machine one by one: the parser hands the whole run that
//! belongs to the current argument to the consumer as one borrowed slice. Header lines are
//! stepped byte by byte (they are short); a line that arrives whole in one chunk is read
//! straight from the chunk, and only a line split across chunks is copied into the buffer.

use crate::byteset::ByteSet;
use crate::contract::{Outcome, ParseError, PushParser, Verdict};
use crate::event::{Event, Value};

use super::machine::{CtlMachine, Step};
use super::{CtlErrorKind, Limits};

/// A confirmed piece of a CTL stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CtlEvent<'a> {
    /// A `call` line, confirmed at its LF: the tool's identity is final.
    CallStart {
        /// The call's id.
        id: &'a str,
        /// The tool's name.
        name: &'a str,
    },
    /// An `arg` header, confirmed at its LF.
    ArgStart {
        /// The argument's key.
        key: &'a str,
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
                visit("id", Value::Str(id));
                visit("name", Value::Str(name));
            }
            CtlEvent::ArgStart { key, len } => {
                visit("key", Value::Str(key));
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
}

impl CtlParser {
    /// A parser with the given limits.
    pub fn new(limits: Limits) -> CtlParser {
        CtlParser {
            machine: CtlMachine::new(limits),
            line: Vec::new(),
        }
    }

    /// The recogniser inside, for callers that only need `allowed()` (a decoder's mask).
    pub fn machine(&self) -> &CtlMachine {
        &self.machine
    }

    /// Emits the events of a header line that just ended; `tail` is its part in the current
    /// chunk, LF included.
    fn header_line<F>(
        &mut self,
        tail: &[u8],
        step: Step,
        separator: Option<usize>,
        on_event: &mut F,
    ) where
        F: for<'e> FnMut(CtlEvent<'e>),
    {
        let line: &[u8] = if self.line.is_empty() {
            tail
        } else {
            self.line.extend_from_slice(tail);
            &self.line
        };
        // The machine validated the line: "call ID NAME\n" or "arg KEY N\n", ASCII tokens
        // separated by single spaces, so byte offsets are character boundaries.
        let (keyword, first) = match step {
            Step::CallLine => (5, true),
            Step::ArgLine { .. } => (4, true),
            _ => (0, false),
        };
        let (text, separator) = if first {
            let text = std::str::from_utf8(&line[..line.len() - 1]).unwrap_or_default();
            let separator = separator.unwrap_or_else(|| {
                text.bytes()
                    .skip(keyword)
                    .position(|b| b == b' ')
                    .map_or(text.len(), |i| keyword + i)
            });
            (text, separator)
        } else {
            ("", 0)
        };
        match step {
            Step::CallLine => on_event(CtlEvent::CallStart {
                id: text.get(keyword..separator).unwrap_or_default(),
                name: text.get(separator + 1..).unwrap_or_default(),
            }),
            Step::ArgLine { len } => {
                on_event(CtlEvent::ArgStart {
                    key: text.get(keyword..separator).unwrap_or_default(),
                    len,
                });
                if len == 0 {
                    on_event(CtlEvent::ArgEnd);
                }
            }
            Step::CallEnd => on_event(CtlEvent::CallEnd),
            Step::Header | Step::Body { .. } => {}
        }
        self.line.clear();
    }
}

impl PushParser for CtlParser {
    type Event<'e> = CtlEvent<'e>;
    type ErrorKind = CtlErrorKind;
    const UNITS: &'static [&'static str] = &["calls"];

    fn push<F>(&mut self, chunk: &[u8], on_event: &mut F) -> Result<(), ParseError<CtlErrorKind>>
    where
        F: for<'e> FnMut(CtlEvent<'e>),
    {
        if let Some(error) = self.machine.error() {
            return Err(error);
        }
        let mut at = 0;
        while at < chunk.len() {
            let remaining = self.machine.body_remaining();
            if remaining > 0 {
                let (taken, last) = self.machine.skip_body((chunk.len() - at) as u64);
                let taken = taken as usize;
                on_event(CtlEvent::ArgData(&chunk[at..at + taken]));
                if last {
                    on_event(CtlEvent::ArgEnd);
                }
                at += taken;
                continue;
            }
            // A header line: whole at once when it is all here, else stepped until it ends or
            // the chunk does.
            if let Some((len, step, separator)) = self.machine.take_line(&chunk[at..]) {
                self.header_line(&chunk[at..at + len], step, Some(separator), on_event);
                at += len;
                continue;
            }
            let line_start = at;
            loop {
                at += self.machine.skip_run(&chunk[at..]);
                if at == chunk.len() {
                    self.line.extend_from_slice(&chunk[line_start..]);
                    return Ok(());
                }
                let step = self.machine.step(chunk[at])?;
                at += 1;
                if step != Step::Header {
                    self.header_line(&chunk[line_start..at], step, None, on_event);
                    break;
                }
            }
        }
        Ok(())
    }

    fn finish<F>(self, _on_event: &mut F) -> Outcome<CtlErrorKind>
    where
        F: for<'e> FnMut(CtlEvent<'e>),
    {
        let verdict = Verdict::at_end(self.machine.error(), self.machine.accepting());
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
