//! The codex recogniser: exactly the language Codex's lenient `parse_patch` accepts.
//!
//! Codex trims the whole text, splits it into lines (dropping one CR before each LF), requires
//! the first line (trimmed) to be `*** Begin Patch` and the last (trimmed) to be
//! `*** End Patch` (or the heredoc form: `<<EOF`, `<<'EOF'` or `<<"EOF"`, the patch, then a
//! last line ending with `EOF`), and parses the lines in between as hunks. Since the last line
//! decides, the machine runs up to three readings of the bytes side by side, each a few bytes:
//!
//! - the **hunk** reading: the current line as a hunk line, from the line context [`Ctx`];
//! - the **close** reading: the current line as the closing `*** End Patch` line (only where
//!   the hunk list may end);
//! - the **tail** reading: a closing line has been seen and everything after it is trailing
//!   whitespace (or, in heredoc form, the final `…EOF` line and whitespace).
//!
//! A byte is allowed when one reading survives it. Characters are decoded once (strict UTF-8:
//! Codex reads the patch as a Rust `String`, so invalid UTF-8 never reaches its parser and is
//! refused here); a reading only cares whether a non-ASCII character is whitespace
//! (`char::is_whitespace`, what `str::trim` removes), so inside such a character the allowed
//! continuation bytes are those of any character, or of a whitespace character only.

use crate::byteset::ByteSet;
use crate::contract::ParseError;
use crate::recognizer::{InText, LineText};

use super::frame::Construct;
use super::keywords::{Marker, Markers};
use super::utf8::{is_whitespace, Decoded, Utf8, ASCII_WS_NO_LF, LEADS, WS_LEADS};
use super::{LineOp, Op, PatchErrorKind};

/// The line context of the hunk reading: what kind of line may start here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ctx {
    /// Right after `*** Begin Patch`: a header, `*** Environment ID:`, or the end.
    First,
    /// A header or the end.
    Header,
    /// After `*** Add File:` or a `+` line: `+`, a header, or the end.
    Add,
    /// After `*** Update File:`: `*** Move to:`, or as [`Ctx::Loop`] with no chunk yet.
    UpdateStart,
    /// Between chunks of an Update (`first`: no chunk yet): blank lines are skipped.
    Loop {
        /// No chunk yet: the chunk may omit `@@`, and the Update may not end.
        first: bool,
    },
    /// After an `@@` line: a change line must follow.
    AfterAt,
    /// Inside a chunk with at least one line.
    Chunk,
}

impl Ctx {
    /// Whether the hunk list may end before a line in this context.
    const fn can_end(self) -> bool {
        matches!(
            self,
            Ctx::First | Ctx::Header | Ctx::Add | Ctx::Loop { first: false } | Ctx::Chunk
        )
    }
}

/// A complete line as the hunk reading classified it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LineKind {
    /// A file-operation header.
    Header(Op),
    /// `*** Environment ID:`.
    Environment,
    /// `*** Move to:`.
    Move,
    /// A `+` line of an Add.
    AddLine,
    /// A change line (`+`, `-`, ` `) of a chunk.
    Change(LineOp),
    /// An empty line inside a chunk: an empty context line.
    EmptyContext,
    /// `@@` (bare).
    BareAt,
    /// `@@ ` with a context.
    ContextAt,
    /// `*** End of File`.
    EndOfFile,
    /// A blank line between chunks, skipped; `ends_chunk` when it ended the chunk before it.
    Skip {
        /// Whether a chunk was open before it.
        ends_chunk: bool,
    },
}

/// What the hunk reading has seen of the current line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Line {
    Dead,
    Start,
    /// Leading whitespace of a line that can only be a (trimmed) header.
    HeaderLead,
    Marker {
        cands: Markers,
        matched: u8,
    },
    /// `*** End of File` CR.
    EofCr,
    /// A header's path; `nonws` once it has a non-whitespace character.
    Path {
        kind: LineKind,
        nonws: bool,
    },
    /// Free text up to LF (add and change lines, `@@ ` context, a move's path).
    Text(LineKind),
    At1,
    At2,
    At2Cr,
    /// A lone CR at the start of a chunk line.
    StartCr,
    /// Whitespace only, the first byte a space, in the first chunk position: a blank line or
    /// a context line.
    BlankSpace,
    /// Whitespace only: a blank line (or an error once something else comes).
    Blank,
}

/// The close reading of the current line: `ws* "*** End Patch" ws*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Close {
    Off,
    Lead,
    Match(u8),
    Trail,
}

const END: &[u8] = b"*** End Patch";

