//! A patch, start to end: every op checked in order against the stage (one rejection per op,
//! at its first broken rule), the chain check when all ops pass, then a [`Commit`] that says
//! exactly what changes, built before anything changes so that it can be made durable first
//! (`cpat_reference.md` §3–§5).

use std::collections::HashMap;

use serde::Serialize;

use super::args::Item;
use super::block::{content_key, Block, Content, Kind, Role};
use super::chain;
use super::content::ContentStore;
use super::ops::{self, Options};
use super::rules::Rule;
use super::stage::Stage;
use super::store::{Anchor, BlockStore, Slot, Totals};
use super::view::BlockCost;

/// One rejection: the op's index (`-1` for the chain check), the rule, the message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Rejection {
    /// 0-based, `-1` for `chain_atomicity`.
    pub op_index: i64,
    /// The rule's name.
    #[serde(serialize_with = "rule_name")]
    pub rule: Rule,
    /// The message.
    pub message: String,
}

fn rule_name<S: serde::Serializer>(rule: &Rule, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(rule.name())
}

/// The budget a patch result reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Budget {
    /// The window.
    pub max: u64,
    /// `floor(max × soft ratio)`.
    pub soft_limit: u64,
    /// The (calibrated) estimate of the view.
    pub used: u64,
}

/// What the agent receives, as CPAT's `PatchResult` (`types.ts:186-193`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PatchResult {
    /// Whether it was committed.
    pub ok: bool,
    /// The number of ops applied (0 when rejected).
    pub applied: usize,
    /// Every rejection, in op order.
    pub rejections: Vec<Rejection>,
    /// `max(0, Σ token_count visible before − after)`.
    pub freed_tokens: u64,
    /// The summaries created.
    pub created_block_ids: Vec<String>,
    /// The budget after the patch.
    pub budget: Budget,
}

/// A validated patch: the blocks it changes, the blocks it creates, the payloads it stores,
/// and the store's totals and id counter after it.
#[derive(Clone, Debug)]
pub struct Commit {
    /// Changed blocks, in first-touch order, with their new costs.
    pub changed: Vec<(Slot, Block, BlockCost)>,
    /// New summaries, in op order, with where they go.
    pub created: Vec<(Anchor, Block, BlockCost)>,
    /// New content keys and payloads, in the order they are stored.
    pub puts: Vec<(String, String)>,
    /// The totals after the commit.
    pub totals: Totals,
    /// The id counter after the commit.
    pub counter: u64,
    /// `freed_tokens`.
    pub freed_tokens: u64,
}

impl Commit {
    /// The ids of the created summaries.
    pub fn created_ids(&self) -> Vec<String> {
        self.created.iter().map(|(_, b, _)| b.id.clone()).collect()
    }
}

/// Checks every op and builds the commit; every rejection if any op (or the chain check)
/// fails. `now` stamps the summaries.
pub fn validate(
    store: &BlockStore,
    content: &ContentStore,
    items: &[Item],
    options: Options,
    now: &str,
) -> Result<Commit, Vec<Rejection>> {
    let mut stage = Stage::new(store, content);
    let mut rejections = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let outcome = match item {
            Ok(op) => ops::check(&mut stage, op, options),
            Err(bad) => Err(super::rules::invalid_field(bad.op, bad.field, bad.expected)),
        };
        if let Err(v) = &outcome {
            rejections.push(Rejection {
                op_index: i as i64,
                rule: v.rule,
                message: v.message.clone(),
            });
        }
        stage.end_op(outcome.is_ok());
    }
    if rejections.is_empty() {
        rejections.extend(chain::check(&stage).into_iter().map(|v| Rejection {
            op_index: -1,
            rule: v.rule,
            message: v.message,
        }));
    }
    if !rejections.is_empty() {
        return Err(rejections);
    }
    Ok(build_commit(store, content, stage, now))
}

fn build_commit(store: &BlockStore, content: &ContentStore, stage: Stage<'_>, now: &str) -> Commit {
    let staged = stage.finish();
    let before = store.totals();
    let mut totals = before;
    let mut puts: Vec<(String, String)> = Vec::new();
    let mut changed = Vec::with_capacity(staged.blocks.len());
    for (slot, block) in staged.blocks {
        let real = store.block(slot);
        if block.version > real.version {
            if let Content::Inline(text) = &block.content {
                push_new(&mut puts, content, block.content_key(), text);
            }
        }
        let cost = store.cost_of(&block);
        totals = totals.with_change(Some(store.cost(slot)), &cost);
        changed.push((slot, block, cost));
    }
    for (key, payload) in staged.payloads {
        push_new(&mut puts, content, key, &payload);
    }
    let mut counter = store.id_counter();
    let mut created = Vec::with_capacity(staged.summaries.len());
    for s in staged.summaries {
        let id = store.free_id("summary", &mut counter);
        let token_count = store.tokens().count(&s.content);
        let mut block = Block::created(
            id,
            Role::Assistant,
            Kind::Summary,
            s.description,
            s.content,
            token_count,
            now,
        );
        block.source_ids = s.source_ids;
        if let Content::Inline(text) = &block.content {
            push_new(&mut puts, content, content_key(&block.id, 1), text);
        }
        let cost = store.cost_of(&block);
        totals = totals.with_change(None, &cost);
        created.push((s.anchor, block, cost));
    }
    Commit {
        changed,
        created,
        puts,
        freed_tokens: before
            .visible_token_count
            .saturating_sub(totals.visible_token_count),
        totals,
        counter,
    }
}

/// Adds a put unless the key is stored or already put (a key is written once).
fn push_new(puts: &mut Vec<(String, String)>, content: &ContentStore, key: String, text: &str) {
    if !content.contains(&key) && !puts.iter().any(|(k, _)| *k == key) {
        puts.push((key, text.to_owned()));
    }
}

/// Makes a commit visible in memory; it cannot fail.
pub fn apply(store: &mut BlockStore, content: &mut ContentStore, commit: Commit) {
    for (key, payload) in &commit.puts {
        content.put(key, payload);
    }
    for (slot, block, cost) in commit.changed {
        store.replace_with_cost(slot, block, cost);
    }
    // divergence 6: summaries anchored on one block keep their creation order (CPAT splices
    // each right after the anchor, so a later one goes before an earlier one).
    let mut last: HashMap<Anchor, Slot> = HashMap::new();
    for (anchor, block, _) in commit.created {
        let at = last.get(&anchor).map_or(anchor, |&s| Anchor::After(s));
        let slot = store.insert(block, at);
        last.insert(anchor, slot);
    }
    store.advance_id_counter(commit.counter);
}
