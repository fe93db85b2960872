//! What each byte of a header line is, 16 bytes at a time, for the whole-line path.
//!
//! A header line that arrives whole is checked as bit masks rather than byte by byte: which
//! bytes are token characters and where the LF is. A `call` line is then valid
//! when exactly one byte between the keyword and the LF is not a token character and that byte
//! is a SP with a token on each side; an `arg` line likewise, its second token all digits.
//! Token lengths vary from line to line, so a loop that stops at the first byte that is not a
//! token character mispredicts its exit about once a token; the masks need no such branch.
//!
//! The masks come from SSE2 compares (through `safe_arch`) on x86-64 and from the byte table
//! elsewhere. Lines of up to 64 bytes are scanned; a longer one is left to the machine's
//! byte-by-byte path.

/// The longest line (LF included) scanned; longer lines are stepped.
pub(super) const SCANNED: usize = 64;

/// The classes of the bytes of one line, bit `i` for byte `i`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct LineMasks {
    /// Token characters.
    pub(super) token: u64,
    /// Where the line's LF is: its length minus one.
    pub(super) lf: usize,
}

impl LineMasks {
    /// Scans the line at the start of `bytes` if its LF is among its first `limit` bytes (and
    /// the first [`SCANNED`]); `None` otherwise.
    #[inline]
    pub(super) fn scan(bytes: &[u8], limit: usize) -> Option<LineMasks> {
        let limit = limit.min(bytes.len()).min(SCANNED);
        let mut token = 0u64;
        let mut start = 0;
        while start < limit {
            let lane = lane_at(bytes, start);
            let classes = classify(&lane);
            token |= (classes.token as u64) << start;
            if classes.lf != 0 {
                let lf = start + classes.lf.trailing_zeros() as usize;
                return (lf < limit).then_some(LineMasks { token, lf });
            }
            start += 16;
        }
        None
    }

    /// The bits of bytes `from..self.lf`.
    #[inline]
    pub(super) fn between(&self, from: usize) -> u64 {
        (u64::MAX << from) & !(u64::MAX << self.lf)
    }
}

/// The 16 bytes of `bytes` from `start`, zero-padded past its end (a zero byte is in no class).
#[inline]
fn lane_at(bytes: &[u8], start: usize) -> [u8; 16] {
    match bytes.get(start..start + 16) {
        Some(lane) => lane.try_into().unwrap_or([0; 16]),
        None => {
            let mut lane = [0; 16];
            let rest = &bytes[start.min(bytes.len())..];
            lane[..rest.len()].copy_from_slice(rest);
            lane
        }
    }
}

/// The classes of 16 bytes, bit `i` for byte `i`.
struct LaneClasses {
    token: u16,
    lf: u16,
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline]
fn classify(lane: &[u8; 16]) -> LaneClasses {
    use safe_arch::{
        add_i8_m128i, cmp_eq_mask_i8_m128i, cmp_lt_mask_i8_m128i, load_unaligned_m128i, m128i,
        move_mask_i8_m128i, set_splat_i8_m128i,
    };
    // `lo <= b < lo + n` as one signed compare: shift the range to start at -128.
    let within = |bytes: m128i, lo: u8, n: u8| {
        let shifted = add_i8_m128i(bytes, set_splat_i8_m128i(0x80u8.wrapping_sub(lo) as i8));
        cmp_lt_mask_i8_m128i(shifted, set_splat_i8_m128i((n as i8).wrapping_sub(-128)))
    };
    let eq = |bytes: m128i, b: u8| cmp_eq_mask_i8_m128i(bytes, set_splat_i8_m128i(b as i8));
    let bytes = load_unaligned_m128i(lane);
    let digit = within(bytes, b'0', 10);
    // ALPHA: either case, folded to lower case by setting bit 5.
    let alpha = within(bytes | set_splat_i8_m128i(0x20), b'a', 26);
    // `-` and `.` are adjacent; `:` and `_` are alone.
    let punct = within(bytes, b'-', 2) | eq(bytes, b':') | eq(bytes, b'_');
    let mask = |set: m128i| move_mask_i8_m128i(set) as u16;
    LaneClasses {
        token: mask(digit | alpha | punct),
        lf: mask(eq(bytes, b'\n')),
    }
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[inline]
fn classify(lane: &[u8; 16]) -> LaneClasses {
    let mut classes = LaneClasses { token: 0, lf: 0 };
    for (i, &b) in lane.iter().enumerate() {
        classes.token |= (super::TOKEN_CHARS.contains(b) as u16) << i;
        classes.lf |= ((b == b'\n') as u16) << i;
    }
    classes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ctl::TOKEN_CHARS;

    #[test]
    fn every_byte_is_classified_as_the_grammar_says() {
        for base in (0..256).step_by(16) {
            let lane: [u8; 16] = std::array::from_fn(|i| (base + i) as u8);
            let classes = classify(&lane);
            for (i, &b) in lane.iter().enumerate() {
                assert_eq!(
                    classes.token >> i & 1 == 1,
                    TOKEN_CHARS.contains(b),
                    "{b:#x}"
                );
                assert_eq!(classes.lf >> i & 1 == 1, b == b'\n', "{b:#x}");
            }
        }
    }

    #[test]
    fn the_lf_must_be_within_the_limit() {
        let line = b"call c1 read_file\nend\n";
        let masks = LineMasks::scan(line, 256).unwrap();
        assert_eq!(masks.lf, 17);
        assert_eq!(masks.between(5) & !masks.token, 1 << 7);
        assert_eq!(LineMasks::scan(line, 18).map(|m| m.lf), Some(17));
        assert_eq!(LineMasks::scan(line, 17), None);
        assert_eq!(LineMasks::scan(&line[..17], 256), None);
        let long = [b'a'; 80];
        assert_eq!(LineMasks::scan(&long, 256), None);
    }
}
