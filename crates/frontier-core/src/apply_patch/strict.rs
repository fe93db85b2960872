//! The strict recogniser: exactly the language of Codex's Lark grammar, byte for byte, as
//! llguidance enforces it.
//!
//! ```text
//!              "*** Begin Patch\n"          "*** Add File: " path LF        "+" text LF
//!   Line(Start) ──────────────▶ Line(Begin) ───────────▶ Line(AddHeader) ────────▶ Line(InAdd) ⟲
//!                                  │ "*** Delete File: " path LF ──▶ Line(AfterDelete)
//!                                  │ "*** Update File: " path LF ──▶ Line(UpdateHeader)
//!                                  │        "*** Move to: " path LF ──▶ Line(AfterMove)
//!                                  │        "@@" [" " ctx] LF | ("+"|"-"|" ") text LF ──▶ Line(InChange) ⟲
//!                                  │        "*** End of File\n" (after a change) ──▶ Line(AfterEof)
//!   any line start that may end the hunk list:  "*** End Patch" ──▶ EndPatch ─LF─▶ Done
//! ```
//!
//! A line start is a [`Ctx`]: it fixes the first bytes allowed and the `*** ` markers that are
//! candidates. Marker bytes narrow a [`Markers`] set; content (paths, `@@` context, line text)
//! is strict UTF-8 without LF, decoded by [`Utf8`]. The whole machine is a few words, `Copy`.
//! It keeps its allowed set up to date as it steps (a match plus at most eight single-byte
//! unions, and nothing at all for a content byte), so `allowed()` is one load.

use crate::byteset::ByteSet;
use crate::contract::ParseError;
use crate::recognizer::{InText, LineText};

use super::frame::Construct;
use super::keywords::{Marker, Markers};
use super::utf8::{Decoded, Utf8, CHAR_START, CHAR_START_LF};
use super::{LineOp, Op, PatchErrorKind};

/// What kind of line starts here: the context a line start is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ctx {
    /// Before `*** Begin Patch`.
    Start,
    /// After `*** Begin Patch`: a hunk header (or, with the option, `*** Environment ID:`).
    Begin,
    /// After `*** Environment ID:`: a hunk header.
    AfterEnv,
    /// After `*** Add File:`: at least one `+` line.
    AddHeader,
    /// After a `+` line of an Add: more, a header, or the end.
    InAdd,
    /// After `*** Delete File:`: a header or the end.
    AfterDelete,
    /// After `*** Update File:`: a move, a change, a header or the end.
    UpdateHeader,
    /// After `*** Move to:`: a change, a header or the end.
    AfterMove,
    /// After a change line or `@@` line: more, `*** End of File`, a header or the end.
    InChange,
    /// After `*** End of File`: a header or the end.
    AfterEof,
}

const HEADERS: Markers = Markers::of(&[Marker::Add, Marker::Delete, Marker::Update]);
const HEADERS_END: Markers = HEADERS.with(Markers::of(&[Marker::End]));
const CHANGE_START: ByteSet = ByteSet::of(b"+- @");
const AT2_NEXT: ByteSet = ByteSet::of(b" \n");

impl Ctx {
    /// The markers a `*` at this line start may begin.
    const fn markers(self, env: bool) -> Markers {
        match self {
            Ctx::Start => Markers::of(&[Marker::Begin]),
            Ctx::Begin if env => HEADERS.with(Markers::of(&[Marker::Environment])),
            Ctx::Begin | Ctx::AfterEnv => HEADERS,
            Ctx::AddHeader => Markers(0),
            Ctx::InAdd | Ctx::AfterDelete | Ctx::AfterMove | Ctx::AfterEof => HEADERS_END,
            Ctx::UpdateHeader => HEADERS_END.with(Markers::of(&[Marker::Move])),
            Ctx::InChange => HEADERS_END.with(Markers::of(&[Marker::EndOfFile])),
        }
    }

    /// The bytes other than `*` that may start a line here.
    const fn line_starts(self) -> ByteSet {
        match self {
            Ctx::AddHeader | Ctx::InAdd => ByteSet::single(b'+'),
            Ctx::UpdateHeader | Ctx::AfterMove | Ctx::InChange => CHANGE_START,
            _ => ByteSet::EMPTY,
        }
    }

