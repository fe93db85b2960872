//! The `*** …` markers, matched as a set of candidates that share their first bytes.
//!
//! At the start of a line every marker the context allows is a candidate; each byte keeps the
//! candidates whose next byte it is. No marker is a prefix of another, so at most one
//! candidate is ever complete. The state is a bit set and a count: `Copy`, and the next
//! allowed bytes are the union of at most eight single bytes.

use crate::byteset::ByteSet;

/// One marker, its text as the grammar spells it (LF included where the grammar puts a
/// literal LF right after it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Marker {
    /// `*** Begin Patch` LF.
    Begin = 0,
    /// `*** Add File: `.
    Add = 1,
    /// `*** Delete File: `.
    Delete = 2,
    /// `*** Update File: `.
    Update = 3,
    /// `*** Move to: `.
    Move = 4,
    /// `*** End of File` LF.
    EndOfFile = 5,
    /// `*** End Patch`.
    End = 6,
    /// `*** Environment ID: `.
    Environment = 7,
}

const TEXTS: [&[u8]; 8] = [
    b"*** Begin Patch\n",
    b"*** Add File: ",
    b"*** Delete File: ",
    b"*** Update File: ",
    b"*** Move to: ",
    b"*** End of File\n",
    b"*** End Patch",
    b"*** Environment ID: ",
];
const ALL: [Marker; 8] = [
    Marker::Begin,
    Marker::Add,
    Marker::Delete,
    Marker::Update,
    Marker::Move,
    Marker::EndOfFile,
    Marker::End,
    Marker::Environment,
];

impl Marker {
    /// The marker's bytes.
    pub const fn text(self) -> &'static [u8] {
        TEXTS[self as usize]
    }

    /// The marker's bit in a [`Markers`] set.
    pub const fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// The longest marker, in bytes.
pub const LONGEST: usize = 20;

/// A set of markers still possible after some bytes of a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct Markers(pub u8);

impl Markers {
    /// The set of the given markers.
    pub const fn of(markers: &[Marker]) -> Markers {
        let mut bits = 0;
        let mut i = 0;
        while i < markers.len() {
            bits |= markers[i].bit();
            i += 1;
        }
        Markers(bits)
    }

    /// The union of two sets.
    pub const fn with(self, other: Markers) -> Markers {
        Markers(self.0 | other.0)
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The text of the only candidate, if exactly one is left.
    #[inline]
    pub fn single(self) -> Option<&'static [u8]> {
        self.0
            .is_power_of_two()
            .then(|| TEXTS[self.0.trailing_zeros() as usize])
    }

    /// The bytes that may follow the first `matched` bytes of a candidate.
    #[inline]
    pub fn next_bytes(self, matched: u8) -> ByteSet {
        if self.0.is_power_of_two() {
            // One candidate left (most of a marker): its next byte.
            return match TEXTS[self.0.trailing_zeros() as usize].get(matched as usize) {
                Some(&b) => ByteSet::single(b),
                None => ByteSet::EMPTY,
            };
        }
        let mut set = ByteSet::EMPTY;
        let mut bits = self.0;
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if let Some(&b) = TEXTS[i].get(matched as usize) {
                set = set.with(b);
            }
        }
        set
    }

    /// The candidates whose byte at `matched` is `b`.
    #[inline]
    pub fn advance(self, matched: u8, b: u8) -> Markers {
        if self.0.is_power_of_two() {
            let text = TEXTS[self.0.trailing_zeros() as usize];
            return if text.get(matched as usize) == Some(&b) {
                self
            } else {
                Markers(0)
            };
        }
        let mut keep = 0;
        let mut bits = self.0;
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if TEXTS[i].get(matched as usize) == Some(&b) {
                keep |= 1 << i;
            }
        }
        Markers(keep)
    }

    /// The candidate completed by `matched` bytes, if any.
    #[inline]
    pub fn complete(self, matched: u8) -> Option<Marker> {
        let mut bits = self.0;
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if TEXTS[i].len() == matched as usize {
                return Some(ALL[i]);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_marker_is_a_prefix_of_another() {
        for a in ALL {
            for b in ALL {
                if a != b {
                    assert!(!b.text().starts_with(a.text()), "{a:?} {b:?}");
                }
            }
            assert!(a.text().len() <= LONGEST);
        }
    }

    #[test]
    fn candidates_narrow_byte_by_byte() {
        let set = Markers::of(&[Marker::EndOfFile, Marker::End, Marker::Add]);
        let mut m = set;
        for (i, &b) in b"*** End Patch".iter().enumerate() {
            assert!(m.next_bytes(i as u8).contains(b));
            m = m.advance(i as u8, b);
        }
        assert_eq!(m.complete(13), Some(Marker::End));
        assert_eq!(set.next_bytes(4), ByteSet::of(b"AE"));
    }
}