/// The tail reading: after a closing line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Tail {
    None,
    /// Direct form: whitespace only since the closing line.
    Closed,
    /// Heredoc form: inside the final line; `k` bytes of `EOF` end its trimmed text so far.
    Final {
        k: u8,
        in_ws: bool,
    },
    /// Heredoc form: the final line ended with `EOF`; whitespace only since.
    FinalDone,
}

/// Before the hunk lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Phase {
    /// Leading whitespace of the whole text.
    Lead,
    /// The `*** Begin Patch` line: `matched` bytes (0: leading whitespace of the heredoc's
    /// inner first line; 15: trailing whitespace).
    Begin { matched: u8 },
    /// The heredoc opener, `cands` among its three spellings.
    Heredoc { cands: u8, matched: u8 },
    /// The opener and a CR.
    HeredocCr,
    /// The hunk lines.
    Body,
}

/// `allowed()` at the start: whitespace, `*` of `*** Begin Patch`, `<` of a heredoc opener.
const LEAD_ALLOWED: ByteSet = ASCII_WS_NO_LF
    .with(b'\n')
    .union(ByteSet::of(b"*<"))
    .union(WS_LEADS);

const HEREDOC: [&[u8]; 3] = [b"<<EOF", b"<<'EOF'", b"<<\"EOF\""];
const BEGIN: &[u8] = b"*** Begin Patch";

/// A character as the readings see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Ch {
    Ascii(u8),
    Multi { ws: bool },
}

impl Ch {
    const fn ws(self) -> bool {
        match self {
            Ch::Ascii(b) => matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' '),
            Ch::Multi { ws } => ws,
        }
    }
}

/// Which non-ASCII characters a reading accepts next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Multi {
    None,
    Ws,
    Any,
}

/// The next characters a reading accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Next {
    ascii: ByteSet,
    multi: Multi,
}

impl Next {
    const NONE: Next = Next {
        ascii: ByteSet::EMPTY,
        multi: Multi::None,
    };
    const fn union(self, o: Next) -> Next {
        Next {
            ascii: self.ascii.union(o.ascii),
            multi: if (self.multi as u8) > (o.multi as u8) {
                self.multi
            } else {
                o.multi
            },
        }
    }
}

const ASCII_NO_LF: ByteSet = ByteSet::range(0, 0x7f).without(b'\n');
const ANY_NO_LF: Next = Next {
    ascii: ASCII_NO_LF,
    multi: Multi::Any,
};
const ANY: Next = Next {
    ascii: ByteSet::range(0, 0x7f),
    multi: Multi::Any,
};
const WS_NO_LF: Next = Next {
    ascii: ASCII_WS_NO_LF,
    multi: Multi::Ws,
};
const WS: Next = Next {
    ascii: ASCII_WS_NO_LF.with(b'\n'),
    multi: Multi::Ws,
};
const HEADERS: Markers = Markers::of(&[Marker::Add, Marker::Delete, Marker::Update]);

/// What one byte meant to the codex machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// A byte inside a line.
    Byte,
    /// The LF of the `*** Begin Patch` line.
    BeginLine,
    /// The LF of a line before the hunks that carries no meaning (the heredoc opener, blank
    /// leading lines).
    Preamble,
    /// The LF of a hunk-section line: how the hunk reading classified it (`None` when that
    /// reading is dead) and whether the line closed the patch.
    Line {
        /// The hunk reading's classification.
        kind: Option<LineKind>,
        /// Whether the line is a closing `*** End Patch` line.
        closing: bool,
    },
}

/// The codex recogniser: `Copy`, a few words, exact `allowed()` in constant time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CodexMachine {
    /// `allowed()` of the current state, kept up to date by every step (free-text bytes, the
    /// common case, never change it).
    allowed: ByteSet,
    /// [`CodexMachine::in_plain_text`] of the current state, kept like `allowed`.
    plain: bool,
    phase: Phase,
    heredoc: bool,
    ctx: Ctx,
    line: Line,
    close: Close,
    tail: Tail,
    utf8: Utf8,
    consumed: u64,
    error: Option<ParseError<PatchErrorKind>>,
}

impl Default for CodexMachine {
    fn default() -> Self {
        CodexMachine::new()
    }
}

impl CodexMachine {
    /// A machine at the start of a stream.
    pub const fn new() -> CodexMachine {
        CodexMachine {
            allowed: LEAD_ALLOWED,
            plain: false,
            phase: Phase::Lead,
            heredoc: false,
            ctx: Ctx::First,
            line: Line::Dead,
            close: Close::Off,
            tail: Tail::None,
            utf8: Utf8::new(),
            consumed: 0,
            error: None,
        }
    }