    /// The bytes that may start a line here.
    #[inline]
    const fn first_bytes(self) -> ByteSet {
        match self {
            Ctx::Start | Ctx::Begin | Ctx::AfterEnv | Ctx::AfterDelete | Ctx::AfterEof => {
                ByteSet::single(b'*')
            }
            Ctx::AddHeader => ByteSet::single(b'+'),
            Ctx::InAdd => ByteSet::of(b"+*"),
            Ctx::UpdateHeader | Ctx::AfterMove | Ctx::InChange => CHANGE_START.with(b'*'),
        }
    }

    fn refusal(self) -> PatchErrorKind {
        match self {
            Ctx::Start => PatchErrorKind::ExpectedBeginPatch,
            Ctx::AddHeader | Ctx::InAdd => PatchErrorKind::ExpectedAddLine,
            Ctx::UpdateHeader | Ctx::AfterMove | Ctx::InChange => {
                PatchErrorKind::ExpectedChangeLine
            }
            Ctx::Begin | Ctx::AfterEnv | Ctx::AfterDelete | Ctx::AfterEof => {
                PatchErrorKind::ExpectedHunkHeader
            }
        }
    }
}

/// What a run of content belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TextKind {
    /// The path of a header (`/(.+)/`), or the id of `*** Environment ID:`.
    Path(PathOf),
    /// The text after `@@ ` (`/(.+)/`).
    Context,
    /// The text of a `+` line of an Add or a change line (`/(.*)/`).
    Line,
}

/// Which header a path belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PathOf {
    /// A file operation's header.
    File(Op),
    /// `*** Move to:`.
    Move,
    /// `*** Environment ID:`.
    Environment,
}

impl TextKind {
    const fn may_be_empty(self) -> bool {
        matches!(self, TextKind::Line)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum State {
    Line(Ctx),
    Marker {
        cands: Markers,
        matched: u8,
    },
    /// `@` (1) or `@@` (2) at the start of a line.
    At(u8),
    Text {
        kind: TextKind,
        nonempty: bool,
        utf8: Utf8,
        add: bool,
    },
    /// `*** End Patch` seen: an optional LF, then nothing.
    EndPatch,
    /// The LF after `*** End Patch`.
    Done,
}

/// What one byte meant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// A byte of a marker that is not finished yet (pending).
    Pending,
    /// `*** Begin Patch` LF.
    BeginPatch,
    /// A header marker is complete; its path follows.
    Header(PathOf),
    /// `@@ `: a chunk with a context text starts.
    ContextHeader,
    /// `@@` LF: a chunk with a bare `@@` starts.
    BareHeader,
    /// The first byte of a `+`, `-` or ` ` line.
    LineStart(LineOp),
    /// A content byte; `char_end` when it completes a character.
    Content {
        /// Whether the byte completes a character.
        char_end: bool,
    },
    /// The LF that ends a path, a context or a line.
    TextEnd(TextKind),
    /// `*** End of File` LF.
    EndOfFile,
    /// `*** End Patch`.
    EndPatch,
    /// The optional LF after `*** End Patch`.
    FinalNewline,
}

/// The options of strict mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct StrictOptions {
    /// Accept the multi-environment variant: one `*** Environment ID: <id>` line directly
    /// after `*** Begin Patch` (`grammars/apply_patch_env.lark`).
    pub environment: bool,
}

/// The strict recogniser: a few bytes of state, `Copy`, exact `allowed()` in constant time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StrictMachine {
    state: State,
    /// `allowed()` of the current state, kept up to date by every step so that a decoder's
    /// query is one load (content bytes, the common case, never change it).
    allowed: ByteSet,
    options: StrictOptions,
    consumed: u64,
    error: Option<ParseError<PatchErrorKind>>,
}

impl Default for StrictMachine {
    fn default() -> Self {
        StrictMachine::new(StrictOptions::default())
    }
}

impl StrictMachine {
    /// A machine at the start of a stream.
    pub const fn new(options: StrictOptions) -> StrictMachine {
        StrictMachine {
            state: State::Line(Ctx::Start),
            allowed: ByteSet::single(b'*'),
            options,
            consumed: 0,
            error: None,
        }
    }

    /// The options.
    pub fn options(&self) -> StrictOptions {
        self.options
    }

