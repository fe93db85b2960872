//! The unified-diff push parser: [`UdiffMachine`] plus bounded buffers, emitting
//! [`UdiffEvent`]s.
//!
//! Body and garbage content never pass through the machine byte by byte: once a line is known
//! to be a body or garbage line, the parser finds its LF with `memchr` and hands the run to the
//! consumer as one borrowed slice. Only line starts and header lines are stepped.
//!
//! Buffers, all bounded by the line limit: `line` holds the current line while it is a keyword
//! prefix or a header line; `tent` the one or two complete lines of a tentative `---`/`+++`
//! header; `header` the file header being built from confirmed header lines.

use memchr::memchr;

use crate::byteset::ByteSet;
use crate::contract::{Outcome, Owed, ParseError, PushParser, Unclosed, Verdict};

use super::event::UdiffEvent;
use super::header;
use super::keyword as kw;
use super::lines::LfIndex;
use super::machine::{
    Class, Construct, Fallback, Pos, Step, Stepped, UdiffMachine, END_FILE, END_HUNK,
};
use super::units::{Binary, BinaryKind, FileHeader, LineKind};
use super::value::{base85_length, decode_base85};
use super::{Limits, Mode, UdiffErrorKind};

/// The unified-diff push parser, in one of three [`Mode`]s.
#[derive(Clone, Debug)]
pub struct UdiffParser {
    machine: UdiffMachine,
    /// The current line's held bytes (keyword prefix or header line).
    line: Vec<u8>,
    /// Complete lines of a tentative header, and the offset of the first.
    tent: Vec<u8>,
    tent_first_len: usize,
    tent_start: u64,
    /// Bytes of confirmed header lines not yet represented by a `file_header` event.
    header_held: u64,
    header: FileHeader,
    header_emitted: bool,
    binary_patch: bool,
    garbage_start: Option<u64>,
    old_seen: u64,
    new_seen: u64,
    decoded: Vec<u8>,
    /// The LFs of the chunk being pushed, for the hunk body loop.
    lf: LfIndex,
    /// Where the open constructs began, for an incomplete verdict: the current streaming
    /// line, the current hunk, the current file patch (once its header is confirmed) and
    /// binary block.
    line_at: u64,
    hunk_at: u64,
    file_at: u64,
    block_at: u64,
}

impl Default for UdiffParser {
    fn default() -> Self {
        UdiffParser::new(Mode::Git, Limits::default())
    }
}

/// Sends an event; any event but garbage ends the current garbage span.
#[inline]
fn send<F>(garbage_start: &mut Option<u64>, on_event: &mut F, event: UdiffEvent<'_>)
where
    F: for<'e> FnMut(UdiffEvent<'e>),
{
    if !matches!(event, UdiffEvent::Garbage { .. }) {
        *garbage_start = None;
    }
    on_event(event);
}

impl UdiffParser {
    /// A parser for `mode` with the given limits.
    pub fn new(mode: Mode, limits: Limits) -> UdiffParser {
        UdiffParser {
            machine: UdiffMachine::new(mode, limits),
            line: Vec::new(),
            tent: Vec::new(),
            tent_first_len: 0,
            tent_start: 0,
            header_held: 0,
            header: FileHeader::default(),
            header_emitted: false,
            binary_patch: false,
            garbage_start: None,
            old_seen: 0,
            new_seen: 0,
            decoded: Vec::new(),
            lf: LfIndex::default(),
            line_at: 0,
            hunk_at: 0,
            file_at: 0,
            block_at: 0,
        }
    }

    /// A `strict` parser with default limits.
    pub fn strict() -> UdiffParser {
        UdiffParser::new(Mode::Strict, Limits::default())
    }

    /// A `git` parser with default limits.
    pub fn git() -> UdiffParser {
        UdiffParser::new(Mode::Git, Limits::default())
    }

    /// A `recount` parser with default limits.
    pub fn recount() -> UdiffParser {
        UdiffParser::new(Mode::Recount, Limits::default())
    }

    /// The recogniser inside, for callers that only need `allowed()`.
    pub fn machine(&self) -> &UdiffMachine {
        &self.machine
    }

