//! The block store: blocks in their order, looked up by id, with the indexes a patch needs kept
//! up to date as blocks come in (positions, tool-call chains, the view's running totals), so
//! that a patch costs what it touches, not what the store holds.

use std::collections::HashMap;
use std::sync::Arc;

use super::block::{Block, Kind, Origin};
use super::tokens::{Measure, TokenCounter};
use super::view::{self, BlockCost};

/// A block's place in the store (its insertion index; stable).
pub type Slot = u32;

/// Where a new block goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Anchor {
    /// At the end.
    End,
    /// First.
    Start,
    /// Right after this block.
    After(Slot),
}

/// The running totals the budget is computed from (see [`view::estimate`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Blocks with visibility `model`.
    pub visible: u64,
    /// Σ token estimate of their messages.
    pub message_tokens: u64,
    /// Σ measure of their manifest entries.
    pub manifest: Measure,
    /// Archived blocks listed in the manifest.
    pub archived: u64,
    /// Σ measure of their manifest lines.
    pub archived_lines: Measure,
    /// Σ `token_count` of the visible blocks (what `freed_tokens` compares).
    pub visible_token_count: u64,
}

impl Totals {
    fn add(&mut self, cost: &BlockCost) {
        self.visible += cost.visible as u64;
        self.message_tokens += cost.message_tokens;
        self.manifest = self.manifest + cost.manifest;
        self.archived += cost.archived as u64;
        self.archived_lines = self.archived_lines + cost.archived_line;
        self.visible_token_count += cost.visible_token_count;
    }
    fn sub(&mut self, cost: &BlockCost) {
        self.visible -= cost.visible as u64;
        self.message_tokens -= cost.message_tokens;
        self.manifest = self.manifest - cost.manifest;
        self.archived -= cost.archived as u64;
        self.archived_lines = self.archived_lines - cost.archived_line;
        self.visible_token_count -= cost.visible_token_count;
    }
    /// These totals with one block's cost replaced by another's.
    pub fn with_change(mut self, old: Option<&BlockCost>, new: &BlockCost) -> Totals {
        if let Some(old) = old {
            self.sub(old);
        }
        self.add(new);
        self
    }
}

/// The block store.
#[derive(Clone)]
pub struct BlockStore {
    blocks: Vec<Block>,
    costs: Vec<BlockCost>,
    order: Vec<Slot>,
    position: Vec<u32>,
    by_id: HashMap<String, Slot>,
    /// call id → the first head (in insertion order) whose `tool_calls` hold it.
    call_head: HashMap<String, Slot>,
    /// call id → the tool results that name it, in insertion order.
    results: HashMap<String, Vec<Slot>>,
    counter: u64,
    totals: Totals,
    counter_fn: Arc<dyn TokenCounter>,
}

impl std::fmt::Debug for BlockStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockStore")
            .field("blocks", &self.blocks.len())
            .field("counter", &self.counter)
            .finish()
    }
}

/// Why a list of blocks cannot be a store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateId(pub String);

impl BlockStore {
    /// An empty store counting tokens with `tokens`.
    pub fn new(tokens: Arc<dyn TokenCounter>) -> BlockStore {
        BlockStore {
            blocks: Vec::new(),
            costs: Vec::new(),
            order: Vec::new(),
            position: Vec::new(),
            by_id: HashMap::new(),
            call_head: HashMap::new(),
            results: HashMap::new(),
            counter: 0,
            totals: Totals::default(),
            counter_fn: tokens,
        }
    }

    /// A store holding `blocks` in this order; the id counter is the largest numeric suffix of
    /// their ids unless `counter` is given.
    pub fn from_blocks(
        blocks: Vec<Block>,
        counter: Option<u64>,
        tokens: Arc<dyn TokenCounter>,
    ) -> Result<BlockStore, DuplicateId> {
        let mut store = BlockStore::new(tokens);
        let mut largest = 0;
        for b in blocks {
            if store.by_id.contains_key(&b.id) {
                return Err(DuplicateId(b.id));
            }
            largest = largest.max(id_number(&b.id).unwrap_or(0));
            store.insert(b, Anchor::End);
        }
        store.counter = counter.unwrap_or(largest);
        Ok(store)
    }

    /// The token counter.
    pub fn tokens(&self) -> &Arc<dyn TokenCounter> {
        &self.counter_fn
    }

    /// The number of blocks.
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The last number used for an id.
    pub fn id_counter(&self) -> u64 {
        self.counter
    }

    /// Sets the last number used for an id (never lowers it).
    pub fn advance_id_counter(&mut self, to: u64) {
        self.counter = self.counter.max(to);
    }

    /// The next id with this prefix (`summary_005`) after `counter`, the one counter all
    /// kinds share, which it bumps. A number whose id the store holds is passed over: a store
    /// loaded with a counter below its blocks' numbers (a hand-written case's `id_counter`)
    /// never gets a second block of one id, and gets CPAT's id wherever that one is free.
    pub fn free_id(&self, prefix: &str, counter: &mut u64) -> String {
        loop {
            *counter += 1;
            let id = format_id(prefix, *counter);
            if !self.by_id.contains_key(&id) {
                return id;
            }
        }
    }

