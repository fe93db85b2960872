//! Masks of run states from tables, not walks.
//!
//! A state inside a run of a byte class (free text up to its LF: an apply_patch `+` line, a
//! unified diff body line; a CTL id, name or key up to its SP or LF) allows almost every
//! token made of that class: a walk of the trie from it visits most of the trie's nodes,
//! milliseconds with a 200k vocabulary, and every new state met inside a run pays that once.
//! The recogniser law of [`Recognizer::line_text`]
//! says what such a state does with a token `t`:
//!
//! - `t` is made of the class: allowed exactly when it is viable for the state's
//!   [`LineText`] kind, whatever else the state holds;
//! - `t = x e y` with `x` a whole nonempty run and `e` the first byte outside the class:
//!   allowed exactly when the state takes `a e y` (`a` stands for every whole run);
//! - `t = e y`, the run empty: what the state does with its byte `e`, answered first byte by
//!   first byte by the caller (the matcher), where `e` may lead into another run;
//! - otherwise (`x` cut inside a character or invalid) never.
//!
//! So one table per vocabulary and kind answers it: the mask of viable tokens of the class
//! (`inside`), and a small trie of the entries `a e y` (`exits`) that the state walks. The
//! same holds one byte earlier: a state whose byte `b` leads into a run (a line start that
//! allows `+` and then text, `call` and then SP and an id) gets, per such byte, the mask of
//! tokens `b x` (`after`) and a trie of the entries `b a e y` and (for a kind whose only
//! exit byte is LF) `b e y` (`exits_after`), walked from the state before `b`. Both are built once per vocabulary and kind, when a
//! grammar whose recogniser declares the kind is compiled.

use crate::byteset::ByteSet;
use crate::recognizer::{LineText, Recognizer};

use super::trie::TokenTrie;
use super::vocab::Vocabulary;

/// The tables of one [`LineText`] kind over one vocabulary (see the module docs).
#[derive(Clone, Debug)]
pub struct LineTextTable {
    mask_words: usize,
    kind: LineText,
    /// Tokens of the class that are viable.
    inside: Vec<u32>,
    /// Row `after_row[b]` of `after_masks` (or none): tokens `b x`, `x` viable.
    after_row: [u32; 256],
    after_masks: Vec<u32>,
    /// The exit entries of every token `x e y`, `x` not empty (see `exit_entry`).
    exits: TokenTrie,
    /// The ids of `exits` by their token's first byte `b`:
    /// `exit_ids[exit_ids_start[b] .. exit_ids_start[b + 1]]`.
    exit_ids_start: Vec<u32>,
    exit_ids: Vec<u32>,
    /// The exit entries of every token `b x e y`, with `b` kept.
    exits_after: TokenTrie,
    /// The union of the `after` rows.
    after_all: Vec<u32>,
    /// Row `prefix_rows[i].1` of `prefix_masks` for the two-byte prefix `prefix_rows[i].0`
    /// (sorted) that at least [`PREFIX_ROW_MIN`] tokens start with: the tokens `b c x`, `x`
    /// viable. With `prefixed_exits` (every such token whose `x` holds a byte outside the
    /// class, as it is) they answer the tokens under `b c` when the state after them is in a
    /// run (see [`add_prefix`](LineTextTable::add_prefix)).
    prefix_rows: Vec<([u8; 2], u32)>,
    prefix_masks: Vec<u32>,
    prefixed_exits: TokenTrie,
    /// The tokens of `inside` longer than [`KEPT_ROOM_MIN`], longest first, with their
    /// lengths: what a kept run with less room than the longest takes out of `inside`.
    long_inside: Vec<(u32, u32)>,
    /// The tokens `x e y` (`x` a nonempty run, `e` the first byte outside the class) as they
    /// are, one trie per `e`: what a kept run walks for each exit byte it takes.
    kept_exits: Vec<(u8, TokenTrie)>,
}

/// The least room a kept run needs for its mask to come from the tables (see
/// [`LineTextTable::fill_kept`]); with less, the state is walked. Only the tokens longer
/// than it are listed apart.
pub const KEPT_ROOM_MIN: u32 = 16;

/// `after_row` of a byte no token starts with.
const NO_ROW: u32 = u32::MAX;

