//! The token trie: every normal token of a vocabulary as a path of bytes, laid out flat in
//! depth-first pre-order, so that computing a mask is one forward scan.
//!
//! Node `i` holds its byte, its depth, the ids whose bytes end there (several ids may share
//! bytes), and `subtree_end`, the index just past its subtree. The walk keeps one recogniser
//! state per depth: at node `i` of depth `d` it tries the byte on the state of depth `d − 1`;
//! if the byte is taken, the ids ending at `i` are allowed and the walk goes on to `i + 1`
//! (its first child); if not, no token below `i` can be allowed either, and the walk jumps to
//! `subtree_end`, skipping the whole subtree. Nothing is allocated during a walk: the stack of
//! states is the caller's, [`TokenTrie::max_depth`] + 1 long.
//!
//! Built once per vocabulary by sorting the tokens' bytes: sorted order is pre-order, and two
//! neighbours share exactly their common prefix's nodes.
//!
//! More tables let a walk start below the root ([`TokenTrie::walk_below`]): the nodes of
//! each depth bucketed by byte, [`TokenTrie::short_mask`], the mask of every token up to each
//! length, and the ids of the tokens of each length by their last one and two bytes with the
//! nodes of each depth by their last three. A matcher uses them when the first bytes cannot
//! change the outcome (a CTL body with bytes left): every short token is allowed at once, and
//! only the subtrees at the first depth that matters are walked, or, where the states after
//! it allow few bytes (`arg` or `end` after a body), the ids in runs and the few subtrees
//! three bytes below. The level index also finds a path's node by binary search
//! ([`TokenTrie::rewalk`], [`TokenTrie::walk_path`]).

use crate::recognizer::Recognizer;

use super::vocab::Vocabulary;

/// One trie node (12 bytes).
#[derive(Clone, Copy, Debug)]
struct Node {
    /// The index just past this node's subtree.
    subtree_end: u32,
    /// The first of this node's ids in `TokenTrie::ids`; the next node's `ids_start` ends them.
    ids_start: u32,
    /// The node's depth: 1 for a token's first byte.
    depth: u16,
    byte: u8,
}

/// A vocabulary's normal tokens as a flat trie (see the module docs).
#[derive(Clone, Debug)]
pub struct TokenTrie {
    /// Pre-order; node 0 is the root (no byte).
    nodes: Vec<Node>,
    /// Token ids, grouped by the node they end at, in node order.
    ids: Vec<u32>,
    max_depth: usize,
    /// The rows of `short_masks` beyond row 0, and the levels indexed beyond the first.
    short_rows: usize,
    /// The nodes of depth `d` (1 ≤ `d` ≤ `short_rows() + 1`) whose byte is `b`, ascending:
    /// `by_level[level_start[(d - 1) * 256 + b] .. level_start[(d - 1) * 256 + b + 1]]`.
    level_start: Vec<u32>,
    by_level: Vec<u32>,
    /// Row `l` (0 ≤ `l` ≤ `short_rows`): the mask of every token of at most `l` bytes.
    short_masks: Vec<u32>,
    /// What lets a walk below a depth follow three bytes at once
    /// ([`TokenTrie::walk_below`]), each array sorted by its key (empty for a trie of
    /// entries): the ids of the tokens of `d` bytes by (`d`, last byte), `d << 8 | b`, for
    /// `d` ≤ `short_rows() + 1`; by (`d`, last two bytes), `d << 16 | …`, for
    /// `d` ≤ `short_rows() + 2`; and the nodes of depth `d` ≤ `short_rows() + 3` by (`d`,
    /// last three bytes), `d << 24 | …`. Reading ids in runs, not nodes, keeps a cold walk
    /// from touching the trie's nodes one cache line at a time.
    ends1: Vec<(u32, u32)>,
    ends2: Vec<(u32, u32)>,
    triples: Vec<(u32, u32)>,
    mask_words: usize,
}

/// The entries of a sorted `(key, node)` array with key `key`.
fn sorted_range(sorted: &[(u32, u32)], key: u32) -> &[(u32, u32)] {
    let start = sorted.partition_point(|&(k, _)| k < key);
    let end = start + sorted[start..].partition_point(|&(k, _)| k == key);
    &sorted[start..end]
}

/// The most bytes each of the two states after a blind run's first bytes may allow for
/// [`TokenTrie::walk_below`] to follow three bytes at once (more, and the nodes of one depth
/// are walked instead).
const TRIPLE_WALK_MAX: u32 = 8;