    /// Bytes accepted so far.
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// The sticky error, if any.
    pub fn error(&self) -> Option<ParseError<PatchErrorKind>> {
        self.error
    }

    /// Whether the hunk reading is still alive (the bytes so far can be hunk lines).
    pub fn hunk_alive(&self) -> bool {
        self.phase == Phase::Body && self.line != Line::Dead
    }

    /// Whether a closing line has been seen and everything since may be the end.
    pub fn tail_alive(&self) -> bool {
        self.tail != Tail::None
    }

    /// Whether the current line can still be the closing line.
    pub fn closing_possible(&self) -> bool {
        self.close != Close::Off
    }

    /// Whether the machine stands between characters (no multi-byte character begun).
    #[inline]
    pub fn at_char_boundary(&self) -> bool {
        self.utf8.at_boundary()
    }

    /// The kind of the current line once nothing to come can change it: the hunk reading is
    /// inside a line's text or path (`+`, `-`, ` ` lines, `@@ ` context, a header's or a
    /// move's path) and it is the only reading left (the line cannot be the closing line, and
    /// no closing line before it waits for the end). The line's bytes from here on are its
    /// content, and an LF ends it as this kind.
    #[inline]
    pub fn stream_kind(&self) -> Option<LineKind> {
        if self.phase != Phase::Body
            || self.close != Close::Off
            || self.tail != Tail::None
            || self.error.is_some()
        {
            return None;
        }
        match self.line {
            Line::Text(kind) | Line::Path { kind, .. } => Some(kind),
            _ => None,
        }
    }

    /// Whether the bytes of the current line may be needed for its events: not when the hunk
    /// reading is dead, before the hunk lines, or in a line whose kind carries no data (a
    /// whitespace-only line, a lone CR, the indentation of a header, which is trimmed).
    pub fn keeps_line_bytes(&self) -> bool {
        self.phase == Phase::Body
            && !matches!(
                self.line,
                Line::Dead | Line::Start | Line::Blank | Line::StartCr | Line::HeaderLead
            )
    }

    /// Whether the hunk reading is inside free text (the fast path may skip to the LF): a
    /// line's text, or a path once it has a character that is not whitespace (from there on
    /// every character but LF leaves the state as it is).
    #[inline]
    pub fn in_plain_text(&self) -> bool {
        self.plain
    }

    fn compute_plain(&self) -> bool {
        matches!(self.line, Line::Text(_) | Line::Path { nonws: true, .. })
            && self.close == Close::Off
            && self.tail == Tail::None
            && self.utf8.at_boundary()
            && self.error.is_none()
    }

    /// Whether the input so far is a patch Codex accepts.
    pub fn accepting(&self) -> bool {
        if self.error.is_some() || self.phase != Phase::Body || !self.utf8.at_boundary() {
            return false;
        }
        match self.tail {
            Tail::Closed | Tail::FinalDone | Tail::Final { k: 3, .. } => return true,
            _ => {}
        }
        !self.heredoc && matches!(self.close, Close::Match(13) | Close::Trail)
    }

    /// The bytes that may come next. Empty after an error.
    #[inline]
    pub fn allowed(&self) -> ByteSet {
        self.allowed
    }

    /// The line a stream ending here cuts, when it is a construct of its own (a marker, a
    /// header, a change line, the heredoc's final line; [`Construct::Patch`] before the first
    /// line); `None` at a line start, where the open units decide. A line both readings
    /// still take is named by the hunk reading, except that a heredoc's missing final line
    /// is what keeps the stream from ending.
    pub fn open_line(&self) -> Option<Construct> {
        match self.phase {
            Phase::Lead | Phase::Begin { matched: 0 } => return Some(Construct::Patch),
            Phase::Begin { .. } | Phase::Heredoc { .. } | Phase::HeredocCr => {
                return Some(Construct::Marker)
            }
            Phase::Body => {}
        }
        if let Tail::Final { .. } = self.tail {
            return Some(Construct::HeredocEnd);
        }
        Some(match self.line {
            // A character begun at the line start: the line has begun, as what it may be.
            Line::Start if !self.utf8.at_boundary() => match self.ctx {
                Ctx::First | Ctx::Header | Ctx::Add => Construct::Marker,
                _ => Construct::Line,
            },
            Line::Start => return None,
            Line::Dead if self.close != Close::Off => Construct::Marker,
            Line::Dead => Construct::Patch,
            Line::HeaderLead | Line::Marker { .. } | Line::EofCr => Construct::Marker,
            Line::At1 | Line::At2 | Line::At2Cr => Construct::Marker,
            Line::Path {
                kind: LineKind::Header(op),
                ..
            } => Construct::of(op),
            Line::Path { .. } => Construct::Environment,
            Line::Text(LineKind::Move) => Construct::MoveTo,
            Line::Text(LineKind::ContextAt) => Construct::Chunk,
            Line::Text(_) | Line::StartCr | Line::BlankSpace | Line::Blank => Construct::Line,
        })
    }

