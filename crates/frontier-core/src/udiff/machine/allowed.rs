//! `allowed()` and `accepting()`: what may come next, and whether the input may end here.
//!
//! Both leave the machine as it is and take constant time. At a line start in a hunk body
//! the counts owed give the set (the spec's table; the hot case for a decoder); at any other
//! line start the set is found by stepping a copy of the machine with each byte (a line start
//! is a handful of comparisons). While a keyword is matched, the candidates' next bytes decide,
//! unless a line that fits no keyword is garbage or a body line; in a header value the value's
//! grammar decides, narrowed only near `max_line`; in a base85 line, the characters that can keep
//! the group within 32 bits. A tentative line start answers for the machine after its
//! fallback, plus the bytes that continue the header.

use crate::byteset::ByteSet;
use crate::udiff::keyword::{self as kw, KwSet};
use crate::udiff::value::{Value, BASE85_LENGTH, BASE85_UP_TO};
use crate::udiff::Mode;

use super::{base85, Class, Ctx, Div, Fallback, Pos, UdiffMachine};

/// The bytes a line start outside a hunk body treats one by one: the first byte of every
/// keyword, and those the context dispatch of `line_start` names.
const LINE_START_SPECIAL: ByteSet = {
    let mut set = ByteSet::of(b" \n-+\\");
    let mut k = 0;
    while k < kw::TEXT.len() {
        set = set.with(kw::TEXT[k][0]);
        k += 1;
    }
    set
};

/// A byte outside [`LINE_START_SPECIAL`], probed for all of them.
const ORDINARY_START: u8 = b'x';
const _: () = assert!(!LINE_START_SPECIAL.contains(ORDINARY_START));

impl UdiffMachine {
    /// Whether the input so far is a sentence.
    pub fn accepting(&self) -> bool {
        if self.error.is_some() {
            return false;
        }
        if let Some(m) = self.resolved() {
            return m.accepting();
        }
        match self.pos {
            Pos::Start => match self.ctx {
                Ctx::Top | Ctx::GitHdr { .. } | Ctx::HunkDone { .. } | Ctx::Hunks => true,
                Ctx::AfterBlock { .. } => true,
                Ctx::Hunk { .. } => self.is_recount(),
                _ => false,
            },
            Pos::Kw { div, .. } => div == Div::Garbage,
            Pos::Stream(class) => class == Class::Garbage,
            Pos::Value {
                kw: kw::MINUS | kw::PLUS,
                ..
            } => self.fallback() == Some(Fallback::Garbage),
            Pos::Value {
                kw: kw::ATAT_DASH, ..
            } => self.is_orphan_candidate(),
            _ => false,
        }
    }

    /// The bytes that may come next. Empty after an error.
    pub fn allowed(&self) -> ByteSet {
        if self.error.is_some() {
            return ByteSet::EMPTY;
        }
        if let Some(m) = self.resolved() {
            let keyword_byte = match self.pos {
                Pos::Kw { cands, matched, .. } => kw::next_bytes(cands, matched),
                _ => kw::next_bytes(self.continuing(self.ctx), 0),
            };
            return m.allowed().union(keyword_byte);
        }
        match self.pos {
            Pos::Start => self.start_allowed(),
            Pos::Kw {
                cands,
                matched,
                div,
            } => self.kw_allowed(cands, matched, div),
            Pos::Value {
                kw: kw::ATAT_DASH,
                value: Value::Range(r),
            } if self.is_orphan_candidate() => {
                // Anything makes the orphan line garbage, but the `@` that completes it.
                if r.field == 6 {
                    ByteSet::FULL.without(b'@')
                } else {
                    ByteSet::FULL
                }
            }
            Pos::Value { kw, value } => {
                let grammar = value.allowed();
                if self.fallback().is_some() && (kw == kw::MINUS || kw == kw::PLUS) {
                    // A tentative line is demoted, not refused, when it grows too long or
                    // ends without a name.
                    return ByteSet::FULL;
                }
                if self.fits(Value::MAX_MIN_REST) {
                    return grammar; // far from the limit: the grammar alone decides
                }
                let mut set = ByteSet::EMPTY;
                for b in grammar.iter() {
                    let rest = match value.step(b) {
                        Ok(Some(next)) => next.min_rest(),
                        _ => 0,
                    };
                    if b == b'\n' || self.fits(rest) {
                        set = set.with(b);
                    }
                }
                set
            }
            Pos::Stream(_) => ByteSet::FULL,
            Pos::Base85 { left: 0, .. } => ByteSet::single(b'\n'),
            Pos::Base85 { group, acc, .. } => match base85::group_room(group, acc) {
                Some(room) => BASE85_UP_TO[room.min(84) as usize],
                None => ByteSet::EMPTY,
            },
        }
    }

    fn start_allowed(&self) -> ByteSet {
        // In a hunk body, the spec's table: the counts decide (the hot case for a decoder).
        if let Ctx::Hunk { old, new, bs } = self.ctx {
            if self.mode == Mode::Recount {
                // Any line: a body line, a `\` after one, or the line after the hunk.
                return ByteSet::FULL;
            }
            let mut set = ByteSet::EMPTY;
            if old > 0 && new > 0 {
                set = set.with(b' ').with(b'\n');
            }
            if old > 0 {
                set = set.with(b'-');
            }
            if new > 0 {
                set = set.with(b'+');
            }
            if bs {
                set = set.with(b'\\');
            }
            return set;
        }
        if let Ctx::Base85 { .. } = self.ctx {
            return BASE85_LENGTH.with(b'\n');
        }
        // Every byte outside `LINE_START_SPECIAL` starts a line the same way (as garbage, a
        // removed line or an error, whatever the context): one of them answers for all.
        let mut set = ByteSet::EMPTY;
        for b in LINE_START_SPECIAL.iter() {
            if self.start_ok(b) {
                set = set.with(b);
            }
        }
        if self.start_ok(ORDINARY_START) {
            set = set.union(LINE_START_SPECIAL.complement());
        }
        set
    }

    /// Whether `byte` may start a line here: a cheap clone-and-step (a line start is a
    /// handful of comparisons; `allowed` calls it once per byte of [`LINE_START_SPECIAL`] and
    /// once for all the others).
    fn start_ok(&self, byte: u8) -> bool {
        let mut m = *self;
        m.transition(byte).is_ok()
    }

    fn kw_allowed(&self, cands: KwSet, matched: u8, div: Div) -> ByteSet {
        let mut set = kw::next_bytes(cands, matched);
        // A byte that completes an orphan `@@ -` outside a file patch is refused (in `git`
        // mode the line goes on: refused only once it is a whole hunk header).
        if cands & kw::bit(kw::ATAT_DASH) != 0
            && matched == 3
            && !Self::in_file(self.ctx)
            && !matches!(self.ctx, Ctx::AfterPlus)
            && !self.is_orphan_candidate()
        {
            set = set.without(b'-');
            return match div {
                Div::Garbage | Div::Body(_) => ByteSet::FULL.without(b'-'),
                _ => set,
            };
        }
        match div {
            Div::Garbage | Div::Body(_) => ByteSet::FULL,
            _ => set,
        }
    }
}
