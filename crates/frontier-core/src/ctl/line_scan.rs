//! Where a header line's token characters stop, and where the lines of a short heredoc run
//! begin, 16 bytes at a time.
//!
//! A `call` or `arg` line is a keyword, a token, SP, a token, LF. So the first two bytes after
//! the keyword that are not token characters must be that SP and that LF, and the line is
//! checked by finding those two ([`separators`]) instead of walking each token to its end, a
//! byte and a branch at a time. The bytes are classified 16 at a time with SSE2 compares
//! (through `safe_arch`) on x86-64 and with the byte table elsewhere. Lines of up to 64 bytes
//! are scanned; a longer one is left to the machine's byte-by-byte path. (callgrind, the
//! header-heavy benchmark fed whole: per-token loops 406 instructions a call; token and LF
//! masks 391; the two separators found in the token mask alone 350.)
//!
//! A heredoc run of up to 64 bytes (a stream's chunk) is classified the same way: the LFs
//! followed by the tag's first byte ([`lines_starting_with`]) are the only places its tag line
//! can begin, and most chunks have none (`docs/performance.md`, "Extended CTL").

/// The longest line (LF included) scanned; longer lines are stepped.
pub(super) const SCANNED: usize = 64;

/// The offsets of the first two bytes at or after `from` that are not token characters, if
/// both are among the first `limit` bytes of `bytes` (and the first [`SCANNED`]). `from` is a
/// keyword's length, less than 16.
#[inline]
pub(super) fn separators(bytes: &[u8], from: usize, limit: usize) -> Option<(usize, usize)> {
    let limit = limit.min(bytes.len()).min(SCANNED);
    let mut odd = 0u64;
    let mut start = 0;
    while start < limit {
        odd |= (!token_mask(&lane_at(bytes, start)) as u64 & 0xffff) << start;
        let after = odd & (u64::MAX << from);
        let second = after & after.wrapping_sub(1);
        if second != 0 {
            let second_at = second.trailing_zeros() as usize;
            return (second_at < limit).then_some((after.trailing_zeros() as usize, second_at));
        }
        start += 16;
    }
    None
}

/// Bit `i` set when `bytes[i]` is an LF and `bytes[i + 1]` is `first`, for the first
/// [`SCANNED`] bytes of `bytes`: the lines of a short run of a heredoc body that begin with the
/// tag's first byte, found without a search's setup (a stream's chunks are a few bytes to a
/// few dozen). `first` is not zero, the padding past the end of `bytes`.
#[inline]
pub(super) fn lines_starting_with(bytes: &[u8], first: u8) -> u64 {
    let scanned = &bytes[..bytes.len().min(SCANNED)];
    let (mut lfs, mut firsts) = (0u64, 0u64);
    let mut mark = |lane: &[u8; 16], start: usize| {
        lfs |= (eq_lane_mask(lane, b'\n') as u64) << start;
        firsts |= (eq_lane_mask(lane, first) as u64) << start;
    };
    if let Ok(block) = <&[u8; SCANNED]>::try_from(scanned) {
        // A whole block (a 64-byte chunk): four lanes at fixed offsets, unrolled.
        for lane in 0..SCANNED / 16 {
            let start = lane * 16;
            mark(
                block[start..start + 16].try_into().unwrap_or(&[0; 16]),
                start,
            );
        }
    } else {
        // Whole lanes compared in place; the few bytes after them (all of a token-sized chunk)
        // one by one, which costs less than padding them into a lane.
        let mut lanes = scanned.chunks_exact(16);
        for (i, lane) in (&mut lanes).enumerate() {
            mark(lane.try_into().unwrap_or(&[0; 16]), i * 16);
        }
        let start = scanned.len() - lanes.remainder().len();
        for (i, &byte) in lanes.remainder().iter().enumerate() {
            lfs |= ((byte == b'\n') as u64) << (start + i);
            firsts |= ((byte == first) as u64) << (start + i);
        }
    }
    lfs & firsts >> 1
}