    /// Computes `allowed()` from the readings.
    fn compute_allowed(&self) -> ByteSet {
        if self.error.is_some() {
            return ByteSet::EMPTY;
        }
        let next = self.next();
        if !self.utf8.at_boundary() {
            return match next.multi {
                Multi::Any => self.utf8.continuation(),
                Multi::Ws => self.utf8.ws_continuation(),
                Multi::None => ByteSet::EMPTY,
            };
        }
        next.ascii.union(match next.multi {
            Multi::Any => LEADS,
            Multi::Ws => WS_LEADS,
            Multi::None => ByteSet::EMPTY,
        })
    }

    /// Consumes a run of whole characters of free text (up to, not including, an LF; stops
    /// before an invalid byte or a character cut by the end of `bytes`). 0 when not in
    /// free text.
    pub fn skip_text(&mut self, bytes: &[u8]) -> usize {
        if !self.in_plain_text() {
            return 0;
        }
        let taken = super::utf8::content_run(bytes);
        self.consumed += taken as u64;
        taken
    }

    fn next(&self) -> Next {
        match self.phase {
            Phase::Lead => WS.union(Next {
                ascii: ByteSet::of(b"*<"),
                multi: Multi::None,
            }),
            Phase::Begin { matched: 0 } => WS_NO_LF.union(Next {
                ascii: ByteSet::single(b'*'),
                multi: Multi::None,
            }),
            Phase::Begin { matched: 15 } => WS,
            Phase::Begin { matched } => single(BEGIN[matched as usize]),
            Phase::Heredoc { cands, matched } => {
                let mut set = ByteSet::EMPTY;
                for (i, text) in HEREDOC.iter().enumerate() {
                    if cands & (1 << i) != 0 {
                        match text.get(matched as usize) {
                            Some(&b) => set = set.with(b),
                            None => set = set.union(ByteSet::of(b"\r\n")),
                        }
                    }
                }
                Next {
                    ascii: set,
                    multi: Multi::None,
                }
            }
            Phase::HeredocCr => single(b'\n'),
            Phase::Body => self
                .line_next()
                .union(self.close_next())
                .union(self.tail_next()),
        }
    }

    fn line_next(&self) -> Next {
        let ctx = self.ctx;
        match self.line {
            Line::Dead => Next::NONE,
            Line::Start => match ctx {
                Ctx::First | Ctx::Header => WS_NO_LF.union(single(b'*')),
                Ctx::Add => WS_NO_LF.union(Next {
                    ascii: ByteSet::of(b"*+"),
                    multi: Multi::None,
                }),
                Ctx::UpdateStart => WS.union(Next {
                    ascii: ByteSet::of(b"+-@*"),
                    multi: Multi::None,
                }),
                Ctx::Loop { first: true } => WS.union(Next {
                    ascii: ByteSet::of(b"+-@"),
                    multi: Multi::None,
                }),
                Ctx::Loop { first: false } => WS.union(Next {
                    ascii: ByteSet::of(b"@*"),
                    multi: Multi::None,
                }),
                Ctx::AfterAt => Next {
                    ascii: ByteSet::of(b" +-\r\n"),
                    multi: Multi::None,
                },
                Ctx::Chunk => WS.union(Next {
                    ascii: ByteSet::of(b"+-@*"),
                    multi: Multi::None,
                }),
            },
            Line::HeaderLead => WS_NO_LF.union(single(b'*')),
            Line::Marker { cands, matched } => {
                let mut ascii = cands.next_bytes(matched);
                if matched == 15 && cands.0 & Marker::EndOfFile.bit() != 0 {
                    ascii = ascii.with(b'\r');
                }
                Next {
                    ascii,
                    multi: Multi::None,
                }
            }
            Line::EofCr | Line::At2Cr => single(b'\n'),
            Line::Path { nonws, .. } => {
                if nonws {
                    ANY
                } else {
                    ANY_NO_LF
                }
            }
            Line::Text(_) => ANY,
            Line::At1 => single(b'@'),
            Line::At2 => Next {
                ascii: ByteSet::of(b" \r\n"),
                multi: Multi::None,
            },
            Line::StartCr => match ctx {
                Ctx::Chunk => WS,
                _ => single(b'\n'),
            },
            Line::BlankSpace => ANY,
            Line::Blank => WS,
        }
    }