    fn feed<F>(&mut self, chunk: &[u8], on_event: &mut F) -> Result<(), ParseError<UdiffErrorKind>>
    where
        F: for<'e> FnMut(UdiffEvent<'e>),
    {
        let mut at = 0;
        while at < chunk.len() {
            if let Some(class) = self.machine.streaming() {
                let rest = &chunk[at..];
                let (n, lf) = match find_lf(rest) {
                    Some(i) => (i, true),
                    None => (rest.len(), false),
                };
                match class {
                    Class::Body(_) if n > 0 => send(
                        &mut self.garbage_start,
                        on_event,
                        UdiffEvent::LineData(&rest[..n]),
                    ),
                    Class::Garbage => {
                        let start = self.garbage_start.unwrap_or(self.machine.consumed());
                        self.garbage_start = Some(start);
                        on_event(UdiffEvent::Garbage {
                            start,
                            data: &rest[..n + lf as usize],
                        });
                    }
                    _ => {}
                }
                self.machine.skip_content(n);
                at += n;
                if lf {
                    self.machine.end_streaming_line();
                    at += 1;
                }
                continue;
            }
            let byte = chunk[at];
            // The fast paths by position: body lines at a line start, runs within a line.
            if self.machine.pos == Pos::Start {
                if let Some((old, new)) = self.machine.hunk_owed() {
                    let taken = self.body_lines(chunk, at, old, new, on_event);
                    if taken > 0 {
                        at += taken;
                        continue;
                    }
                }
                if let Some(kind) = self.machine.body_line_start(byte) {
                    self.line_at = self.machine.consumed() - 1;
                    self.count(kind);
                    send(&mut self.garbage_start, on_event, UdiffEvent::Line { kind });
                    at += 1;
                    continue;
                }
            } else {
                let mut taken = self.machine.value_run(&chunk[at..]);
                if taken == 0 {
                    taken = self.machine.keyword_run(&chunk[at..]);
                }
                if taken > 0 {
                    self.line.extend_from_slice(&chunk[at..at + taken]);
                    at += taken;
                    continue;
                }
            }
            let stepped = self.machine.step(byte)?;
            if stepped.ends == 0 && stepped.step == Step::Held {
                self.line.push(byte);
                at += 1;
                continue;
            }
            if !matches!(stepped.step, Step::Abandon { .. }) {
                at += 1;
            }
            self.handle(stepped, byte, on_event)?;
        }
        Ok(())
    }

    /// The tight loop over the body lines of a `strict`/`git` hunk, with `old` and `new`
    /// lines owed, from `chunk[at..]`: each line's side from its first byte and the counts,
    /// its end from the chunk's LF index, its content in one slice. Stops before any byte that
    /// is not the start of an owed body line (the machine decides those), when the counts are
    /// met, or at the end of the chunk; returns the bytes taken.
    fn body_lines<F>(
        &mut self,
        chunk: &[u8],
        start: usize,
        mut old: u64,
        mut new: u64,
        on_event: &mut F,
    ) -> usize
    where
        F: for<'e> FnMut(UdiffEvent<'e>),
    {
        self.garbage_start = None;
        let (old_in, new_in) = (old, new);
        let mut at = start;
        let mut open = None;
        while let Some(&byte) = chunk.get(at) {
            if old == 0 && new == 0 {
                break;
            }
            // An if-chain rather than a jump table: the common sides first, well predicted.
            let (kind, old2, new2) = if byte == b'+' && new > 0 {
                (LineKind::Add, old, new - 1)
            } else if (byte == b' ' || byte == b'\n') && old > 0 && new > 0 {
                (LineKind::Context, old - 1, new - 1)
            } else if byte == b'-' && old > 0 {
                (LineKind::Remove, old - 1, new)
            } else {
                break;
            };
            (old, new) = (old2, new2);
            on_event(UdiffEvent::Line { kind });
            // An empty line's LF is its first byte: its content is empty like any other's.
            match self.lf.next_lf(chunk, at) {
                Some(lf) => {
                    self.lf.take();
                    if lf > at + 1 {
                        on_event(UdiffEvent::LineData(&chunk[at + 1..lf]));
                    }
                    at = lf + 1;
                }
                None => {
                    if chunk.len() > at + 1 {
                        on_event(UdiffEvent::LineData(&chunk[at + 1..]));
                    }
                    self.line_at = self.machine.consumed() + (at - start) as u64;
                    at = chunk.len();
                    open = Some(kind);
                }
            }
        }
        let taken = at - start;
        if taken > 0 {
            self.old_seen += old_in - old;
            self.new_seen += new_in - new;
            self.machine.resume_hunk(old, new, open, taken);
        }
        taken
    }

    fn handle<F>(
        &mut self,
        s: Stepped,
        byte: u8,
        on_event: &mut F,
    ) -> Result<(), ParseError<UdiffErrorKind>>
    where
        F: for<'e> FnMut(UdiffEvent<'e>),
    {
        let file_after = matches!(
            s.step,
            Step::BlockEnd
                | Step::HeaderLine {
                    kw: kw::BINARY_FILES
                }
        );
        if s.ends & END_HUNK != 0 {
            self.end_hunk(on_event);
        }
        if s.ends & END_FILE != 0 && !file_after {
            self.end_file(on_event);
        }
        match s.step {
            Step::Held => self.line.push(byte),
            Step::Content | Step::LineEnd => {}
            Step::Begin { class, ended } => {
                self.line.push(byte);
                self.begin_line(class, ended, on_event);
            }
            Step::HeaderLine { kw } => {
                self.line.push(byte);
                self.header_line(kw, on_event);
            }
            Step::TentativeHeader => {
                self.line.push(byte);
                self.header = FileHeader::default();
                let (first, second) = self.tent.split_at(self.tent_first_len);
                self.header.old_path = Some(header::side_name(&first[4..]));
                self.header.new_path = Some(header::side_name(second.get(4..).unwrap_or_default()));
                self.tent.clear();
                self.file_at = self.tent_start;
                self.emit_header(on_event);
            }
            Step::HunkHeader => {
                self.line.push(byte);
                self.hunk_at = self.line_start();
                if !self.header_emitted {
                    // A hunk right after a git header (no `---`/`+++`): the header ends here.
                    self.file_at = self.hunk_at - self.header_held;
                    self.emit_header(on_event);
                }
                let ranges = if self.machine.mode() == Mode::Recount {
                    header::lenient_ranges(&self.line)
                } else {
                    Some(self.machine.ranges())
                };
                self.old_seen = 0;
                self.new_seen = 0;
                let ranges_stated = ranges.is_some();
                let [old_start, old_count, new_start, new_count] = ranges.unwrap_or([0; 4]);
                let section = header::section(&self.line);
                send(
                    &mut self.garbage_start,
                    on_event,
                    UdiffEvent::HunkStart {
                        old_start,
                        old_count,
                        new_start,
                        new_count,
                        section,
                        ranges_stated,
                    },
                );
                self.line.clear();
            }
            Step::Base85Line => {
                let len = base85_length(self.line[0]) as usize;
                self.decoded.clear();
                decode_base85(&self.line[1..], len, &mut self.decoded);
                send(
                    &mut self.garbage_start,
                    on_event,
                    UdiffEvent::BinaryData(&self.decoded),
                );
                self.line.clear();
            }
            Step::BlockEnd => {
                send(
                    &mut self.garbage_start,
                    on_event,
                    UdiffEvent::BinaryBlockEnd,
                );
            }
            Step::Abandon { lines, fallback } => {
                self.flush_tentative(lines, fallback, on_event);
                let mut prefix = [0u8; kw::MAX_LEN];
                let n = self.line.len().min(kw::MAX_LEN);
                prefix[..n].copy_from_slice(&self.line[..n]);
                self.line.clear();
                // The replay is another slice: it must not see the chunk's LF index.
                let lf = std::mem::take(&mut self.lf);
                let replay = self.feed(&prefix[..n], on_event);
                self.lf = lf;
                replay?;
            }
            Step::Demote {
                lines,
                fallback,
                class,
                ended,
            } => {
                self.flush_tentative(lines, fallback, on_event);
                self.line.push(byte);
                self.begin_line(class, ended, on_event);
            }
        }
        if s.ends & END_FILE != 0 && file_after {
            self.end_file(on_event);
        }
        Ok(())
    }

    /// Where the line held in `line` began.
    fn line_start(&self) -> u64 {
        self.machine.consumed() - self.line.len() as u64
    }

    /// The held line (with its last byte) is a streaming line of `class`.
    fn begin_line<F>(&mut self, class: Class, ended: bool, on_event: &mut F)
    where
        F: for<'e> FnMut(UdiffEvent<'e>),
    {
        self.line_at = self.line_start();
        match class {
            Class::Garbage => {
                let start = *self.garbage_start.get_or_insert(self.line_at);
                on_event(UdiffEvent::Garbage {
                    start,
                    data: &self.line,
                });
            }
            Class::Body(kind) => {
                self.count(kind);
                let content = if ended {
                    &self.line[..self.line.len() - 1]
                } else {
                    &self.line[..]
                };
                emit_line(&mut self.garbage_start, on_event, kind, content);
            }
            Class::NoNewline => send(&mut self.garbage_start, on_event, UdiffEvent::NoNewline),
        }
        self.line.clear();
    }

    fn count(&mut self, kind: LineKind) {
        match kind {
            LineKind::Context => {
                self.old_seen += 1;
                self.new_seen += 1;
            }
            LineKind::Remove => self.old_seen += 1,
            LineKind::Add => self.new_seen += 1,
        }
    }

    /// The held complete lines of a failed tentative header become `fallback`.
    fn flush_tentative<F>(&mut self, lines: u8, fallback: Fallback, on_event: &mut F)
    where
        F: for<'e> FnMut(UdiffEvent<'e>),
    {
        let tent = std::mem::take(&mut self.tent);
        let (first, second) = tent.split_at(self.tent_first_len.min(tent.len()));
        for (i, line) in [first, second].into_iter().enumerate().take(lines as usize) {
            match fallback {
                Fallback::Garbage => {
                    let start = *self.garbage_start.get_or_insert(self.tent_start);
                    on_event(UdiffEvent::Garbage { start, data: line });
                }
                Fallback::Body => {
                    let kind = if i == 0 {
                        LineKind::Remove
                    } else {
                        LineKind::Add
                    };
                    self.count(kind);
                    emit_line(
                        &mut self.garbage_start,
                        on_event,
                        kind,
                        &line[..line.len() - 1],
                    );
                }
            }
        }
        self.tent = tent;
        self.tent.clear();
    }

    /// The LF of a header line that started with keyword `k`.
    fn header_line<F>(&mut self, k: u8, on_event: &mut F)
    where
        F: for<'e> FnMut(UdiffEvent<'e>),
    {
        let tentative = self.machine.tentative_lines().is_some();
        if tentative && (k == kw::MINUS || k == kw::PLUS) {
            if k == kw::MINUS {
                self.tent_start = self.machine.consumed() - self.line.len() as u64;
                self.tent_first_len = self.line.len();
            }
            self.tent.extend_from_slice(&self.line);
            self.line.clear();
            return;
        }
        let value = &self.line[kw::TEXT[k as usize].len().min(self.line.len())..];
        let h = &mut self.header;
        match k {
            kw::DIFF_GIT => {
                *h = FileHeader::default();
                h.git_names = header::git_names(value);
            }
            kw::MINUS => {
                if self.header_held == 0 {
                    *h = FileHeader::default();
                }
                h.old_path = Some(header::side_name(value));
            }
            kw::PLUS => h.new_path = Some(header::side_name(value)),
            kw::OLD_MODE => h.old_mode = Some(header::mode(value)),
            kw::NEW_MODE => h.new_mode = Some(header::mode(value)),
            kw::DELETED => h.deleted_file_mode = Some(header::mode(value)),
            kw::NEW_FILE => h.new_file_mode = Some(header::mode(value)),
            kw::COPY_FROM => h.copy_from = Some(header::plain_name(value)),
            kw::COPY_TO => h.copy_to = Some(header::plain_name(value)),
            kw::RENAME_FROM => h.rename_from = Some(header::plain_name(value)),
            kw::RENAME_TO => h.rename_to = Some(header::plain_name(value)),
            kw::SIMILARITY => h.similarity = Some(header::number(value).min(100) as u8),
            kw::DISSIMILARITY => h.dissimilarity = Some(header::number(value).min(100) as u8),
            kw::INDEX => h.index = Some(header::index(value)),
            kw::BINARY_FILES => h.binary = Some(Binary::Differ),
            kw::GIT_BINARY => self.binary_patch = true,
            kw::LITERAL | kw::DELTA => {
                let kind = if k == kw::LITERAL {
                    BinaryKind::Literal
                } else {
                    BinaryKind::Delta
                };
                let size = header::number(value);
                self.block_at = self.line_start();
                self.line.clear();
                send(
                    &mut self.garbage_start,
                    on_event,
                    UdiffEvent::BinaryBlock { kind, size },
                );
                return;
            }
            _ => {}
        }
        self.header_held += self.line.len() as u64;
        self.line.clear();
        if matches!(k, kw::PLUS | kw::BINARY_FILES | kw::GIT_BINARY) {
            self.file_at = self.machine.consumed() - self.header_held;
            self.emit_header(on_event);
        }
    }

    fn emit_header<F>(&mut self, on_event: &mut F)
    where
        F: for<'e> FnMut(UdiffEvent<'e>),
    {
        self.header_held = 0;
        self.header_emitted = true;
        send(
            &mut self.garbage_start,
            on_event,
            UdiffEvent::FileHeader {
                header: &self.header,
                binary_patch: self.binary_patch,
            },
        );
    }

    fn end_hunk<F>(&mut self, on_event: &mut F)
    where
        F: for<'e> FnMut(UdiffEvent<'e>),
    {
        let event = UdiffEvent::HunkEnd {
            old_count: self.old_seen,
            new_count: self.new_seen,
        };
        send(&mut self.garbage_start, on_event, event);
    }

    fn end_file<F>(&mut self, on_event: &mut F)
    where
        F: for<'e> FnMut(UdiffEvent<'e>),
    {
        if !self.header_emitted {
            self.emit_header(on_event);
        }
        send(&mut self.garbage_start, on_event, UdiffEvent::FileEnd);
        self.header_emitted = false;
        self.binary_patch = false;
        self.header_held = 0;
        self.header = FileHeader::default();
    }

    /// What a stream ending here leaves open; `None` when it is a sentence or an error.
    fn unclosed(&self) -> Option<Unclosed> {
        let construct = self.machine.open_construct()?;
        let began_at = match construct {
            // Header lines are held until the header is confirmed: the oldest held byte.
            Construct::FileHeader => self.confirmed(),
            Construct::FilePatch => self.file_at,
            Construct::HunkHeader => self.line_start(),
            Construct::Hunk => self.hunk_at,
            Construct::Line if self.machine.streaming().is_some() => self.line_at,
            Construct::Line => self.line_start(),
            // Its `literal`/`delta` line, or a base85 line after it.
            Construct::BinaryBlock
                if matches!(self.machine.pos, Pos::Kw { .. } | Pos::Value { .. }) =>
            {
                self.line_start()
            }
            Construct::BinaryBlock => self.block_at,
        };
        let owed = match construct {
            Construct::Hunk => self
                .machine
                .hunk_lines_owed()
                .map(|(old, new)| Owed::Lines { old, new }),
            _ => None,
        };
        Some(Unclosed {
            construct: construct.as_str(),
            began_at,
            owed,
        })
    }

    /// Bytes held and not represented by any event yet.
    fn held(&self) -> u64 {
        self.line.len() as u64 + self.tent.len() as u64 + self.header_held
    }
}