/// Whether some line of `bytes` (its first [`SCANNED`] bytes) that begins after one of its
/// LFs begins with `first`: [`lines_starting_with`] is not zero, for a chunk that must be
/// classified but not searched (most chunks of a heredoc body). From 17 bytes on, each lane
/// of LFs is compared with the lane one byte on for `first`, so a chunk is four fixed
/// overlapping lanes and one mask, with no shifts and no bytes one by one.
#[inline]
pub(super) fn has_line_starting_with(bytes: &[u8], first: u8) -> bool {
    let scanned = &bytes[..bytes.len().min(SCANNED)];
    if scanned.len() <= 16 {
        return lines_starting_with(scanned, first) != 0;
    }
    // An LF at `i` and `first` at `i + 1`, for `i` in `0..len - 1`: lanes of 17 bytes from
    // 0, 16, 32 and 48, the later ones moved back to end at the chunk's last byte.
    let last = scanned.len() - 17;
    let lane = |k: usize| -> &[u8; 17] {
        let start = (16 * k).min(last);
        scanned[start..start + 17].try_into().unwrap_or(&[0; 17])
    };
    lf_then_byte(lane(0), first)
        | lf_then_byte(lane(1), first)
        | lf_then_byte(lane(2), first)
        | lf_then_byte(lane(3), first)
        != 0
}

