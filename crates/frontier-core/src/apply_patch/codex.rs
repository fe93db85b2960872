//! The codex push parser: [`CodexMachine`] plus the current line, emitting [`PatchEvent`]s a
//! line at a time.
//!
//! Codex decides what a line is after trimming it, and drops a CR only when an LF follows, so
//! this parser confirms whole lines: at each LF the machine says how the hunk reading
//! classified the line, and the parser emits its events from the buffered line. After a line
//! that may close the patch (`*** End Patch`, possibly indented) while the hunk reading also
//! accepts it (an indented ` *** End Patch` is a context line inside a chunk), the following
//! lines are held until one reading dies: a non-whitespace byte (the lines were hunk lines) or
//! the end of the stream (the line closed the patch).

use crate::byteset::ByteSet;
use crate::contract::{Outcome, ParseError, PushParser, Unclosed, Verdict};

pub use super::codex_machine::{CodexMachine, LineKind};

use super::codex_machine::Step;
use super::event::PatchEvent;
use super::frame::{Construct, Frame};
use super::{ChunkHeader, LineOp, Op, PatchErrorKind};

/// The codex-mode apply_patch push parser.
#[derive(Clone, Debug, Default)]
pub struct CodexParser {
    machine: CodexMachine,
    frame: Frame,
    /// The bytes of the current line, while the hunk reading may still need them.
    line: Vec<u8>,
    /// Lines held after a possible closing line (itself first): their bytes and kinds.
    held: Vec<u8>,
    held_lines: Vec<(LineKind, usize, usize)>,
    /// A closing line was confirmed as such (the hunk reading is dead): only trailing bytes
    /// follow.
    closed: bool,
    /// The confirmation frontier.
    confirmed: u64,
    /// Where the current line began.
    line_at: u64,
}

impl CodexParser {
    /// A parser at the start of a stream.
    pub fn new() -> CodexParser {
        CodexParser::default()
    }

    /// The recogniser inside, for callers that only need `allowed()`.
    pub fn machine(&self) -> &CodexMachine {
        &self.machine
    }

    /// The LF of a hunk-section line that began at `at`.
    fn on_line<F>(&mut self, kind: Option<LineKind>, closing: bool, at: u64, on_event: &mut F)
    where
        F: for<'e> FnMut(PatchEvent<'e>),
    {
        let mut line = std::mem::take(&mut self.line);
        if !self.held_lines.is_empty() {
            // The reading that started the hold survives this line unless it is a new
            // closing line (a closing line is never whitespace nor an `…EOF` final line).
            let tail_alive = self.machine.tail_alive() && !closing;
            match (kind, tail_alive) {
                (None, true) => {
                    self.discard_held();
                    self.close(on_event);
                    self.line = line;
                    self.line.clear();
                    return;
                }
                (Some(kind), true) => {
                    let start = self.held.len();
                    self.held.extend_from_slice(&line);
                    self.held_lines.push((kind, start, self.held.len()));
                    line.clear();
                    self.line = line;
                    return;
                }
                (_, false) => self.flush_held(on_event),
            }
        }
        match (kind, closing) {
            (Some(kind), true) => {
                self.held.extend_from_slice(&line);
                self.held_lines.push((kind, 0, line.len()));
            }
            (Some(kind), false) => {
                emit_line(&mut self.frame, kind, &line, at, on_event);
                self.confirmed = self.machine.consumed();
            }
            (None, true) => self.close(on_event),
            (None, false) => {}
        }
        line.clear();
        self.line = line;
    }

    /// The held lines were hunk lines after all.
    fn flush_held<F>(&mut self, on_event: &mut F)
    where
        F: for<'e> FnMut(PatchEvent<'e>),
    {
        let mut bytes = 0u64;
        for &(kind, start, end) in &self.held_lines {
            let at = self.confirmed + bytes;
            emit_line(&mut self.frame, kind, &self.held[start..end], at, on_event);
            bytes += (end - start) as u64 + 1;
        }
        self.confirmed += bytes;
        self.discard_held();
    }

    fn discard_held(&mut self) {
        self.held.clear();
        self.held_lines.clear();
    }

    /// The closing line ends the hunk list: the open units are complete.
    fn close<F>(&mut self, on_event: &mut F)
    where
        F: for<'e> FnMut(PatchEvent<'e>),
    {
        self.frame.close_file(on_event);
        self.closed = true;
    }

    /// What a stream ending here leaves open; `None` when it is a patch or an error.
    fn unclosed(&self) -> Option<Unclosed> {
        if self.machine.accepting() || self.machine.error().is_some() {
            return None;
        }
        let line_started = self.line_at < self.machine.consumed();
        let (construct, began_at) = match self.machine.open_line() {
            // Whitespace before the first marker: a line of it is begun as a marker line.
            Some(Construct::Patch) if line_started => (Construct::Marker, self.line_at),
            Some(Construct::Patch) => (Construct::Patch, 0),
            Some(line) => (line, self.line_at),
            None => self.frame.open(),
        };
        Some(Unclosed::at(construct.as_str(), began_at))
    }
}

/// Drops the CR of a CRLF (Codex's `str::lines`).
fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn trim_end(bytes: &[u8]) -> &[u8] {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.trim_end().as_bytes(),
        Err(_) => bytes,
    }
}

/// The path of a trimmed header line after `marker`.
fn header_path<'a>(line: &'a [u8], marker: &str) -> &'a [u8] {
    let text = std::str::from_utf8(line).unwrap_or_default().trim();
    text.strip_prefix(marker).unwrap_or_default().as_bytes()
}

