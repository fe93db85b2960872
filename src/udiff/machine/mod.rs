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
//! outgrows `max_line` cannot be a header; it is demoted to its fallback on the spot
//! ([`Step::Demote`]).

use crate::contract::ParseError;

use super::keyword::{self as kw, KwSet};
use super::value::{self, Range, Value};
use super::{Limits, Mode, UdiffErrorKind};

mod allowed;
mod base85;
mod header_line;
mod line_start;
mod state;
mod tentative;

use state::{plain, Tent};
pub use state::{Class, Fallback, Step, Stepped, END_FILE, END_HUNK};
pub(crate) use state::{Ctx, Div, Pos};

/// The unified-diff recogniser: `Copy`, exact `allowed()` in constant time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

use super::LineKind::{Add, Context, Remove};

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

    /// The fast path of a hunk body: if the machine is at the start of a line in a hunk and
    /// `byte` starts a body line there (what [`step`](Self::step) would do with it, without
    /// the general dispatch), takes it and returns the line's side. Returns `None`, having
    /// done nothing, for anything else.
    #[inline]
    pub fn body_line_start(&mut self, byte: u8) -> Option<super::LineKind> {
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
        self.ctx = if self.mode != Mode::Recount && old2 == 0 && new2 == 0 {
            Ctx::HunkDone { bs: true }
        } else {
            let last =
                self.mode == Mode::Recount || (old2 == 0 && old > 0) || (new2 == 0 && new > 0);
            Ctx::Hunk {
                old: old2,
                new: new2,
                bs: last,
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

    /// The fast path of a name or text value: takes the longest prefix of `bytes` that holds
    /// no LF and keeps the line within `max_line` (exactly what byte-by-byte stepping would
    /// take without a demotion) and returns its length; 0 outside such a value.
    #[inline]
    pub fn value_run(&mut self, bytes: &[u8]) -> usize {
        let Pos::Value { kw, value } = self.pos else {
            return 0;
        };
        if self.error.is_some() {
            return 0;
        }
        // Names, recount headers and section text: any bytes but LF, found with `memchr`;
        // the other values are short grammars, stepped here without the general dispatch.
        if !matches!(
            value,
            Value::Path { .. } | Value::Text | Value::Range(Range { field: 7, .. })
        ) {
            return self.grammar_run(kw, value, bytes);
        }
        let room = (self.max_line as u64).saturating_sub(self.line_len as u64 + 1) as usize;
        let limit = bytes.len().min(room);
        let n = memchr::memchr(b'\n', &bytes[..limit]).unwrap_or(limit);
        if n > 0 {
            if let Pos::Value {
                value: Value::Path { .. },
                ..
            } = self.pos
            {
                self.pos = Pos::Value {
                    kw,
                    value: Value::Path { empty: false },
                };
            }
            self.line_len += n as u32;
            self.consumed += n as u64;
        }
        n
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

    /// Leaves the parser's tight loop: `old`/`new` lines still owed, `bs` whether a `\` line
    /// may come, `open` the side of a body line whose LF has not arrived yet, `taken` the bytes
    /// the loop consumed. The loop only takes what [`step`](Self::step) would have taken.
    #[inline]
    pub fn resume_hunk(
        &mut self,
        old: u64,
        new: u64,
        bs: bool,
        open: Option<super::LineKind>,
        taken: usize,
    ) {
        self.ctx = if old == 0 && new == 0 {
            Ctx::HunkDone { bs }
        } else {
            Ctx::Hunk { old, new, bs }
        };
        self.pos = match open {
            Some(kind) => Pos::Stream(Class::Body(kind)),
            None => Pos::Start,
        };
        self.line_len = 0;
        self.consumed += taken as u64;
    }

    /// The fast path of a keyword: with one candidate left, takes the bytes of `bytes` that
    /// continue it, short of its last byte (whose action [`step`](Self::step) takes), and
    /// returns how many. With the candidate set unchanged, stepping them would do nothing else.
    #[inline]
    pub fn keyword_run(&mut self, bytes: &[u8]) -> usize {
        let Pos::Kw {
            cands,
            matched,
            div,
        } = self.pos
        else {
            return 0;
        };
        if cands.count_ones() != 1 || self.error.is_some() {
            return 0;
        }
        let k = cands.trailing_zeros() as u8;
        let text = kw::TEXT[k as usize];
        let want = &text[matched as usize..];
        let n = want.iter().zip(bytes).take_while(|(a, b)| a == b).count();
        if n == 0 {
            return 0;
        }
        let matched = matched + n as u8;
        if matched as usize == text.len() {
            // The last byte: its action is taken here when it only holds the byte (the usual
            // case: a value follows); anything more (an error, a tentative header proven, a
            // `GIT binary patch` line) is left to `step`.
            let mut done = *self;
            done.line_len = matched as u32;
            done.consumed += n as u64;
            if done.keyword_done(k) != Ok(plain(Step::Held)) {
                return self.keyword_run_to(cands, matched - 1, div, n - 1);
            }
            *self = done;
            return n;
        }
        self.keyword_run_to(cands, matched, div, n)
    }

    fn keyword_run_to(&mut self, cands: KwSet, matched: u8, div: Div, n: usize) -> usize {
        if n > 0 {
            self.pos = Pos::Kw {
                cands,
                matched,
                div,
            };
            self.line_len = matched as u32;
            self.consumed += n as u64;
        }
        n
    }

    /// A value other than a name, as [`value_run`](Self::value_run) takes it: the bytes that
    /// [`step`](Self::step) would hold, with the same grammar and line-limit checks, up to the
    /// LF, an error (left to `step`), or the section text of a hunk header (left to `memchr`).
    fn grammar_run(&mut self, kw: u8, mut value: Value, bytes: &[u8]) -> usize {
        if value == Value::Range(Range::START) {
            if let Some(n) = self.whole_ranges(bytes) {
                return n;
            }
        }
        let mut n = 0usize;
        while let Some(&b) = bytes.get(n) {
            if b == b'\n' {
                break;
            }
            // Hex names and range numbers: a run of one class at a time, where stepping each
            // byte would only count it (the same grammar, limits and numbers as below).
            let taken = self.class_run(&mut value, &bytes[n..], n);
            if taken > 0 {
                n += taken;
                continue;
            }
            let Ok(Some(next)) = value.step(b) else {
                break;
            };
            if self.line_len as u64 + n as u64 + 1 + next.min_rest() as u64 > self.max_line as u64 {
                break;
            }
            if let (Value::Range(r), b'0'..=b'9') = (value, b) {
                if let Some(i) = r.number() {
                    let acc = if r.digits == 0 { 0 } else { self.nums[i] };
                    self.nums[i] = acc * 10 + (b - b'0') as u64;
                }
            }
            value = next;
            n += 1;
            if let Value::Range(Range { field: 7, .. }) = value {
                break;
            }
        }
        if n > 0 {
            self.pos = Pos::Value { kw, value };
            self.line_len += n as u32;
            self.consumed += n as u64;
        }
        n
    }

    /// A hunk header's `a[,b] +c[,d] @@` complete at the front of `bytes`, far enough from
    /// the line limit that no byte of it could reach it: taken at once, with the numbers that
    /// stepping would read; `None` (nothing done) otherwise, and stepping decides.
    fn whole_ranges(&mut self, bytes: &[u8]) -> Option<usize> {
        let max = value::MAX_RANGE_DIGITS as usize;
        let number = |at: usize| -> Option<(u64, usize)> {
            let run = bytes.get(at..)?.iter().take(max + 1);
            let digits = run.take_while(|b| b.is_ascii_digit()).count();
            if digits == 0 || digits > max {
                return None;
            }
            let value = bytes[at..at + digits]
                .iter()
                .fold(0u64, |acc, &b| acc * 10 + (b - b'0') as u64);
            Some((value, at + digits))
        };
        let expect = |at: usize, byte: u8| (bytes.get(at) == Some(&byte)).then_some(at + 1);
        let mut nums = self.nums;
        let at = 0;
        let (v, mut at) = number(at)?;
        nums[0] = v;
        if let Some(comma) = expect(at, b',') {
            (nums[1], at) = number(comma)?;
        }
        let at = expect(expect(at, b' ')?, b'+')?;
        let (v, mut at) = number(at)?;
        nums[2] = v;
        if let Some(comma) = expect(at, b',') {
            (nums[3], at) = number(comma)?;
        }
        let at = expect(expect(expect(at, b' ')?, b'@')?, b'@')?;
        // Every state on the way needs at most `MAX_MIN_REST` more bytes.
        if self.line_len as u64 + at as u64 + Value::MAX_MIN_REST as u64 > self.max_line as u64 {
            return None;
        }
        self.nums = nums;
        self.pos = Pos::Value {
            kw: kw::ATAT_DASH,
            value: Value::Range(Range {
                field: 7,
                digits: 0,
            }),
        };
        self.line_len += at as u32;
        self.consumed += at as u64;
        Some(at)
    }

    /// Within [`grammar_run`](Self::grammar_run), `held` bytes in: the longest run at the
    /// front of `bytes` of hex digits of an `index` name, octal digits of a mode or decimal
    /// digits of a hunk header number that stepping would take, and `value` after it; 0 in
    /// other states.
    #[inline]
    fn class_run(&mut self, value: &mut Value, bytes: &[u8], held: usize) -> usize {
        // The room left on the line once the run is followed by `rest` more bytes.
        let room = |rest: u32| {
            (self.max_line as u64).saturating_sub(self.line_len as u64 + held as u64 + rest as u64)
                as usize
        };
        match *value {
            Value::Index {
                phase: phase @ (0 | 2),
                ..
            } => {
                let after = Value::Index {
                    phase,
                    empty: false,
                };
                let cap = room(after.min_rest());
                let n = bytes
                    .iter()
                    .take(cap)
                    .take_while(|&&b| HEX_DIGIT[b as usize])
                    .count();
                if n > 0 {
                    *value = after;
                }
                n
            }
            Value::Index { phase: 3, .. } | Value::Mode { .. } => {
                // Octal digits: an `index` line's mode (any number), a mode line's (at most 7).
                let (after, most) = match *value {
                    Value::Mode { digits } => (
                        Value::Mode {
                            digits: value::MAX_MODE_DIGITS,
                        },
                        value::MAX_MODE_DIGITS.saturating_sub(digits) as usize,
                    ),
                    _ => (
                        Value::Index {
                            phase: 3,
                            empty: false,
                        },
                        usize::MAX,
                    ),
                };
                let cap = room(after.min_rest()).min(most);
                let n = bytes
                    .iter()
                    .take(cap)
                    .take_while(|&&b| (b'0'..=b'7').contains(&b))
                    .count();
                if n > 0 {
                    *value = match *value {
                        Value::Mode { digits } => Value::Mode {
                            digits: digits + n as u8,
                        },
                        _ => after,
                    };
                }
                n
            }
            Value::Range(r @ Range { field: 0..=3, .. }) => {
                let after = Value::Range(Range { digits: 1, ..r });
                let cap = room(after.min_rest()).min(
                    (value::MAX_RANGE_DIGITS - r.digits.min(value::MAX_RANGE_DIGITS)) as usize,
                );
                let i = r.field as usize;
                let mut acc = if r.digits == 0 { 0 } else { self.nums[i] };
                let mut n = 0;
                for &b in bytes.iter().take(cap) {
                    if !b.is_ascii_digit() {
                        break;
                    }
                    acc = acc * 10 + (b - b'0') as u64;
                    n += 1;
                }
                if n > 0 {
                    self.nums[i] = acc;
                    *value = Value::Range(Range {
                        digits: r.digits + n as u8,
                        ..r
                    });
                }
                n
            }
            _ => 0,
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

    /// The end of the stream: what the units still open become. Returns the ends and, for a
    /// partial line held as a keyword prefix, what that line is.
    pub fn end_of_stream(&self) -> (u8, Option<Class>) {
        let line = match self.pos {
            Pos::Start => None,
            Pos::Kw {
                div: Div::Garbage, ..
            } => Some(Class::Garbage),
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

/// The hex digits of an `index` line's names.
const HEX_DIGIT: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = matches!(b as u8, b'0'..=b'9' | b'a'..=b'f');
        b += 1;
    }
    table
};
