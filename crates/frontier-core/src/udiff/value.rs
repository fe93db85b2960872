//! The rest of a header line once its keyword is known: paths, modes, percentages, `index`
//! lines, sizes and the ranges of a hunk header. Each grammar is a small `Copy` state with
//! three answers: the bytes it allows, the state after a byte, and the fewest bytes (LF
//! included) that can still finish the line, which is how the line-length limit stays exact.

use crate::byteset::ByteSet;

use super::UdiffErrorKind;

const DIGITS: ByteSet = ByteSet::range(b'0', b'9');
const OCTAL: ByteSet = ByteSet::range(b'0', b'7');
/// An `index` line's hex digits, in either case (`git apply` takes uppercase ones too).
const HEX: ByteSet = ByteSet::range(b'0', b'9')
    .union(ByteSet::range(b'a', b'f'))
    .union(ByteSet::range(b'A', b'F'));
const NOT_LF: ByteSet = ByteSet::single(b'\n').complement();
const LF: ByteSet = ByteSet::single(b'\n');

/// Most digits in a line number or count of a hunk header.
pub const MAX_RANGE_DIGITS: u8 = 12;
/// Most digits in the size of a `literal`/`delta` block.
pub const MAX_SIZE_DIGITS: u8 = 15;
/// Most octal digits in a mode.
pub const MAX_MODE_DIGITS: u8 = 7;

/// What follows a keyword up to the LF.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// Any bytes but LF, at least one (names, `Binary files … differ`).
    Path { empty: bool },
    /// Any bytes but LF, possibly none (the rest of a recount hunk header).
    Text,
    /// Octal digits (a file mode).
    Mode { digits: u8 },
    /// `N%` with `N <= 100`.
    Percent { digits: u8, value: u8, done: bool },
    /// `HEX..HEX[ MODE]`: `phase` 0 first name, 1 after the first dot, 2 second name, 3 mode.
    Index { phase: u8, empty: bool },
    /// Decimal digits (the size of a binary block).
    Size { digits: u8 },
    /// The ranges of a hunk header after `@@ -`, then ` @@` and any text.
    Range(Range),
    /// A CR that ended a mode, a percentage or an `index` line: only the LF may follow (a
    /// CRLF diff, whose every line `git apply` reads with its CR; the value is read without
    /// it).
    Cr,
}

/// Where a hunk header is after `@@ -`: `field` 0..=3 is old start, old count, new start, new
/// count; 4 waits for `+`; 5 and 6 for the two closing `@`; 7 is the section text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Range {
    /// Which part of the header.
    pub field: u8,
    /// Digits read in the current number.
    pub digits: u8,
}

/// A transition: the next value state, or an error kind.
pub type Next = Result<Option<Value>, UdiffErrorKind>;

impl Value {
    /// The largest [`min_rest`](Self::min_rest) of any state.
    pub const MAX_MIN_REST: u32 = 8;

    /// The bytes the grammar allows next (the line limit aside).
    pub fn allowed(self) -> ByteSet {
        let set = self.allowed_before_cr();
        if self.may_end_with_cr() && set.contains(b'\n') {
            set.with(b'\r')
        } else {
            set
        }
    }

    /// Whether a CR may stand before this value's LF as the end of the line (for names and
    /// text a CR is content, and a hunk header's CR is its section text's).
    fn may_end_with_cr(self) -> bool {
        matches!(
            self,
            Value::Mode { .. } | Value::Percent { .. } | Value::Index { .. }
        )
    }

    fn allowed_before_cr(self) -> ByteSet {
        match self {
            Value::Path { empty: true } => NOT_LF,
            Value::Path { empty: false } | Value::Text => ByteSet::FULL,
            Value::Mode { digits } => {
                let more = if digits < MAX_MODE_DIGITS {
                    OCTAL
                } else {
                    ByteSet::EMPTY
                };
                if digits > 0 {
                    more.union(LF)
                } else {
                    more
                }
            }
            Value::Percent { done: true, .. } => LF,
            Value::Percent { digits, value, .. } => {
                let top = 100u32.saturating_sub(value as u32 * 10).min(9) as u8;
                let more = if digits < 3 && (value as u32) * 10 <= 100 {
                    ByteSet::range(b'0', b'0' + top)
                } else {
                    ByteSet::EMPTY
                };
                if digits > 0 {
                    more.with(b'%')
                } else {
                    more
                }
            }
            Value::Index { phase: 0, empty } => {
                if empty {
                    HEX
                } else {
                    HEX.with(b'.')
                }
            }
            Value::Index { phase: 1, .. } => ByteSet::single(b'.'),
            Value::Index { phase: 2, empty } => {
                if empty {
                    HEX
                } else {
                    HEX.with(b' ').with(b'\n')
                }
            }
            Value::Index { empty, .. } => {
                if empty {
                    OCTAL
                } else {
                    OCTAL.with(b'\n')
                }
            }
            Value::Size { digits } => {
                let more = if digits < MAX_SIZE_DIGITS {
                    DIGITS
                } else {
                    ByteSet::EMPTY
                };
                if digits > 0 {
                    more.with(b'\n')
                } else {
                    more
                }
            }
            Value::Range(r) => r.allowed(),
            Value::Cr => LF,
        }
    }