    /// Bytes accepted so far.
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// The sticky error, if any.
    pub fn error(&self) -> Option<ParseError<PatchErrorKind>> {
        self.error
    }

    /// Whether the input so far is a whole patch.
    pub fn accepting(&self) -> bool {
        self.error.is_none() && matches!(self.state, State::EndPatch | State::Done)
    }

    /// Bytes consumed whose meaning is not settled yet: the bytes of an unfinished marker or
    /// `@@`, or of an unfinished UTF-8 character.
    pub fn pending(&self) -> u64 {
        match self.state {
            State::Marker { matched, .. } => matched as u64,
            State::At(n) => n as u64,
            State::Text { utf8, .. } => utf8.partial_len() as u64,
            _ => 0,
        }
    }

    /// The line a stream ending here cuts, when it is a construct of its own: a marker not
    /// yet complete, a change or `+` line, a `*** Move to:` or `*** Environment ID:` line.
    /// `None` at a line start and inside the lines that open a unit (a file header, `@@ `),
    /// which the frame names.
    pub fn open_line(&self) -> Option<Construct> {
        match self.state {
            State::Marker { .. } | State::At(_) => Some(Construct::Marker),
            State::Text { kind, .. } => match kind {
                TextKind::Line => Some(Construct::Line),
                TextKind::Path(PathOf::Move) => Some(Construct::MoveTo),
                TextKind::Path(PathOf::Environment) => Some(Construct::Environment),
                TextKind::Path(PathOf::File(_)) | TextKind::Context => None,
            },
            State::Line(_) | State::EndPatch | State::Done => None,
        }
    }

    /// The content kind being read, if the machine is inside a path, context or line.
    pub fn text_kind(&self) -> Option<TextKind> {
        match self.state {
            State::Text { kind, .. } => Some(kind),
            _ => None,
        }
    }

    /// The bytes that may come next. Empty after an error.
    #[inline]
    pub fn allowed(&self) -> ByteSet {
        self.allowed
    }

    /// Computes `allowed()` from the state.
    fn compute_allowed(&self) -> ByteSet {
        if self.error.is_some() {
            return ByteSet::EMPTY;
        }
        match self.state {
            State::Line(ctx) => ctx.first_bytes(),
            State::Marker { cands, matched, .. } => cands.next_bytes(matched),
            State::At(1) => ByteSet::single(b'@'),
            State::At(_) => AT2_NEXT,
            State::Text {
                kind,
                nonempty,
                utf8,
                ..
            } => {
                if !utf8.at_boundary() {
                    utf8.continuation()
                } else if nonempty || kind.may_be_empty() {
                    CHAR_START_LF
                } else {
                    CHAR_START
                }
            }
            State::EndPatch => ByteSet::single(b'\n'),
            State::Done => ByteSet::EMPTY,
        }
    }

    /// Consumes the longest run of whole content characters at the start of `bytes` (stopping
    /// before an LF, an invalid byte or a character cut by the end of `bytes`). Returns how
    /// many bytes it took; 0 outside content or inside a character.
    #[inline]
    pub fn skip_content(&mut self, bytes: &[u8]) -> usize {
        let State::Text { nonempty, utf8, .. } = &mut self.state else {
            return 0;
        };
        if !utf8.at_boundary() || self.error.is_some() {
            return 0;
        }
        let taken = super::utf8::content_run(bytes);
        if taken > 0 {
            *nonempty = true;
            self.consumed += taken as u64;
            self.allowed = CHAR_START_LF;
        }
        taken
    }

    /// Takes `byte` if it is an ASCII character of content (the common case, inline) and
    /// returns the content's kind; otherwise does nothing and returns `None`.
    #[inline]
    pub fn content_byte(&mut self, byte: u8) -> Option<TextKind> {
        if let State::Text {
            kind,
            nonempty,
            utf8,
            ..
        } = &mut self.state
        {
            if byte < 0x80 && byte != b'\n' && utf8.at_boundary() && self.error.is_none() {
                self.consumed += 1;
                if !*nonempty {
                    // The first character: LF becomes possible (the set only grows to this).
                    *nonempty = true;
                    self.allowed = CHAR_START_LF;
                }
                return Some(*kind);
            }
        }
        None
    }