    fn close_next(&self) -> Next {
        match self.close {
            Close::Off => Next::NONE,
            Close::Lead => WS_NO_LF.union(single(b'*')),
            Close::Match(n) if (n as usize) < END.len() => single(END[n as usize]),
            Close::Match(_) | Close::Trail => WS,
        }
    }

    fn tail_next(&self) -> Next {
        match self.tail {
            Tail::None => Next::NONE,
            Tail::Closed | Tail::FinalDone => WS,
            Tail::Final { k: 3, .. } => ANY,
            Tail::Final { .. } => ANY_NO_LF,
        }
    }

    /// Takes `byte` if it is an ASCII character of free text (the common case, inline);
    /// otherwise does nothing and returns false.
    #[inline]
    pub fn plain_byte(&mut self, byte: u8) -> bool {
        if byte < 0x80 && byte != b'\n' && self.in_plain_text() {
            self.consumed += 1;
            return true;
        }
        false
    }

    /// Takes one byte. On a refusal the machine enters its sticky error state.
    #[inline]
    pub fn step(&mut self, byte: u8) -> Result<Step, ParseError<PatchErrorKind>> {
        if byte < 0x80 && byte != b'\n' && self.in_plain_text() {
            self.consumed += 1;
            return Ok(Step::Byte);
        }
        self.step_slow(byte)
    }

    #[inline(never)]
    fn step_slow(&mut self, byte: u8) -> Result<Step, ParseError<PatchErrorKind>> {
        let result = self.step_inner(byte);
        self.allowed = self.compute_allowed();
        self.plain = self.compute_plain();
        result
    }

    fn step_inner(&mut self, byte: u8) -> Result<Step, ParseError<PatchErrorKind>> {
        if let Some(error) = self.error {
            return Err(error);
        }
        if !self.allowed().contains(byte) {
            let kind = self.refusal(byte);
            let error = ParseError {
                offset: self.consumed,
                byte,
                kind,
            };
            self.error = Some(error);
            return Err(error);
        }
        self.consumed += 1;
        let ch = if byte < 0x80 {
            if byte == b'\n' {
                return Ok(self.newline());
            }
            Ch::Ascii(byte)
        } else {
            match self.utf8.step(byte) {
                Decoded::Char(cp) => Ch::Multi {
                    ws: is_whitespace(cp),
                },
                Decoded::Partial => return Ok(Step::Byte),
                Decoded::Invalid => {
                    // `allowed()` never lets an invalid byte through; stay safe if it did.
                    self.consumed -= 1;
                    let kind = PatchErrorKind::InvalidUtf8;
                    let error = ParseError {
                        offset: self.consumed,
                        byte,
                        kind,
                    };
                    self.error = Some(error);
                    return Err(error);
                }
            }
        };
        self.char(ch);
        Ok(Step::Byte)
    }

    /// Why `byte` is refused (it is not in `allowed()`).
    fn refusal(&self, byte: u8) -> PatchErrorKind {
        use PatchErrorKind as E;
        let mut probe = self.utf8;
        if byte >= 0x80 && probe.step(byte) == Decoded::Invalid || !self.utf8.at_boundary() {
            return E::InvalidUtf8;
        }
        match self.phase {
            Phase::Lead => return E::ExpectedBeginPatch,
            Phase::Heredoc { .. } | Phase::HeredocCr => return E::ExpectedBeginPatch,
            Phase::Begin { .. } => return E::BadMarker,
            Phase::Body => {}
        }
        if self.line == Line::Dead {
            // A `*** ` line that could only have been the closing line, broken off before its
            // text was complete, is a marker that matches nothing here (as in strict mode);
            // after the closing line, anything is trailing data.
            return match self.close {
                Close::Match(k) if (k as usize) < END.len() => E::BadMarker,
                _ => E::TrailingData,
            };
        }
        match (self.line, self.ctx) {
            (Line::Marker { .. }, Ctx::UpdateStart) => E::EmptyUpdate,
            (Line::Marker { .. } | Line::HeaderLead | Line::EofCr, _) => E::BadMarker,
            (Line::Path { .. }, _) => E::EmptyPath,
            (Line::At1 | Line::At2 | Line::At2Cr, _) => E::BadContextMarker,
            (_, Ctx::First | Ctx::Header) => E::ExpectedHunkHeader,
            (Line::Start, Ctx::Add) => E::ExpectedHunkHeader,
            (Line::Start, Ctx::UpdateStart | Ctx::Loop { first: true }) if byte == b'*' => {
                E::EmptyUpdate
            }
            (_, Ctx::AfterAt | Ctx::Loop { first: false }) => E::BadContextMarker,
            _ => E::ExpectedChangeLine,
        }
    }

