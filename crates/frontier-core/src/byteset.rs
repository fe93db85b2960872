//! A set of bytes as 256 bits.
//!
//! Every parser answers `allowed()` with a [`ByteSet`]: two `u128` words, `Copy`, with
//! membership, union and counting in a handful of instructions. Sets that a state machine
//! needs over and over (token characters, digits, UTF-8 continuation ranges) are built once by
//! `const fn` and combined with [`ByteSet::union`] at query time.

use std::fmt;

/// A set of byte values, stored as a 256-bit mask.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ByteSet([u128; 2]);

impl ByteSet {
    /// The empty set.
    pub const EMPTY: ByteSet = ByteSet([0, 0]);
    /// Every byte.
    pub const FULL: ByteSet = ByteSet([u128::MAX, u128::MAX]);

    /// The set holding exactly `b`.
    pub const fn single(b: u8) -> ByteSet {
        ByteSet::EMPTY.with(b)
    }

    /// The inclusive range `lo..=hi` (empty when `lo > hi`).
    pub const fn range(lo: u8, hi: u8) -> ByteSet {
        let mut set = ByteSet::EMPTY;
        let mut b = lo as u16;
        while b <= hi as u16 {
            set = set.with(b as u8);
            b += 1;
        }
        set
    }

    /// The set of the bytes of `bytes`.
    pub const fn of(bytes: &[u8]) -> ByteSet {
        let mut set = ByteSet::EMPTY;
        let mut i = 0;
        while i < bytes.len() {
            set = set.with(bytes[i]);
            i += 1;
        }
        set
    }

    /// This set with `b` added.
    pub const fn with(self, b: u8) -> ByteSet {
        let mut words = self.0;
        words[(b >> 7) as usize] |= 1u128 << (b & 127);
        ByteSet(words)
    }

    /// This set with `b` removed.
    pub const fn without(self, b: u8) -> ByteSet {
        let mut words = self.0;
        words[(b >> 7) as usize] &= !(1u128 << (b & 127));
        ByteSet(words)
    }

    /// Bytes in either set.
    pub const fn union(self, other: ByteSet) -> ByteSet {
        ByteSet([self.0[0] | other.0[0], self.0[1] | other.0[1]])
    }

    /// Bytes in both sets.
    pub const fn intersection(self, other: ByteSet) -> ByteSet {
        ByteSet([self.0[0] & other.0[0], self.0[1] & other.0[1]])
    }

    /// Bytes in `self` but not in `other`.
    pub const fn difference(self, other: ByteSet) -> ByteSet {
        ByteSet([self.0[0] & !other.0[0], self.0[1] & !other.0[1]])
    }

    /// Every byte not in this set.
    pub const fn complement(self) -> ByteSet {
        ByteSet([!self.0[0], !self.0[1]])
    }

    /// Whether `b` is in the set.
    #[inline]
    pub const fn contains(&self, b: u8) -> bool {
        self.0[(b >> 7) as usize] & (1u128 << (b & 127)) != 0
    }

    /// The set as a lookup table, for hot loops that classify many bytes: indexing a
    /// `[bool; 256]` is one load, where [`contains`](Self::contains) shifts a `u128`.
    pub const fn table(&self) -> [bool; 256] {
        let mut table = [false; 256];
        let mut b = 0;
        while b < 256 {
            table[b] = self.contains(b as u8);
            b += 1;
        }
        table
    }

    /// Whether the set is empty.
    pub const fn is_empty(&self) -> bool {
        self.0[0] == 0 && self.0[1] == 0
    }

    /// The number of bytes in the set.
    pub const fn len(&self) -> u32 {
        self.0[0].count_ones() + self.0[1].count_ones()
    }

    /// The bytes of the set, in increasing order: one step per member (the lowest set bit
    /// of a word at a time), so iterating a small or empty set costs next to nothing.
    pub fn iter(&self) -> Members {
        Members { words: self.0 }
    }

    /// The set as sorted, maximal, inclusive ranges `(lo, hi)`: the form `trace` prints.
    pub fn ranges(&self) -> Vec<(u8, u8)> {
        let mut out: Vec<(u8, u8)> = Vec::new();
        for b in self.iter() {
            match out.last_mut() {
                Some((_, hi)) if *hi as u16 + 1 == b as u16 => *hi = b,
                _ => out.push((b, b)),
            }
        }
        out
    }
}

/// The members of a [`ByteSet`], in increasing order ([`ByteSet::iter`]).
#[derive(Clone, Debug)]
pub struct Members {
    /// The members not yet visited.
    words: [u128; 2],
}

impl Iterator for Members {
    type Item = u8;

    #[inline]
    fn next(&mut self) -> Option<u8> {
        let half = (self.words[0] == 0) as usize;
        let word = self.words.get_mut(half)?;
        if *word == 0 {
            return None;
        }
        let bit = word.trailing_zeros();
        *word &= *word - 1;
        Some((half as u32 * 128 + bit) as u8)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = (self.words[0].count_ones() + self.words[1].count_ones()) as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Members {}

impl fmt::Debug for ByteSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut list = f.debug_list();
        for (lo, hi) in self.ranges() {
            if lo == hi {
                list.entry(&format_args!("{lo:#04x}"));
            } else {
                list.entry(&format_args!("{lo:#04x}..={hi:#04x}"));
            }
        }
        list.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_maximal_and_sorted() {
        let set = ByteSet::range(b'a', b'z')
            .with(b'_')
            .with(0)
            .with(255)
            .with(b'`');
        assert_eq!(
            set.ranges(),
            vec![(0, 0), (b'_', b'z'), (255, 255)],
            "`_` (0x5f), '`' (0x60) and a-z are one run"
        );
        assert_eq!(set.len(), 1 + 28 + 1);
    }

    #[test]
    fn iteration_visits_exactly_the_members_in_order() {
        // Sets with members in one half, both halves, at the edges and none; and sets made by
        // a small generator, each against a scan of all 256 bytes.
        let mut sets = vec![
            ByteSet::EMPTY,
            ByteSet::FULL,
            ByteSet::single(0),
            ByteSet::single(127),
            ByteSet::single(128),
            ByteSet::single(255),
            ByteSet::range(100, 200),
            ByteSet::range(128, 255),
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..64 {
            let mut set = ByteSet::EMPTY;
            for _ in 0..(seed % 40) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                set = set.with(seed as u8);
            }
            sets.push(set);
        }
        for set in sets {
            let scanned: Vec<u8> = (0..=255u8).filter(|&b| set.contains(b)).collect();
            let iterated: Vec<u8> = set.iter().collect();
            assert_eq!(iterated, scanned, "{set:?}");
            assert_eq!(set.iter().len(), set.len() as usize);
        }
    }

    #[test]
    fn set_algebra() {
        let digits = ByteSet::range(b'0', b'9');
        assert!(digits.contains(b'5') && !digits.contains(b'a'));
        assert_eq!(digits.without(b'0').len(), 9);
        assert_eq!(digits.union(ByteSet::single(b'x')).len(), 11);
        assert_eq!(digits.intersection(ByteSet::range(b'5', b'z')).len(), 5);
        assert_eq!(digits.complement().len(), 246);
        assert_eq!(ByteSet::FULL.difference(digits), digits.complement());
        assert!(ByteSet::range(9, 3).is_empty());
        assert_eq!(ByteSet::of(b"abcab").len(), 3);
    }
}
