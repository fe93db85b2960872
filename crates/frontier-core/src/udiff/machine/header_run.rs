//! The fast paths of header lines: runs of keyword and value bytes taken at once.
//!
//! Stepping a header line byte by byte goes through the general dispatch for every byte. Most
//! of those bytes only continue what is already known (the one keyword left, a name up to its
//! LF, a run of hex, octal or decimal digits, the whole `a,b +c,d @@` of a hunk header), so
//! the parser hands the machine the rest of its chunk and these functions take the longest
//! prefix that stepping would take with no other effect, with the same grammar, line limit
//! and hunk header numbers. Every byte that does more (an error, a tentative header proven, a
//! demotion, the LF) is left to [`step`](UdiffMachine::step).

use crate::udiff::keyword::{self as kw, KwSet};
use crate::udiff::value::{self, Range, Value};

use super::{plain, Div, Pos, Step, UdiffMachine};

impl UdiffMachine {
    /// The fast path of a name or text value: takes the longest prefix of `bytes` that holds
    /// no LF and keeps the line within `max_line` (exactly what byte-by-byte stepping would
    /// take without a demotion) and returns its length; 0 outside such a value.
    #[inline]
    pub fn value_run(&mut self, bytes: &[u8]) -> usize {
        let Pos::Value { kw, value } = self.pos else {
            return 0;
        };
        // An orphan `@@ -` line is stepped: its last byte may be an error or garbage (rare).
        if self.error.is_some() || (kw == kw::ATAT_DASH && self.is_orphan_candidate()) {
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
}

/// The hex digits of an `index` line's names, in either case.
const HEX_DIGIT: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = (b as u8).is_ascii_hexdigit();
        b += 1;
    }
    table
};