    /// The state after `byte`; `Ok(None)` when `byte` was the LF that ends the line.
    pub fn step(self, byte: u8) -> Next {
        use UdiffErrorKind::*;
        if byte == b'\n' {
            return if self.allowed().contains(b'\n') {
                Ok(None)
            } else {
                Err(UnexpectedByte)
            };
        }
        if byte == b'\r' && self.may_end_with_cr() && self.allowed().contains(b'\r') {
            return Ok(Some(Value::Cr));
        }
        let next = match self {
            Value::Path { .. } => Value::Path { empty: false },
            Value::Text => Value::Text,
            Value::Mode { digits } if OCTAL.contains(byte) => {
                if digits >= MAX_MODE_DIGITS {
                    return Err(NumberTooLarge);
                }
                Value::Mode { digits: digits + 1 }
            }
            Value::Percent {
                digits,
                value,
                done: false,
            } if DIGITS.contains(byte) => {
                let v = value as u32 * 10 + (byte - b'0') as u32;
                if digits >= 3 || v > 100 {
                    return Err(NumberTooLarge);
                }
                Value::Percent {
                    digits: digits + 1,
                    value: v as u8,
                    done: false,
                }
            }
            Value::Percent {
                digits,
                value,
                done: false,
            } if byte == b'%' && digits > 0 => Value::Percent {
                digits,
                value,
                done: true,
            },
            Value::Index { phase: 0 | 2, .. } if HEX.contains(byte) => match self {
                Value::Index { phase, .. } => Value::Index {
                    phase,
                    empty: false,
                },
                _ => return Err(UnexpectedByte),
            },
            Value::Index {
                phase: 0,
                empty: false,
            } if byte == b'.' => Value::Index {
                phase: 1,
                empty: true,
            },
            Value::Index { phase: 1, .. } if byte == b'.' => Value::Index {
                phase: 2,
                empty: true,
            },
            Value::Index {
                phase: 2,
                empty: false,
            } if byte == b' ' => Value::Index {
                phase: 3,
                empty: true,
            },
            Value::Index { phase: 3, .. } if OCTAL.contains(byte) => Value::Index {
                phase: 3,
                empty: false,
            },
            Value::Size { digits } if DIGITS.contains(byte) => {
                if digits >= MAX_SIZE_DIGITS {
                    return Err(NumberTooLarge);
                }
                Value::Size { digits: digits + 1 }
            }
            Value::Range(r) => return r.step(byte).map(|r| Some(Value::Range(r))),
            _ => return Err(UnexpectedByte),
        };
        Ok(Some(next))
    }

    /// The fewest bytes, LF included, that can finish the line from this state.
    pub fn min_rest(self) -> u32 {
        match self {
            Value::Path { empty } => 1 + empty as u32,
            Value::Text => 1,
            Value::Mode { digits } | Value::Size { digits } => 1 + (digits == 0) as u32,
            Value::Percent { done: true, .. } => 1,
            Value::Percent { digits, .. } => 2 + (digits == 0) as u32,
            Value::Index { phase: 0, empty } => 4 + empty as u32,
            Value::Index { phase: 1, .. } => 3,
            Value::Index { empty, .. } => 1 + empty as u32,
            Value::Range(r) => r.min_rest(),
            Value::Cr => 1,
        }
    }
}

impl Range {
    /// Just after `@@ -`.
    pub const START: Range = Range {
        field: 0,
        digits: 0,
    };

    fn allowed(self) -> ByteSet {
        let digits = if self.digits < MAX_RANGE_DIGITS {
            DIGITS
        } else {
            ByteSet::EMPTY
        };
        match (self.field, self.digits) {
            (0..=3, 0) => digits,
            (0 | 2, _) => digits.with(b',').with(b' '),
            (1 | 3, _) => digits.with(b' '),
            (4, _) => ByteSet::single(b'+'),
            (5 | 6, _) => ByteSet::single(b'@'),
            _ => ByteSet::FULL,
        }
    }

    fn step(self, byte: u8) -> Result<Range, UdiffErrorKind> {
        let field = self.field;
        Ok(match byte {
            b'0'..=b'9' if field <= 3 => {
                if self.digits >= MAX_RANGE_DIGITS {
                    return Err(UdiffErrorKind::NumberTooLarge);
                }
                Range {
                    field,
                    digits: self.digits + 1,
                }
            }
            b',' if (field == 0 || field == 2) && self.digits > 0 => Range {
                field: field + 1,
                digits: 0,
            },
            b' ' if field <= 3 && self.digits > 0 => Range {
                field: if field < 2 { 4 } else { 5 },
                digits: 0,
            },
            b'+' if field == 4 => Range {
                field: 2,
                digits: 0,
            },
            b'@' if field == 5 || field == 6 => Range {
                field: field + 1,
                digits: 0,
            },
            _ if field == 7 => self,
            _ => return Err(UdiffErrorKind::UnexpectedByte),
        })
    }