/// The deepest node `triples` holds: its depth is the key's top byte.
const TRIPLE_DEPTH_MAX: usize = 255;

/// The deepest row of [`TokenTrie::short_mask`] (and one less than the deepest level
/// indexed by byte): 256 rows, so the masks by length stay under 256 × `ceil(V/32)` words
/// (6.4 MB for a 200k vocabulary) whatever the longest token.
pub const SHORT_ROWS_MAX: usize = 256;

impl TokenTrie {
    /// The trie of `vocab`'s normal tokens.
    pub fn build(vocab: &Vocabulary) -> TokenTrie {
        let order: Vec<(u32, &[u8])> = vocab.normal_tokens().collect();
        let mut trie = TokenTrie::from_order(order, vocab.mask_words(), SHORT_ROWS_MAX);
        trie.short_masks = short_masks(vocab, trie.short_rows(), trie.mask_words);
        trie.index_pairs();
        trie
    }

    /// A trie of arbitrary byte strings, each with the id it sets (several entries may share
    /// bytes or ids), for masks of `mask_words` words: the tables of
    /// [`line_text`](super::line_text) walk the suffixes of tokens through it. It indexes
    /// only its first level ([`walk_first`](TokenTrie::walk_first)) and has no short masks.
    pub fn from_entries(entries: &[(u32, Vec<u8>)], mask_words: usize) -> TokenTrie {
        let order = entries
            .iter()
            .map(|(id, bytes)| (*id, &bytes[..]))
            .collect();
        let mut trie = TokenTrie::from_order(order, mask_words, 0);
        trie.short_masks = vec![0; mask_words];
        trie
    }

    /// The trie of `order`, sorted here, with its levels indexed down to `short_rows + 1`
    /// (capped by the longest entry); the short masks are the caller's.
    fn from_order(mut order: Vec<(u32, &[u8])>, mask_words: usize, short_rows: usize) -> TokenTrie {
        order.sort_unstable_by(|a, b| a.1.cmp(b.1).then(a.0.cmp(&b.0)));
        let mut nodes = vec![Node {
            subtree_end: 0,
            ids_start: 0,
            depth: 0,
            byte: 0,
        }];
        let mut ids = Vec::with_capacity(order.len());
        // `path[d]` is the node at depth `d` on the current token's path (`path[0]`: root).
        let mut path: Vec<usize> = vec![0];
        let mut previous: &[u8] = &[];
        let mut max_depth = 0;
        for (id, bytes) in order {
            let common = previous
                .iter()
                .zip(bytes)
                .take_while(|(a, b)| a == b)
                .count();
            // Close the nodes of the previous token below the shared prefix.
            while path.len() > common + 1 {
                if let Some(closed) = path.pop() {
                    nodes[closed].subtree_end = nodes.len() as u32;
                }
            }
            for (depth, &byte) in bytes.iter().enumerate().skip(common) {
                path.push(nodes.len());
                nodes.push(Node {
                    subtree_end: 0,
                    ids_start: ids.len() as u32,
                    depth: (depth + 1) as u16,
                    byte,
                });
            }
            ids.push(id);
            max_depth = max_depth.max(bytes.len());
            previous = bytes;
        }
        let end = nodes.len() as u32;
        for &open in &path {
            nodes[open].subtree_end = end;
        }
        let short_rows = max_depth.min(short_rows);
        let (level_start, by_level) = index_levels(&nodes, short_rows + 1);
        TokenTrie {
            nodes,
            ids,
            max_depth,
            short_rows,
            level_start,
            by_level,
            short_masks: Vec::new(),
            ends1: Vec::new(),
            ends2: Vec::new(),
            triples: Vec::new(),
            mask_words,
        }
    }

    /// Builds `ends1`, `ends2` and `triples` (see the fields).
    fn index_pairs(&mut self) {
        let levels = self.short_rows + 1;
        let mut bytes = vec![0u8; self.max_depth + 1];
        let (mut ends1, mut ends2, mut triples) = (Vec::new(), Vec::new(), Vec::new());
        for (index, node) in self.nodes.iter().enumerate().skip(1) {
            let depth = node.depth as usize;
            bytes[depth] = node.byte;
            let (d, byte) = (depth as u32, node.byte as u32);
            let last2 = |b: &[u8]| (b[depth - 1] as u32) << 8 | byte;
            for &id in self.node_ids(index) {
                if depth <= levels {
                    ends1.push((d << 8 | byte, id));
                }
                if (2..=levels + 1).contains(&depth) {
                    ends2.push((d << 16 | last2(&bytes), id));
                }
            }
            if (3..=(levels + 2).min(TRIPLE_DEPTH_MAX)).contains(&depth) {
                let key = d << 24 | (bytes[depth - 2] as u32) << 16 | last2(&bytes);
                triples.push((key, index as u32));
            }
        }
        for array in [&mut ends1, &mut ends2, &mut triples] {
            array.sort_unstable();
        }
        (self.ends1, self.ends2, self.triples) = (ends1, ends2, triples);
    }

