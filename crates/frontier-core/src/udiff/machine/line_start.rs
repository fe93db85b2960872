//! The first byte of a line: the dispatch on the context ([`Ctx`]).
//!
//! A line start decides most of the grammar. In a `strict` or `git` hunk body the counts owed
//! say which sides may come, so the byte alone starts a body line or is an overrun, an
//! underrun or a misplaced `\`. A `recount` hunk takes body lines until a line that is none
//! (a `-` line may yet be a `--- ` header). A base85 line starts with its length. Everywhere
//! else the byte begins matching the keywords the context allows (those `continuing` the file
//! patch and those that start the next one), with what the line is if it fits none ([`Div`]):
//! garbage, a removed body line, an error, or the end of a tentative header. A hunk ends here
//! when the line that starts cannot belong to it, and a file patch at the blank line after its
//! last binary block; otherwise a file patch ends in `header_line`, once the line's first
//! bytes rule out every keyword that would continue it.

use crate::udiff::keyword::{self as kw, KwSet};
use crate::udiff::value::{self, BASE85_LENGTH};
use crate::udiff::LineKind::{Add, Context, Remove};
use crate::udiff::{Mode, UdiffErrorKind};

use super::{plain, Class, Ctx, Div, Pos, Step, Stepped, UdiffMachine, END_FILE, END_HUNK};

impl UdiffMachine {
    /// The first byte of a line.
    pub(super) fn line_start(&mut self, byte: u8) -> Result<Stepped, UdiffErrorKind> {
        use UdiffErrorKind::*;
        self.line_len = 0;
        let recount = self.is_recount();
        match self.ctx {
            Ctx::Hunk { old, new, bs } if !recount => {
                let (kind, old2, new2) = match byte {
                    b' ' | b'\n' if old > 0 && new > 0 => (Context, old - 1, new - 1),
                    b'-' if old > 0 => (Remove, old - 1, new),
                    b'+' if new > 0 => (Add, old, new - 1),
                    b'\\' if bs => {
                        return Ok(self.begin(Class::NoNewline, byte, self.ctx_after_bs()))
                    }
                    b'\\' => return Err(MisplacedNoNewline),
                    b' ' | b'\n' | b'-' | b'+' => return Err(HunkOverrun),
                    _ => return Err(HunkUnderrun),
                };
                // A `\` line may follow any body line (the spec's allowed sets; `git apply`
                // reads one in the middle of a hunk too, and such a hunk then matches no file
                // but one that ends there).
                let next = if old2 == 0 && new2 == 0 {
                    Ctx::HunkDone { bs: true }
                } else {
                    Ctx::Hunk {
                        old: old2,
                        new: new2,
                        bs: true,
                    }
                };
                Ok(self.begin(Class::Body(kind), byte, next))
            }
            Ctx::Hunk { bs, .. } => match byte {
                b' ' | b'\n' => Ok(self.begin(
                    Class::Body(Context),
                    byte,
                    Ctx::Hunk {
                        old: 0,
                        new: 0,
                        bs: true,
                    },
                )),
                b'+' => Ok(self.begin(
                    Class::Body(Add),
                    byte,
                    Ctx::Hunk {
                        old: 0,
                        new: 0,
                        bs: true,
                    },
                )),
                b'\\' if bs => Ok(self.begin(
                    Class::NoNewline,
                    byte,
                    Ctx::Hunk {
                        old: 0,
                        new: 0,
                        bs: false,
                    },
                )),
                // A second `\` in a row is no body line: the hunk is over, and the line is
                // garbage, as in `git` mode.
                b'-' => self.keyword(
                    self.continuing(self.ctx) | self.top_kws(),
                    0,
                    Div::Body(Remove),
                    byte,
                    0,
                ),
                _ => {
                    // Not a body line: the hunk is over.
                    self.ctx = Ctx::Hunks;
                    let cands = self.continuing(self.ctx) | self.top_kws();
                    self.keyword(cands, 0, Div::Garbage, byte, END_HUNK)
                }
            },
            Ctx::HunkDone { bs } => {
                let git = self.mode == Mode::Git;
                let div = match byte {
                    b'\\' if bs => {
                        return Ok(self.begin(Class::NoNewline, byte, Ctx::HunkDone { bs: false }))
                    }
                    // A second `\` in a row: garbage to `git apply`, which looks for the
                    // next `diff`/`---`/`@@` line.
                    b'\\' if !git => return Err(MisplacedNoNewline),
                    b' ' | b'+' => return Err(HunkOverrun),
                    b'\n' if !git => return Err(HunkOverrun),
                    b'-' => Div::Error(HunkOverrun),
                    _ if git => Div::Garbage,
                    _ => Div::Error(UnexpectedByte),
                };
                // Whatever the line is, the hunk is over.
                self.ctx = Ctx::Hunks;
                // A mail's signature separator is no removed line (`git apply` reads a
                // `git format-patch` mail whole); in `git` mode it is garbage.
                let signature = if git { kw::bit(kw::SIGNATURE) } else { 0 };
                let cands = self.continuing(self.ctx) | self.top_kws() | signature;
                self.keyword(cands, 0, div, byte, END_HUNK)
            }
            Ctx::Hunks => {
                let div = if self.mode == Mode::Strict {
                    Div::Error(UnexpectedByte)
                } else {
                    Div::Garbage
                };
                let cands = self.continuing(self.ctx) | self.top_kws();
                self.keyword(cands, 0, div, byte, 0)
            }
            Ctx::Base85 { first } => match byte {
                b'\n' => {
                    self.ctx = Ctx::AfterBlock { first };
                    let ends = if first { 0 } else { END_FILE };
                    if !first {
                        self.ctx = Ctx::Top;
                    }
                    Ok(Stepped {
                        ends,
                        step: Step::BlockEnd,
                    })
                }
                _ if BASE85_LENGTH.contains(byte) => {
                    let n = value::base85_length(byte);
                    self.line_len = 1;
                    self.pos = Pos::Base85 {
                        left: n.div_ceil(4) * 5,
                        group: 0,
                        acc: 0,
                    };
                    Ok(plain(Step::Held))
                }
                _ => Err(UnexpectedByte),
            },
            Ctx::AfterMinus | Ctx::MetaMinus | Ctx::AfterPlus | Ctx::BinHdr => {
                let div = if self.fallback().is_some() {
                    Div::Abandon
                } else {
                    Div::Error(UnexpectedByte)
                };
                self.keyword(self.continuing(self.ctx), 0, div, byte, 0)
            }
            Ctx::Top | Ctx::GitHdr { .. } | Ctx::AfterBlock { .. } => {
                let div = if self.mode == Mode::Strict {
                    Div::Error(UnexpectedByte)
                } else {
                    Div::Garbage
                };
                let cands = self.continuing(self.ctx) | self.top_kws();
                self.keyword(cands, 0, div, byte, 0)
            }
        }
    }

