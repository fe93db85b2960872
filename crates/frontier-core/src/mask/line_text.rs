//! Masks of line-text states from tables, not walks.
//!
//! A state inside free text (an apply_patch `+` line, a unified diff body line) allows almost
//! every token: a walk of the trie from it visits most of the trie's nodes, milliseconds with
//! a 200k vocabulary, and every new state met inside text pays that once. The recogniser law
//! of [`Recognizer::line_text`](crate::recognizer::Recognizer::line_text) says what such a
//! state does with a token `t`:
//!
//! - `t` has no LF: allowed exactly when it is viable text of the state's [`LineText`] kind,
//!   whatever else the state holds;
//! - `t = x LF y` with `x` whole and not empty: allowed exactly when the state takes
//!   `a LF y` (`a` stands for every whole text); with `x` empty, when it takes `LF y`;
//! - otherwise (`x` cut inside a character or invalid) never.
//!
//! So one table per vocabulary and kind answers it: the mask of viable LF-free tokens
//! (`inside`), and a small trie of the entries `a LF y` and `LF y` (`exits`) that the state
//! walks. The same holds one byte later: a line start that allows `+` and then text gets, per
//! such byte `b`, the mask of tokens `b x` (`after`) and a trie of the entries `b a LF y` and
//! `b LF y` (`exits_after`), walked from the line start. Both are built once per vocabulary
//! and kind, when a grammar whose recogniser declares the kind is compiled.

use crate::byteset::ByteSet;
use crate::recognizer::{InText, LineText, Recognizer};

use super::trie::TokenTrie;
use super::vocab::Vocabulary;

/// The tables of one [`LineText`] kind over one vocabulary (see the module docs).
#[derive(Clone, Debug)]
pub struct LineTextTable {
    mask_words: usize,
    /// Tokens with no LF that are viable text.
    inside: Vec<u32>,
    /// Row `after_row[b]` of `after_masks` (or none): tokens `b x`, `x` viable LF-free text.
    after_row: [u32; 256],
    after_masks: Vec<u32>,
    /// The exit entries of every token `x LF y` (see `exit_entry`).
    exits: TokenTrie,
    /// The exit entries of every token `b x LF y`, with `b` kept.
    exits_after: TokenTrie,
    /// Every token that holds an LF, as it is: what a state that does not forget walks.
    lf_tokens: TokenTrie,
    /// The union of the `after` rows.
    after_all: Vec<u32>,
}

/// `after_row` of a byte no token starts with.
const NO_ROW: u32 = u32::MAX;

/// The exit entry of a token `head text tail` (`tail` starts with the first LF after
/// `head`): `head tail` when the text is empty, `head a tail` when it is whole, none when it
/// is cut or invalid (never allowed). By the law of
/// [`line_text`](crate::recognizer::Recognizer::line_text) a whole nonempty text leads where
/// `a` does, so the entry is walked literally.
fn exit_entry(kind: LineText, head: &[u8], text: &[u8], tail: &[u8]) -> Option<Vec<u8>> {
    if !text.is_empty() && !kind.complete(text) {
        return None;
    }
    let mut entry = Vec::with_capacity(head.len() + 1 + tail.len());
    entry.extend_from_slice(head);
    if !text.is_empty() {
        entry.push(REPRESENTATIVE);
    }
    entry.extend_from_slice(tail);
    Some(entry)
}

/// The whole text that stands for every other in an exit entry.
const REPRESENTATIVE: u8 = b'a';

impl LineTextTable {
    /// The tables of `kind` over `vocab`'s normal tokens: one pass over the tokens.
    pub fn build(vocab: &Vocabulary, kind: LineText) -> LineTextTable {
        let words = vocab.mask_words();
        let mut inside = vec![0u32; words];
        let mut after_row = [NO_ROW; 256];
        let mut after_masks = Vec::new();
        let mut exits = Vec::new();
        let mut exits_after = Vec::new();
        let set = |mask: &mut [u32], id: u32| mask[id as usize >> 5] |= 1 << (id & 31);
        let mut lf_tokens = Vec::new();
        for (id, bytes) in vocab.normal_tokens() {
            match memchr::memchr(b'\n', bytes) {
                None if kind.viable(bytes) => set(&mut inside, id),
                Some(lf) => {
                    lf_tokens.push((id, bytes.to_vec()));
                    if let Some(entry) = exit_entry(kind, &[], &bytes[..lf], &bytes[lf..]) {
                        exits.push((id, entry));
                    }
                }
                None => {}
            }
            let Some((&first, rest)) = bytes.split_first() else {
                continue;
            };
            match memchr::memchr(b'\n', rest) {
                None if kind.viable(rest) => {
                    let row = &mut after_row[first as usize];
                    if *row == NO_ROW {
                        *row = (after_masks.len() / words.max(1)) as u32;
                        after_masks.resize(after_masks.len() + words, 0);
                    }
                    let start = *row as usize * words;
                    set(&mut after_masks[start..start + words], id);
                }
                Some(lf) => {
                    if let Some(entry) = exit_entry(kind, &[first], &rest[..lf], &rest[lf..]) {
                        exits_after.push((id, entry));
                    }
                }
                None => {}
            }
        }
        let mut after_all = vec![0u32; words];
        for row in after_masks.chunks(words.max(1)) {
            for (word, &bits) in after_all.iter_mut().zip(row) {
                *word |= bits;
            }
        }
        LineTextTable {
            mask_words: words,
            inside,
            after_row,
            after_masks,
            exits: TokenTrie::from_entries(&exits, words),
            exits_after: TokenTrie::from_entries(&exits_after, words),
            lf_tokens: TokenTrie::from_entries(&lf_tokens, words),
            after_all,
        }
    }