/// The first LF of `bytes`. Most diff lines are short, and a vector search pays a setup per
/// call that a short line does not repay: the first 128 bytes are scanned eight at a time
/// with a word-wide zero-byte test (safe code, branch-light), longer lines with `memchr`.
#[inline]
fn find_lf(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    const LFS: u64 = ONES * b'\n' as u64;
    let mut i = 0;
    while let Some(word) = bytes.get(i..i + 8) {
        let w = u64::from_le_bytes(word.try_into().unwrap_or([0; 8])) ^ LFS;
        // The lowest set bit marks the first zero byte, that is the first LF.
        let zero = w.wrapping_sub(ONES) & !w & HIGHS;
        if zero != 0 {
            return Some(i + (zero.trailing_zeros() / 8) as usize);
        }
        i += 8;
        if i >= 128 {
            return memchr(b'\n', &bytes[i..]).map(|j| i + j);
        }
    }
    bytes[i..].iter().position(|&b| b == b'\n').map(|j| i + j)
}

/// A body line's events: its side, then its content without the prefix byte.
fn emit_line<F>(garbage_start: &mut Option<u64>, on_event: &mut F, kind: LineKind, content: &[u8])
where
    F: for<'e> FnMut(UdiffEvent<'e>),
{
    let prefix = match kind {
        LineKind::Context => b' ',
        LineKind::Remove => b'-',
        LineKind::Add => b'+',
    };
    let content = match content.split_first() {
        Some((&first, rest)) if first == prefix => rest,
        _ => content,
    };
    send(garbage_start, on_event, UdiffEvent::Line { kind });
    if !content.is_empty() {
        on_event(UdiffEvent::LineData(content));
    }
}