    /// The nodes of depth `depth` (≥ 3) whose last three bytes are `path`.
    fn triple_nodes(&self, depth: usize, path: [u8; 3]) -> &[(u32, u32)] {
        let key =
            (depth as u32) << 24 | (path[0] as u32) << 16 | (path[1] as u32) << 8 | path[2] as u32;
        sorted_range(&self.triples, key)
    }

    /// Sets in `words` the ids of `(key, id)` entries.
    fn set_all(&self, entries: &[(u32, u32)], words: &mut [u32]) {
        for &(_, id) in entries {
            if let Some(word) = words.get_mut(id as usize >> 5) {
                *word |= 1 << (id & 31);
            }
        }
    }

    /// The deepest row of [`short_mask`](TokenTrie::short_mask).
    pub fn short_rows(&self) -> usize {
        self.short_rows
    }

    /// The mask of every normal token of at most `len` bytes (`len` ≤
    /// [`short_rows`](TokenTrie::short_rows); past it, the last row).
    pub fn short_mask(&self, len: usize) -> &[u32] {
        let row = len.min(self.short_rows());
        &self.short_masks[row * self.mask_words..(row + 1) * self.mask_words]
    }

    /// The number of nodes, the root included.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// The bytes the trie's arrays hold (nodes, ids, level indexes, short masks).
    pub fn heap_bytes(&self) -> usize {
        self.nodes.len() * std::mem::size_of::<Node>()
            + (self.ids.len()
                + self.level_start.len()
                + self.by_level.len()
                + self.short_masks.len()
                + 2 * (self.ends1.len() + self.ends2.len() + self.triples.len()))
                * 4
    }

    /// The longest token, in bytes: a walk's stack holds `max_depth() + 1` states.
    pub fn max_depth(&self) -> usize {
        self.max_depth
    }

    fn node_ids(&self, index: usize) -> &[u32] {
        let start = self.nodes[index].ids_start as usize;
        let end = self
            .nodes
            .get(index + 1)
            .map_or(self.ids.len(), |next| next.ids_start as usize);
        &self.ids[start..end]
    }

    /// Sets in `words` the bit of every normal token whose bytes `state` takes whole (the
    /// bits it does not set are left as they are; ids past `words` are skipped). `stack` is
    /// the walk's buffer of states, grown to [`max_depth`](TokenTrie::max_depth) + 1 if it is
    /// shorter (the only allocation, made once per buffer).
    pub fn walk<R: Recognizer>(&self, state: R, stack: &mut Vec<R>, words: &mut [u32]) {
        if stack.len() <= self.max_depth {
            stack.resize(self.max_depth + 1, state);
        }
        stack[0] = state;
        self.scan(1, self.nodes.len(), stack, words);
    }

