//! CPAT's generational layout (`cpat_reference.md` §10, "Generational tail"; on with
//! [`Config::generational`](super::Config)): the view keeps a stable prefix that a prompt
//! cache can reuse, and moves the bulky and the offloaded tool-call groups behind it.
//!
//! The visible blocks are partitioned into chain groups in store order: each group is the
//! block's tool-call chain restricted to the visible blocks, in chain order, so that a head
//! and its results always travel together. A group is *tail* when a member is a tool result
//! of [`TAIL_TOKENS`] tokens or more, or is offloaded; otherwise it is *prefix*. The view is
//! the prefix groups in order, then the tail groups sorted by key: with `n` tail groups and
//! `i` a group's index among them, the key is `n + generation` of the group's first member
//! that has a generation, else `n − 1 − i` (ties by `i`). Inline bulky groups thus come
//! newest first, then the retired groups by ascending generation, the last retired last, and
//! retiring a group (offloading it and giving it a new generation) changes nothing before it.
//!
//! A generation is runtime state ([`Generations`], CPAT's `genOf`/`nextGen`). The one place
//! that assigns them in a run is the generational fallback
//! ([`super::fallback::generational_fallback`]), through [`Engine::apply_retiring`]: a
//! committed patch that retires blocks carries `"generation": N` in its journal record
//! (CPAT's record has no such field; every other field is CPAT's), and a replay gives the
//! patch's offloaded blocks that generation again, so a replayed run renders the same view.
//! [`Engine::set_generation`] and [`Engine::alloc_generation`] are CPAT's direct setters,
//! for tests and offline layouts: what they set is not journaled and does not survive a
//! replay.
//!
//! [`Engine::apply_retiring`]: super::Engine::apply_retiring
//! [`Engine::set_generation`]: super::Engine::set_generation
//! [`Engine::alloc_generation`]: super::Engine::alloc_generation

use std::collections::HashMap;

use super::args::{Item, Operation};
use super::block::{Block, Kind};
use super::store::{BlockStore, Slot};

/// A tool result of at least this many tokens puts its group in the tail.
pub const TAIL_TOKENS: u64 = 300;

/// The generations of retired blocks, and the next one to hand out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Generations {
    of: HashMap<String, u64>,
    next: u64,
}

impl Generations {
    /// A block's generation.
    pub fn get(&self, id: &str) -> Option<u64> {
        self.of.get(id).copied()
    }

    /// Sets a block's generation (CPAT's `setGeneration`: the next one handed out stays
    /// what it was).
    pub fn set(&mut self, id: &str, generation: u64) {
        self.of.insert(id.to_owned(), generation);
    }

    /// Sets a generation that [`alloc`](Self::alloc) handed out, as a replay does: the next
    /// one handed out comes after it.
    pub fn restore(&mut self, id: &str, generation: u64) {
        self.set(id, generation);
        self.restore_next(generation);
    }

    /// Makes [`alloc`](Self::alloc) hand out generations after this one.
    pub(crate) fn restore_next(&mut self, generation: u64) {
        self.next = self.next.max(generation.saturating_add(1));
    }

    /// The generation [`alloc`](Self::alloc) hands out next.
    pub fn peek(&self) -> u64 {
        self.next
    }

    /// A new generation (CPAT's `allocGeneration`: 0, 1, 2, …).
    pub fn alloc(&mut self) -> u64 {
        let g = self.next;
        self.next = self.next.saturating_add(1);
        g
    }
}

/// The blocks a retiring patch gives its generation: the ids of its `payload_offload` ops.
pub fn retired_ids(operations: &[Item]) -> impl Iterator<Item = &str> + '_ {
    operations
        .iter()
        .flat_map(|item| match item {
            Ok(Operation::PayloadOffload { ids, .. }) => ids.as_slice(),
            _ => &[],
        })
        .map(String::as_str)
}

fn pins_to_tail(b: &Block) -> bool {
    (b.kind == Kind::ToolResult && b.token_count >= TAIL_TOKENS) || b.content.is_ref()
}

/// A chain group: a range of [`layout`]'s member list, with what orders it.
struct Group {
    start: usize,
    end: usize,
    generation: Option<u64>,
}

/// The visible blocks in the generational order. One pass over the store builds the groups
/// (each chain is looked up once, from its first visible member); only the tail groups are
/// sorted.
pub fn layout(store: &BlockStore, generations: &Generations) -> Vec<Slot> {
    let mut grouped = vec![false; store.len()];
    let mut members: Vec<Slot> = Vec::new();
    let mut prefix: Vec<Group> = Vec::new();
    let mut tail: Vec<Group> = Vec::new();
    for index in 0..store.len() {
        let slot = store.at(index);
        if grouped[slot as usize] || !store.block(slot).is_visible() {
            continue;
        }
        let start = members.len();
        for m in store.chain_of(slot) {
            if !grouped[m as usize] && store.block(m).is_visible() {
                grouped[m as usize] = true;
                members.push(m);
            }
        }
        // A block is always in its own chain; this keeps the layout a permutation of the
        // visible blocks even if that ever changed.
        if !grouped[slot as usize] {
            grouped[slot as usize] = true;
            members.push(slot);
        }
        let group = &members[start..];
        let generation = group
            .iter()
            .find_map(|&m| generations.get(&store.block(m).id));
        let is_tail = group.iter().any(|&m| pins_to_tail(store.block(m)));
        let g = Group {
            start,
            end: members.len(),
            generation,
        };
        if is_tail {
            tail.push(g)
        } else {
            prefix.push(g)
        }
    }
    let n = tail.len() as u128;
    let key = |i: usize, g: &Group| match g.generation {
        Some(generation) => n + u128::from(generation),
        None => n - 1 - i as u128,
    };
    let mut keyed: Vec<(u128, usize)> = tail
        .iter()
        .enumerate()
        .map(|(i, g)| (key(i, g), i))
        .collect();
    keyed.sort_unstable();
    let mut out = Vec::with_capacity(members.len());
    for g in &prefix {
        out.extend_from_slice(&members[g.start..g.end]);
    }
    for (_, i) in keyed {
        out.extend_from_slice(&members[tail[i].start..tail[i].end]);
    }
    out
}
