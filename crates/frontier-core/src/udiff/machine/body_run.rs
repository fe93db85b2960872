//! The fast paths of streaming lines and hunk bodies, for the parser's loops.
//!
//! Body and garbage content never goes through the machine byte by byte: while a line
//! streams, the parser finds its LF with `memchr` and reports the content skipped and the LF
//! taken. A body line's first byte can be taken without the general dispatch, and in a
//! `strict` or `git` hunk the parser may run its own tight loop over whole body lines, given
//! the counts owed, and then hand back the counts, whether a `\` line may come and the side of
//! a line still open. Each of these does exactly what stepping the same bytes would do.

use crate::udiff::LineKind::{self, Add, Context, Remove};
use crate::udiff::Mode;

use super::{Class, Ctx, Pos, UdiffMachine};

impl UdiffMachine {
    /// Whether the machine streams line content, so that a caller may skip to the next LF.
    #[inline]
    pub fn streaming(&self) -> Option<Class> {
        match self.pos {
            Pos::Stream(c) if self.error.is_none() => Some(c),
            _ => None,
        }
    }

    /// Consumes `n` content bytes (no LF among them) of a streaming line.
    #[inline]
    pub fn skip_content(&mut self, n: usize) {
        if self.streaming().is_some() {
            self.consumed += n as u64;
        }
    }

    /// Takes the LF that ends a streaming line (what [`step`](Self::step) does with it).
    #[inline]
    pub fn end_streaming_line(&mut self) {
        if self.streaming().is_some() {
            self.pos = Pos::Start;
            self.line_len = 0;
            self.consumed += 1;
        }
    }

    /// The fast path of a hunk body: if the machine is at the start of a line in a hunk and
    /// `byte` starts a body line there (what [`step`](Self::step) would do with it, without
    /// the general dispatch), takes it and returns the line's side. Returns `None`, having
    /// done nothing, for anything else.
    #[inline]
    pub fn body_line_start(&mut self, byte: u8) -> Option<LineKind> {
        if self.pos != Pos::Start || self.error.is_some() {
            return None;
        }
        let Ctx::Hunk { old, new, .. } = self.ctx else {
            return None;
        };
        let (kind, old2, new2) = if self.mode == Mode::Recount {
            match byte {
                b' ' | b'\n' => (Context, 0, 0),
                b'+' => (Add, 0, 0),
                _ => return None,
            }
        } else {
            match byte {
                b' ' | b'\n' if old > 0 && new > 0 => (Context, old - 1, new - 1),
                b'-' if old > 0 => (Remove, old - 1, new),
                b'+' if new > 0 => (Add, old, new - 1),
                _ => return None,
            }
        };
        // A `\` line may follow any body line.
        self.ctx = if self.mode != Mode::Recount && old2 == 0 && new2 == 0 {
            Ctx::HunkDone { bs: true }
        } else {
            Ctx::Hunk {
                old: old2,
                new: new2,
                bs: true,
            }
        };
        self.pos = if byte == b'\n' {
            Pos::Start
        } else {
            Pos::Stream(Class::Body(kind))
        };
        self.consumed += 1;
        Some(kind)
    }

    /// The lines still owed by the hunk the machine is in, when it is at a line start in a
    /// `strict` or `git` hunk body: the entry to the parser's tight loop over body lines.
    #[inline]
    pub fn hunk_owed(&self) -> Option<(u64, u64)> {
        match (self.pos, self.ctx) {
            (Pos::Start, Ctx::Hunk { old, new, .. })
                if self.mode != Mode::Recount && self.error.is_none() =>
            {
                Some((old, new))
            }
            _ => None,
        }
    }

    /// Leaves the parser's tight loop, which took at least one body line: `old`/`new` lines
    /// still owed, `open` the side of a body line whose LF has not arrived yet, `taken` the
    /// bytes the loop consumed. The loop only takes what [`step`](Self::step) would have taken,
    /// so a `\` line may come next.
    #[inline]
    pub fn resume_hunk(&mut self, old: u64, new: u64, open: Option<LineKind>, taken: usize) {
        self.ctx = if old == 0 && new == 0 {
            Ctx::HunkDone { bs: true }
        } else {
            Ctx::Hunk { old, new, bs: true }
        };
        self.pos = match open {
            Some(kind) => Pos::Stream(Class::Body(kind)),
            None => Pos::Start,
        };
        self.line_len = 0;
        self.consumed += taken as u64;
    }
}
