//! Strict UTF-8, one byte at a time, as llguidance's `.` reads it.
//!
//! A character is one Unicode scalar value in its shortest encoding: the bytes C0, C1 and
//! F5–FF never occur, and after a lead byte only the continuation bytes that can still finish
//! a valid character are allowed (after E0 only A0–BF, after ED only 80–9F, after F0 only
//! 90–BF, after F4 only 80–8F). [`Utf8`] is the decoder's state between bytes: two bytes and a
//! code point, `Copy`, with the next allowed set in one table lookup.

use crate::byteset::ByteSet;

/// ASCII bytes other than LF: one whole character each.
pub const ASCII_NO_LF: ByteSet = ByteSet::range(0x00, 0x7f).without(b'\n');
/// Bytes that start a character of two to four bytes.
pub const LEADS: ByteSet = ByteSet::range(0xc2, 0xf4);
/// Bytes that start a character other than LF.
pub const CHAR_START: ByteSet = ASCII_NO_LF.union(LEADS);

/// Bytes that start a character, and LF.
pub const CHAR_START_LF: ByteSet = CHAR_START.with(b'\n');

/// The length of the longest run of whole characters other than LF at the start of `bytes`
/// (it stops before an LF, an invalid byte, or a character cut by the end of `bytes`). Short
/// inputs (a decoder's one byte) are scanned directly; long ones with `memchr` and the
/// standard library's validation.
#[inline]
pub fn content_run(bytes: &[u8]) -> usize {
    if bytes.len() <= 16 {
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'\n' {
                return i;
            }
            if b >= 0x80 {
                return i + validated_run(&bytes[i..]);
            }
        }
        return bytes.len();
    }
    validated_run(bytes)
}

fn validated_run(bytes: &[u8]) -> usize {
    let end = memchr::memchr(b'\n', bytes).unwrap_or(bytes.len());
    match std::str::from_utf8(&bytes[..end]) {
        Ok(_) => end,
        Err(e) => e.valid_up_to(),
    }
}

/// The continuation ranges, indexed by [`Utf8::next`].
const CONT: [ByteSet; 5] = [
    ByteSet::range(0x80, 0xbf),
    ByteSet::range(0xa0, 0xbf),
    ByteSet::range(0x80, 0x9f),
    ByteSet::range(0x90, 0xbf),
    ByteSet::range(0x80, 0x8f),
];
const CONT_LO_HI: [(u8, u8); 5] = [
    (0x80, 0xbf),
    (0xa0, 0xbf),
    (0x80, 0x9f),
    (0x90, 0xbf),
    (0x80, 0x8f),
];

/// Where a decoder stands inside one character.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct Utf8 {
    /// Continuation bytes still to come (0 between characters).
    need: u8,
    /// Bytes of the current character seen so far.
    have: u8,
    /// Index into the continuation ranges for the next byte.
    next: u8,
    /// The code point so far.
    cp: u32,
}

/// What one byte did to a decoder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decoded {
    /// The byte finished the character with this code point.
    Char(u32),
    /// The byte is part of a character that needs more bytes.
    Partial,
    /// The byte cannot continue (or start) a character.
    Invalid,
}

impl Utf8 {
    /// Whether the decoder is between characters.
    #[inline]
    pub const fn at_boundary(self) -> bool {
        self.need == 0
    }

    /// The decoder without its code point: what the bytes to come can see of it when the
    /// character's value is not used (the allowed continuations live in `need`, `have` and
    /// `next`). A recogniser's mask key uses it, so that every character leaves one key.
    #[inline]
    pub const fn without_code_point(self) -> Utf8 {
        Utf8 { cp: 0, ..self }
    }

    /// Bytes of the unfinished character (0 at a boundary).
    #[inline]
    pub const fn partial_len(self) -> u8 {
        self.have
    }

    /// The bytes that may come next inside a character (only meaningful when not at a
    /// boundary).
    #[inline]
    pub const fn continuation(self) -> ByteSet {
        CONT[self.next as usize]
    }

    /// Takes one byte of content. LF is never content and is reported as invalid.
    #[inline]
    pub fn step(&mut self, b: u8) -> Decoded {
        if self.need > 0 {
            let (lo, hi) = CONT_LO_HI[self.next as usize];
            if b < lo || b > hi {
                return Decoded::Invalid;
            }
            self.cp = (self.cp << 6) | (b & 0x3f) as u32;
            self.need -= 1;
            self.have += 1;
            self.next = 0;
            if self.need == 0 {
                self.have = 0;
                return Decoded::Char(self.cp);
            }
            return Decoded::Partial;
        }
        let (need, next, bits) = match b {
            b'\n' => return Decoded::Invalid,
            0x00..=0x7f => return Decoded::Char(b as u32),
            0xc2..=0xdf => (1, 0, b & 0x1f),
            0xe0 => (2, 1, 0),
            0xed => (2, 2, 0x0d),
            0xe1..=0xef => (2, 0, b & 0x0f),
            0xf0 => (3, 3, 0),
            0xf1..=0xf3 => (3, 0, b & 0x07),
            0xf4 => (3, 4, 0x04),
            _ => return Decoded::Invalid,
        };
        *self = Utf8 {
            need,
            have: 1,
            next,
            cp: bits as u32,
        };
        Decoded::Partial
    }
}