    fn char(&mut self, ch: Ch) {
        match self.phase {
            Phase::Lead => {
                self.phase = match ch {
                    Ch::Ascii(b'*') => Phase::Begin { matched: 1 },
                    Ch::Ascii(b'<') => {
                        self.heredoc = true;
                        Phase::Heredoc {
                            cands: 0b111,
                            matched: 1,
                        }
                    }
                    _ => Phase::Lead,
                }
            }
            Phase::Begin { matched } => {
                self.phase = Phase::Begin {
                    matched: match matched {
                        0 if ch == Ch::Ascii(b'*') => 1,
                        0 | 15 => matched,
                        m => m + 1,
                    },
                }
            }
            Phase::Heredoc { cands, matched } => {
                if ch == Ch::Ascii(b'\r') && heredoc_complete(cands, matched) {
                    self.phase = Phase::HeredocCr;
                } else if let Ch::Ascii(b) = ch {
                    let mut keep = 0;
                    for (i, text) in HEREDOC.iter().enumerate() {
                        if cands & (1 << i) != 0 && text.get(matched as usize) == Some(&b) {
                            keep |= 1 << i;
                        }
                    }
                    self.phase = Phase::Heredoc {
                        cands: keep,
                        matched: matched + 1,
                    };
                }
            }
            Phase::HeredocCr => {}
            Phase::Body => {
                self.line = self.line_char(ch);
                self.close = self.close_char(ch);
                self.tail = self.tail_char(ch);
            }
        }
    }

    fn line_char(&self, ch: Ch) -> Line {
        let ws = ch.ws();
        let b = match ch {
            Ch::Ascii(b) => b,
            Ch::Multi { .. } => 0x80,
        };
        let ctx = self.ctx;
        match self.line {
            Line::Dead => Line::Dead,
            Line::Start => match (ctx, b) {
                (Ctx::First, b'*') => Line::Marker {
                    cands: HEADERS.with(Markers::of(&[Marker::Environment])),
                    matched: 1,
                },
                (Ctx::Header | Ctx::Add | Ctx::Loop { first: false }, b'*') => Line::Marker {
                    cands: HEADERS,
                    matched: 1,
                },
                (Ctx::Chunk, b'*') => Line::Marker {
                    cands: HEADERS.with(Markers::of(&[Marker::EndOfFile])),
                    matched: 1,
                },
                (Ctx::UpdateStart, b'*') => Line::Marker {
                    cands: Markers::of(&[Marker::Move]),
                    matched: 1,
                },
                (Ctx::First | Ctx::Header | Ctx::Add, _) if ws => Line::HeaderLead,
                (Ctx::Add, b'+') => Line::Text(LineKind::AddLine),
                (Ctx::UpdateStart | Ctx::Loop { first: true }, b' ') => Line::BlankSpace,
                (Ctx::UpdateStart | Ctx::Loop { .. }, _) if ws => Line::Blank,
                (
                    Ctx::UpdateStart | Ctx::Loop { first: true } | Ctx::AfterAt | Ctx::Chunk,
                    b'+',
                ) => Line::Text(LineKind::Change(LineOp::Add)),
                (
                    Ctx::UpdateStart | Ctx::Loop { first: true } | Ctx::AfterAt | Ctx::Chunk,
                    b'-',
                ) => Line::Text(LineKind::Change(LineOp::Remove)),
                (Ctx::AfterAt | Ctx::Chunk, b' ') => Line::Text(LineKind::Change(LineOp::Context)),
                (Ctx::UpdateStart | Ctx::Loop { .. } | Ctx::Chunk, b'@') => Line::At1,
                (Ctx::AfterAt | Ctx::Chunk, b'\r') => Line::StartCr,
                (Ctx::Chunk, _) if ws => Line::Blank,
                _ => Line::Dead,
            },
            Line::HeaderLead => match b {
                b'*' => Line::Marker {
                    cands: if ctx == Ctx::First {
                        HEADERS.with(Markers::of(&[Marker::Environment]))
                    } else {
                        HEADERS
                    },
                    matched: 1,
                },
                _ if ws => Line::HeaderLead,
                _ => Line::Dead,
            },
            Line::Marker { cands, matched } => {
                if b == b'\r' && matched == 15 && cands.0 & Marker::EndOfFile.bit() != 0 {
                    return Line::EofCr;
                }
                let cands = cands.advance(matched, b);
                let matched = matched + 1;
                match cands.complete(matched) {
                    _ if cands.is_empty() => Line::Dead,
                    Some(Marker::Add) => Line::Path {
                        kind: LineKind::Header(Op::Add),
                        nonws: false,
                    },
                    Some(Marker::Delete) => Line::Path {
                        kind: LineKind::Header(Op::Delete),
                        nonws: false,
                    },
                    Some(Marker::Update) => Line::Path {
                        kind: LineKind::Header(Op::Update),
                        nonws: false,
                    },
                    Some(Marker::Environment) => Line::Path {
                        kind: LineKind::Environment,
                        nonws: false,
                    },
                    Some(Marker::Move) => Line::Text(LineKind::Move),
                    _ => Line::Marker { cands, matched },
                }
            }
            Line::Path { kind, nonws } => Line::Path {
                kind,
                nonws: nonws || !ws,
            },
            Line::Text(kind) => Line::Text(kind),
            Line::At1 if b == b'@' => Line::At2,
            Line::At2 if b == b' ' => Line::Text(LineKind::ContextAt),
            Line::At2 if b == b'\r' => Line::At2Cr,
            Line::StartCr if ws => Line::Blank,
            Line::BlankSpace if ws => Line::BlankSpace,
            Line::BlankSpace => Line::Text(LineKind::Change(LineOp::Context)),
            Line::Blank if ws => Line::Blank,
            _ => Line::Dead,
        }
    }

