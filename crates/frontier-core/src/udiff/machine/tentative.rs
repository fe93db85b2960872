//! Tentative headers: what a `---`/`+++` pair becomes until `@@ -` proves it a file header.
//!
//! In `git` and `recount` mode the machine enters a `---` line tentatively (see the module
//! docs of `machine`), remembering its [`Fallback`] in [`Tent`]. This module holds what the
//! other constructs ask of that memory: the fallback and its context, the machine as it would
//! be after falling back and replaying the current line's keyword bytes (which `allowed()` and
//! `accepting()` consult, so a tentative line start costs a handful of steps), the fall back
//! itself, and the forced fall back at the end of the stream.

use crate::udiff::keyword as kw;
use crate::udiff::LineKind::{Add, Remove};

use super::{Class, Ctx, Fallback, Pos, Tent, UdiffMachine};

impl UdiffMachine {
    /// Whether a tentative header is pending, and how many of its lines are complete.
    pub fn tentative_lines(&self) -> Option<u8> {
        match (self.tent, self.ctx) {
            (Tent::None, _) => None,
            (_, Ctx::AfterMinus) => Some(1),
            (_, Ctx::AfterPlus) => Some(2),
            _ => Some(0),
        }
    }

    /// The context a failed tentative header falls back to.
    pub(super) fn fallback_ctx(&self, fallback: Fallback) -> Ctx {
        match fallback {
            Fallback::Garbage => Ctx::Top,
            Fallback::Body => Ctx::Hunk {
                old: 0,
                new: 0,
                bs: true,
            },
        }
    }

    /// The fallback of the pending tentative header, if any.
    pub(super) fn fallback(&self) -> Option<Fallback> {
        match self.tent {
            Tent::Some(f) => Some(f),
            Tent::None => None,
        }
    }

    /// For a tentative header at the start of its 2nd or 3rd line (possibly with a few keyword
    /// bytes): the machine after falling back and replaying those bytes.
    pub(super) fn resolved(&self) -> Option<UdiffMachine> {
        let fallback = self.fallback()?;
        let matched = match self.pos {
            Pos::Start => 0,
            Pos::Kw { matched, .. } => matched,
            _ => return None,
        };
        if !matches!(self.ctx, Ctx::AfterMinus | Ctx::AfterPlus) {
            return None;
        }
        let keyword = if self.ctx == Ctx::AfterMinus {
            kw::TEXT[kw::PLUS as usize]
        } else if self.is_recount() {
            kw::TEXT[kw::ATAT as usize]
        } else {
            kw::TEXT[kw::ATAT_DASH as usize]
        };
        let mut m = *self;
        m.abandon(fallback);
        for &b in &keyword[..matched as usize] {
            // The replayed bytes are a prefix of `+++ ` or `@@ -`: never a tentative start.
            if m.step(b).is_err() {
                break;
            }
        }
        Some(m)
    }

    /// Falls back from a tentative header at a line start: un-consumes the current line.
    pub(super) fn abandon(&mut self, fallback: Fallback) {
        self.consumed -= self.line_len as u64;
        self.line_len = 0;
        self.ctx = self.fallback_ctx(fallback);
        self.pos = Pos::Start;
        self.tent = Tent::None;
    }

    /// For a parser at the end of a tentative header: falls back, as the end of the stream
    /// (or any other proof) requires. Returns the complete held lines and the fallback, and
    /// what the current line's held bytes become: `Some(class)` if the current line is a
    /// tentative `---`/`+++` line itself, `None` if its bytes must be fed again.
    pub fn give_up_tentative(&mut self) -> Option<(u8, Fallback, Option<Class>)> {
        let fallback = self.fallback()?;
        let lines = self.tentative_lines()?;
        if lines == 0 || matches!(self.pos, Pos::Value { .. }) {
            // Inside the `---` or `+++` line itself.
            let current_kw = if lines == 0 { kw::MINUS } else { kw::PLUS };
            let class = match (fallback, current_kw) {
                (Fallback::Garbage, _) => Class::Garbage,
                (Fallback::Body, kw::MINUS) => Class::Body(Remove),
                (Fallback::Body, _) => Class::Body(Add),
            };
            self.tent = Tent::None;
            self.ctx = self.fallback_ctx(fallback);
            self.pos = Pos::Stream(class);
            self.line_len = 0;
            return Some((lines, fallback, Some(class)));
        }
        self.abandon(fallback);
        Some((lines, fallback, None))
    }
}