/// The exit entry of a token `head text tail` (`tail` starts with the first byte outside the
/// class after `head`): `head tail` when the text is empty, `head a tail` when it is whole,
/// none when it is cut or invalid (never allowed). By the law of
/// [`line_text`](crate::recognizer::Recognizer::line_text) a whole nonempty run leads where
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

/// The fewest tokens a two-byte prefix needs to get a row of its own (below it, the tokens
/// under the prefix are walked: a few hundred nodes at most, about the cost of one row).
pub const PREFIX_ROW_MIN: usize = 192;

/// The rows of the two-byte prefixes that at least [`PREFIX_ROW_MIN`] tokens start with, and
/// the trie of their tokens that leave the run (see `LineTextTable::prefix_rows`).
struct PrefixTables {
    rows: Vec<([u8; 2], u32)>,
    masks: Vec<u32>,
    exits: TokenTrie,
}

/// The [`PrefixTables`] of `kind` over `vocab`.
fn prefix_tables(vocab: &Vocabulary, kind: LineText) -> PrefixTables {
    let words = vocab.mask_words();
    let mut counts = vec![0u32; 1 << 16];
    for (_, bytes) in vocab.normal_tokens() {
        if let [b, c, ..] = *bytes {
            counts[(b as usize) << 8 | c as usize] += 1;
        }
    }
    let prefix_rows: Vec<([u8; 2], u32)> = (0..1usize << 16)
        .filter(|&p| counts[p] as usize >= PREFIX_ROW_MIN)
        .enumerate()
        .map(|(row, p)| ([(p >> 8) as u8, p as u8], row as u32))
        .collect();
    let mut prefix_masks = vec![0u32; prefix_rows.len() * words];
    let mut leaving = Vec::new();
    for (id, bytes) in vocab.normal_tokens() {
        let [b, c, ref rest @ ..] = *bytes else {
            continue;
        };
        let Ok(at) = prefix_rows.binary_search_by(|(p, _)| p.cmp(&[b, c])) else {
            continue;
        };
        if kind.viable(rest) {
            let row = prefix_rows[at].1 as usize * words;
            prefix_masks[row + (id as usize >> 5)] |= 1 << (id & 31);
        } else if kind.run_len(rest).is_some() {
            leaving.push((id, bytes.to_vec()));
        }
    }
    PrefixTables {
        rows: prefix_rows,
        masks: prefix_masks,
        exits: TokenTrie::from_entries(&leaving, words),
    }
}

