//! The unified-diff recogniser: grammar, counts and limits as a `Copy` state machine.
//!
//! The machine has two coordinates. [`Ctx`] says what the current line may be, given the lines
//! before it (outside any file patch, in a git header, in a hunk with so many lines owed, …);
//! [`Pos`] says where the machine is inside the current line (at its start, matching keywords,
//! in a header value, or streaming body or garbage content up to the LF).
//!
//! ```text
//!            diff --git            ext. headers         --- / +++          @@ -a,b +c,d @@
//!  Top ─────────────────▶ GitHdr ───────────────▶ GitHdr ──────▶ AfterPlus ─────────────▶ Hunk{old,new}
//!   ▲ ▲  --- (+++ , @@ -)                                                                   │ counts met
//!   │ └───────────────────────────────────────────────────────────▶ AfterPlus              ▼
//!   │                    garbage, next file patch, end              HunkDone ◀── `\` ──┘  ──@@ -──▶ Hunk
//!   └──────────────────────────────────────────────────────────────── HunkDone
//! ```
//!
//! A `---` line that closes a git header holding a metadata line (a mode change, a new or
//! deleted file, a rename, a copy) leads to `MetaMinus` instead of `AfterMinus`, and its
//! `+++` line to `Hunks`: that file patch needs no hunk, as in `git apply`.
//!
//! # Tentative headers
//!
//! In `git` and `recount` mode a `--- ` line is a file header only if `+++ ` and then `@@ -`
//! (`@@` in `recount`) follow, as in git's own header search. Until then the machine is
//! *tentative*: it remembers what the lines become if the header fails (garbage, or in a
//! `recount` hunk a removed and an added body line). When a line start diverges, the machine
//! falls back ([`Step::Abandon`]): it returns to the fallback context at the start of the
//! current line, un-consumes the line's few matched keyword bytes, and the caller feeds them
//! again, then the byte. `allowed()` and `accepting()` of a tentative line start are those of
//! the fallback after that replay (a handful of steps: constant time). A tentative line that
//! outgrows `max_line`, or a `---`/`+++` line without a name, cannot be a header; it is
//! demoted to its fallback on the spot ([`Step::Demote`]).
//!
//! # Modules
//!
//! One module per construct; each adds its own `impl UdiffMachine` block. This file holds the
//! machine itself, [`step`](UdiffMachine::step) with its dispatch on [`Pos`], and the end of
//! the stream.
//!
//! | module | holds |
//! |---|---|
//! | `state` | the two coordinates ([`Ctx`], [`Pos`]) and what a step reports ([`Stepped`]) |
//! | `line_start` | the first byte of a line: the dispatch on the context |
//! | `header_line` | the rest of a header line: keyword, value, the LF |
//! | `base85` | the lines of a binary block |
//! | `tentative` | what a tentative header falls back to, and the fall back |
//! | `allowed` | `allowed()` and `accepting()` |
//! | `header_run`, `body_run` | the fast paths: runs the parser's loops take at once, exactly as stepping them would |

use crate::contract::ParseError;

use super::keyword as kw;
use super::{Limits, Mode, UdiffErrorKind};

mod allowed;
mod base85;
mod body_run;
mod header_line;
mod header_run;
mod line_start;
mod recognizer;
mod state;
mod tentative;

use state::{plain, Tent};
pub use state::{Class, Construct, Fallback, Step, Stepped, END_FILE, END_HUNK};
pub(crate) use state::{Ctx, Div, Pos};

/// The unified-diff recogniser: `Copy`, exact `allowed()` in constant time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UdiffMachine {
    mode: Mode,
    max_line: u32,
    pub(crate) ctx: Ctx,
    pub(crate) pos: Pos,
    tent: Tent,
    line_len: u32,
    nums: [u64; 4],
    consumed: u64,
    error: Option<ParseError<UdiffErrorKind>>,
}