fn emit_data<F>(event: PatchEvent<'_>, on_event: &mut F)
where
    F: for<'e> FnMut(PatchEvent<'e>),
{
    let empty = matches!(event, PatchEvent::Path(d) | PatchEvent::Context(d) | PatchEvent::Text(d) if d.is_empty());
    if !empty {
        on_event(event);
    }
}

/// The events of one complete hunk-section line (`line` without its LF) that began at `at`.
fn emit_line<F>(frame: &mut Frame, kind: LineKind, line: &[u8], at: u64, on_event: &mut F)
where
    F: for<'e> FnMut(PatchEvent<'e>),
{
    match kind {
        LineKind::Header(op) => {
            frame.file_start(op, at, on_event);
            let marker = match op {
                Op::Add => "*** Add File: ",
                Op::Delete => "*** Delete File: ",
                Op::Update => "*** Update File: ",
            };
            emit_data(PatchEvent::Path(header_path(line, marker)), on_event);
            on_event(PatchEvent::HeaderEnd);
            if op == Op::Delete {
                frame.close_file(on_event);
            }
        }
        LineKind::Environment => {
            on_event(PatchEvent::Environment);
            emit_data(
                PatchEvent::Path(header_path(line, "*** Environment ID: ")),
                on_event,
            );
            on_event(PatchEvent::HeaderEnd);
        }
        LineKind::Move => {
            on_event(PatchEvent::MoveTo);
            let path = strip_cr(line)
                .get(b"*** Move to: ".len()..)
                .unwrap_or_default();
            emit_data(PatchEvent::Path(trim_end(path)), on_event);
            on_event(PatchEvent::HeaderEnd);
        }
        LineKind::AddLine | LineKind::Change(_) => {
            let op = match kind {
                LineKind::Change(op) => op,
                _ => LineOp::Add,
            };
            frame.line_start(op, at, on_event);
            emit_data(
                PatchEvent::Text(strip_cr(line).get(1..).unwrap_or_default()),
                on_event,
            );
            on_event(PatchEvent::LineEnd);
        }
        LineKind::EmptyContext => {
            frame.line_start(LineOp::Context, at, on_event);
            on_event(PatchEvent::LineEnd);
        }
        LineKind::BareAt => frame.chunk_start(ChunkHeader::Bare, at, on_event),
        LineKind::ContextAt => {
            frame.chunk_start(ChunkHeader::Context, at, on_event);
            emit_data(
                PatchEvent::Context(strip_cr(line).get(3..).unwrap_or_default()),
                on_event,
            );
            on_event(PatchEvent::HeaderEnd);
        }
        LineKind::EndOfFile => {
            on_event(PatchEvent::EndOfFile);
            frame.close_chunk(on_event);
        }
        LineKind::Skip { ends_chunk } => {
            if ends_chunk {
                frame.close_chunk(on_event);
            }
        }
    }
}

impl PushParser for CodexParser {
    type Event<'e> = PatchEvent<'e>;
    type ErrorKind = PatchErrorKind;
    const UNITS: &'static [&'static str] = &["files", "chunks"];
    type Recognizer = CodexMachine;

    fn recognizer(&self) -> CodexMachine {
        self.machine
    }

    #[inline]
    fn push<F>(&mut self, chunk: &[u8], on_event: &mut F) -> Result<(), ParseError<PatchErrorKind>>
    where
        F: for<'e> FnMut(PatchEvent<'e>),
    {
        if let [byte] = *chunk {
            // A decoder's push: one byte, most often an ASCII character of a line's text.
            if self.machine.plain_byte(byte) {
                self.line.push(byte);
                return Ok(());
            }
        }
        if let Some(error) = self.machine.error() {
            return Err(error);
        }
        let mut at = 0;
        while at < chunk.len() {
            let taken = self.machine.skip_text(&chunk[at..]);
            if taken > 0 {
                self.line.extend_from_slice(&chunk[at..at + taken]);
                at += taken;
                continue;
            }
            let byte = chunk[at];
            let step = self.machine.step(byte)?;
            at += 1;
            match step {
                Step::Byte => {
                    if !self.closed {
                        self.line.push(byte);
                    }
                }
                Step::Preamble => {
                    self.line.clear();
                    self.confirmed = self.machine.consumed();
                    self.line_at = self.confirmed;
                }
                Step::BeginLine => {
                    self.line.clear();
                    on_event(PatchEvent::BeginPatch);
                    self.confirmed = self.machine.consumed();
                    self.line_at = self.confirmed;
                }
                Step::Line { kind, closing } => {
                    let at = std::mem::replace(&mut self.line_at, self.machine.consumed());
                    self.on_line(kind, closing, at, on_event)
                }
            }
        }
        Ok(())
    }

    fn finish<F>(mut self, on_event: &mut F) -> Outcome<PatchErrorKind>
    where
        F: for<'e> FnMut(PatchEvent<'e>),
    {
        let verdict = Verdict::at_end(self.machine.error(), self.unclosed());
        if verdict == Verdict::Complete {
            if self.machine.tail_alive() {
                // The held closing line is the last line: what follows it is whitespace.
                self.discard_held();
            } else {
                // The closing line is the unterminated current line: the held lines were
                // hunk lines.
                self.flush_held(on_event);
            }
            if !self.closed {
                self.close(on_event);
            }
            on_event(PatchEvent::EndPatch);
            self.confirmed = self.machine.consumed();
        }
        Outcome {
            verdict,
            consumed: self.machine.consumed(),
            confirmed: self.confirmed,
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
        self.confirmed
    }

    fn error(&self) -> Option<ParseError<PatchErrorKind>> {
        self.machine.error()
    }

    /// Codex mode has no constant bound: a line is confirmed at its end, and after a possible
    /// closing line the whitespace that follows is held until a later byte or the end decides.
    fn pending_bound(&self) -> u64 {
        u64::MAX
    }
}
