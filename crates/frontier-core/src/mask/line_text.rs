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
//! - `t = x LF y` with `x` whole text: allowed exactly when the state takes `LF y`;
//! - otherwise (`x` cut inside a character or invalid) never.
//!
//! So one table per vocabulary and kind answers it: the mask of viable LF-free tokens
//! (`inside`), and a small trie of the `LF y` suffixes (`exits`) that the state walks. The
//! same holds one byte later: a line start that allows `+` and then text gets, per such byte
//! `b`, the mask of tokens `b x` (`after`) and a trie of the entries `b LF y`
//! (`exits_after`), walked from the line start. Both are built once per vocabulary and kind,
//! when a grammar whose recogniser declares the kind is compiled.

use crate::recognizer::{LineText, Recognizer};

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
    /// `LF y` for every token `x LF y` whose `x` is whole text.
    exits: TokenTrie,
    /// `b LF y` for every token `b x LF y` whose `x` is whole text.
    exits_after: TokenTrie,
}

/// `after_row` of a byte no token starts with.
const NO_ROW: u32 = u32::MAX;

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
        for (id, bytes) in vocab.normal_tokens() {
            match memchr::memchr(b'\n', bytes) {
                None if kind.viable(bytes) => set(&mut inside, id),
                None => {}
                Some(lf) if kind.complete(&bytes[..lf]) => exits.push((id, bytes[lf..].to_vec())),
                Some(_) => {}
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
                None => {}
                Some(lf) if kind.complete(&rest[..lf]) => {
                    let mut entry = Vec::with_capacity(rest.len() + 1 - lf);
                    entry.push(first);
                    entry.extend_from_slice(&rest[lf..]);
                    exits_after.push((id, entry));
                }
                Some(_) => {}
            }
        }
        LineTextTable {
            mask_words: words,
            inside,
            after_row,
            after_masks,
            exits: TokenTrie::from_entries(&exits, words),
            exits_after: TokenTrie::from_entries(&exits_after, words),
        }
    }

    /// Writes into `words` the mask of `state`, a state whose
    /// [`line_text`](Recognizer::line_text) is this table's kind (EOS aside).
    pub fn fill_inside<R: Recognizer>(&self, state: R, stack: &mut Vec<R>, words: &mut [u32]) {
        words.copy_from_slice(&self.inside);
        self.exits.walk(state, stack, words);
    }

    /// Adds to `words` every token starting with `byte` that `state` takes, where `state`
    /// after `byte` is a state of this table's kind.
    pub fn add_after<R: Recognizer>(
        &self,
        state: R,
        byte: u8,
        stack: &mut Vec<R>,
        words: &mut [u32],
    ) {
        let row = self.after_row[byte as usize];
        if row != NO_ROW {
            let start = row as usize * self.mask_words;
            let mask = &self.after_masks[start..start + self.mask_words];
            for (word, &bits) in words.iter_mut().zip(mask) {
                *word |= bits;
            }
        }
        self.exits_after.walk_first(state, byte, stack, words);
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
        // exits: "\nb", "\n-" (3 nodes); exits_after: "a\nb", "\xc3\n", "+\n-" (8 nodes).
        assert_eq!(utf8.exit_nodes(), (3, 8));
        let bytes = LineTextTable::build(&v, LineText::Bytes);
        assert_eq!(ids(&bytes.inside), [0, 2, 4, 6]);
        let row = bytes.after_row[b'+' as usize] as usize * bytes.mask_words;
        assert_eq!(ids(&bytes.after_masks[row..row + bytes.mask_words]), [4]);
    }
}
