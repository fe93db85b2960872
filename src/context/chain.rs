//! `chain_atomicity`: after every op of a patch is accepted, no tool-call chain may be left
//! half in the view; an orphan `role:"tool"` message (or a call without its result) makes the
//! next API call fail with a 400.
//!
//! Only chains with a member whose visibility the patch changes are examined (divergence 5):
//! a chain that was already broken does not block unrelated patches, and a patch that touches
//! a chain must leave it whole. The message names, as CPAT's does, the first chain member in
//! store order that stays visible and the first member in chain order that does not.
//!
//! A chain is also broken when a block that is not one of its members comes into the view
//! between its head and its results (a released reasoning trace brought back with
//! `set_visibility`, say, or a summary whose earliest source is one of the chain's results,
//! which goes where that source stood, while the rest of the chain stays in the view): the
//! endpoint wants the results right after the calls. CPAT does not check this.

use std::collections::HashSet;

use super::rules::{self, Violation};
use super::stage::Stage;
use super::store::{Anchor, Slot};

/// The chains the stage breaks, one violation each, in store order.
pub fn check(stage: &Stage<'_>) -> Vec<Violation> {
    let store = stage.store;
    let mut seen_heads = HashSet::new();
    let mut broken: Vec<(usize, Violation)> = Vec::new();
    for &slot in stage.touched() {
        if stage.get(slot).is_visible() == store.block(slot).is_visible() {
            continue;
        }
        let chain = store.chain_of(slot);
        if chain.len() < 2 || !seen_heads.insert(chain[0]) {
            continue;
        }
        let visible = |s: &Slot| stage.get(*s).is_visible();
        let Some(member) = chain.iter().find(|s| !visible(s)) else {
            continue;
        };
        let Some(stays) = chain
            .iter()
            .filter(|s| visible(s))
            .min_by_key(|&&s| store.position(s))
        else {
            continue;
        };
        let key: Vec<&str> = chain.iter().map(|&s| store.block(s).id.as_str()).collect();
        broken.push((
            store.position(*stays),
            rules::chain_atomicity(
                &store.block(*stays).id,
                &store.block(*member).id,
                &key.join(", "),
            ),
        ));
    }
    // Interposition: once per chain, not for a chain reported above, nor for one that was
    // already interposed before the patch (divergence 5, as for a chain already half out).
    let mut reported: HashSet<Slot> = broken_heads(stage, &seen_heads);
    let now = |s: Slot| stage.get(s).is_visible();
    let report = |head: Slot, reported: &mut HashSet<Slot>| {
        !already_interposed(stage, head) && reported.insert(head)
    };
    for &slot in stage.touched() {
        if stage.get(slot).is_visible() && !store.block(slot).is_visible() {
            let at = store.position(slot);
            if let Some(head) = interposed(stage, &now, at, Some(slot)) {
                if report(head, &mut reported) {
                    let v = rules::chain_interposed(
                        &store.block(slot).id,
                        &block_id(stage, head),
                        &chain_key(stage, head),
                    );
                    broken.push((at, v));
                }
            }
        }
    }
    for summary in stage.summaries() {
        // A summary goes right after its anchor: between the anchor and the block after it.
        let Anchor::After(prev) = summary.anchor else {
            continue;
        };
        let at = store.position(prev) + 1;
        if let Some(head) = interposed(stage, &now, at, None) {
            if report(head, &mut reported) {
                let sources: Vec<String> = summary
                    .source_ids
                    .iter()
                    .map(|id| format!("\"{id}\""))
                    .collect();
                let v = rules::summary_interposed(
                    &sources.join(", "),
                    &block_id(stage, head),
                    &chain_key(stage, head),
                );
                broken.push((at, v));
            }
        }
    }
    broken.sort_by_key(|(at, _)| *at);
    broken.into_iter().map(|(_, v)| v).collect()
}

/// The heads of the chains among `heads` that the stage leaves half in the view (the ones the
/// first check reported).
fn broken_heads(stage: &Stage<'_>, heads: &HashSet<Slot>) -> HashSet<Slot> {
    let store = stage.store;
    heads
        .iter()
        .copied()
        .filter(|&head| {
            let chain = store.chain_of(head);
            let visible = chain.iter().filter(|&&s| stage.get(s).is_visible()).count();
            visible > 0 && visible < chain.len()
        })
        .collect()
}

fn block_id(stage: &Stage<'_>, slot: Slot) -> String {
    stage.store.block(slot).id.clone()
}

/// A chain's ids, in chain order, joined as the messages name them.
fn chain_key(stage: &Stage<'_>, head: Slot) -> String {
    let store = stage.store;
    let ids: Vec<&str> = store
        .chain_of(head)
        .iter()
        .map(|&s| store.block(s).id.as_str())
        .collect();
    ids.join(", ")
}

/// Whether, before the patch, a block that is not a member of `head`'s chain already stood
/// in the view between the head and one of its results.
fn already_interposed(stage: &Stage<'_>, head: Slot) -> bool {
    let store = stage.store;
    let before = |s: Slot| store.block(s).is_visible();
    let chain = store.chain_of(head);
    if !before(head) {
        return false;
    }
    let from = store.position(head) + 1;
    let to = chain.iter().map(|&m| store.position(m)).max().unwrap_or(0);
    (from..to).any(|at| {
        let s = store.at(at);
        before(s) && !chain.contains(&s) && interposed(stage, &before, at, Some(s)) == Some(head)
    })
}

/// Whether a block standing in the view at order position `at` (`slot`, or a block the patch
/// creates there, with the block now at `at` after it), not a member of the chain around it,
/// stands between that chain's visible head and a visible result, the view being the blocks
/// `visible` says are in it: the head.
fn interposed(
    stage: &Stage<'_>,
    visible: &dyn Fn(Slot) -> bool,
    at: usize,
    slot: Option<Slot>,
) -> Option<Slot> {
    let store = stage.store;
    // Back to the nearest head in the view, over results, reasoning traces and the blocks out
    // of the view (an archived chain interleaved with a visible one is not what the endpoint
    // sees between the visible head and its results).
    let head = (0..at).rev().map(|i| store.at(i)).find_map(|s| {
        let b = store.block(s);
        if !visible(s) {
            return None;
        }
        match b.api() {
            Some(api) if api.is_head() => Some(Some(s)),
            Some(api) if api.tool_call_id.is_some() => None,
            _ if b.kind == super::block::Kind::ReasoningTrace => None,
            _ => Some(None),
        }
    })??;
    let chain = store.chain_of(head);
    if slot.is_some_and(|s| chain.contains(&s)) || !visible(head) {
        return None;
    }
    let after = chain
        .iter()
        .any(|&m| store.position(m) >= at && Some(m) != slot && visible(m));
    after.then_some(head)
}
