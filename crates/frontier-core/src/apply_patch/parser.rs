//! The strict push parser: [`StrictMachine`] plus at most three carried bytes, emitting
//! [`PatchEvent`]s.
//!
//! Content runs never go through the machine byte by byte: [`StrictMachine::skip_content`]
//! takes the longest run of whole characters up to the next LF (`memchr` plus the standard
//! library's UTF-8 validation) and the parser lends that slice of the chunk to the consumer.
//! Only marker bytes and a character cut by the end of a chunk are stepped one at a time; the
//! bytes of such a character are the only ones ever copied.

use crate::byteset::ByteSet;
use crate::contract::{Outcome, ParseError, PushParser, Unclosed, Verdict};

use super::event::PatchEvent;
use super::frame::{Construct, Frame};
use super::keywords::{Marker, LONGEST};
use super::strict::{PathOf, Step, StrictMachine, StrictOptions, TextKind};
use super::{ChunkHeader, Op, PatchErrorKind};

/// The strict apply_patch push parser.
#[derive(Clone, Debug, Default)]
pub struct StrictParser {
    machine: StrictMachine,
    frame: Frame,
    /// The leading bytes of a character cut by the end of a chunk.
    carry: [u8; 4],
    carry_len: u8,
    /// Where the current `+`/`-`/` ` line or `*** Move to:`/`*** Environment ID:` line began.
    line_at: u64,
}

/// The data event for content of `kind`.
fn data(kind: TextKind, bytes: &[u8]) -> PatchEvent<'_> {
    match kind {
        TextKind::Path(_) => PatchEvent::Path(bytes),
        TextKind::Context => PatchEvent::Context(bytes),
        TextKind::Line => PatchEvent::Text(bytes),
    }
}

impl StrictParser {
    /// A parser with the given options.
    pub fn new(options: StrictOptions) -> StrictParser {
        StrictParser {
            machine: StrictMachine::new(options),
            ..StrictParser::default()
        }
    }

    /// The recogniser inside, for callers that only need `allowed()` (a decoder's mask).
    pub fn machine(&self) -> &StrictMachine {
        &self.machine
    }

    fn on_step<F>(&mut self, step: Step, kind: Option<TextKind>, byte: &[u8], on_event: &mut F)
    where
        F: for<'e> FnMut(PatchEvent<'e>),
    {
        // The offset where a line that this step recognises began: the step came at its
        // first byte (a change line), after `@@ ` or `@@` LF, or after its marker.
        let consumed = self.machine.consumed();
        let marker_line = |marker: Marker| consumed - marker.text().len() as u64;
        match step {
            Step::Pending | Step::FinalNewline => {}
            Step::BeginPatch => on_event(PatchEvent::BeginPatch),
            Step::Header(PathOf::File(op)) => {
                let marker = match op {
                    Op::Add => Marker::Add,
                    Op::Delete => Marker::Delete,
                    Op::Update => Marker::Update,
                };
                self.frame.file_start(op, marker_line(marker), on_event)
            }
            Step::Header(PathOf::Move) => {
                self.line_at = marker_line(Marker::Move);
                on_event(PatchEvent::MoveTo)
            }
            Step::Header(PathOf::Environment) => {
                self.line_at = marker_line(Marker::Environment);
                on_event(PatchEvent::Environment)
            }
            Step::ContextHeader | Step::BareHeader => {
                let header = if step == Step::BareHeader {
                    ChunkHeader::Bare
                } else {
                    ChunkHeader::Context
                };
                self.frame.chunk_start(header, consumed - 3, on_event)
            }
            Step::LineStart(op) => {
                self.line_at = consumed - 1;
                self.frame.line_start(op, self.line_at, on_event)
            }
            Step::Content { char_end } => {
                let Some(kind) = kind else { return };
                if !char_end {
                    self.carry[self.carry_len as usize] = byte[0];
                    self.carry_len += 1;
                } else if self.carry_len > 0 {
                    self.carry[self.carry_len as usize] = byte[0];
                    let len = self.carry_len as usize + 1;
                    self.carry_len = 0;
                    let carry = self.carry;
                    on_event(data(kind, &carry[..len]));
                } else {
                    on_event(data(kind, byte));
                }
            }
            Step::TextEnd(TextKind::Path(PathOf::File(Op::Delete))) => {
                on_event(PatchEvent::HeaderEnd);
                self.frame.close_file(on_event);
            }
            Step::TextEnd(TextKind::Line) => on_event(PatchEvent::LineEnd),
            Step::TextEnd(_) => on_event(PatchEvent::HeaderEnd),
            // The grammar lets nothing of the Update follow `*** End of File` (`change` ends
            // with it), so its LF closes the file operation as well as the chunk.
            Step::EndOfFile => {
                on_event(PatchEvent::EndOfFile);
                self.frame.close_file(on_event);
            }
            Step::EndPatch => {
                self.frame.close_file(on_event);
                on_event(PatchEvent::EndPatch);
            }
        }
    }

    /// What a stream ending here leaves open; `None` when it is a patch or an error.
    fn unclosed(&self) -> Option<Unclosed> {
        if self.machine.accepting() || self.machine.error().is_some() {
            return None;
        }
        let (construct, began_at) = match self.machine.open_line() {
            // A marker's bytes are the pending ones.
            Some(Construct::Marker) => (Construct::Marker, self.confirmed()),
            Some(line) => (line, self.line_at),
            None => self.frame.open(),
        };
        Some(Unclosed::at(construct.as_str(), began_at))
    }
}