    fn min_rest(self) -> u32 {
        // "1 +1 @@\n" from the old start; each part shortens it.
        match (self.field, self.digits) {
            (0 | 1, 0) => 8,
            (0 | 1, _) => 7,
            (4, _) => 6,
            (2 | 3, 0) => 5,
            (2 | 3, _) => 4,
            (5, _) => 3,
            (6, _) => 2,
            _ => 1,
        }
    }

    /// Which number a digit of this state belongs to (0..=3), if any.
    pub fn number(self) -> Option<usize> {
        (self.field <= 3).then_some(self.field as usize)
    }
}

/// git's base85 alphabet, in digit order.
pub const BASE85: &[u8; 85] =
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

/// The digit value of each byte, or 255 for bytes outside the alphabet.
pub const BASE85_VALUE: [u8; 256] = {
    let mut table = [255u8; 256];
    let mut i = 0;
    while i < 85 {
        table[BASE85[i] as usize] = i as u8;
        i += 1;
    }
    table
};

/// `UP_TO[v]`: the base85 digits whose value is at most `v`.
pub const BASE85_UP_TO: [ByteSet; 85] = {
    let mut sets = [ByteSet::EMPTY; 85];
    let mut acc = ByteSet::EMPTY;
    let mut i = 0;
    while i < 85 {
        acc = acc.with(BASE85[i]);
        sets[i] = acc;
        i += 1;
    }
    sets
};

/// The bytes that start a base85 line: its decoded length, `A`-`Z` for 1-26, `a`-`z` for 27-52.
pub const BASE85_LENGTH: ByteSet = ByteSet::range(b'A', b'Z').union(ByteSet::range(b'a', b'z'));

/// The decoded length a base85 line's first byte announces.
pub fn base85_length(byte: u8) -> u8 {
    match byte {
        b'A'..=b'Z' => byte - b'A' + 1,
        _ => byte - b'a' + 27,
    }
}

/// Decodes the characters of one base85 line (after its length byte) into `out`, keeping the
/// first `len` bytes. The recogniser has already validated the characters and their groups.
pub fn decode_base85(chars: &[u8], len: usize, out: &mut Vec<u8>) {
    let start = out.len();
    for group in chars.chunks(5) {
        let mut acc: u32 = 0;
        for &c in group {
            acc = acc
                .wrapping_mul(85)
                .wrapping_add(BASE85_VALUE[c as usize] as u32);
        }
        out.extend_from_slice(&acc.to_be_bytes());
    }
    out.truncate(start + len);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base85_round_trip_of_a_known_group() {
        // git encodes the bytes 0x00 0x00 0x00 0x01 as "00001".
        let mut out = Vec::new();
        decode_base85(b"00001", 4, &mut out);
        assert_eq!(out, [0, 0, 0, 1]);
        assert_eq!(BASE85_UP_TO[84].len(), 85);
        assert_eq!(base85_length(b'z'), 52);
    }

    #[test]
    fn allowed_agrees_with_step() {
        let states = [
            Value::Path { empty: true },
            Value::Mode { digits: 0 },
            Value::Mode { digits: 7 },
            Value::Percent {
                digits: 2,
                value: 10,
                done: false,
            },
            Value::Percent {
                digits: 1,
                value: 9,
                done: false,
            },
            Value::Index {
                phase: 0,
                empty: false,
            },
            Value::Index {
                phase: 2,
                empty: false,
            },
            Value::Index {
                phase: 3,
                empty: true,
            },
            Value::Range(Range::START),
            Value::Range(Range {
                field: 2,
                digits: 3,
            }),
            Value::Range(Range {
                field: 7,
                digits: 0,
            }),
            Value::Mode { digits: 6 },
            Value::Percent {
                digits: 2,
                value: 90,
                done: true,
            },
            Value::Index {
                phase: 3,
                empty: false,
            },
            Value::Cr,
        ];
        for s in states {
            for b in 0..=255u8 {
                assert_eq!(s.allowed().contains(b), s.step(b).is_ok(), "{s:?} {b}");
            }
        }
        // A CR ends a mode, a percentage or an index line, and only the LF follows it; in
        // a name it is content.
        assert_eq!(Value::Mode { digits: 6 }.step(b'\r'), Ok(Some(Value::Cr)));
        assert_eq!(Value::Cr.step(b'\n'), Ok(None));
        assert!(Value::Cr.step(b'\r').is_err());
        assert!(
            Value::Mode { digits: 0 }.step(b'\r').is_err(),
            "no digit yet"
        );
        assert_eq!(
            Value::Path { empty: false }.step(b'\r'),
            Ok(Some(Value::Path { empty: false }))
        );
    }
}