    fn close_char(&self, ch: Ch) -> Close {
        match (self.close, ch) {
            (Close::Off, _) => Close::Off,
            (Close::Lead, Ch::Ascii(b'*')) => Close::Match(1),
            (Close::Lead, _) if ch.ws() => Close::Lead,
            (Close::Match(n), Ch::Ascii(b)) if (n as usize) < END.len() && END[n as usize] == b => {
                Close::Match(n + 1)
            }
            (Close::Match(13) | Close::Trail, _) if ch.ws() => Close::Trail,
            _ => Close::Off,
        }
    }

    fn tail_char(&self, ch: Ch) -> Tail {
        match self.tail {
            Tail::Closed | Tail::FinalDone if ch.ws() => self.tail,
            Tail::Final { k, in_ws } => {
                if ch.ws() {
                    Tail::Final { k, in_ws: true }
                } else {
                    let k = match (ch, k, in_ws) {
                        (Ch::Ascii(b'E'), _, _) => 1,
                        (Ch::Ascii(b'O'), 1, false) => 2,
                        (Ch::Ascii(b'F'), 2, false) => 3,
                        _ => 0,
                    };
                    Tail::Final { k, in_ws: false }
                }
            }
            _ => Tail::None,
        }
    }

    /// An LF: ends the current line in every reading.
    fn newline(&mut self) -> Step {
        match self.phase {
            Phase::Lead => return Step::Preamble,
            Phase::Begin { .. } => {
                self.phase = Phase::Body;
                self.start_line(Ctx::First);
                return Step::BeginLine;
            }
            Phase::Heredoc { .. } | Phase::HeredocCr => {
                self.phase = Phase::Begin { matched: 0 };
                return Step::Preamble;
            }
            Phase::Body => {}
        }
        let closing = matches!(self.close, Close::Match(13) | Close::Trail);
        self.tail = match self.tail {
            Tail::Closed => Tail::Closed,
            Tail::FinalDone | Tail::Final { k: 3, .. } => Tail::FinalDone,
            _ => Tail::None,
        };
        if closing {
            self.tail = if self.heredoc {
                Tail::Final { k: 0, in_ws: false }
            } else {
                Tail::Closed
            };
        }
        let ended = self.line_end();
        match ended {
            Some((kind, ctx)) => {
                self.start_line(ctx);
                Step::Line {
                    kind: Some(kind),
                    closing,
                }
            }
            None => {
                self.line = Line::Dead;
                self.close = Close::Off;
                Step::Line {
                    kind: None,
                    closing,
                }
            }
        }
    }

    fn start_line(&mut self, ctx: Ctx) {
        self.ctx = ctx;
        self.line = Line::Start;
        self.close = if ctx.can_end() {
            Close::Lead
        } else {
            Close::Off
        };
    }