    /// Takes one byte. On a refusal the machine enters its sticky error state.
    #[inline]
    pub fn step(&mut self, byte: u8) -> Result<Step, ParseError<PatchErrorKind>> {
        // The common cases first: an ASCII character of content, the next byte of a marker.
        if self.error.is_none() {
            match &mut self.state {
                State::Text { nonempty, utf8, .. }
                    if byte < 0x80 && byte != b'\n' && utf8.at_boundary() =>
                {
                    self.consumed += 1;
                    if !*nonempty {
                        *nonempty = true;
                        self.allowed = CHAR_START_LF;
                    }
                    return Ok(Step::Content { char_end: true });
                }
                State::Marker { cands, matched } => {
                    if let Some(text) = cands.single() {
                        let at = *matched as usize;
                        if at + 1 < text.len() && text[at] == byte {
                            *matched += 1;
                            self.consumed += 1;
                            self.allowed = ByteSet::single(text[at + 1]);
                            return Ok(Step::Pending);
                        }
                    }
                }
                _ => {}
            }
        }
        self.step_slow(byte)
    }

    #[inline(never)]
    fn step_slow(&mut self, byte: u8) -> Result<Step, ParseError<PatchErrorKind>> {
        if let Some(error) = self.error {
            return Err(error);
        }
        match self.transition(byte) {
            Ok((state, step)) => {
                self.state = state;
                self.consumed += 1;
                self.allowed = self.compute_allowed();
                Ok(step)
            }
            Err(kind) => {
                let error = ParseError {
                    offset: self.consumed,
                    byte,
                    kind,
                };
                self.error = Some(error);
                self.allowed = ByteSet::EMPTY;
                Err(error)
            }
        }
    }

    fn transition(&self, byte: u8) -> Result<(State, Step), PatchErrorKind> {
        use PatchErrorKind as E;
        Ok(match self.state {
            State::Line(ctx) => match byte {
                b'*' if !ctx.markers(self.options.environment).is_empty() => (
                    State::Marker {
                        cands: ctx.markers(self.options.environment),
                        matched: 1,
                    },
                    Step::Pending,
                ),
                b'+' if ctx.line_starts().contains(b'+') => {
                    let add = matches!(ctx, Ctx::AddHeader | Ctx::InAdd);
                    (text(TextKind::Line, add), Step::LineStart(LineOp::Add))
                }
                b'-' if ctx.line_starts().contains(b'-') => {
                    (text(TextKind::Line, false), Step::LineStart(LineOp::Remove))
                }
                b' ' if ctx.line_starts().contains(b' ') => (
                    text(TextKind::Line, false),
                    Step::LineStart(LineOp::Context),
                ),
                b'@' if ctx.line_starts().contains(b'@') => (State::At(1), Step::Pending),
                _ => return Err(ctx.refusal()),
            },
            State::Marker { cands, matched } => {
                let cands = cands.advance(matched, byte);
                if cands.is_empty() {
                    return Err(E::BadMarker);
                }
                let matched = matched + 1;
                match cands.complete(matched) {
                    None => (State::Marker { cands, matched }, Step::Pending),
                    Some(Marker::Begin) => (State::Line(Ctx::Begin), Step::BeginPatch),
                    Some(Marker::Add) => header(PathOf::File(Op::Add)),
                    Some(Marker::Delete) => header(PathOf::File(Op::Delete)),
                    Some(Marker::Update) => header(PathOf::File(Op::Update)),
                    Some(Marker::Move) => header(PathOf::Move),
                    Some(Marker::Environment) => header(PathOf::Environment),
                    Some(Marker::EndOfFile) => (State::Line(Ctx::AfterEof), Step::EndOfFile),
                    Some(Marker::End) => (State::EndPatch, Step::EndPatch),
                }
            }
            State::At(1) if byte == b'@' => (State::At(2), Step::Pending),
            State::At(2) if byte == b' ' => (text(TextKind::Context, false), Step::ContextHeader),
            State::At(2) if byte == b'\n' => (State::Line(Ctx::InChange), Step::BareHeader),
            State::At(_) => return Err(E::BadContextMarker),
            State::Text {
                kind,
                nonempty,
                mut utf8,
                add,
            } => {
                if byte == b'\n' && utf8.at_boundary() {
                    if !nonempty && !kind.may_be_empty() {
                        return Err(match kind {
                            TextKind::Context => E::EmptyContext,
                            _ => E::EmptyPath,
                        });
                    }
                    let next = match kind {
                        TextKind::Path(PathOf::File(Op::Add)) => Ctx::AddHeader,
                        TextKind::Path(PathOf::File(Op::Delete)) => Ctx::AfterDelete,
                        TextKind::Path(PathOf::File(Op::Update)) => Ctx::UpdateHeader,
                        TextKind::Path(PathOf::Move) => Ctx::AfterMove,
                        TextKind::Path(PathOf::Environment) => Ctx::AfterEnv,
                        TextKind::Context => Ctx::InChange,
                        TextKind::Line if add => Ctx::InAdd,
                        TextKind::Line => Ctx::InChange,
                    };
                    return Ok((State::Line(next), Step::TextEnd(kind)));
                }
                let char_end = match utf8.step(byte) {
                    Decoded::Char(_) => true,
                    Decoded::Partial => false,
                    Decoded::Invalid => return Err(E::InvalidUtf8),
                };
                (
                    State::Text {
                        kind,
                        nonempty: true,
                        utf8,
                        add,
                    },
                    Step::Content { char_end },
                )
            }
            State::EndPatch if byte == b'\n' => (State::Done, Step::FinalNewline),
            State::EndPatch | State::Done => return Err(E::TrailingData),
        })
    }
}