    /// Sets in `words` the bit of every token longer than `depth` bytes whose bytes from
    /// index `depth` on `state` takes whole: the subtrees below depth `depth`, each walked
    /// from `state`, visiting only the nodes whose byte `state` allows. With `depth` 0 this
    /// is [`walk`](TokenTrie::walk). `depth` must be at most
    /// [`short_rows`](TokenTrie::short_rows) (deeper, nothing is set).
    pub fn walk_below<R: Recognizer>(
        &self,
        state: R,
        depth: usize,
        stack: &mut Vec<R>,
        words: &mut [u32],
    ) {
        if depth > self.short_rows() {
            return;
        }
        if stack.len() <= self.max_depth {
            stack.resize(self.max_depth + 1, state);
        }
        for byte in state.allowed().iter() {
            let mut next = state;
            if !next.try_byte(byte) {
                continue;
            }
            let follows = next.allowed();
            let narrow = |second: u8| {
                let mut after = next;
                after.try_byte(second);
                after.allowed().len() <= TRIPLE_WALK_MAX
            };
            if self.triples.is_empty()
                || depth + 3 > TRIPLE_DEPTH_MAX
                || follows.len() > TRIPLE_WALK_MAX
                || !follows.iter().all(narrow)
            {
                self.walk_bucket(state, depth, byte, stack, words);
                continue;
            }
            // Three bytes at once: the tokens that end one and two bytes below `depth`, then
            // the subtrees of the nodes three below whose path the states allow (a body that
            // ends here is followed by `arg` or `end`: the paths `arg` and `end`).
            let (d1, d2) = ((depth + 1) as u32, (depth + 2) as u32);
            self.set_all(sorted_range(&self.ends1, d1 << 8 | byte as u32), words);
            for second in follows.iter() {
                let last2 = (byte as u32) << 8 | second as u32;
                self.set_all(sorted_range(&self.ends2, d2 << 16 | last2), words);
                let mut after = next;
                after.try_byte(second);
                for third in after.allowed().iter() {
                    for &(_, node) in self.triple_nodes(depth + 3, [byte, second, third]) {
                        stack[depth + 2] = after;
                        let node = node as usize;
                        self.scan(node, self.nodes[node].subtree_end as usize, stack, words);
                    }
                }
            }
        }
    }

    /// Sets in `words` the bit of every entry starting with `byte` that `state` takes whole:
    /// the one subtree below the root whose byte is `byte`.
    pub fn walk_first<R: Recognizer>(
        &self,
        state: R,
        byte: u8,
        stack: &mut Vec<R>,
        words: &mut [u32],
    ) {
        if stack.len() <= self.max_depth {
            stack.resize(self.max_depth + 1, state);
        }
        self.walk_bucket(state, 0, byte, stack, words);
    }

    /// The node whose path is `path` (not empty), if some entry starts with it.
    fn find(&self, path: &[u8]) -> Option<usize> {
        let mut node = 0;
        for (depth, &byte) in path.iter().enumerate() {
            let end = self.nodes[node].subtree_end as usize;
            let bucket = depth * 256 + byte as usize;
            node = match (
                self.level_start.get(bucket),
                self.level_start.get(bucket + 1),
            ) {
                // The nodes of this depth and byte, ascending: the child is the one inside
                // the parent's subtree (a binary search, not a walk of the siblings).
                (Some(&start), Some(&stop)) => {
                    let nodes = &self.by_level[start as usize..stop as usize];
                    let at = nodes.partition_point(|&n| (n as usize) <= node);
                    match nodes.get(at) {
                        Some(&child) if (child as usize) < end || node == 0 => child as usize,
                        _ => return None,
                    }
                }
                _ => {
                    let mut child = node + 1;
                    while child < end && self.nodes[child].byte != byte {
                        child = self.nodes[child].subtree_end as usize;
                    }
                    if child >= end {
                        return None;
                    }
                    child
                }
            };
        }
        (node != 0).then_some(node)
    }

    /// Sets in `words` the ids whose bytes are exactly `path`.
    pub fn set_exact(&self, path: &[u8], words: &mut [u32]) {
        if let Some(node) = self.find(path) {
            for &id in self.node_ids(node) {
                if let Some(word) = words.get_mut(id as usize >> 5) {
                    *word |= 1 << (id & 31);
                }
            }
        }
    }

    /// Clears in `words` the bits of every entry below `node`, `node` included: their ids are
    /// contiguous, grouped by node in pre-order.
    fn clear_subtree(&self, node: usize, words: &mut [u32]) {
        let end = self.nodes[node].subtree_end as usize;
        let ids_end = self
            .nodes
            .get(end)
            .map_or(self.ids.len(), |next| next.ids_start as usize);
        for &id in &self.ids[self.nodes[node].ids_start as usize..ids_end] {
            if let Some(word) = words.get_mut(id as usize >> 5) {
                *word &= !(1 << (id & 31));
            }
        }
    }

    /// Recomputes in `words` the bits of every entry that starts with `path` (not empty):
    /// clears them, then sets those whose bytes after `path[..len − 1]` `parent` takes whole
    /// (`parent` is the state after `path[..len − 1]`). For the few tokens under a byte where
    /// a table's answer does not hold ([`InText::except`](crate::recognizer::InText)).
    pub fn rewalk<R: Recognizer>(
        &self,
        path: &[u8],
        parent: R,
        stack: &mut Vec<R>,
        words: &mut [u32],
    ) {
        self.clear_path(path, words);
        self.walk_path(path, parent, stack, words);
    }

