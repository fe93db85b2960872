//! The LF positions of a pushed chunk, found 64 bytes at a time, for the parser's loop over
//! hunk body lines.
//!
//! Diff lines are short (about 36 bytes in a `git log -p`), so a per-line LF search costs a
//! call, a setup and, at its end, a branch whose outcome depends on the line's length: the
//! processor mispredicts it about once a line. Here the LFs of a whole window are turned into
//! a bit mask per 64-byte block (SSE2 compares through `safe_arch` on x86-64, a word-wide
//! zero-byte test elsewhere) and the set bits are written out as positions without a branch
//! per LF, so the line loop reads the next line's end from an array. The window advances on
//! demand, a KiB at a time, and never scans a byte twice within one chunk.

/// Bytes scanned per refill.
const WINDOW: usize = 1024;

/// The LF positions of one chunk, scanned lazily from the front.
#[derive(Clone, Debug, Default)]
pub(crate) struct LfIndex {
    /// Positions (offsets in the chunk) of the LFs found in the last window; `len` are valid.
    pos: Vec<u32>,
    len: usize,
    /// The next position not yet handed out.
    next: usize,
    /// Bytes of the chunk scanned so far.
    scanned: usize,
}

impl LfIndex {
    /// Forgets the previous chunk.
    #[inline]
    pub(crate) fn reset(&mut self) {
        self.len = 0;
        self.next = 0;
        self.scanned = 0;
    }

    /// The first LF of `chunk` at or after `at`. `chunk` must be the same slice for all calls
    /// between two [`reset`](Self::reset)s, and `at` must not decrease.
    #[inline]
    pub(crate) fn next_lf(&mut self, chunk: &[u8], at: usize) -> Option<usize> {
        loop {
            while let Some(&p) = self.pos[..self.len].get(self.next) {
                let p = p as usize;
                if p >= at {
                    return Some(p);
                }
                self.next += 1;
            }
            if !self.refill(chunk, at) {
                return None;
            }
        }
    }

    /// Hands out the position returned by the last [`next_lf`](Self::next_lf).
    #[inline]
    pub(crate) fn take(&mut self) {
        self.next += 1;
    }

    /// Scans the next window from `at` (or where the last scan stopped, if further); false
    /// when the chunk is exhausted.
    #[cold]
    fn refill(&mut self, chunk: &[u8], at: usize) -> bool {
        let from = self.scanned.max(at);
        if from >= chunk.len() {
            return false;
        }
        let to = chunk.len().min(from + WINDOW);
        if self.pos.len() < WINDOW + 8 {
            self.pos.resize(WINDOW + 8, 0);
        }
        self.len = 0;
        self.next = 0;
        let mut block_at = from;
        while block_at < to {
            let end = to.min(block_at + 64);
            let mask = lf_mask(&chunk[block_at..end]);
            self.flatten(mask, block_at as u32);
            block_at = end;
        }
        self.scanned = to;
        true
    }

    /// Appends the positions of the set bits of `mask`, offset by `base`: three are written
    /// unconditionally (the usual block holds fewer LFs) and counted by whether a bit was
    /// left for them (no population count instruction on baseline x86-64), more only when
    /// there are more.
    #[inline]
    fn flatten(&mut self, mut mask: u64, base: u32) {
        let mut count = 0;
        let out = &mut self.pos[self.len..self.len + 3];
        for slot in out {
            *slot = base + mask.trailing_zeros();
            count += (mask != 0) as usize;
            mask &= mask.wrapping_sub(1);
        }
        while mask != 0 {
            self.pos[self.len + count] = base + mask.trailing_zeros();
            mask &= mask.wrapping_sub(1);
            count += 1;
        }
        self.len += count;
    }
}

/// Bit `i` set when `block[i]` is an LF; `block` holds at most 64 bytes.
#[inline]
fn lf_mask(block: &[u8]) -> u64 {
    match block.try_into() {
        Ok(full) => lf_mask_64(full),
        Err(_) => lf_mask_tail(block),
    }
}

/// [`lf_mask`] of a block shorter than 64 bytes (the end of a window or chunk).
#[cold]
fn lf_mask_tail(block: &[u8]) -> u64 {
    let mut full = [0u8; 64];
    full[..block.len()].copy_from_slice(block);
    lf_mask_64(&full)
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline]
fn lf_mask_64(block: &[u8; 64]) -> u64 {
    use safe_arch::{cmp_eq_mask_i8_m128i, load_unaligned_m128i, move_mask_i8_m128i};
    let lf = safe_arch::set_splat_i8_m128i(b'\n' as i8);
    let mut mask = 0u64;
    for (i, lane) in block.chunks_exact(16).enumerate() {
        let lane: &[u8; 16] = lane.try_into().unwrap_or(&[0; 16]);
        let eq = cmp_eq_mask_i8_m128i(load_unaligned_m128i(lane), lf);
        mask |= (move_mask_i8_m128i(eq) as u32 as u64 & 0xffff) << (16 * i);
    }
    mask
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[inline]
fn lf_mask_64(block: &[u8; 64]) -> u64 {
    const LOWS: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const LFS: u64 = 0x0a0a_0a0a_0a0a_0a0a;
    let mut mask = 0u64;
    for (i, word) in block.chunks_exact(8).enumerate() {
        let w = u64::from_le_bytes(word.try_into().unwrap_or([0; 8])) ^ LFS;
        // High bit of each byte set exactly when the byte is zero (no carries across bytes).
        let zero = !(((w & LOWS) + LOWS) | w) & !LOWS;
        // Gather the eight high bits into one byte.
        let bits = ((zero >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56;
        mask |= bits << (8 * i);
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_lf_in_order() {
        let mut text = Vec::new();
        for i in 0..3000usize {
            text.extend(std::iter::repeat_n(b'x', i % 7 * (i % 13)));
            text.push(b'\n');
            if i % 100 == 0 {
                text.extend_from_slice(&[b'\n'; 70]);
            }
        }
        text.extend_from_slice(b"tail");
        let expected: Vec<usize> = (0..text.len()).filter(|&i| text[i] == b'\n').collect();
        for start in [0, 1, 63, 64, 1000] {
            let mut index = LfIndex::default();
            index.reset();
            let mut found = Vec::new();
            let mut at = start;
            while let Some(p) = index.next_lf(&text, at) {
                found.push(p);
                index.take();
                at = p + 1;
            }
            let want: Vec<usize> = expected.iter().copied().filter(|&p| p >= start).collect();
            assert_eq!(found, want);
        }
    }

    #[test]
    fn mask_marks_exactly_the_lfs() {
        let mut block = [b'a'; 64];
        for i in [0, 7, 8, 31, 32, 63] {
            block[i] = b'\n';
        }
        block[5] = 0x8a;
        block[9] = 0x0b;
        let want = (1u64 << 0) | 1 << 7 | 1 << 8 | 1 << 31 | 1 << 32 | 1 << 63;
        assert_eq!(lf_mask_64(&block), want);
        assert_eq!(lf_mask(&block[..8]), 1 | 1 << 7);
    }
}
