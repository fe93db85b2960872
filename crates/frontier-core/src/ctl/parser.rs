//! The CTL push parser: [`CtlMachine`] plus a bounded line buffer, emitting [`CtlEvent`]s.
//!
//! Body bytes never pass through the machine one by one: the parser hands the whole run that
//! belongs to the current argument to the consumer as one borrowed slice. A header line that
//! arrives whole in one chunk is checked in one pass ([`CtlMachine::take_line`]) and its tokens
//! are read straight from the chunk; any other line is stepped ([`CtlMachine::step_line`]), and
//! only its part in earlier chunks is kept in the line buffer. A one-byte push, what a decoder
//! sends, takes a counted body's byte or a header byte that only moves along its line in a few
//! inlined instructions, and any other byte through [`CtlMachine::step`] out of line; a longer
//! chunk goes out of line to the loop of the parser's mode (a const generic, chosen once a
//! chunk), so that neither the one-byte path inlined into a caller's loop nor strict CTL's loop
//! carries what it does not use (`docs/performance.md`).
//!
//! Extended CTL's values are taken in runs too: an inline value up to its LF (`memchr`, within
//! the line's budget), a heredoc body up to the next line that may be its tag line, and the tag
//! line with it when it is all there. In a long run that line is found with a substring search
//! for LF `TAG` LF (`memmem`, its searcher kept for the next heredoc with the same tag); in a
//! run of at most 64 bytes, a stream's chunk, from masks of its LFs and of the tag's first byte
//! (`line_scan`), and such a chunk with no line in it beginning with that byte is taken before
//! the chunk loop is entered. The last line of a chunk is stepped when it may be the start of
//! the tag line. The bytes a body line start holds back as a possible tag line are the tag's
//! own bytes, so when the line departs from the tag they are emitted from the machine's copy of
//! the tag: nothing of a body is buffered.

use memchr::memmem::Finder;

use crate::byteset::ByteSet;
use crate::contract::{Outcome, Owed, ParseError, PushParser, Unclosed, Verdict};
use crate::event::{Event, Value};

use super::machine::{Construct, CtlMachine, Step};
use super::{line_scan, CtlErrorKind, CtlMode, Limits, Tag, Token, MAX_TAG};

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
    /// An `arg` header, confirmed at its LF (an inline one with its value's first byte, or at
    /// its LF when the value is empty).
    ArgStart {
        /// The argument's key.
        key: Token<'a>,
        /// Its length in bytes, when the header announces it (the counted form); `None` for an
        /// inline or heredoc value (extended CTL), whose length is known only at `ArgEnd`.
        len: Option<u64>,
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
                if let Some(len) = len {
                    visit("len", Value::U64(len));
                }
            }
            CtlEvent::ArgData(_) | CtlEvent::ArgEnd | CtlEvent::CallEnd => {}
        }
    }
}

/// The CTL push parser, strict or extended.
#[derive(Clone, Debug, Default)]
pub struct CtlParser {
    machine: CtlMachine,
    /// The part of the current header line that arrived in earlier chunks.
    line: Vec<u8>,
    /// Where the open call and body began, for an incomplete verdict.
    opened: Opened,
    /// The searcher for LF `TAG` LF of the last heredoc fed in runs (built on its first run,
    /// kept with its tag while the tag is the same: one allocation per new tag, none per byte).
    tag_line: Option<(Tag, Finder<'static>)>,
}

/// Where the constructs that outlive a line began: recorded as their header line's events are
/// emitted (a store per `call` or `arg` line), since no line holds them at the end.
#[derive(Clone, Copy, Debug, Default)]
struct Opened {
    /// The current call's `call` line.
    frame_at: u64,
    /// The current argument's first body or value byte.
    body_at: u64,
}

impl CtlParser {
    /// A strict CTL parser with the given limits.
    pub fn new(limits: Limits) -> CtlParser {
        CtlParser::with_mode(limits, CtlMode::Strict)
    }

    /// A parser of `mode` with the given limits.
    pub fn with_mode(limits: Limits, mode: CtlMode) -> CtlParser {
        CtlParser {
            machine: CtlMachine::with_mode(limits, mode),
            line: Vec::new(),
            opened: Opened::default(),
            tag_line: None,
        }
    }

