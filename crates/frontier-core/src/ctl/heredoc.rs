//! Extended CTL's heredoc: the tag, held inside the `Copy` machine, and the rules of a body
//! line.
//!
//! A heredoc value is the lines after `arg KEY <<TAG` LF up to a line that is exactly `TAG`.
//! The recogniser has no buffer, so the tag lives in a fixed array inside it: [`MAX_TAG`]
//! bytes. The bound is part of the language, like `max_line`: a tag byte past it is
//! `line_too_long`, and `allowed()` refuses it. 64 bytes takes any tag a person or a model
//! writes (`EOF`, `PATCH`, `END_OF_FILE_CONTENTS`, a 36-byte UUID) and every tag `max_line` allows
//! up to `max_line` 73; a bound sized for the default `max_line` (247 bytes) doubled a cold
//! extended-mode mask's p99, since a decoder copies the machine at every node of its token trie
//! (`docs/ctl.md`).
//!
//! At the start of a body line the bytes that match the tag so far are held back (pending):
//! they may be the tag line. The first byte that departs from `TAG` LF makes them content, and
//! an LF right after the whole tag closes the value. `max_arg` bounds the value: the machine
//! counts the bytes the value may still take (its *room*). A content byte other than LF needs
//! room for itself and for the LF that must still end its line (a value is empty or ends with
//! LF); an LF needs room for itself, and once the room is spent only the tag line may follow.

use crate::byteset::ByteSet;

/// The longest heredoc tag, in bytes.
pub const MAX_TAG: usize = 64;

/// A heredoc tag and how much of the current body line matched it so far. Outside a heredoc
/// it is empty (all zeros), so that equal machine states compare equal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tag {
    bytes: [u8; MAX_TAG],
    len: u8,
    /// At a body line start: how many of the line's bytes matched the tag (held back).
    matched: u8,
}

/// What one heredoc body byte did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BodyByte {
    /// It matches the tag so far at a line start: held back.
    Held,
    /// It is content, and so are the `held` bytes held before it on its line.
    Content {
        /// Tag bytes held back before it, now content.
        held: u8,
        /// Whether it was an LF (the next byte starts a line).
        lf: bool,
    },
    /// The LF of the tag line: the value is complete.
    Close,
    /// It would take the value past `max_arg`.
    TooLarge,
}

impl Default for Tag {
    fn default() -> Tag {
        Tag {
            bytes: [0; MAX_TAG],
            len: 0,
            matched: 0,
        }
    }
}

impl Tag {
    /// Appends a tag byte; `false` when the tag is already [`MAX_TAG`] bytes long.
    #[inline]
    pub(super) fn push(&mut self, byte: u8) -> bool {
        match self.bytes.get_mut(self.len as usize) {
            Some(slot) => {
                *slot = byte;
                self.len += 1;
                true
            }
            None => false,
        }
    }

    /// Makes this the tag `bytes` (at most [`MAX_TAG`] of them: the caller checked), nothing
    /// matched: what pushing them one by one onto an empty tag builds, written in place at once
    /// (a heredoc header taken whole; building a copy and moving it costs a stalled load).
    #[inline]
    pub(super) fn set(&mut self, bytes: &[u8]) {
        *self = Tag::default();
        // A loop over the few bytes of a tag rather than a `memcpy` call of unknown length.
        for (slot, &byte) in self.bytes.iter_mut().zip(bytes) {
            *slot = byte;
        }
        self.len = bytes.len().min(MAX_TAG) as u8;
    }

    /// Whether `line` starts with the tag then LF: the tag line, all there.
    #[inline]
    pub(super) fn starts_tag_line(&self, line: &[u8]) -> bool {
        let tag = self.as_bytes();
        // Compared byte by byte: a tag is a few bytes, too few for a `memcmp` call to pay.
        line.len() > tag.len()
            && line[tag.len()] == b'\n'
            && tag.iter().zip(line).all(|(t, b)| t == b)
    }

    /// Whether no more tag bytes fit.
    #[inline]
    pub(super) fn is_full(&self) -> bool {
        self.len as usize == MAX_TAG
    }

    /// Whether `other` holds the same tag, whatever either matched of a line so far. The bytes
    /// past a tag's length are zeros (a tag only grows from empty), so comparing the whole
    /// arrays is exact, and compiles to a few compares rather than a call.
    #[inline]
    pub fn same_tag(&self, other: &Tag) -> bool {
        self.len == other.len && self.bytes == other.bytes
    }

