//! The staged transaction: the ops of a patch are checked in order against copies of the
//! blocks they touch, never against a copy of the store. An op's changes go into its own
//! layer, merged into the patch's layer when the op is accepted and dropped when it is
//! rejected (divergence 4), so a later op sees only what accepted ops did.

use std::collections::HashMap;

use super::block::Block;
use super::content::ContentStore;
use super::store::{Anchor, BlockStore, Slot};

/// A summary a collapse will create at commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingSummary {
    /// Where it goes (from the pre-patch order).
    pub anchor: Anchor,
    /// Its description.
    pub description: String,
    /// Its text.
    pub content: String,
    /// The op's ids, in the op's order.
    pub source_ids: Vec<String>,
}

#[derive(Default)]
struct Layer {
    touched: Vec<Slot>,
    blocks: HashMap<Slot, Block>,
    summaries: Vec<PendingSummary>,
    payloads: Vec<(String, String)>,
}

/// The staged copy of a patch.
pub struct Stage<'s> {
    /// The store, unchanged until commit.
    pub store: &'s BlockStore,
    /// The content store, unchanged until commit.
    pub content: &'s ContentStore,
    patch: Layer,
    op: Layer,
}

/// What a validated patch changes.
pub struct Staged {
    /// The changed blocks in first-touch order.
    pub blocks: Vec<(Slot, Block)>,
    /// The summaries to create, in op order.
    pub summaries: Vec<PendingSummary>,
    /// Payloads an offload in this patch refers to that no key holds yet.
    pub payloads: Vec<(String, String)>,
}

impl<'s> Stage<'s> {
    /// An empty stage over a store.
    pub fn new(store: &'s BlockStore, content: &'s ContentStore) -> Stage<'s> {
        Stage {
            store,
            content,
            patch: Layer::default(),
            op: Layer::default(),
        }
    }

    /// The staged state of a block.
    pub fn get(&self, slot: Slot) -> &Block {
        self.op
            .blocks
            .get(&slot)
            .or_else(|| self.patch.blocks.get(&slot))
            .unwrap_or_else(|| self.store.block(slot))
    }

    /// The staged state of a block, to change; copied on first touch.
    pub fn get_mut(&mut self, slot: Slot) -> &mut Block {
        if !self.op.blocks.contains_key(&slot) {
            let copy = self.get(slot).clone();
            self.op.touched.push(slot);
            self.op.blocks.insert(slot, copy);
        }
        self.op.blocks.get_mut(&slot).expect("just inserted")
    }

    /// Stages a summary.
    pub fn push_summary(&mut self, summary: PendingSummary) {
        self.op.summaries.push(summary);
    }

    /// Records the payload an offload's key must hold.
    pub fn stash_payload(&mut self, key: String, payload: String) {
        self.op.payloads.push((key, payload));
    }

    /// The payload at a key: the content store's, or one this patch will store.
    pub fn payload(&self, key: &str) -> Option<&str> {
        self.content.get(key).or_else(|| {
            [&self.op, &self.patch]
                .into_iter()
                .flat_map(|l| l.payloads.iter())
                .find(|(k, _)| k == key)
                .map(|(_, p)| p.as_str())
        })
    }

    /// Ends the current op: its changes join the patch if it was accepted, else vanish.
    pub fn end_op(&mut self, accepted: bool) {
        let op = std::mem::take(&mut self.op);
        // divergence 4: CPAT keeps a rejected op's partial changes for the ops after it.
        if !accepted {
            return;
        }
        for slot in op.touched {
            if !self.patch.blocks.contains_key(&slot) {
                self.patch.touched.push(slot);
            }
        }
        self.patch.blocks.extend(op.blocks);
        self.patch.summaries.extend(op.summaries);
        self.patch.payloads.extend(op.payloads);
    }

    /// The summaries the accepted ops create, in op order.
    pub fn summaries(&self) -> &[PendingSummary] {
        &self.patch.summaries
    }

    /// The slots the accepted ops changed, in first-touch order.
    pub fn touched(&self) -> &[Slot] {
        &self.patch.touched
    }

    /// The accepted changes.
    pub fn finish(mut self) -> Staged {
        let blocks = self
            .patch
            .touched
            .iter()
            .map(|s| (*s, self.patch.blocks.remove(s).expect("touched")))
            .collect();
        Staged {
            blocks,
            summaries: self.patch.summaries,
            payloads: self.patch.payloads,
        }
    }
}