    /// The slot of a block.
    pub fn slot(&self, id: &str) -> Option<Slot> {
        self.by_id.get(id).copied()
    }

    /// A block by id.
    pub fn get(&self, id: &str) -> Option<&Block> {
        self.slot(id).map(|s| self.block(s))
    }

    /// A block by slot.
    pub fn block(&self, slot: Slot) -> &Block {
        &self.blocks[slot as usize]
    }

    /// What a block adds to the view.
    pub fn cost(&self, slot: Slot) -> &BlockCost {
        &self.costs[slot as usize]
    }

    /// A block's index in the order.
    pub fn position(&self, slot: Slot) -> usize {
        self.position[slot as usize] as usize
    }

    /// The slot at an index of the order.
    pub fn at(&self, index: usize) -> Slot {
        self.order[index]
    }

    /// The blocks in order.
    pub fn iter(&self) -> impl Iterator<Item = &Block> + '_ {
        self.order.iter().map(|&s| self.block(s))
    }

    /// The view's running totals.
    pub fn totals(&self) -> Totals {
        self.totals
    }

    /// The cost of a block as it would stand in this store.
    pub fn cost_of(&self, block: &Block) -> BlockCost {
        view::cost(block, self.counter_fn.as_ref())
    }

    /// Inserts a block (its id must be new) and returns its slot.
    pub fn insert(&mut self, block: Block, anchor: Anchor) -> Slot {
        let slot = self.blocks.len() as Slot;
        let cost = self.cost_of(&block);
        self.totals.add(&cost);
        self.by_id.insert(block.id.clone(), slot);
        if let Some(api) = &block.api {
            if api.is_head() {
                for call in api.call_ids() {
                    self.call_head.entry(call.to_owned()).or_insert(slot);
                }
            } else if let Some(call) = &api.tool_call_id {
                self.results.entry(call.clone()).or_default().push(slot);
            }
        }
        self.blocks.push(block);
        self.costs.push(cost);
        self.position.push(0);
        let at = match anchor {
            Anchor::End => self.order.len(),
            Anchor::Start => 0,
            Anchor::After(prev) => self.position(prev) + 1,
        };
        self.order.insert(at, slot);
        for i in at..self.order.len() {
            self.position[self.order[i] as usize] = i as u32;
        }
        slot
    }

    /// Replaces a block by a new state of itself (same id; `api` unchanged).
    pub fn replace(&mut self, slot: Slot, block: Block) {
        let cost = self.cost_of(&block);
        self.replace_with_cost(slot, block, cost);
    }

    /// [`replace`](Self::replace) with its cost already computed.
    pub fn replace_with_cost(&mut self, slot: Slot, block: Block, cost: BlockCost) {
        self.totals.sub(&self.costs[slot as usize]);
        self.totals.add(&cost);
        self.blocks[slot as usize] = block;
        self.costs[slot as usize] = cost;
    }

    /// The tool-call chain of a block, in chain order (head first, then its results in store
    /// order); `[slot]` alone when it belongs to no chain.
    // divergence 5: a result belongs to the head whose `tool_calls` hold its id wherever both
    // stand (CPAT scans back to the nearest head only, so interleaved chains are asymmetric).
    pub fn chain_of(&self, slot: Slot) -> Vec<Slot> {
        let Some(api) = self.block(slot).api() else {
            return vec![slot];
        };
        let head = if api.is_head() {
            Some(slot)
        } else {
            api.tool_call_id
                .as_ref()
                .and_then(|call| self.call_head.get(call).copied())
        };
        let Some(head) = head else {
            return vec![slot];
        };
        let head_api = self.block(head).api().expect("a head has api");
        let mut members: Vec<Slot> = head_api
            .call_ids()
            .filter(|call| self.call_head.get(*call) == Some(&head))
            .flat_map(|call| self.results.get(call).into_iter().flatten().copied())
            .filter(|&m| m != head)
            .collect();
        members.sort_by_key(|&m| self.position(m));
        members.dedup();
        let mut chain = Vec::with_capacity(members.len() + 1);
        chain.push(head);
        chain.extend(members);
        chain
    }

    /// The current question: the last user message in store order, whatever its visibility,
    /// that the runtime did not inject.
    // divergence 8: CPAT counts runtime reminders too, so a nudge lets the real question be
    // compacted.
    pub fn current_question(&self) -> Option<Slot> {
        self.order.iter().rev().copied().find(|&s| {
            let b = self.block(s);
            b.kind == Kind::UserMessage && b.origin != Some(Origin::Runtime)
        })
    }
}

/// `<prefix>_<n>`, `n` padded to three digits.
pub fn format_id(prefix: &str, n: u64) -> String {
    format!("{prefix}_{n:03}")
}

/// The numeric suffix of an id (`tool_004` → 4).
pub fn id_number(id: &str) -> Option<u64> {
    let (_, digits) = id.rsplit_once('_')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}