    /// Writes into `words` the mask of `state`, a state inside text of this table's kind
    /// (EOS aside).
    pub fn fill_inside<R: Recognizer>(
        &self,
        state: R,
        text: InText,
        stack: &mut Vec<R>,
        words: &mut [u32],
    ) {
        words.copy_from_slice(&self.inside);
        self.exit_trie(text, &self.exits).walk(state, stack, words);
    }

    /// The row of tokens `byte x`, `x` viable LF-free text (empty if there is none).
    fn after(&self, byte: u8) -> &[u32] {
        match self.after_row[byte as usize] {
            NO_ROW => &[],
            row => &self.after_masks[row as usize * self.mask_words..][..self.mask_words],
        }
    }

    /// Adds to `words` every token starting with `byte` that `state` takes, where `state`
    /// after `byte` is inside text of this table's kind. With `row` false the caller has
    /// already set the LF-free ones (see [`fill_after_all`](LineTextTable::fill_after_all)).
    pub fn add_after<R: Recognizer>(
        &self,
        state: R,
        byte: u8,
        text: InText,
        row: bool,
        stack: &mut Vec<R>,
        words: &mut [u32],
    ) {
        if row {
            for (word, &bits) in words.iter_mut().zip(self.after(byte)) {
                *word |= bits;
            }
        }
        self.exit_trie(text, &self.exits_after)
            .walk_first(state, byte, stack, words);
    }

    /// Writes into `words` the LF-free tokens `b x` of every byte `b` outside `others`: for a
    /// state where most bytes lead into text, one copy and a clear per other byte instead of
    /// an OR per byte.
    pub fn fill_after_all(&self, others: ByteSet, words: &mut [u32]) {
        words.copy_from_slice(&self.after_all);
        for byte in others.iter() {
            for (word, &bits) in words.iter_mut().zip(self.after(byte)) {
                *word &= !bits;
            }
        }
    }

    /// The trie a state walks for the tokens that hold an LF: the collapsed exit entries if
    /// its text is forgotten, else every such token as it is.
    fn exit_trie<'a>(&'a self, text: InText, collapsed: &'a TokenTrie) -> &'a TokenTrie {
        if text.forgets {
            collapsed
        } else {
            &self.lf_tokens
        }
    }

    /// The nodes of the two exit tries (`exits`, `exits_after`): what a mask from this table
    /// walks at most.
    pub fn exit_nodes(&self) -> (usize, usize) {
        (
            self.exits.node_count() - 1,
            self.exits_after.node_count() - 1,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab(tokens: &[&[u8]]) -> Vocabulary {
        let tokens: Vec<Vec<u8>> = tokens.iter().map(|t| t.to_vec()).collect();
        Vocabulary::from_raw(&tokens, &[], &[]).unwrap()
    }

    fn ids(mask: &[u32]) -> Vec<u32> {
        (0..mask.len() as u32 * 32)
            .filter(|&id| mask[id as usize >> 5] & (1 << (id & 31)) != 0)
            .collect()
    }

    #[test]
    fn tokens_are_sorted_by_where_their_first_lf_is() {
        // 0 "ab", 1 "a\nb", 2 "\xc3" (a cut character), 3 "\xc3\n", 4 "+x", 5 "+\n-", 6 "\xff".
        let v = vocab(&[b"ab", b"a\nb", b"\xc3", b"\xc3\n", b"+x", b"+\n-", b"\xff"]);
        let utf8 = LineTextTable::build(&v, LineText::Utf8);
        assert_eq!(ids(&utf8.inside), [0, 2, 4]);
        // exits: "a\nb" and "+\n-" as "a\n-" (4 nodes); exits_after: "a\nb", "\xc3\n",
        // "+\n-" (8 nodes).
        assert_eq!(utf8.exit_nodes(), (4, 8));
        let bytes = LineTextTable::build(&v, LineText::Bytes);
        assert_eq!(ids(&bytes.inside), [0, 2, 4, 6]);
        assert_eq!(ids(bytes.after(b'+')), [4]);
        assert_eq!(ids(&bytes.after_all), [0, 2, 4, 6]); // the rest of each is viable
        assert!(bytes.after(b'z').is_empty());
    }
}