/// Bit `i` set when `lane[i]` is an LF and `lane[i + 1]` is `byte`: the lane's LFs and the
/// lane one byte on's `byte`s.
#[inline]
fn lf_then_byte(lane: &[u8; 17], byte: u8) -> u16 {
    let (lfs, next) = (lane[..16].try_into(), lane[1..].try_into());
    eq_lane_mask(lfs.unwrap_or(&[0; 16]), b'\n') & eq_lane_mask(next.unwrap_or(&[0; 16]), byte)
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

/// Bit `i` set when `lane[i]` is a token character.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline]
fn token_mask(lane: &[u8; 16]) -> u16 {
    use safe_arch::{
        add_i8_m128i, cmp_eq_mask_i8_m128i, cmp_lt_mask_i8_m128i, load_unaligned_m128i, m128i,
        move_mask_i8_m128i, set_splat_i8_m128i,
    };
    // `lo <= b < lo + n` as one signed compare: shift the range to start at -128.
    let within = |bytes: m128i, lo: u8, n: u8| {
        let shifted = add_i8_m128i(bytes, set_splat_i8_m128i(0x80u8.wrapping_sub(lo) as i8));
        cmp_lt_mask_i8_m128i(shifted, set_splat_i8_m128i((n as i8).wrapping_sub(-128)))
    };
    let bytes = load_unaligned_m128i(lane);
    // `-` `.` and `0`..`9` `:` are two runs; ALPHA folds to lower case by setting bit 5.
    let token = within(bytes, b'-', 2)
        | within(bytes, b'0', 11)
        | within(bytes | set_splat_i8_m128i(0x20), b'a', 26)
        | cmp_eq_mask_i8_m128i(bytes, set_splat_i8_m128i(b'_' as i8));
    move_mask_i8_m128i(token) as u16
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[inline]
fn token_mask(lane: &[u8; 16]) -> u16 {
    token_mask_portable(lane)
}

/// Bit `i` set when `lane[i]` is `byte`.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline]
fn eq_lane_mask(lane: &[u8; 16], byte: u8) -> u16 {
    use safe_arch::{
        cmp_eq_mask_i8_m128i, load_unaligned_m128i, move_mask_i8_m128i, set_splat_i8_m128i,
    };
    let eq = cmp_eq_mask_i8_m128i(load_unaligned_m128i(lane), set_splat_i8_m128i(byte as i8));
    move_mask_i8_m128i(eq) as u16
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[inline]
fn eq_lane_mask(lane: &[u8; 16], byte: u8) -> u16 {
    eq_lane_mask_portable(lane, byte)
}

/// [`eq_lane_mask`] a byte at a time: other targets, and the SSE2 version's reference.
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
fn eq_lane_mask_portable(lane: &[u8; 16], byte: u8) -> u16 {
    lane.iter()
        .enumerate()
        .fold(0, |mask, (i, &b)| mask | ((b == byte) as u16) << i)
}

/// [`token_mask`] from the byte table: what other targets use, and what the SSE2 version is
/// tested against.
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
fn token_mask_portable(lane: &[u8; 16]) -> u16 {
    lane.iter().enumerate().fold(0, |mask, (i, &b)| {
        mask | (super::TOKEN_CHARS.contains(b) as u16) << i
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ctl::TOKEN_CHARS;

    #[test]
    fn every_byte_is_classified_as_the_grammar_says() {
        for base in (0..256).step_by(16) {
            let lane: [u8; 16] = std::array::from_fn(|i| (base + i) as u8);
            let mask = token_mask(&lane);
            assert_eq!(mask, token_mask_portable(&lane));
            for (i, &b) in lane.iter().enumerate() {
                assert_eq!(mask >> i & 1 == 1, TOKEN_CHARS.contains(b), "{b:#x}");
            }
        }
    }

    #[test]
    fn line_starts_are_the_lfs_followed_by_the_byte() {
        for base in (0..256).step_by(16) {
            let lane: [u8; 16] = std::array::from_fn(|i| (base + i) as u8);
            for byte in [b'\n', b'E', base as u8] {
                assert_eq!(
                    eq_lane_mask(&lane, byte),
                    eq_lane_mask_portable(&lane, byte)
                );
            }
        }
        let mut bytes = vec![b'x'; 80];
        for at in [0, 14, 40, 61, 70] {
            bytes[at] = b'\n';
            bytes[at + 1] = b'E';
        }
        bytes[20] = b'\n'; // followed by `x`
        bytes[30] = b'E'; // after `x`
        bytes[50] = b'\n'; // followed by LF
        bytes[51] = b'\n';
        bytes[63] = b'\n'; // followed by `E` past the 64 bytes scanned
        bytes[64] = b'E';
        let expected = 1 | 1 << 14 | 1 << 40 | 1 << 61;
        assert_eq!(lines_starting_with(&bytes, b'E'), expected);
        assert_eq!(
            lines_starting_with(&bytes[..41], b'E'),
            1 | 1 << 14,
            "E cut off"
        );
        assert_eq!(
            lines_starting_with(&bytes[..42], b'E'),
            1 | 1 << 14 | 1 << 40
        );
        assert_eq!(lines_starting_with(b"", b'E'), 0);
    }

    #[test]
    fn a_line_starting_with_the_byte_is_found_in_every_length_and_place() {
        let lane: [u8; 17] = std::array::from_fn(|i| [b'\n', b'E', b'x'][i % 3]);
        assert_eq!(lf_then_byte(&lane, b'E'), 0b1001001001001001);
        for len in 0..=SCANNED + 8 {
            let mut bytes = vec![b'x'; len];
            assert!(!has_line_starting_with(&bytes, b'E'), "{len}: none");
            // Each pair an LF then `E` can occupy, and the near misses around it.
            for at in 0..len.saturating_sub(1) {
                bytes[at] = b'\n';
                bytes[at + 1] = b'E';
                let expected = lines_starting_with(&bytes, b'E') != 0;
                assert_eq!(expected, at + 1 < SCANNED, "{len} {at}");
                assert_eq!(has_line_starting_with(&bytes, b'E'), expected, "{len} {at}");
                bytes[at + 1] = b'\n';
                assert!(!has_line_starting_with(&bytes, b'E'), "{len} {at}: LF LF");
                bytes[at] = b'E';
                assert!(!has_line_starting_with(&bytes, b'E'), "{len} {at}: E LF");
                bytes[at] = b'x';
                bytes[at + 1] = b'x';
            }
        }
    }

    #[test]
    fn separators_are_the_first_two_bytes_outside_tokens() {
        let line = b"call c1 read_file\nend\n";
        assert_eq!(separators(line, 5, 256), Some((7, 17)));
        assert_eq!(separators(line, 5, 18), Some((7, 17)));
        assert_eq!(separators(line, 5, 17), None);
        assert_eq!(separators(&line[..17], 5, 256), None);
        assert_eq!(
            separators(b"arg k 12345678901234567890123\n", 4, 256),
            Some((5, 29))
        );
        assert_eq!(separators(b"call a b c\n", 5, 256), Some((6, 8)));
        assert_eq!(separators(&[b'a'; 80], 5, 256), None);
    }
}