    /// The context after a `\` line in a strict or git hunk.
    fn ctx_after_bs(&self) -> Ctx {
        match self.ctx {
            Ctx::Hunk { old, new, .. } => Ctx::Hunk {
                old,
                new,
                bs: false,
            },
            other => other,
        }
    }

    /// Starts a streaming line with `byte`, setting the context of the next line.
    pub(super) fn begin(&mut self, class: Class, byte: u8, next: Ctx) -> Stepped {
        self.ctx = next;
        let ended = byte == b'\n';
        self.pos = if ended {
            Pos::Start
        } else {
            Pos::Stream(class)
        };
        plain(Step::Begin { class, ended })
    }

    /// The keywords of the next file patch's start, valid wherever one may begin.
    pub(super) fn top_kws(&self) -> KwSet {
        match self.mode {
            Mode::Strict => kw::bit(kw::DIFF_GIT) | kw::bit(kw::MINUS),
            _ => kw::bit(kw::DIFF_GIT) | kw::bit(kw::MINUS) | kw::bit(kw::ATAT_DASH),
        }
    }

    /// The keywords that continue the current file patch in context `ctx`.
    pub(super) fn continuing(&self, ctx: Ctx) -> KwSet {
        match ctx {
            Ctx::GitHdr { seen } => {
                // Outside strict mode a hunk may follow the git header directly, with no
                // `---`/`+++` (`git apply` takes the names from `diff --git`).
                let hunk = match self.mode {
                    Mode::Strict => 0,
                    Mode::Git => kw::bit(kw::ATAT_DASH),
                    Mode::Recount => kw::bit(kw::ATAT),
                };
                (kw::EXTENDED & !seen)
                    | kw::bit(kw::MINUS)
                    | kw::bit(kw::BINARY_FILES)
                    | kw::bit(kw::GIT_BINARY)
                    | hunk
            }
            Ctx::HunkDone { .. } | Ctx::Hunks if self.is_recount() => kw::bit(kw::ATAT),
            Ctx::HunkDone { .. } | Ctx::Hunks => kw::bit(kw::ATAT_DASH),
            Ctx::Hunk { .. } => kw::bit(kw::ATAT) | kw::bit(kw::MINUS),
            Ctx::AfterBlock { first: true } => kw::bit(kw::LITERAL) | kw::bit(kw::DELTA),
            Ctx::AfterMinus | Ctx::MetaMinus => kw::bit(kw::PLUS),
            Ctx::AfterPlus if self.is_recount() => kw::bit(kw::ATAT),
            Ctx::AfterPlus => kw::bit(kw::ATAT_DASH),
            Ctx::BinHdr => kw::bit(kw::LITERAL) | kw::bit(kw::DELTA),
            _ => 0,
        }
    }

    /// Whether `ctx` is inside a file patch that a foreign line ends.
    pub(super) fn in_file(ctx: Ctx) -> bool {
        matches!(
            ctx,
            Ctx::GitHdr { .. }
                | Ctx::HunkDone { .. }
                | Ctx::Hunks
                | Ctx::Hunk { .. }
                | Ctx::AfterBlock { .. }
        )
    }
}
