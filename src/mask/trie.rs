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
}

impl TokenTrie {
    /// The trie of `vocab`'s normal tokens.
    pub fn build(vocab: &Vocabulary) -> TokenTrie {
        let mut order: Vec<(u32, &[u8])> = vocab.normal_tokens().collect();
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
        TokenTrie {
            nodes,
            ids,
            max_depth,
        }
    }

    /// The number of nodes, the root included.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
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
        let mut i = 1;
        while i < self.nodes.len() {
            let node = self.nodes[i];
            let depth = node.depth as usize;
            let mut next = stack[depth - 1];
            if next.try_byte(node.byte) {
                stack[depth] = next;
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