/// Whether a code point is whitespace as Rust's `char::is_whitespace` says (the Unicode
/// `White_Space` property), which is what `str::trim` removes.
pub const fn is_whitespace(cp: u32) -> bool {
    matches!(
        cp,
        0x09..=0x0d | 0x20 | 0x85 | 0xa0 | 0x1680 | 0x2000..=0x200a | 0x2028 | 0x2029 | 0x202f | 0x205f | 0x3000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(bytes: &[u8]) -> Option<Vec<u32>> {
        let mut d = Utf8::default();
        let mut out = Vec::new();
        for &b in bytes {
            match d.step(b) {
                Decoded::Char(c) => out.push(c),
                Decoded::Partial => {}
                Decoded::Invalid => return None,
            }
        }
        d.at_boundary().then_some(out)
    }

    #[test]
    fn agrees_with_std_on_every_short_sequence() {
        // Every 1- and 2-byte sequence, and every 3-byte sequence with a multi-byte lead.
        let check = |bytes: &[u8]| {
            let ours = decode_all(bytes);
            let theirs = std::str::from_utf8(bytes)
                .ok()
                .filter(|s| !s.contains('\n'))
                .map(|s| s.chars().map(|c| c as u32).collect::<Vec<_>>());
            assert_eq!(ours, theirs, "{bytes:02x?}");
        };
        for a in 0..=255u8 {
            check(&[a]);
            for b in 0..=255u8 {
                check(&[a, b]);
            }
        }
        for a in 0xe0..=0xf4u8 {
            for b in 0x80..=0xbfu8 {
                for c in [0x00, 0x7f, 0x80, 0x9f, 0xa0, 0xbf, 0xc0] {
                    check(&[a, b, c]);
                    check(&[a, b, c, 0x80]);
                }
            }
        }
    }

    #[test]
    fn whitespace_matches_char_is_whitespace() {
        for cp in 0..0x11000u32 {
            if let Some(c) = char::from_u32(cp) {
                assert_eq!(is_whitespace(cp), c.is_whitespace(), "{cp:#x}");
            }
        }
    }
}

impl Utf8 {
    /// A decoder between characters.
    pub const fn new() -> Utf8 {
        Utf8 {
            need: 0,
            have: 0,
            next: 0,
            cp: 0,
        }
    }
}

/// ASCII whitespace as `char::is_whitespace` has it: TAB, LF, VT, FF, CR and space.
pub const ASCII_WS: ByteSet = ByteSet::of(b"\t\n\x0b\x0c\r ");
/// ASCII whitespace other than LF.
pub const ASCII_WS_NO_LF: ByteSet = ASCII_WS.without(b'\n');
/// Lead bytes of the multi-byte whitespace characters (U+0085, U+00A0, U+1680, U+2000–U+200A,
/// U+2028, U+2029, U+202F, U+205F, U+3000).
pub const WS_LEADS: ByteSet = ByteSet::of(&[0xc2, 0xe1, 0xe2, 0xe3]);

impl Utf8 {
    /// Inside a character, the next bytes that can still make it a whitespace character
    /// (empty when the bytes so far cannot).
    pub fn ws_continuation(self) -> ByteSet {
        match (self.need, self.cp) {
            (1, 0x02) => ByteSet::of(&[0x85, 0xa0]),
            (2, 0x01) => ByteSet::single(0x9a),
            (1, 0x5a) => ByteSet::single(0x80),
            (2, 0x02) => ByteSet::of(&[0x80, 0x81]),
            (1, 0x80) => ByteSet::range(0x80, 0x8a).union(ByteSet::of(&[0xa8, 0xa9, 0xaf])),
            (1, 0x81) => ByteSet::single(0x9f),
            (2, 0x03) | (1, 0xc0) => ByteSet::single(0x80),
            _ => ByteSet::EMPTY,
        }
    }
}

#[cfg(test)]
mod ws_tests {
    use super::*;

    /// `ws_continuation` is exactly "some whitespace character continues these bytes".
    #[test]
    fn ws_continuation_is_exact() {
        let ws: Vec<Vec<u8>> = (0x80u32..0x11000)
            .filter_map(char::from_u32)
            .filter(|c| c.is_whitespace())
            .map(|c| c.to_string().into_bytes())
            .collect();
        let mut prefixes: Vec<Vec<u8>> = Vec::new();
        for lead in 0xc2..=0xf4u8 {
            prefixes.push(vec![lead]);
            for b in 0x80..=0xbfu8 {
                prefixes.push(vec![lead, b]);
            }
        }
        for p in prefixes {
            let mut d = Utf8::new();
            if !p.iter().all(|&b| d.step(b) == Decoded::Partial) {
                continue;
            }
            let expected = (0..=255u8)
                .filter(|&b| {
                    ws.iter()
                        .any(|w| w.len() > p.len() && w.starts_with(&p) && w[p.len()] == b)
                })
                .fold(ByteSet::EMPTY, |s, b| s.with(b));
            assert_eq!(d.ws_continuation(), expected, "{p:02x?}");
        }
        let leads = ws.iter().fold(ByteSet::EMPTY, |s, w| s.with(w[0]));
        assert_eq!(leads, WS_LEADS);
    }
}