    /// Clears in `words` the bits of every entry that starts with `path` (not empty).
    pub fn clear_path(&self, path: &[u8], words: &mut [u32]) {
        if let Some(node) = self.find(path) {
            self.clear_subtree(node, words);
        }
    }

    /// Sets in `words` the bits of every entry that starts with `path` (not empty) whose
    /// bytes after `path[..len − 1]` `parent` takes whole.
    pub fn walk_path<R: Recognizer>(
        &self,
        path: &[u8],
        parent: R,
        stack: &mut Vec<R>,
        words: &mut [u32],
    ) {
        let Some(node) = self.find(path) else {
            return;
        };
        let end = self.nodes[node].subtree_end as usize;
        if stack.len() <= self.max_depth {
            stack.resize(self.max_depth + 1, parent);
        }
        stack[path.len() - 1] = parent;
        self.scan(node, end, stack, words);
    }

    /// The subtrees of the nodes of depth `depth + 1` whose byte is `byte`, each walked from
    /// `state`; `stack` is long enough.
    fn walk_bucket<R: Recognizer>(
        &self,
        state: R,
        depth: usize,
        byte: u8,
        stack: &mut [R],
        words: &mut [u32],
    ) {
        let bucket = depth * 256 + byte as usize;
        let (Some(&start), Some(&end)) = (
            self.level_start.get(bucket),
            self.level_start.get(bucket + 1),
        ) else {
            return;
        };
        for &root in &self.by_level[start as usize..end as usize] {
            stack[depth] = state;
            let root = root as usize;
            self.scan(root, self.nodes[root].subtree_end as usize, stack, words);
        }
    }

    /// The pruned forward scan of nodes `from..to` (whole subtrees), the state of each
    /// node's parent in `stack` by depth.
    fn scan<R: Recognizer>(&self, from: usize, to: usize, stack: &mut [R], words: &mut [u32]) {
        let mut i = from;
        while i < to {
            let node = self.nodes[i];
            let depth = node.depth as usize;
            let mut next = stack[depth - 1];
            if next.try_byte(node.byte) {
                // A leaf's state is never read.
                if node.subtree_end as usize != i + 1 {
                    stack[depth] = next;
                }
                for &id in self.node_ids(i) {
                    if let Some(word) = words.get_mut(id as usize >> 5) {
                        *word |= 1 << (id & 31);
                    }
                }
                i += 1;
            } else {
                i = node.subtree_end as usize;
            }
        }
    }
}

/// The nodes of depths 1 to `levels`, bucketed by (depth, byte), each bucket in pre-order:
/// the offsets (`levels × 256 + 1`) and the node indices.
fn index_levels(nodes: &[Node], levels: usize) -> (Vec<u32>, Vec<u32>) {
    let bucket = |node: &Node| (node.depth as usize - 1) * 256 + node.byte as usize;
    let mut start = vec![0u32; levels * 256 + 1];
    for node in nodes
        .iter()
        .skip(1)
        .filter(|n| (1..=levels).contains(&(n.depth as usize)))
    {
        start[bucket(node) + 1] += 1;
    }
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    let mut fill = start.clone();
    let mut by_level = vec![0u32; *start.last().unwrap_or(&0) as usize];
    for (index, node) in nodes.iter().enumerate().skip(1) {
        if (1..=levels).contains(&(node.depth as usize)) {
            let slot = &mut fill[bucket(node)];
            by_level[*slot as usize] = index as u32;
            *slot += 1;
        }
    }
    (start, by_level)
}

/// Rows `0..=rows` of masks: row `l` holds every normal token of at most `l` bytes.
fn short_masks(vocab: &Vocabulary, rows: usize, words: usize) -> Vec<u32> {
    let mut masks = vec![0u32; (rows + 1) * words];
    for (id, bytes) in vocab.normal_tokens() {
        if bytes.len() <= rows {
            let at = bytes.len() * words + (id as usize >> 5);
            masks[at] |= 1 << (id & 31);
        }
    }
    for row in 1..=rows {
        let (before, rest) = masks.split_at_mut(row * words);
        let previous = &before[(row - 1) * words..];
        for (word, &shorter) in rest[..words].iter_mut().zip(previous) {
            *word |= shorter;
        }
    }
    masks
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_node_is_twelve_bytes() {
        assert_eq!(std::mem::size_of::<super::Node>(), 12);
    }
}