impl PushParser for StrictParser {
    type Event<'e> = PatchEvent<'e>;
    type ErrorKind = PatchErrorKind;
    const UNITS: &'static [&'static str] = &["files", "chunks"];
    type Recognizer = super::strict::StrictMachine;

    fn recognizer(&self) -> super::strict::StrictMachine {
        self.machine
    }

    #[inline]
    fn push<F>(&mut self, chunk: &[u8], on_event: &mut F) -> Result<(), ParseError<PatchErrorKind>>
    where
        F: for<'e> FnMut(PatchEvent<'e>),
    {
        if let [byte] = *chunk {
            // A decoder's push: one byte, most often an ASCII character of content.
            if let Some(kind) = self.machine.content_byte(byte) {
                on_event(data(kind, chunk));
                return Ok(());
            }
            let kind = self.machine.text_kind();
            let step = self.machine.step(byte)?;
            self.on_step(step, kind, chunk, on_event);
            return Ok(());
        }
        if let Some(error) = self.machine.error() {
            return Err(error);
        }
        let mut at = 0;
        while at < chunk.len() {
            let kind = self.machine.text_kind();
            if let Some(kind) = kind {
                let taken = self.machine.skip_content(&chunk[at..]);
                if taken > 0 {
                    on_event(data(kind, &chunk[at..at + taken]));
                    at += taken;
                    continue;
                }
            }
            let step = self.machine.step(chunk[at])?;
            self.on_step(step, kind, &chunk[at..at + 1], on_event);
            at += 1;
        }
        Ok(())
    }

    fn finish<F>(self, _on_event: &mut F) -> Outcome<PatchErrorKind>
    where
        F: for<'e> FnMut(PatchEvent<'e>),
    {
        let verdict = Verdict::at_end(self.machine.error(), self.unclosed());
        Outcome {
            verdict,
            consumed: self.consumed(),
            confirmed: self.confirmed(),
        }
    }

    #[inline]
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
        self.machine.consumed() - self.machine.pending()
    }

    fn error(&self) -> Option<ParseError<PatchErrorKind>> {
        self.machine.error()
    }

    fn pending_bound(&self) -> u64 {
        LONGEST as u64 - 1
    }
}
