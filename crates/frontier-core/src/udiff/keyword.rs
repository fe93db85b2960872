//! The words a line may start with, and a tiny multi-keyword matcher.
//!
//! At a line start the recogniser does not know yet which construct the line is: `diff --git `,
//! `deleted file mode ` and `dissimilarity index ` share their first byte, and in `git` mode a
//! line that matches none of them is garbage. The candidates still possible are a bit set over
//! the table below; each byte filters it, and the next-allowed set is the union of the next
//! byte of every candidate. No keyword is a prefix of another one that can be a candidate in
//! the same place, so a keyword that is fully matched acts at once.

use crate::byteset::ByteSet;

/// `diff --git `
pub const DIFF_GIT: u8 = 0;
/// `--- `
pub const MINUS: u8 = 1;
/// `old mode `
pub const OLD_MODE: u8 = 2;
/// `new mode `
pub const NEW_MODE: u8 = 3;
/// `deleted file mode `
pub const DELETED: u8 = 4;
/// `new file mode `
pub const NEW_FILE: u8 = 5;
/// `copy from `
pub const COPY_FROM: u8 = 6;
/// `copy to `
pub const COPY_TO: u8 = 7;
/// `rename from `
pub const RENAME_FROM: u8 = 8;
/// `rename to `
pub const RENAME_TO: u8 = 9;
/// `similarity index `
pub const SIMILARITY: u8 = 10;
/// `dissimilarity index `
pub const DISSIMILARITY: u8 = 11;
/// `index `
pub const INDEX: u8 = 12;
/// `+++ `
pub const PLUS: u8 = 13;
/// `@@ -`: a hunk header in `strict` and `git` mode (and an orphan outside a file patch).
pub const ATAT_DASH: u8 = 14;
/// `@@`: a hunk header in `recount` mode, whose ranges may be missing.
pub const ATAT: u8 = 15;
/// `Binary files `
pub const BINARY_FILES: u8 = 16;
/// `GIT binary patch` and its LF.
pub const GIT_BINARY: u8 = 17;
/// `literal `
pub const LITERAL: u8 = 18;
/// `delta `
pub const DELTA: u8 = 19;
/// `-- ` and its LF: the signature separator `git format-patch` writes after the last hunk
/// of a mail (RFC 3676), garbage after a completed hunk in `git` mode.
pub const SIGNATURE: u8 = 20;

/// The text of each keyword, indexed by its id.
pub const TEXT: [&[u8]; 21] = [
    b"diff --git ",
    b"--- ",
    b"old mode ",
    b"new mode ",
    b"deleted file mode ",
    b"new file mode ",
    b"copy from ",
    b"copy to ",
    b"rename from ",
    b"rename to ",
    b"similarity index ",
    b"dissimilarity index ",
    b"index ",
    b"+++ ",
    b"@@ -",
    b"@@",
    b"Binary files ",
    b"GIT binary patch\n",
    b"literal ",
    b"delta ",
    b"-- \n",
];

/// The longest keyword.
pub const MAX_LEN: usize = 20;

/// A set of keyword ids.
pub type KwSet = u32;

/// The set holding keyword `k`.
pub const fn bit(k: u8) -> KwSet {
    1 << k
}

/// The extended header lines of `diff --git` (each may appear once per file patch).
pub const EXTENDED: KwSet = bit(OLD_MODE)
    | bit(NEW_MODE)
    | bit(DELETED)
    | bit(NEW_FILE)
    | bit(COPY_FROM)
    | bit(COPY_TO)
    | bit(RENAME_FROM)
    | bit(RENAME_TO)
    | bit(SIMILARITY)
    | bit(DISSIMILARITY)
    | bit(INDEX);

/// The extended header lines that change a file by themselves (its mode, its creation or
/// deletion, a rename or a copy): a file patch holding one needs no hunk, as in `git apply`,
/// which refuses a hunkless file patch without them as "only garbage".
pub const METADATA: KwSet = bit(OLD_MODE)
    | bit(NEW_MODE)
    | bit(DELETED)
    | bit(NEW_FILE)
    | bit(COPY_FROM)
    | bit(COPY_TO)
    | bit(RENAME_FROM)
    | bit(RENAME_TO);

/// `FIRST[b]`: the keywords whose first byte is `b`, so that a line's first byte filters the
/// candidates with one AND however many there are.
const FIRST: [KwSet; 256] = {
    let mut table = [0; 256];
    let mut k = 0;
    while k < TEXT.len() {
        table[TEXT[k][0] as usize] |= 1 << k;
        k += 1;
    }
    table
};

/// The candidates of `cands` whose byte at `matched` is `byte`.
#[inline]
pub fn filter(cands: KwSet, matched: u8, byte: u8) -> KwSet {
    if matched == 0 {
        return cands & FIRST[byte as usize];
    }
    let mut rest = cands;
    let mut out = 0;
    while rest != 0 {
        let k = rest.trailing_zeros() as u8;
        rest &= rest - 1;
        if TEXT[k as usize].get(matched as usize) == Some(&byte) {
            out |= bit(k);
        }
    }
    out
}

/// The bytes that continue some candidate after `matched` bytes.
pub fn next_bytes(cands: KwSet, matched: u8) -> ByteSet {
    let mut rest = cands;
    let mut out = ByteSet::EMPTY;
    while rest != 0 {
        let k = rest.trailing_zeros() as u8;
        rest &= rest - 1;
        if let Some(&b) = TEXT[k as usize].get(matched as usize) {
            out = out.with(b);
        }
    }
    out
}

/// The candidate fully matched by `matched` bytes, if any.
#[inline]
pub fn complete(cands: KwSet, matched: u8) -> Option<u8> {
    let mut rest = cands;
    while rest != 0 {
        let k = rest.trailing_zeros() as u8;
        rest &= rest - 1;
        if TEXT[k as usize].len() == matched as usize {
            return Some(k);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_keyword_is_a_prefix_of_another_except_the_two_hunk_starts() {
        for (i, a) in TEXT.iter().enumerate() {
            for (j, b) in TEXT.iter().enumerate() {
                if i != j && b.starts_with(a) {
                    // `@@` and `@@ -` never are candidates together (recount vs the others).
                    assert_eq!((i as u8, j as u8), (ATAT, ATAT_DASH));
                }
            }
        }
        assert_eq!(TEXT.iter().map(|t| t.len()).max(), Some(MAX_LEN));
    }

    #[test]
    fn filtering() {
        let set = bit(DIFF_GIT) | bit(DELETED) | bit(DISSIMILARITY) | bit(DELTA);
        assert_eq!(filter(set, 0, b'd'), set);
        assert_eq!(filter(set, 1, b'i'), bit(DIFF_GIT) | bit(DISSIMILARITY));
        assert_eq!(next_bytes(set, 1), ByteSet::of(b"ie"));
        assert_eq!(complete(bit(ATAT), 2), Some(ATAT));
    }
}