impl UdiffMachine {
    /// A machine at the start of a stream.
    pub fn new(mode: Mode, limits: Limits) -> UdiffMachine {
        UdiffMachine {
            mode,
            max_line: limits.max_line.max(Limits::MIN_MAX_LINE),
            ctx: Ctx::Top,
            pos: Pos::Start,
            tent: Tent::None,
            line_len: 0,
            nums: [0; 4],
            consumed: 0,
            error: None,
        }
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The effective line limit.
    pub fn max_line(&self) -> u32 {
        self.max_line
    }

    /// Bytes accepted so far.
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// The sticky error.
    pub fn error(&self) -> Option<ParseError<UdiffErrorKind>> {
        self.error
    }

    /// The ranges of the last hunk header read in `strict`/`git` mode:
    /// `[old_start, old_count, new_start, new_count]`, counts 1 when omitted.
    pub fn ranges(&self) -> [u64; 4] {
        self.nums
    }

    fn is_recount(&self) -> bool {
        self.mode == Mode::Recount
    }

    /// Whether a line could still end within `max_line` after one more byte leading to a
    /// state that needs `rest` more bytes.
    #[inline]
    fn fits(&self, rest: u32) -> bool {
        self.line_len as u64 + 1 + rest as u64 <= self.max_line as u64
    }

    /// Takes one byte. On a refusal the machine enters its sticky error state.
    #[inline]
    pub fn step(&mut self, byte: u8) -> Result<Stepped, ParseError<UdiffErrorKind>> {
        if let Some(error) = self.error {
            return Err(error);
        }
        // Only these change before a transition can fail.
        let before = (self.ctx, self.pos, self.tent, self.line_len);
        match self.transition(byte) {
            Ok(stepped) => {
                if !matches!(stepped.step, Step::Abandon { .. }) {
                    self.consumed += 1;
                }
                if self.pos == Pos::Start {
                    self.line_len = 0;
                }
                Ok(stepped)
            }
            Err(kind) => {
                (self.ctx, self.pos, self.tent, self.line_len) = before;
                let error = ParseError {
                    offset: self.consumed,
                    byte,
                    kind,
                };
                self.error = Some(error);
                Err(error)
            }
        }
    }

    /// Moves to the next state; on error the caller restores the old one.
    #[inline]
    fn transition(&mut self, byte: u8) -> Result<Stepped, UdiffErrorKind> {
        match self.pos {
            Pos::Stream(_) => {
                if byte == b'\n' {
                    self.pos = Pos::Start;
                    Ok(plain(Step::LineEnd))
                } else {
                    Ok(plain(Step::Content))
                }
            }
            Pos::Start => self.line_start(byte),
            Pos::Kw {
                cands,
                matched,
                div,
            } => self.keyword(cands, matched, div, byte, 0),
            Pos::Value { kw, value } => self.value(kw, value, byte),
            Pos::Base85 { left, group, acc } => self.base85(left, group, acc, byte),
        }
    }

    /// The innermost construct a stream ending here leaves open (see `docs/udiff.md`);
    /// `None` when the input so far is a sentence or an error. A tentative header answers
    /// for what it falls back to.
    pub fn open_construct(&self) -> Option<Construct> {
        if self.accepting() || self.error.is_some() {
            return None;
        }
        if let Some(m) = self.resolved() {
            return m.open_construct();
        }
        let named_by = |k: u8| match k {
            kw::ATAT_DASH | kw::ATAT => Construct::HunkHeader,
            kw::LITERAL | kw::DELTA => Construct::BinaryBlock,
            _ => Construct::FileHeader,
        };
        Some(match self.pos {
            Pos::Start => match self.ctx {
                Ctx::AfterMinus | Ctx::MetaMinus => Construct::FileHeader,
                Ctx::AfterPlus | Ctx::BinHdr => Construct::FilePatch,
                Ctx::Hunk { .. } => Construct::Hunk,
                Ctx::Base85 { .. } => Construct::BinaryBlock,
                // The other contexts accept (checked above).
                _ => Construct::FileHeader,
            },
            Pos::Kw {
                div: Div::Body(_), ..
            } => Construct::Line,
            Pos::Kw { cands, .. } => {
                let hunk = kw::bit(kw::ATAT_DASH) | kw::bit(kw::ATAT);
                let binary = kw::bit(kw::LITERAL) | kw::bit(kw::DELTA);
                if cands & !hunk == 0 {
                    Construct::HunkHeader
                } else if cands & !binary == 0 {
                    Construct::BinaryBlock
                } else {
                    Construct::FileHeader
                }
            }
            Pos::Value { kw, .. } => named_by(kw),
            Pos::Stream(_) => Construct::Line,
            Pos::Base85 { .. } => Construct::BinaryBlock,
        })
    }

    /// The lines the current hunk still owes, in a `strict`/`git` hunk body.
    pub fn hunk_lines_owed(&self) -> Option<(u64, u64)> {
        match self.ctx {
            Ctx::Hunk { old, new, .. } if !self.is_recount() => Some((old, new)),
            _ => None,
        }
    }

    /// The end of the stream: what the units still open become. Returns the ends and, for a
    /// partial line held as a keyword prefix, what that line is.
    pub fn end_of_stream(&self) -> (u8, Option<Class>) {
        let line = match self.pos {
            Pos::Start => None,
            Pos::Kw {
                div: Div::Garbage, ..
            } => Some(Class::Garbage),
            // An orphan `@@ -` line cut before it proved a hunk header is garbage.
            Pos::Value {
                kw: kw::ATAT_DASH, ..
            } if self.is_orphan_candidate() => Some(Class::Garbage),
            _ => return (0, None),
        };
        let ends = match self.ctx {
            Ctx::HunkDone { .. } => END_HUNK | END_FILE,
            Ctx::Hunk { .. } if self.is_recount() => END_HUNK | END_FILE,
            Ctx::GitHdr { .. } | Ctx::AfterBlock { .. } | Ctx::Hunks => END_FILE,
            _ => 0,
        };
        (ends, line)
    }
}