impl PushParser for UdiffParser {
    type Event<'e> = UdiffEvent<'e>;
    type ErrorKind = UdiffErrorKind;
    const UNITS: &'static [&'static str] = &["files", "hunks"];
    type Recognizer = UdiffMachine;

    fn recognizer(&self) -> UdiffMachine {
        self.machine
    }

    fn push<F>(&mut self, chunk: &[u8], on_event: &mut F) -> Result<(), ParseError<UdiffErrorKind>>
    where
        F: for<'e> FnMut(UdiffEvent<'e>),
    {
        if let Some(error) = self.machine.error() {
            return Err(error);
        }
        self.lf.reset();
        self.feed(chunk, on_event)
    }

    fn finish<F>(mut self, on_event: &mut F) -> Outcome<UdiffErrorKind>
    where
        F: for<'e> FnMut(UdiffEvent<'e>),
    {
        if let Some(error) = self.machine.error() {
            return Outcome {
                verdict: Verdict::Error(error),
                consumed: self.consumed(),
                confirmed: self.confirmed(),
            };
        }
        let unclosed = self.unclosed();
        if unclosed.is_none() {
            // A tentative header cut off by the end: it was not one.
            if let Some((lines, fallback, current)) = self.machine.give_up_tentative() {
                self.flush_tentative(lines, fallback, on_event);
                match current {
                    Some(class) => {
                        if !self.line.is_empty() {
                            self.begin_line(class, false, on_event);
                        }
                    }
                    None => {
                        let prefix = std::mem::take(&mut self.line);
                        self.lf.reset();
                        // Replaying a prefix of `+++ ` or `@@ -` after a fallback cannot fail.
                        let _ = self.feed(&prefix, on_event);
                    }
                }
            }
            let (ends, line) = self.machine.end_of_stream();
            if ends & END_HUNK != 0 {
                self.end_hunk(on_event);
            }
            if ends & END_FILE != 0 {
                self.end_file(on_event);
            }
            if let Some(class) = line {
                if !self.line.is_empty() {
                    let line_start = self.machine.consumed() - self.line.len() as u64;
                    let start = *self.garbage_start.get_or_insert(line_start);
                    debug_assert_eq!(class, Class::Garbage);
                    on_event(UdiffEvent::Garbage {
                        start,
                        data: &self.line,
                    });
                    self.line.clear();
                }
            }
        }
        Outcome {
            verdict: Verdict::at_end(None, unclosed),
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
        self.machine.consumed().saturating_sub(self.held())
    }

    fn error(&self) -> Option<ParseError<UdiffErrorKind>> {
        self.machine.error()
    }

    fn pending_bound(&self) -> u64 {
        Limits::pending_bound(self.machine.max_line())
    }
}