    /// The hunk reading at LF: the line's kind and the next context.
    fn line_end(&self) -> Option<(LineKind, Ctx)> {
        let ctx = self.ctx;
        let kind = match self.line {
            Line::Start | Line::StartCr => match ctx {
                Ctx::AfterAt | Ctx::Chunk => LineKind::EmptyContext,
                Ctx::UpdateStart | Ctx::Loop { .. } => LineKind::Skip { ends_chunk: false },
                _ => return None,
            },
            Line::Blank | Line::BlankSpace => LineKind::Skip {
                ends_chunk: ctx == Ctx::Chunk,
            },
            Line::Marker { cands, matched: 15 } if cands.0 & Marker::EndOfFile.bit() != 0 => {
                LineKind::EndOfFile
            }
            Line::EofCr => LineKind::EndOfFile,
            Line::Path { kind, nonws: true } | Line::Text(kind) => kind,
            Line::At2 | Line::At2Cr => LineKind::BareAt,
            _ => return None,
        };
        let next = match kind {
            LineKind::Header(Op::Add) => Ctx::Add,
            LineKind::Header(Op::Delete) | LineKind::Environment => Ctx::Header,
            LineKind::Header(Op::Update) => Ctx::UpdateStart,
            LineKind::AddLine => Ctx::Add,
            LineKind::Move => Ctx::Loop { first: true },
            LineKind::Change(_) | LineKind::EmptyContext => Ctx::Chunk,
            LineKind::BareAt | LineKind::ContextAt => Ctx::AfterAt,
            LineKind::EndOfFile => Ctx::Loop { first: false },
            LineKind::Skip { .. } => match ctx {
                Ctx::UpdateStart => Ctx::Loop { first: true },
                Ctx::Chunk => Ctx::Loop { first: false },
                other => other,
            },
        };
        Some((kind, next))
    }
}

const fn single(b: u8) -> Next {
    Next {
        ascii: ByteSet::single(b),
        multi: Multi::None,
    }
}

fn heredoc_complete(cands: u8, matched: u8) -> bool {
    HEREDOC
        .iter()
        .enumerate()
        .any(|(i, t)| cands & (1 << i) != 0 && t.len() == matched as usize)
}

impl crate::recognizer::Recognizer for CodexMachine {
    /// The machine with its offsets taken out: codex mode has no length limits.
    type Key = CodexMachine;

    #[inline]
    fn allowed(&self) -> ByteSet {
        self.allowed
    }

    #[inline]
    fn accepting(&self) -> bool {
        CodexMachine::accepting(self)
    }

    #[inline]
    fn try_byte(&mut self, byte: u8) -> bool {
        let allowed = self.allowed;
        crate::recognizer::step_if_allowed(self, allowed, byte, CodexMachine::step)
    }

    fn line_text_kinds(&self) -> &'static [LineText] {
        &[LineText::Utf8]
    }

    /// Inside free text (a line's text, or a path past its first character that is not
    /// whitespace), where every character but LF leaves the state as it is: what the text
    /// holds is never read again, so a mask takes the text's tokens from the vocabulary's
    /// tables instead of walking most of the trie.
    fn line_text(&self, _horizon: u32) -> Option<InText> {
        self.in_plain_text()
            .then(|| InText::forgetting(LineText::Utf8))
    }

    fn mask_key(&self, _horizon: u32) -> CodexMachine {
        // Between characters the decoder's code point is the last character's (an ASCII byte
        // leaves it as it was), read by nothing to come: left out, so that a text's
        // characters do not each make a new key. Inside a character it says which bytes
        // continue a whitespace character, and stays.
        let utf8 = if self.utf8.at_boundary() {
            self.utf8.without_code_point()
        } else {
            self.utf8
        };
        CodexMachine {
            utf8,
            consumed: 0,
            error: self.error.map(ParseError::without_position),
            ..*self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kept allowed set is the one computed from the readings, at every prefix, and no
    /// byte outside it is ever taken.
    #[test]
    fn kept_allowed_set_is_fresh() {
        let inputs: [&[u8]; 5] = [
            include_bytes!("../../../../corpora/apply_patch/codex_lenient.patch"),
            include_bytes!("../../../../corpora/apply_patch/codex_heredoc.patch"),
            include_bytes!("../../../../corpora/apply_patch/codex_crlf.patch"),
            include_bytes!("../../../../corpora/apply_patch/unicode.patch"),
            include_bytes!("../../../../corpora/apply_patch/invalid_utf8.patch"),
        ];
        for input in inputs {
            let mut m = CodexMachine::new();
            for &b in input {
                assert_eq!(m.allowed(), m.compute_allowed());
                assert_eq!(m.in_plain_text(), m.compute_plain());
                for probe in 0..=255u8 {
                    let mut clone = m;
                    assert_eq!(
                        clone.step(probe).is_ok(),
                        m.compute_allowed().contains(probe)
                    );
                }
                if m.step(b).is_err() {
                    break;
                }
            }
            assert_eq!(m.allowed(), m.compute_allowed());
        }
    }
}
