//! The codex push parser: [`CodexMachine`] plus what the current line still needs, emitting
//! [`PatchEvent`]s as soon as Codex's reading of a line can no longer change.
//!
//! Codex decides what a line is after trimming it, and drops a CR only when an LF follows.
//! While a line's kind is open (its marker, a line that may be the closing ` *** End Patch`,
//! the whitespace at the start of a first chunk line, which may be a skipped blank line), its
//! bytes are buffered. The moment the machine says the line's kind is settled
//! ([`CodexMachine::stream_kind`]: a `+`, `-` or ` ` line, an `@@ ` context, a header's or a
//! move's path, with no other reading left), the parser emits the line's opening events and
//! from then on streams its content as it arrives, holding back only what the next bytes can
//! still change: a partial UTF-8 character, a CR (of a line's text or context: dropped if an LF
//! follows), the whitespace at the end of a path (trimmed at the LF). The line's closing event
//! comes at its LF. After a line that may close the patch (`*** End Patch`, possibly indented)
//! while the hunk reading also accepts it (an indented ` *** End Patch` is a context line
//! inside a chunk), the following lines are held until one reading dies: a non-whitespace byte
//! (the lines were hunk lines, emitted at once) or the end of the stream (the line closed the
//! patch).

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
    /// The bytes of the current line while its kind is open and the hunk reading may still
    /// need them (see [`CodexMachine::keeps_line_bytes`]).
    line: Vec<u8>,
    /// The kind of the current line once its events stream (its opening events emitted).
    stream: Option<LineKind>,
    /// While the line streams: its content bytes consumed but not yet emitted (a partial
    /// character, a CR, a path's trailing whitespace).
    pend: Vec<u8>,
    /// `pend` ends inside a character.
    pend_partial: bool,
    /// The streaming line is a line's text or an `@@` context (not a path).
    plain_text: bool,
    /// Lines held after a possible closing line (itself first): their kinds, the range of
    /// their kept bytes in `held`, and their offsets.
    held: Vec<u8>,
    held_lines: Vec<(LineKind, usize, usize, u64)>,
    /// The offset after the LF of the last held line.
    held_end: u64,
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

    /// A byte inside a line, taken by the machine's general step.
    fn on_byte<F>(&mut self, byte: u8, on_event: &mut F)
    where
        F: for<'e> FnMut(PatchEvent<'e>),
    {
        if self.closed {
            return;
        }
        if let Some(kind) = self.stream {
            let boundary = self.machine.at_char_boundary();
            self.feed(kind, &[byte], boundary, on_event);
            return;
        }
        if !self.held_lines.is_empty() && !self.machine.tail_alive() {
            // Not whitespace after a possible closing line: it was not the last line, and the
            // lines held after it were hunk lines.
            self.flush_held(on_event);
        }
        if self.machine.keeps_line_bytes() {
            self.line.push(byte);
        }
        if let Some(kind) = self.machine.stream_kind() {
            self.start_stream(kind, on_event);
        }
    }

    /// The current line's kind is settled: its opening events, then its content so far.
    fn start_stream<F>(&mut self, kind: LineKind, on_event: &mut F)
    where
        F: for<'e> FnMut(PatchEvent<'e>),
    {
        let at = self.line_at;
        let line = std::mem::take(&mut self.line);
        // The content starts after the line's prefix (a header's indentation is not kept).
        let content = match kind {
            LineKind::Header(op) => line.get(marker(op).len()..),
            LineKind::Environment => line.get(ENVIRONMENT.len()..),
            LineKind::Move => line.get(MOVE.len()..),
            LineKind::ContextAt => line.get(3..),
            _ => line.get(1..),
        }
        .unwrap_or_default();
        match kind {
            LineKind::Header(op) => self.frame.file_start(op, at, on_event),
            LineKind::Environment => on_event(PatchEvent::Environment),
            LineKind::Move => on_event(PatchEvent::MoveTo),
            LineKind::AddLine => self.frame.line_start(LineOp::Add, at, on_event),
            LineKind::Change(op) => self.frame.line_start(op, at, on_event),
            LineKind::ContextAt => self.frame.chunk_start(ChunkHeader::Context, at, on_event),
            // Lines without content never stream.
            _ => {}
        }
        self.stream = Some(kind);
        self.plain_text = matches!(
            kind,
            LineKind::AddLine | LineKind::Change(_) | LineKind::ContextAt
        );
        self.pend.clear();
        self.pend_partial = false;
        self.feed(kind, content, true, on_event);
        self.line = line;
        self.line.clear();
    }

    /// Content bytes of the streaming line (`boundary`: the machine stands between characters
    /// after them): emits what no later byte can change, keeps the rest in `pend`.
    #[inline]
    fn feed<F>(&mut self, kind: LineKind, bytes: &[u8], boundary: bool, on_event: &mut F)
    where
        F: for<'e> FnMut(PatchEvent<'e>),
    {
        match kind {
            LineKind::Header(_) | LineKind::Environment | LineKind::Move => {
                self.feed_path(bytes, boundary, on_event)
            }
            LineKind::ContextAt => self.feed_text(true, bytes, boundary, on_event),
            _ => self.feed_text(false, bytes, boundary, on_event),
        }
        self.confirmed = self.machine.consumed() - self.pend.len() as u64;
    }

    /// A line's text or an `@@` context: every byte is content except a CR directly before
    /// the LF, so a CR waits for the next byte, and a partial character for its last.
    #[inline]
    fn feed_text<F>(&mut self, context: bool, bytes: &[u8], boundary: bool, on_event: &mut F)
    where
        F: for<'e> FnMut(PatchEvent<'e>),
    {
        if !boundary {
            // A byte of a multi-byte character: what comes before its lead byte is final (a
            // CR that this character shows was not the CR of a CRLF).
            self.pend.extend_from_slice(bytes);
            self.pend_partial = true;
            if let Some(lead) = self.pend.iter().rposition(|&b| b >= 0xc0) {
                if lead > 0 {
                    on_event(text_event(context, &self.pend[..lead]));
                    self.pend.drain(..lead);
                }
            }
            return;
        }
        if self.pend_partial {
            // The character's last byte.
            self.pend.extend_from_slice(bytes);
            self.pend_partial = false;
            on_event(text_event(context, &self.pend));
            self.pend.clear();
            return;
        }
        if !self.pend.is_empty() {
            // A held CR followed by something other than LF: content.
            on_event(text_event(context, &self.pend));
            self.pend.clear();
        }
        let (text, cr) = match bytes.split_last() {
            Some((b'\r', text)) => (text, true),
            _ => (bytes, false),
        };
        if !text.is_empty() {
            on_event(text_event(context, text));
        }
        if cr {
            self.pend.push(b'\r');
        }
    }

    /// A path: Codex drops its trailing whitespace, so a run of whitespace waits for a
    /// character that is not (or for the LF, which drops it).
    fn feed_path<F>(&mut self, bytes: &[u8], boundary: bool, on_event: &mut F)
    where
        F: for<'e> FnMut(PatchEvent<'e>),
    {
        if !boundary {
            self.pend.extend_from_slice(bytes);
            self.pend_partial = true;
            return;
        }
        if let [byte] = *bytes {
            if byte < 0x80 && !self.pend_partial {
                // An ASCII character (`char::is_whitespace` on ASCII).
                if matches!(byte, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ') {
                    self.pend.push(byte);
                } else {
                    if !self.pend.is_empty() {
                        on_event(PatchEvent::Path(&self.pend));
                        self.pend.clear();
                    }
                    on_event(PatchEvent::Path(bytes));
                }
                return;
            }
        }
        if self.pend_partial {
            // The last byte of a character: whitespace waits with the run before it.
            self.pend.extend_from_slice(bytes);
            self.pend_partial = false;
            let start = self.pend.len().saturating_sub(4);
            let start = (start..self.pend.len())
                .rev()
                .find(|&i| self.pend[i] & 0xc0 != 0x80)
                .unwrap_or(start);
            let ws = std::str::from_utf8(&self.pend[start..])
                .ok()
                .and_then(|c| c.chars().next())
                .is_some_and(char::is_whitespace);
            if !ws {
                on_event(PatchEvent::Path(&self.pend));
                self.pend.clear();
            }
            return;
        }
        // Whole characters.
        let kept = trim_end(bytes).len();
        if kept > 0 {
            if !self.pend.is_empty() {
                on_event(PatchEvent::Path(&self.pend));
                self.pend.clear();
            }
            on_event(PatchEvent::Path(&bytes[..kept]));
        }
        self.pend.extend_from_slice(&bytes[kept..]);
    }

    /// The LF of the streaming line: what is held is dropped (a CR, trailing whitespace), and
    /// the line's closing events follow.
    fn end_stream<F>(&mut self, kind: LineKind, on_event: &mut F)
    where
        F: for<'e> FnMut(PatchEvent<'e>),
    {
        self.stream = None;
        self.pend.clear();
        self.pend_partial = false;
        match kind {
            LineKind::AddLine | LineKind::Change(_) => on_event(PatchEvent::LineEnd),
            _ => on_event(PatchEvent::HeaderEnd),
        }
        if kind == LineKind::Header(Op::Delete) {
            self.frame.close_file(on_event);
        }
        self.confirmed = self.machine.consumed();
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
                    self.held_lines.push((kind, start, self.held.len(), at));
                    self.held_end = self.machine.consumed();
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
                self.held_lines.push((kind, 0, line.len(), at));
                self.held_end = self.machine.consumed();
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
        if self.held_lines.is_empty() {
            return;
        }
        for &(kind, start, end, at) in &self.held_lines {
            emit_line(&mut self.frame, kind, &self.held[start..end], at, on_event);
        }
        self.confirmed = self.held_end;
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

/// A data event of a line's text, or of an `@@` context.
fn text_event(context: bool, data: &[u8]) -> PatchEvent<'_> {
    if context {
        PatchEvent::Context(data)
    } else {
        PatchEvent::Text(data)
    }
}

