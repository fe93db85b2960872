//! Unified diff, as `git diff`, `git log -p` and `diff -u` write it and `git apply` and GNU
//! patch read it, in three modes (the shared specification `unified_diff.md` is the full
//! statement; `docs/udiff.md` records the decisions it leaves open and measured numbers).
//!
//! | [`Mode`] | for | outside file patches | hunk counts |
//! |---|---|---|---|
//! | `Strict` | constrained decoding, validating model output | nothing | exact |
//! | `Git` (default) | real input: `git diff`, `git log -p`, mail | garbage, as `git apply` skips it | exact |
//! | `Recount` | model-written diffs | garbage | ignored or absent; recounted |
//!
//! # Layers
//!
//! - [`UdiffMachine`], the recogniser: a `Copy` value of a few words (context, position in the
//!   line, counts owed, limits) with an exact `allowed()` and a `step(byte)`. It is split by
//!   construct: [`keyword`] matches line starts, `value` the rest of header lines (names, modes,
//!   `index`, hunk ranges, base85), `machine` ties them to the hunk counts.
//! - [`UdiffParser`], the push parser: the machine plus bounded buffers, emitting borrowed
//!   [`UdiffEvent`]s. Body and garbage content stream as borrowed slices; hunk body lines end
//!   at LFs that `lines` indexes 64 bytes at a time.
//! - [`PatchAssembler`] builds the owned [`units`] values ([`units::FilePatch`],
//!   [`units::Hunk`]) from the events, yielding each header and each hunk as soon as it is
//!   confirmed, which is when the application engine may check it.
//!
//! ```
//! use frontier_core::contract::PushParser;
//! use frontier_core::udiff::{Assembled, PatchAssembler, UdiffParser};
//!
//! let diff = b"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-old\n+new\n";
//! let mut parser = UdiffParser::strict();
//! let mut assembler = PatchAssembler::default();
//! let mut hunks = 0;
//! let mut on_event = |e: frontier_core::udiff::UdiffEvent<'_>| {
//!     if let Some(Assembled::Hunk(h)) = assembler.on_event(&e) {
//!         assert_eq!((h.old_count, h.new_count), (1, 1));
//!         hunks += 1;
//!     }
//! };
//! parser.push(diff, &mut on_event).unwrap();
//! // The hunk is confirmed one byte late: here, by the end of the stream.
//! let outcome = parser.finish(&mut on_event);
//! assert_eq!(outcome.verdict.as_str(), "complete");
//! assert_eq!(hunks, 1);
//! ```
//!
//! # Events
//!
//! `garbage {start, data}` (git, recount: skipped bytes; `start` is the offset of the span),
//! `file_header {…}` (names and git metadata, when the header is confirmed), `hunk_start
//! {old_start, old_count, new_start, new_count, section}`, `line {side}` then `line_data`
//! (content without prefix and LF), `no_newline`, `hunk_end {old_count, new_count}` (unit
//! `hunks`: the real counts), `binary_block {kind, size}`, `binary_data` (decoded, deflated),
//! `binary_block_end`, `file_end` (unit `files`).
//!
//! # Confirmation and `K`
//!
//! A hunk is confirmed one byte after its counts are met (at the first byte of the next line
//! that is not `\`, or at the end). A file header is confirmed when nothing but its hunks or
//! binary data can follow: at the LF of `+++ ` (or of `Binary files`/`GIT binary patch`), at
//! the first byte of a line that cannot extend a `diff --git` header, or, for a `---`/`+++`
//! pair without `diff --git` in `git`/`recount` mode, at the `@@ -` (`@@`) that proves it is
//! one. Until then its lines are pending, so `K = 14 × max_line` (a `diff --git` line, eleven
//! extended header lines each used at most once, `---` and `+++`), see [`Limits`].
//!
//! # Error kinds
//!
//! | kind | when |
//! |---|---|
//! | `hunk_overrun` | a body line beyond the counts: right after a completed hunk (where git and GNU patch silently drop it), or of a side whose count is met |
//! | `hunk_underrun` | a line that is not a body line while the counts are not met |
//! | `misplaced_no_newline` | a `\` line that does not follow a body line (at a hunk's start, or after another `\` line) |
//! | `hunk_without_header` | `@@ -` outside a file patch (git refuses it too) |
//! | `line_too_long` | a header line that could no longer end within `max_line` |
//! | `number_too_large` | a digit beyond a number's limit (ranges: 12 digits, modes: 7, percent: 100, binary sizes: 15) |
//! | `unexpected_byte` | any other byte outside the grammar |

mod assemble;
mod event;
mod header;
pub mod keyword;
mod lines;
mod machine;
mod parser;
pub mod units;
mod value;

pub use assemble::{parse_all, Assembled, PatchAssembler};
pub use event::UdiffEvent;
pub use machine::{Class, Construct, Fallback, Step, Stepped, UdiffMachine, END_FILE, END_HUNK};
pub use parser::UdiffParser;
pub use units::LineKind;

/// The three modes (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum Mode {
    /// File patches only, exact counts.
    Strict,
    /// What `git apply` reads: garbage around file patches, exact counts.
    #[default]
    Git,
    /// Model-written diffs: counts ignored, hunks end at the next header.
    Recount,
}

/// The limit of the language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Limits {
    /// Bytes in one header line (`diff --git`, extended headers, `---`, `+++`, hunk headers),
    /// LF included. Default 4096, at least [`Limits::MIN_MAX_LINE`]. Body and garbage lines
    /// have no limit. In `git`/`recount` mode a `---`/`+++` line that outgrows it is not a
    /// header (it becomes garbage, or a body line in a `recount` hunk); elsewhere a header line
    /// that outgrows it is an error, `line_too_long`.
    pub max_line: u32,
}

impl Limits {
    /// The default `max_line`.
    pub const DEFAULT_MAX_LINE: u32 = 4096;
    /// The smallest `max_line` (smaller values are raised to it).
    pub const MIN_MAX_LINE: u32 = 256;

    /// `K` for a given `max_line`: the header lines that may be pending at once.
    pub const fn pending_bound(max_line: u32) -> u64 {
        14 * max_line as u64
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_line: Self::DEFAULT_MAX_LINE,
        }
    }
}

/// Why the unified-diff parser refused a byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UdiffErrorKind {
    /// A body line beyond the counts.
    HunkOverrun,
    /// A non-body line while lines are still owed.
    HunkUnderrun,
    /// A `\` line that does not follow a body line (at a hunk's start, or after another one).
    MisplacedNoNewline,
    /// `@@ -` outside a file patch.
    HunkWithoutHeader,
    /// A header line that could no longer end within `max_line`.
    LineTooLong,
    /// A digit beyond a number's limit.
    NumberTooLarge,
    /// Any other byte outside the grammar.
    UnexpectedByte,
}

impl crate::contract::ErrorKind for UdiffErrorKind {
    fn as_str(self) -> &'static str {
        match self {
            UdiffErrorKind::HunkOverrun => "hunk_overrun",
            UdiffErrorKind::HunkUnderrun => "hunk_underrun",
            UdiffErrorKind::MisplacedNoNewline => "misplaced_no_newline",
            UdiffErrorKind::HunkWithoutHeader => "hunk_without_header",
            UdiffErrorKind::LineTooLong => "line_too_long",
            UdiffErrorKind::NumberTooLarge => "number_too_large",
            UdiffErrorKind::UnexpectedByte => "unexpected_byte",
        }
    }
}
