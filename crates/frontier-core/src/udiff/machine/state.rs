//! The machine's state and what a step reports.
//!
//! [`Ctx`] (what the current line may be) and [`Pos`] (where the machine is in it) are the two
//! coordinates of the state; [`Tent`] marks a tentative header and its [`Fallback`]. A step
//! answers with a [`Stepped`]: the units that ended ([`END_HUNK`], [`END_FILE`]) and what the
//! byte did ([`Step`]), which tells the parser what to emit. They live apart from the
//! transitions so that every construct's module reads them the same way.

use crate::udiff::keyword::KwSet;
use crate::udiff::value::Value;
use crate::udiff::{LineKind, UdiffErrorKind};

/// What a line is, once it streams to its LF.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// A hunk body line of the given side.
    Body(LineKind),
    /// A line outside any file patch that `git apply` skips.
    Garbage,
    /// A `\` line: the previous body line has no final newline.
    NoNewline,
}

/// A construct of the unified diff that a cut-off stream can leave open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Construct {
    /// The header lines of a file patch, before its header is complete.
    FileHeader,
    /// A file patch whose header is complete, before its first hunk or binary block.
    FilePatch,
    /// A hunk header (`@@ …`) line cut before its LF.
    HunkHeader,
    /// A hunk whose counts are not met.
    Hunk,
    /// A body line or `\` line cut before its LF.
    Line,
    /// A binary block (`literal`/`delta` and its base85 lines).
    BinaryBlock,
}

impl Construct {
    /// The construct's stable name (`docs/udiff.md`).
    pub fn as_str(self) -> &'static str {
        match self {
            Construct::FileHeader => "file_header",
            Construct::FilePatch => "file_patch",
            Construct::HunkHeader => "hunk_header",
            Construct::Hunk => "hunk",
            Construct::Line => "line",
            Construct::BinaryBlock => "binary_block",
        }
    }
}

/// What becomes of tentative header lines that turn out not to be a header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fallback {
    /// They are garbage (outside a hunk).
    Garbage,
    /// They are a removed and an added body line (inside a `recount` hunk).
    Body,
}

/// What the current line may be, from the lines before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Ctx {
    /// Outside any file patch.
    Top,
    /// After `diff --git` and extended header lines; `seen` holds the keywords already used.
    GitHdr { seen: KwSet },
    /// After a `--- ` line.
    AfterMinus,
    /// After a `+++ ` line: a hunk header must follow.
    AfterPlus,
    /// After the `--- ` line of a git header that holds [`METADATA`](crate::udiff::keyword::METADATA) lines: the
    /// `+++ ` line completes a file patch that needs no hunk (the context after it is
    /// [`Ctx::Hunks`]).
    MetaMinus,
    /// In a hunk body with `old` and `new` lines owed (`recount`: not counted). `bs`: a `\`
    /// line may come (the previous line was the last of a side).
    Hunk { old: u64, new: u64, bs: bool },
    /// After a hunk whose counts are met (`strict`, `git`): a `\` line may still belong to it.
    HunkDone { bs: bool },
    /// Between hunks: the last hunk has ended, a hunk header may continue the file patch.
    Hunks,
    /// After `GIT binary patch`: `literal` or `delta` must follow.
    BinHdr,
    /// Inside a binary block, at a line start: a base85 line or the blank line ending it.
    Base85 { first: bool },
    /// After a binary block: the reverse block may follow the first.
    AfterBlock { first: bool },
}

/// Where the machine is in the current line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Pos {
    /// At the start of a line.
    Start,
    /// `matched` bytes of the keywords `cands` seen; `div` says what the line is if none fits.
    Kw { cands: KwSet, matched: u8, div: Div },
    /// In the value after keyword `kw`.
    Value { kw: u8, value: Value },
    /// Streaming a line's content up to its LF.
    Stream(Class),
    /// In a base85 line: `left` characters to go, `group` of the current 5 seen, value `acc`.
    Base85 { left: u8, group: u8, acc: u32 },
}

/// What a line whose prefix fits no keyword is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Div {
    Garbage,
    Body(LineKind),
    Error(UdiffErrorKind),
    /// The tentative header fails: fall back.
    Abandon,
}

/// The tentative header in progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Tent {
    None,
    Some(Fallback),
}

/// A hunk ends before this step's own events.
pub const END_HUNK: u8 = 1;

/// A file patch ends before this step's own events (after the hunk, if both).
pub const END_FILE: u8 = 2;

/// What one byte did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// The byte is held: a keyword prefix or a header value.
    Held,
    /// The byte is content of a streaming line.
    Content,
    /// The line (held bytes and this byte) is a streaming line of `class`; `ended` when this
    /// byte was its LF.
    Begin {
        /// What the line is.
        class: Class,
        /// The byte was the line's LF.
        ended: bool,
    },
    /// The LF of a streaming line.
    LineEnd,
    /// The LF of the header line that started with keyword `kw`.
    HeaderLine {
        /// The keyword id (see `keyword`).
        kw: u8,
    },
    /// The byte completed `@@ -` (or `@@`) after a tentative `---`/`+++` pair: they are a
    /// file header. The byte is held as part of the hunk header line.
    TentativeHeader,
    /// The LF of a hunk header; [`UdiffMachine::ranges`](super::UdiffMachine::ranges) has its
    /// ranges (`recount`: the line must be parsed).
    HunkHeader,
    /// The LF of a base85 line.
    Base85Line,
    /// The blank line that ends a binary block.
    BlockEnd,
    /// The tentative header failed at this byte, which was NOT consumed: the `lines` held
    /// complete lines become `fallback`; the current line's held bytes and then this byte
    /// must be fed again.
    Abandon {
        /// Complete held lines (1 or 2).
        lines: u8,
        /// What they become.
        fallback: Fallback,
    },
    /// A tentative line grew past `max_line`, or ended without a name: the `lines` complete
    /// held lines become `fallback`, and the current line (held bytes and this byte) streams
    /// on as `class` (or is complete, `ended`).
    Demote {
        /// Complete held lines before the current one (0 or 1).
        lines: u8,
        /// What they become.
        fallback: Fallback,
        /// What the current line is.
        class: Class,
        /// This byte was the line's LF (a `---`/`+++` line without a name).
        ended: bool,
    },
}

/// One step's result: units that ended, then the step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stepped {
    /// [`END_HUNK`] and [`END_FILE`] bits.
    pub ends: u8,
    /// What the byte did.
    pub step: Step,
}

/// A step that ends nothing.
pub(super) const fn plain(step: Step) -> Stepped {
    Stepped { ends: 0, step }
}