    /// The mode this parser reads.
    pub fn mode(&self) -> CtlMode {
        self.machine.mode()
    }

    /// The recogniser inside, for callers that only need `allowed()` (a decoder's mask).
    pub fn machine(&self) -> &CtlMachine {
        &self.machine
    }

    /// One byte, as a decoder pushes it. The three cases of most bytes are taken on their own,
    /// in a few instructions inlined into the caller's loop: a byte of a counted body, a
    /// header byte that only moves along its line, and a byte inside a heredoc content line.
    /// Any other byte (an inline value's among them) goes out of line.
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
        let (taken, last) = self.machine.skip_body(1);
        if taken > 0 {
            emit_body(chunk, last, on_event);
            return Ok(());
        }
        if self.machine.move_along(byte) {
            self.line.push(byte);
            return Ok(());
        }
        if self.machine.take_text_byte(byte) {
            on_event(CtlEvent::ArgData(chunk));
            return Ok(());
        }
        if self.machine.in_value() {
            return self.value_byte(byte, chunk, on_event);
        }
        self.step_byte(byte, chunk, on_event)
    }

    /// [`push_byte`](Self::push_byte) inside an inline value or a heredoc body (extended CTL):
    /// a byte of a heredoc content line or of an inline value is taken as a run of one (a
    /// content line's byte is content whatever it is: an LF ends the line, and the tag line can
    /// only begin after it); a heredoc line start and a byte the runs leave go through the step.
    #[inline(never)]
    fn value_byte<F>(
        &mut self,
        byte: u8,
        chunk: &[u8],
        on_event: &mut F,
    ) -> Result<(), ParseError<CtlErrorKind>>
    where
        F: for<'e> FnMut(CtlEvent<'e>),
    {
        let taken = if self.machine.in_heredoc_text() {
            self.machine.take_heredoc_text(chunk)
        } else {
            let (taken, ended) = self.machine.take_inline(chunk);
            if ended {
                on_event(CtlEvent::ArgEnd);
                return Ok(());
            }
            taken
        };
        if taken > 0 {
            on_event(CtlEvent::ArgData(chunk));
            return Ok(());
        }
        self.step_byte(byte, chunk, on_event)
    }

    /// [`push_byte`](Self::push_byte) for the bytes that need the machine's step: the end of
    /// a line, a digit of `nbytes`, extended CTL's header bytes and heredoc line starts, a
    /// refused byte.
    #[inline(never)]
    fn step_byte<F>(
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
            step @ (Step::Text { .. } | Step::Held | Step::ValueEnd { announce: false }) => {
                self.value_step(step, chunk, on_event)
            }
            step => self.stepped_line(chunk, step, on_event),
        }
        Ok(())
    }

    /// Emits what a step inside an inline value or a heredoc body confirmed; `byte` is the
    /// byte stepped, as a slice of the chunk.
    fn value_step<F>(&self, step: Step, byte: &[u8], on_event: &mut F)
    where
        F: for<'e> FnMut(CtlEvent<'e>),
    {
        match step {
            Step::Text { held } => {
                if held > 0 {
                    let tag = self.machine.tag().as_bytes();
                    on_event(CtlEvent::ArgData(&tag[..(held as usize).min(tag.len())]));
                }
                on_event(CtlEvent::ArgData(byte));
            }
            Step::ValueEnd { .. } => on_event(CtlEvent::ArgEnd),
            _ => {}
        }
    }

    /// Takes bytes at the start of `rest` inside an inline value or a heredoc body (extended
    /// CTL): a run at once where it can, else one byte through the step. Returns how many.
    fn push_value<F>(
        &mut self,
        rest: &[u8],
        on_event: &mut F,
    ) -> Result<usize, ParseError<CtlErrorKind>>
    where
        F: for<'e> FnMut(CtlEvent<'e>),
    {
        if self.machine.in_heredoc_text() || self.machine.departs_at_line_start(rest) {
            let (text, tag_line_found) = self.heredoc_text(rest);
            let taken = self.machine.take_heredoc_text(&rest[..text]);
            if taken > 0 {
                on_event(CtlEvent::ArgData(&rest[..taken]));
                // The search found the whole tag line right after the run (the run was not cut
                // short by the room): the value ends here too.
                let tag_line = if tag_line_found && taken == text {
                    self.machine.take_tag_line(&rest[taken..])
                } else {
                    0
                };
                if tag_line > 0 {
                    on_event(CtlEvent::ArgEnd);
                }
                return Ok(taken + tag_line);
            }
        } else {
            let (taken, ended) = self.machine.take_inline(rest);
            if taken > 0 {
                on_event(CtlEvent::ArgData(&rest[..taken]));
            }
            if ended {
                on_event(CtlEvent::ArgEnd);
                return Ok(taken + 1);
            }
            if taken > 0 {
                return Ok(taken);
            }
        }
        // A heredoc's tag line, all here: the value ends.
        let tag_line = self.machine.take_tag_line(rest);
        if tag_line > 0 {
            on_event(CtlEvent::ArgEnd);
            return Ok(tag_line);
        }
        // A heredoc line start (a few bytes: the tag line, or until the line departs from
        // it), or a byte the runs leave to the step to take or refuse.
        let step = self.machine.step(rest[0])?;
        if step == (Step::Text { held: 0 }) && self.machine.in_heredoc_text() {
            // A line that departed from the tag at its first byte (most lines): that byte
            // and the run after it are one piece of data.
            let text = 1 + self.heredoc_text(&rest[1..]).0;
            let taken = 1 + self.machine.take_heredoc_text(&rest[1..text]);
            on_event(CtlEvent::ArgData(&rest[..taken]));
            return Ok(taken);
        }
        self.value_step(step, &rest[..1], on_event);
        Ok(1)
    }

    /// How many bytes at the start of `rest`, inside a heredoc content line, are content for
    /// certain: up to the LF before the first line that is the tag line, or else up to the
    /// chunk's last line when it may be the start of the tag line (that line is stepped).
    /// Also whether the whole tag line follows them (the search found it).
    #[inline(always)]
    fn heredoc_text(&mut self, rest: &[u8]) -> (usize, bool) {
        if rest.len() <= line_scan::SCANNED {
            return short_heredoc_text(self.machine.tag(), rest);
        }
        self.searched_heredoc_text(rest)
    }

    /// [`heredoc_text`](Self::heredoc_text) for a run longer than [`line_scan::SCANNED`]: the
    /// substring search, out of line.
    #[inline(never)]
    fn searched_heredoc_text(&mut self, rest: &[u8]) -> (usize, bool) {
        let tag = *self.machine.tag();
        let tail = rest.len().saturating_sub(tag.as_bytes().len() + 1);
        let finder = match &self.tag_line {
            Some((kept, finder)) if kept.same_tag(&tag) => finder,
            _ => {
                let bytes = tag.as_bytes();
                let mut needle = [b'\n'; MAX_TAG + 2];
                needle[1..=bytes.len()].copy_from_slice(bytes);
                let finder = Finder::new(&needle[..bytes.len() + 2]).into_owned();
                &self.tag_line.insert((tag, finder)).1
            }
        };
        match finder.find(rest) {
            Some(lf) => (lf + 1, true),
            None => match memchr::memrchr(b'\n', &rest[tail..]) {
                Some(lf) => (tail + lf + 1, false),
                None => (rest.len(), false),
            },
        }
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

    /// A chunk of more than one byte, by the loop of the parser's mode: chosen once a chunk,
    /// so strict CTL's loop has no branch of extended CTL.
    #[inline]
    fn push_chunk<F>(
        &mut self,
        chunk: &[u8],
        on_event: &mut F,
    ) -> Result<(), ParseError<CtlErrorKind>>
    where
        F: for<'e> FnMut(CtlEvent<'e>),
    {
        match self.machine.mode() {
            CtlMode::Strict => self.push_run::<false, F>(chunk, on_event),
            CtlMode::Extended => self.push_run::<true, F>(chunk, on_event),
        }
    }

    /// A chunk of more than one byte: body runs, value runs (`EXTENDED` only) and whole lines
    /// at once, else stepped. Out of line, so that the one-byte path inlined into a caller's
    /// loop keeps its registers.
    #[inline(never)]
    fn push_run<const EXTENDED: bool, F>(
        &mut self,
        chunk: &[u8],
        on_event: &mut F,
    ) -> Result<(), ParseError<CtlErrorKind>>
    where
        F: for<'e> FnMut(CtlEvent<'e>),
    {
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
            if EXTENDED && self.machine.in_value() {
                if self.machine.take_short_text(rest) {
                    // A stream's chunk inside a heredoc line, with no line start in it that
                    // could be the tag line: all of it is content.
                    on_event(CtlEvent::ArgData(rest));
                    return Ok(());
                }
                at += self.push_value(rest, on_event)?;
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

    /// What a stream ending here leaves open; `None` when it is a sentence or an error.
    fn unclosed(&self) -> Option<Unclosed> {
        let construct = self.machine.open_construct()?;
        let name = construct.as_str();
        Some(match construct {
            Construct::Frame => Unclosed::at(name, self.opened.frame_at),
            Construct::InlineValue | Construct::HeredocBody => {
                Unclosed::at(name, self.opened.body_at)
            }
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

/// [`CtlParser::heredoc_text`] for a run of at most [`line_scan::SCANNED`] bytes (a stream's
/// chunk): the lines in it that begin with the tag's first byte found from masks of its bytes
/// (most runs have none: no branch to mispredict), each checked against the tag, with no
/// searcher. Stops before the first line that is the tag line (`true`), or that the chunk ends
/// inside while it still matches the tag (stepped), else takes all of `rest`.
#[inline]
fn short_heredoc_text(tag: &Tag, rest: &[u8]) -> (usize, bool) {
    let Some(&first) = tag.as_bytes().first() else {
        return (rest.len(), false);
    };
    let mut candidates = line_scan::lines_starting_with(rest, first);
    while candidates != 0 {
        let start = candidates.trailing_zeros() as usize + 1;
        candidates &= candidates - 1;
        let line = &rest[start..];
        if tag.starts_tag_line(line) {
            return (start, true);
        }
        if line.len() <= tag.as_bytes().len() && tag.as_bytes().starts_with(line) {
            return (start, false);
        }
    }
    (rest.len(), false)
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
                len: Some(len),
            });
            if len == 0 {
                on_event(CtlEvent::ArgEnd);
            } else {
                opened.body_at = end;
            }
        }
        Step::HeredocLine => {
            on_event(CtlEvent::ArgStart {
                key: token(4..separator),
                len: None,
            });
            opened.body_at = end;
        }
        // The inline value's first byte ends the line so far.
        Step::ValueStart => {
            on_event(CtlEvent::ArgStart {
                key: token(4..separator),
                len: None,
            });
            opened.body_at = end - 1;
            on_event(CtlEvent::ArgData(line.get(lf..).unwrap_or_default()));
        }
        Step::InlineLine => {
            on_event(CtlEvent::ArgStart {
                key: token(4..separator),
                len: None,
            });
            let value = line.get(separator + 3..lf).unwrap_or_default();
            if !value.is_empty() {
                on_event(CtlEvent::ArgData(value));
            }
            on_event(CtlEvent::ArgEnd);
        }
        Step::ValueEnd { announce: true } => {
            on_event(CtlEvent::ArgStart {
                key: token(4..separator),
                len: None,
            });
            on_event(CtlEvent::ArgEnd);
        }
        Step::CallEnd => on_event(CtlEvent::CallEnd),
        Step::Header
        | Step::Body { .. }
        | Step::Text { .. }
        | Step::Held
        | Step::ValueEnd { announce: false } => {}
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
        // Most chunks of a body-heavy stream begin inside a counted body: its part is one
        // slice, without a call.
        let (taken, last) = self.machine.skip_body(chunk.len() as u64);
        if taken == 0 {
            // And most chunks of an extended one inside a heredoc line.
            if self.machine.take_short_text(chunk) {
                on_event(CtlEvent::ArgData(chunk));
                return Ok(());
            }
            return self.push_chunk(chunk, on_event);
        }
        let (body, rest) = chunk.split_at(taken as usize);
        emit_body(body, last, on_event);
        if rest.is_empty() {
            return Ok(());
        }
        self.push_chunk(rest, on_event)
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
        self.machine.consumed() - self.machine.pending() as u64
    }

    fn error(&self) -> Option<ParseError<CtlErrorKind>> {
        self.machine.error()
    }

    fn pending_bound(&self) -> u64 {
        self.machine.limits().max_line.saturating_sub(1) as u64
    }
}