    /// The tag's first byte, or zero for an empty tag (a heredoc's tag never is): a fixed
    /// slot, read without the bounds check of [`as_bytes`](Self::as_bytes).
    #[inline]
    pub(super) fn first(&self) -> u8 {
        self.bytes[0]
    }

    /// The tag.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// The bytes of the current body line held back as a possible tag line.
    #[inline]
    pub fn held(&self) -> &[u8] {
        &self.bytes[..self.matched as usize]
    }

    /// The bytes a body line start with `matched` tag bytes still needs: the rest of the tag,
    /// then LF.
    pub(super) fn expected(&self) -> u8 {
        match self.as_bytes().get(self.matched as usize) {
            Some(&byte) => byte,
            None => b'\n',
        }
    }

    /// Takes one body byte, at a line start (`line_start`) or inside a content line, with
    /// `room` bytes the value may still take (counted down for content).
    #[inline]
    pub(super) fn step(&mut self, line_start: bool, room: &mut u64, byte: u8) -> BodyByte {
        let held = if line_start { self.matched } else { 0 };
        if line_start && byte == self.expected() {
            if byte == b'\n' && self.matched == self.len {
                return BodyByte::Close;
            }
            self.matched += 1;
            return BodyByte::Held;
        }
        let lf = byte == b'\n';
        let needed = held as u64 + 1 + !lf as u64;
        if *room < needed {
            return BodyByte::TooLarge;
        }
        *room -= held as u64 + 1;
        self.matched = 0;
        BodyByte::Content { held, lf }
    }

    /// The bytes allowed next (see [`step`](Self::step)).
    #[inline]
    pub(super) fn allowed(&self, line_start: bool, room: u64) -> ByteSet {
        let held = if line_start { self.matched as u64 } else { 0 };
        let content = if room >= held + 2 {
            ByteSet::FULL
        } else if room > held {
            ByteSet::EMPTY.with(b'\n')
        } else {
            ByteSet::EMPTY
        };
        if line_start {
            content.with(self.expected())
        } else {
            content
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(text: &[u8]) -> Tag {
        let mut tag = Tag::default();
        for &b in text {
            assert!(tag.push(b));
        }
        tag
    }

    #[test]
    fn a_line_that_only_starts_with_the_tag_is_content() {
        let mut t = tag(b"EOF");
        let mut room = 100;
        assert_eq!(t.step(true, &mut room, b'E'), BodyByte::Held);
        assert_eq!(t.step(true, &mut room, b'O'), BodyByte::Held);
        assert_eq!(t.held(), b"EO");
        assert_eq!(t.step(true, &mut room, b'F'), BodyByte::Held);
        assert_eq!(
            t.step(true, &mut room, b'X'),
            BodyByte::Content { held: 3, lf: false }
        );
        assert_eq!(room, 96);
        assert_eq!(t.held(), b"");
        assert_eq!(t.step(true, &mut room, b'E'), BodyByte::Held);
        assert_eq!(t.step(true, &mut room, b'O'), BodyByte::Held);
        assert_eq!(t.step(true, &mut room, b'F'), BodyByte::Held);
        assert_eq!(t.step(true, &mut room, b'\n'), BodyByte::Close);
    }

    #[test]
    fn a_tag_written_at_once_is_the_tag_pushed_byte_by_byte() {
        for text in [&b"E"[..], b"EOF", b"PATCH_1", &[b'z'; MAX_TAG]] {
            let mut set = tag(b"OLD");
            set.step(true, &mut 10, b'O');
            set.set(text);
            assert_eq!(set, tag(text));
            assert_eq!(set.as_bytes(), text);
            let mut line = text.to_vec();
            assert!(!set.starts_tag_line(&line), "no LF yet");
            line.extend_from_slice(b"\nmore");
            assert!(set.starts_tag_line(&line));
            line[0] ^= 1;
            assert!(!set.starts_tag_line(&line));
            line[0] ^= 1;
            line.insert(text.len(), b'X');
            assert!(!set.starts_tag_line(&line), "a longer line");
        }
    }

    #[test]
    fn the_room_bounds_content_but_never_the_tag_line() {
        let t = tag(b"EOF");
        // Room for an LF only: an empty line or the tag line.
        assert_eq!(t.allowed(true, 1), ByteSet::of(b"\nE"));
        assert_eq!(t.allowed(true, 0), ByteSet::of(b"E"));
        assert_eq!(t.allowed(false, 1), ByteSet::of(b"\n"));
        assert_eq!(t.allowed(false, 2), ByteSet::FULL);
        let mut full = tag(&[b'a'; MAX_TAG]);
        assert!(full.is_full());
        assert!(!full.push(b'a'));
    }
}