/// The whole run that stands for every other in an exit entry (in every kind's class).
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
        let mut long_inside = Vec::new();
        let mut kept_exits: Vec<(u8, u32, Vec<u8>)> = Vec::new();
        let set = |mask: &mut [u32], id: u32| mask[id as usize >> 5] |= 1 << (id & 31);
        for (id, bytes) in vocab.normal_tokens() {
            match kind.run_len(bytes) {
                None if kind.viable(bytes) => {
                    set(&mut inside, id);
                    if bytes.len() > KEPT_ROOM_MIN as usize {
                        long_inside.push((bytes.len() as u32, id));
                    }
                }
                // An empty run is the caller's, first byte by first byte.
                Some(end) if end > 0 => {
                    if let Some(entry) = exit_entry(kind, &[], &bytes[..end], &bytes[end..]) {
                        exits.push((id, entry));
                    }
                    kept_exits.push((bytes[end], id, bytes.to_vec()));
                }
                _ => {}
            }
            let Some((&first, rest)) = bytes.split_first() else {
                continue;
            };
            match kind.run_len(rest) {
                None if kind.viable(rest) => {
                    let row = &mut after_row[first as usize];
                    if *row == NO_ROW {
                        *row = (after_masks.len() / words.max(1)) as u32;
                        after_masks.resize(after_masks.len() + words, 0);
                    }
                    let start = *row as usize * words;
                    set(&mut after_masks[start..start + words], id);
                }
                // `b e y` with the run empty: an entry of a kind with one exit byte (few
                // tokens have an LF right after their first byte); with many, nearly every
                // token would be one, and the caller walks the token trie under `b e`.
                Some(end) if end > 0 || kind.one_exit() => {
                    if let Some(entry) = exit_entry(kind, &[first], &rest[..end], &rest[end..]) {
                        exits_after.push((id, entry));
                    }
                }
                _ => {}
            }
        }
        long_inside.sort_unstable_by(|a, b| b.cmp(a));
        kept_exits.sort_unstable_by_key(|&(exit, id, _)| (exit, id));
        let kept_exits = kept_exits
            .chunk_by(|a, b| a.0 == b.0)
            .map(|group| {
                let entries: Vec<(u32, Vec<u8>)> = group
                    .iter()
                    .map(|(_, id, bytes)| (*id, bytes.clone()))
                    .collect();
                (group[0].0, TokenTrie::from_entries(&entries, words))
            })
            .collect();
        let prefixes = prefix_tables(vocab, kind);
        let mut by_first: Vec<(u8, u32)> = exits
            .iter()
            .map(|(id, _)| (vocab.bytes(*id)[0], *id))
            .collect();
        by_first.sort_unstable();
        let mut exit_ids_start = vec![0u32; 257];
        for &(first, _) in &by_first {
            exit_ids_start[first as usize + 1] += 1;
        }
        for b in 1..257 {
            exit_ids_start[b] += exit_ids_start[b - 1];
        }
        let exit_ids = by_first.into_iter().map(|(_, id)| id).collect();
        let mut after_all = vec![0u32; words];
        for row in after_masks.chunks(words.max(1)) {
            for (word, &bits) in after_all.iter_mut().zip(row) {
                *word |= bits;
            }
        }
        LineTextTable {
            mask_words: words,
            kind,
            inside,
            after_row,
            after_masks,
            exits: TokenTrie::from_entries(&exits, words),
            exit_ids_start,
            exit_ids,
            prefix_rows: prefixes.rows,
            prefix_masks: prefixes.masks,
            prefixed_exits: prefixes.exits,
            exits_after: TokenTrie::from_entries(&exits_after, words),
            after_all,
            long_inside,
            kept_exits,
        }
    }

    /// Writes into `words` the tokens `state` takes that start with a byte of the class,
    /// where `state` reads a run of this table's kind that it keeps, with `room` bytes left
    /// (at least [`KEPT_ROOM_MIN`]; see [`Recognizer::kept_run`]), EOS aside: the viable
    /// tokens of the class of at most `room` bytes, and the tokens that leave the run at a
    /// byte the state takes after a run, walked as they are (what the run held matters after
    /// it). The caller adds the tokens that start with a byte outside the class.
    pub fn fill_kept<R: Recognizer>(
        &self,
        state: R,
        room: u32,
        stack: &mut Vec<R>,
        words: &mut [u32],
    ) {
        words.copy_from_slice(&self.inside);
        for &(len, id) in &self.long_inside {
            if len <= room {
                break;
            }
            words[id as usize >> 5] &= !(1 << (id & 31));
        }
        // By the law, every run the state takes leaves it taking the same exits as `a` does.
        let mut after_run = state;
        if !after_run.try_byte(REPRESENTATIVE) {
            return;
        }
        let exits = after_run.allowed().difference(self.kind.class());
        for (exit, trie) in &self.kept_exits {
            if exits.contains(*exit) {
                trie.walk(state, stack, words);
            }
        }
    }

    /// The kind these tables are of.
    pub fn kind(&self) -> LineText {
        self.kind
    }

    /// Writes into `words` the tokens `state` takes that start with a byte of the class,
    /// where `state` is inside a run of this table's kind that it forgets (EOS aside): the
    /// caller adds the tokens that start with a byte outside it.
    pub fn fill_inside<R: Recognizer>(&self, state: R, stack: &mut Vec<R>, words: &mut [u32]) {
        words.copy_from_slice(&self.inside);
        self.exits.walk(state, stack, words);
    }

    /// Takes out of a [`fill_inside`](LineTextTable::fill_inside) mask the tokens starting
    /// with `byte` that a state excepts ([`InText::except`](crate::recognizer::InText)): the
    /// ones the exit trie set, and unless `keep_row` the viable ones `byte x` too (kept when
    /// the state after `byte` is a run of this kind, whose row they are). The viable ones are
    /// exactly the row's for an ASCII `byte`.
    pub fn except_first(&self, byte: u8, keep_row: bool, words: &mut [u32]) {
        let group = &self.exit_ids[self.exit_ids_start[byte as usize] as usize
            ..self.exit_ids_start[byte as usize + 1] as usize];
        for &id in group {
            words[id as usize >> 5] &= !(1 << (id & 31));
        }
        if !keep_row {
            for (word, &bits) in words.iter_mut().zip(self.after(byte)) {
                *word &= !bits;
            }
        }
    }

    /// Sets in `words` the tokens `b c x` that `state` takes, where `state` is the state after
    /// `b` and the state after `b c` is in a run of this table's kind that it forgets, if
    /// the prefix has a row; returns whether it had (else nothing is set). The run's excepted
    /// bytes are the caller's. The bits under `b c` must be clear.
    pub fn add_prefix<R: Recognizer>(
        &self,
        state: R,
        prefix: [u8; 2],
        stack: &mut Vec<R>,
        words: &mut [u32],
    ) -> bool {
        let Ok(at) = self.prefix_rows.binary_search_by(|(p, _)| p.cmp(&prefix)) else {
            return false;
        };
        let row = self.prefix_rows[at].1 as usize * self.mask_words;
        for (word, &bits) in words
            .iter_mut()
            .zip(&self.prefix_masks[row..row + self.mask_words])
        {
            *word |= bits;
        }
        self.prefixed_exits.walk_path(&prefix, state, stack, words);
        true
    }

    /// The row of tokens `byte x`, `x` viable LF-free text (empty if there is none).
    fn after(&self, byte: u8) -> &[u32] {
        match self.after_row[byte as usize] {
            NO_ROW => &[],
            row => &self.after_masks[row as usize * self.mask_words..][..self.mask_words],
        }
    }

    /// Adds to `words` every token starting with `byte` that `state` takes, where `state`
    /// after `byte` is inside a run of this table's kind that it forgets. With `row` false the
    /// caller has already set the tokens `byte x`, `x` viable (see
    /// [`fill_after_all`](LineTextTable::fill_after_all)).
    pub fn add_after<R: Recognizer>(
        &self,
        state: R,
        byte: u8,
        row: bool,
        stack: &mut Vec<R>,
        words: &mut [u32],
    ) {
        if row {
            for (word, &bits) in words.iter_mut().zip(self.after(byte)) {
                *word |= bits;
            }
        }
        self.exits_after.walk_first(state, byte, stack, words);
    }

    /// Writes into `words` the tokens `b x` (`x` viable) of every byte `b` outside `others`:
    /// for a state where most bytes lead into a run, one copy and a clear per other byte
    /// instead of an OR per byte.
    pub fn fill_after_all(&self, others: ByteSet, words: &mut [u32]) {
        words.copy_from_slice(&self.after_all);
        for byte in others.iter() {
            for (word, &bits) in words.iter_mut().zip(self.after(byte)) {
                *word &= !bits;
            }
        }
    }

    /// The bytes the tables hold: the masks and the exit tries.
    pub fn heap_bytes(&self) -> usize {
        self.prefixed_exits.heap_bytes()
            + self.prefix_rows.len() * 8
            + (self.inside.len()
                + self.prefix_masks.len()
                + self.after_masks.len()
                + self.after_all.len()
                + self.exit_ids_start.len()
                + self.exit_ids.len())
                * 4
            + self.exits.heap_bytes()
            + self.exits_after.heap_bytes()
            + self.long_inside.len() * 8
            + self
                .kept_exits
                .iter()
                .map(|(_, trie)| trie.heap_bytes())
                .sum::<usize>()
    }

    /// How many two-byte prefixes have a row of their own.
    pub fn prefix_rows(&self) -> usize {
        self.prefix_rows.len()
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
    fn tokens_are_sorted_by_where_their_run_ends() {
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
        // CTL tokens: a run of token characters ends at any other byte.
        // 0 "ab", 1 "ab c", 2 " id", 3 "a b", 4 "x\n", 5 " ", 6 "  x".
        let v = vocab(&[b"ab", b"ab c", b" id", b"a b", b"x\n", b" ", b"  x"]);
        let token = LineTextTable::build(&v, LineText::Token);
        assert_eq!(ids(&token.inside), [0]);
        assert_eq!(ids(token.after(b' ')), [2, 5]);
        assert_eq!(ids(token.after(b'a')), [0]);
        // exits: "ab c", "a b" as "a c"/"a b", "x\n" as "a\n" (5 nodes); exits_after: "ab c"
        // as "aa c" (4 nodes); "a b", "x\n" and "  x" leave the run at once, and a kind with
        // many exit bytes keeps no entries of them.
        assert_eq!(token.exit_nodes(), (5, 4));
    }
}