const ENVIRONMENT: &str = "*** Environment ID: ";
const MOVE: &str = "*** Move to: ";

/// A file-operation header's marker.
fn marker(op: Op) -> &'static str {
    match op {
        Op::Add => "*** Add File: ",
        Op::Delete => "*** Delete File: ",
        Op::Update => "*** Update File: ",
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
            emit_data(PatchEvent::Path(header_path(line, marker(op))), on_event);
            on_event(PatchEvent::HeaderEnd);
            if op == Op::Delete {
                frame.close_file(on_event);
            }
        }
        LineKind::Environment => {
            on_event(PatchEvent::Environment);
            emit_data(PatchEvent::Path(header_path(line, ENVIRONMENT)), on_event);
            on_event(PatchEvent::HeaderEnd);
        }
        LineKind::Move => {
            on_event(PatchEvent::MoveTo);
            let path = strip_cr(line).get(MOVE.len()..).unwrap_or_default();
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
                // Free text: the line streams (`stream_kind()` held when the text began).
                if let Some(kind) = self.stream {
                    if self.plain_text && self.pend.is_empty() && byte != b'\r' {
                        self.confirmed = self.machine.consumed();
                        on_event(text_event(kind == LineKind::ContextAt, &[byte]));
                    } else {
                        self.feed(kind, &[byte], true, on_event);
                    }
                }
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
                if let Some(kind) = self.stream {
                    self.feed(kind, &chunk[at..at + taken], true, on_event);
                }
                at += taken;
                continue;
            }
            let byte = chunk[at];
            let step = self.machine.step(byte)?;
            at += 1;
            match step {
                Step::Byte => self.on_byte(byte, on_event),
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
                    match self.stream {
                        Some(streaming) => {
                            debug_assert_eq!((kind, closing), (Some(streaming), false));
                            self.end_stream(streaming, on_event)
                        }
                        None => self.on_line(kind, closing, at, on_event),
                    }
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

    /// Codex mode has no constant bound. Content is confirmed as it arrives once a line's kind
    /// is settled (less at most a partial character or a CR), but whitespace runs whose
    /// meaning depends on what follows are pending however long they are: the indentation of
    /// a line that may be a header or the closing line, a possible closing line and the lines
    /// held after it, a ` `-and-whitespace line at the start of an Update (blank or context),
    /// and a path's trailing whitespace (`docs/apply_patch.md`, "Confirmation and `K`").
    fn pending_bound(&self) -> u64 {
        u64::MAX
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long line of content keeps the parser's buffers small: only the pending bytes are
    /// held, never the line.
    #[test]
    fn long_lines_do_not_grow_buffers() {
        let text = "ü x\r".repeat(50_000).into_bytes();
        let heads: [&[u8]; 6] = [
            b"*** Begin Patch\n*** Add File: a\n+",
            b"*** Begin Patch\n*** Update File: a\n-",
            b"*** Begin Patch\n*** Update File: a\n-x\n  ",
            b"*** Begin Patch\n*** Update File: a\n@@ ",
            b"*** Begin Patch\n*** Add File: ",
            b"*** Begin Patch\n*** Update File: a\n*** Move to: ",
        ];
        for head in heads {
            for chunk in [1, 4093] {
                let mut parser = CodexParser::new();
                let mut events = 0u64;
                parser.push(head, &mut |_| events += 1).unwrap();
                for piece in text.chunks(chunk) {
                    parser.push(piece, &mut |_| events += 1).unwrap();
                    assert!(parser.pending() <= 4, "{}", parser.pending());
                }
                assert!(events > 1);
                assert!(
                    parser.line.capacity() <= 64 && parser.pend.capacity() <= 64,
                    "{:?}: {} {}",
                    String::from_utf8_lossy(head),
                    parser.line.capacity(),
                    parser.pend.capacity()
                );
            }
        }
    }
}