const fn text(kind: TextKind, add: bool) -> State {
    State::Text {
        kind,
        nonempty: false,
        utf8: Utf8::new(),
        add,
    }
}

const fn header(of: PathOf) -> (State, Step) {
    (text(TextKind::Path(of), false), Step::Header(of))
}

impl crate::recognizer::Recognizer for StrictMachine {
    /// The machine with its offsets taken out: strict mode has no length limits, so nothing
    /// else depends on how far the stream is.
    type Key = StrictMachine;

    #[inline]
    fn allowed(&self) -> ByteSet {
        self.allowed
    }

    #[inline]
    fn accepting(&self) -> bool {
        StrictMachine::accepting(self)
    }

    #[inline]
    fn try_byte(&mut self, byte: u8) -> bool {
        let allowed = self.allowed;
        crate::recognizer::step_if_allowed(self, allowed, byte, StrictMachine::step)
    }

    fn line_text_kinds(&self) -> &'static [LineText] {
        &[LineText::Utf8]
    }

    /// Between characters of a path, a context or a line's text: what the text holds is
    /// never read again (only whether it is empty, which its first character settles).
    fn line_text(&self, _horizon: u32) -> Option<InText> {
        match self.state {
            State::Text { utf8, .. } if self.error.is_none() && utf8.at_boundary() => {
                Some(InText::forgetting(LineText::Utf8))
            }
            _ => None,
        }
    }

    fn mask_key(&self, _horizon: u32) -> StrictMachine {
        // Strict mode never reads a character's value (only whether its bytes are valid), so
        // the code point is left out: otherwise every distinct character of a text would
        // make a new key, and a mask miss (a walk of most of the trie) for the next token.
        let state = match self.state {
            State::Text {
                kind,
                nonempty,
                utf8,
                add,
            } => State::Text {
                kind,
                nonempty,
                utf8: utf8.without_code_point(),
                add,
            },
            other => other,
        };
        StrictMachine {
            state,
            consumed: 0,
            error: self.error.map(ParseError::without_position),
            ..*self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kept allowed set is the one computed from the state, at every prefix.
    #[test]
    fn kept_allowed_set_is_fresh() {
        let inputs: [&[u8]; 3] = [
            include_bytes!("../../../../corpora/apply_patch/multi_chunk.patch"),
            include_bytes!("../../../../corpora/apply_patch/unicode.patch"),
            include_bytes!("../../../../corpora/apply_patch/invalid_utf8.patch"),
        ];
        for input in inputs {
            let mut m = StrictMachine::default();
            for &b in input {
                assert_eq!(m.allowed(), m.compute_allowed());
                if m.step(b).is_err() {
                    break;
                }
            }
            assert_eq!(m.allowed(), m.compute_allowed());
        }
    }
}
