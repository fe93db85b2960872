//! The seed's governance ladder (004, 11.2), run before every model call, cheapest first,
//! then CPAT's pressure ladder (`cpat_reference.md` §9). Every measure is an engine patch with
//! actor `runtime`, journaled with a reason that names its step, and recorded in the
//! transcript as a `context` record:
//!
//! 1. `spill`: a visible inline tool result over `spill_tokens` is offloaded to the content
//!    store; the block keeps a preview of `preview_chars` and its `artifact://` key.
//! 2. `clear_stale`: when the prompt cache is cold (no call yet, or the last call ended
//!    `cache_ttl` ago or more), the inline tool results before the `keep_recent` most recent
//!    tool results the model sees (inline or offloaded; never fewer than one kept) are
//!    offloaded with a one-line note. A warm cache is left
//!    alone: its prefix would be paid for again if it changed.
//! 3. `fold`: above `collapse_ratio` of the window, finished subtasks (a reply with calls and
//!    all its results, older than the `keep_recent` most recent) are folded, oldest first,
//!    into a scope summary the runtime writes from the calls and the first line of each
//!    result, until the estimate is below the threshold; a subtask whose summary would not be
//!    smaller than it is left as it is.
//! 4. `compact`: above `compact_ratio`, one model call with the seed's prompt
//!    ([`super::compaction`]).
//!
//! Then the budget: at critical pressure CPAT's fallback offloads the largest inline tool
//! results of 300 tokens or more (with the generational layout, CPAT's generational fallback
//! retires them oldest first instead); at soft pressure or above, every turn, the budget report
//! rotates as CPAT's `checkBudget` does: the reports the model sees are hidden and a new
//! `budget_report` block (CPAT's JSON) is ingested.

use std::time::Duration;

use serde_json::json;

use crate::context::args::{ContextUpdate, Operation, Output, ReplaceWith};
use crate::context::block::{Block, Content, Kind, Visibility};
use crate::context::fallback::{cached_fraction, critical_fallback, generational_fallback};
use crate::context::store::Slot;
use crate::context::text::head_utf16;
use crate::context::{Actor, EngineError, Pressure};

use super::super::transcript::{Rec, Transcript};
use super::{Caller, ContextLoop};

/// The ladder's thresholds and limits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ladder {
    /// A tool result over this many tokens is spilled (2,000).
    pub spill_tokens: u64,
    /// UTF-16 units of a spilled result kept as its preview (1,000).
    pub preview_chars: usize,
    /// Tool results and subtasks kept as they are, most recent first (3; at least 1).
    pub keep_recent: usize,
    /// The prompt cache is cold this long after a call (300 s, a provider's usual TTL).
    pub cache_ttl: Duration,
    /// Fold finished subtasks above this fraction of the window (0.75).
    pub collapse_ratio: f64,
    /// Compact above this fraction of the window (0.9).
    pub compact_ratio: f64,
}

impl Default for Ladder {
    fn default() -> Ladder {
        Ladder {
            spill_tokens: 2_000,
            preview_chars: 1_000,
            keep_recent: 3,
            cache_ttl: Duration::from_secs(300),
            collapse_ratio: 0.75,
            compact_ratio: 0.9,
        }
    }
}

/// The retrieval hint of the runtime's offloads (CPAT's).
pub const RETRIEVAL_HINT: &str =
    "Call artifact_get with this block's uri if the raw payload is needed.";

/// What a budget report asks the model to keep (frontier's wording; CPAT's four strings are
/// not in the reference).
pub const REQUIRED_PRESERVE: [&str; 4] = [
    "the current question, verbatim",
    "open tool-call chains (a call and its result go together)",
    "decisions taken and why",
    "file names, identifiers and errors still in play",
];

/// The four steps, then the budget.
pub(super) fn run(
    ctx: &mut ContextLoop,
    model: &mut Caller<'_>,
    transcript: &mut Transcript<'_>,
    turn: u32,
    max_tokens: u32,
) -> Result<(), EngineError> {
    spill(ctx, transcript, turn)?;
    if ctx.cache_cold() {
        clear_stale(ctx, transcript, turn)?;
    }
    let max = ctx.engine.config().max_tokens as f64;
    let collapse_at = (max * ctx.ladder.collapse_ratio) as u64;
    if ctx.engine.budget().used > collapse_at {
        fold(ctx, transcript, turn, collapse_at)?;
    }
    let compact_at = (max * ctx.ladder.compact_ratio) as u64;
    if ctx.engine.budget().used > compact_at {
        super::compaction::compact(ctx, model, transcript, turn, max_tokens, "compact")?;
    }
    budget(ctx, transcript, turn)
}

/// Applies one runtime patch and records it.
pub(super) fn apply(
    ctx: &mut ContextLoop,
    transcript: &mut Transcript<'_>,
    turn: u32,
    step: &str,
    reason: String,
    operations: Vec<Operation>,
) -> Result<bool, EngineError> {
    let ids: Vec<String> = operations.iter().flat_map(|o| o.ids().to_vec()).collect();
    let update = ContextUpdate {
        reason,
        operations: operations.into_iter().map(Ok).collect(),
    };
    let result = ctx.engine.apply(&update, Actor::Runtime)?;
    transcript.record(
        Rec::new("context")
            .field("turn", turn)
            .field("step", step)
            .field("ids", &ids)
            .field("ok", result.ok)
            .field("freed_tokens", result.freed_tokens)
            .field("used", result.budget.used)
            .field("rejections", &result.rejections),
    );
    Ok(result.ok)
}

/// Whether a block is a tool result the model sees inline.
fn inline_result(b: &Block) -> bool {
    b.kind == Kind::ToolResult && b.visibility == Visibility::Model && !b.content.is_ref()
}

fn offload(b: &Block, description: String, summary: String) -> Operation {
    Operation::PayloadOffload {
        ids: vec![b.id.clone()],
        store: "file".to_owned(),
        replace_with: ReplaceWith {
            description,
            summary,
            retrieval_hint: RETRIEVAL_HINT.to_owned(),
        },
    }
}

/// Step 1.
fn spill(
    ctx: &mut ContextLoop,
    transcript: &mut Transcript<'_>,
    turn: u32,
) -> Result<(), EngineError> {
    let limit = ctx.ladder.spill_tokens;
    let preview = ctx.ladder.preview_chars;
    let ops: Vec<Operation> = ctx
        .engine
        .store()
        .iter()
        .filter(|b| inline_result(b) && b.token_count > limit)
        .filter_map(|b| {
            let Content::Inline(text) = &b.content else {
                return None;
            };
            Some(offload(
                b,
                format!("{} (spilled)", b.description),
                format!(
                    "Spilled: {} tokens, over the limit of {limit}. Preview:\n{}",
                    b.token_count,
                    head_utf16(text, preview)
                ),
            ))
        })
        .collect();
    if !ops.is_empty() {
        let reason = format!("spill: tool results over {limit} tokens");
        apply(ctx, transcript, turn, "spill", reason, ops)?;
    }
    Ok(())
}

/// Step 2 (also the first measure of the overflow path).
pub(super) fn clear_stale(
    ctx: &mut ContextLoop,
    transcript: &mut Transcript<'_>,
    turn: u32,
) -> Result<(), EngineError> {
    let keep = ctx.ladder.keep_recent.max(1);
    let note = "Stale tool result cleared (the prompt cache was cold).";
    let tokens = ctx.engine.store().tokens().clone();
    // Only a result bigger than the reference that replaces it is worth clearing.
    let floor = tokens.count(note) + tokens.count(RETRIEVAL_HINT) + 16;
    // The most recent `keep` are counted among all the tool results the model sees, inline
    // or already offloaded (a spilled result is one of the most recent too): the seed keeps
    // the last N tool results and clears the ones before them.
    let results: Vec<&Block> = ctx
        .engine
        .store()
        .iter()
        .filter(|b| b.kind == Kind::ToolResult && b.visibility == Visibility::Model)
        .collect();
    let stale = results.len().saturating_sub(keep);
    let ops: Vec<Operation> = results[..stale]
        .iter()
        .filter(|b| inline_result(b) && b.token_count > floor)
        .map(|b| offload(b, format!("{} (cleared)", b.description), note.to_owned()))
        .collect();
    if !ops.is_empty() {
        let reason =
            format!("clear_stale: cold cache, keeping the {keep} most recent tool results");
        apply(ctx, transcript, turn, "clear_stale", reason, ops)?;
    }
    Ok(())
}

/// Step 3.
fn fold(
    ctx: &mut ContextLoop,
    transcript: &mut Transcript<'_>,
    turn: u32,
    threshold: u64,
) -> Result<(), EngineError> {
    let keep = ctx.ladder.keep_recent.max(1);
    let store = ctx.engine.store();
    let heads: Vec<Slot> = (0..store.len())
        .map(|i| store.at(i))
        .filter(|&s| {
            let b = store.block(s);
            b.kind == Kind::AssistantMessage
                && b.visibility == Visibility::Model
                && b.api().is_some_and(|a| a.is_head())
        })
        .collect();
    let old = heads.len().saturating_sub(keep);
    let mut subtasks = Vec::new();
    for &head in &heads[..old] {
        let chain = store.chain_of(head);
        let whole = chain
            .iter()
            .all(|&s| store.block(s).visibility == Visibility::Model);
        let mut at: Vec<usize> = chain.iter().map(|&s| store.position(s)).collect();
        at.sort_unstable();
        let contiguous = at.windows(2).all(|w| w[1] == w[0] + 1);
        if whole && contiguous {
            let blocks: Vec<&Block> = chain.iter().map(|&s| store.block(s)).collect();
            let folded = subtask(&blocks, ctx);
            // Only a fold that frees tokens is worth the detail it hides.
            let before: u64 = blocks.iter().map(|b| b.token_count).sum();
            if store.tokens().count(&folded.1.content) < before {
                subtasks.push(folded);
            }
        }
    }
    for (ids, output, label) in subtasks {
        if ctx.engine.budget().used <= threshold {
            break;
        }
        let op = Operation::Fold {
            ids,
            output,
            scope_label: label.clone(),
        };
        let reason = format!("fold: finished subtask ({label})");
        apply(ctx, transcript, turn, "fold", reason, vec![op])?;
    }
    Ok(())
}

/// Characters of a result's first line kept in a fold's summary.
const FOLD_LINE_CHARS: usize = 160;

/// A finished subtask's ids, its summary and its label, written from the calls and results.
fn subtask(blocks: &[&Block], ctx: &ContextLoop) -> (Vec<String>, Output, String) {
    let mut lines = Vec::new();
    let mut calls = Vec::new();
    for b in &blocks[1..] {
        let Some(key) = b.api().and_then(|a| a.tool_call_id.as_deref()) else {
            continue;
        };
        let (id, status) = ctx
            .calls
            .get(key)
            .map_or((key, "ok"), |k| (k.id.as_str(), k.status));
        let name = b.api().and_then(|a| a.name.as_deref()).unwrap_or("?");
        let text = b.content.rendered();
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        lines.push(format!(
            "- {id} {name} → {status}: {}",
            head_utf16(first, FOLD_LINE_CHARS)
        ));
        calls.push(format!("{id} {name}"));
    }
    let ids = blocks.iter().map(|b| b.id.clone()).collect();
    let label = format!("calls {}", calls.join(", "));
    let output = Output {
        description: format!("Finished subtask: {}", calls.join(", ")),
        content: format!(
            "Folded by the runtime; the blocks are archived (set_visibility=model brings them \
             back).\n{}",
            lines.join("\n")
        ),
    };
    (ids, output, label)
}

/// CPAT's pressure ladder: the critical fallback, then a report per level.
fn budget(
    ctx: &mut ContextLoop,
    transcript: &mut Transcript<'_>,
    turn: u32,
) -> Result<(), EngineError> {
    let before = ctx.engine.budget();
    if before.pressure == Pressure::Ok {
        ctx.reported = None;
        return Ok(());
    }
    if before.pressure == Pressure::Critical {
        // With the generational layout (`--generational`), CPAT's generational fallback: the
        // oldest first, gated on the turns left and the last call's cached fraction.
        let (step, offloaded, cached) = if ctx.engine.config().generational {
            let cached = cached_fraction(&ctx.last_usage);
            let turns = u64::from(ctx.max_turns);
            let offloaded = generational_fallback(&mut ctx.engine, turns, ctx.llm_calls, cached)?;
            ("generational_fallback", offloaded, Some(cached))
        } else {
            (
                "critical_fallback",
                critical_fallback(&mut ctx.engine)?,
                None,
            )
        };
        let mut record = Rec::new("context")
            .field("turn", turn)
            .field("step", step)
            .field("offloaded", offloaded)
            .field("used", ctx.engine.budget().used);
        if let Some(cached) = cached {
            // What the gate read: the last call's reported cached fraction.
            record = record.field("cached_fraction", cached);
        }
        transcript.record(record);
    }
    // CPAT: the report says soft when the fallback brought the level to ok or soft.
    let level = match ctx.engine.budget().pressure {
        Pressure::Ok | Pressure::Soft => Pressure::Soft,
        p => p,
    };
    // Every turn at soft pressure or above, CPAT's rotation: the reports before are hidden
    // and a new `budget_report` block holds the JSON (the view wraps it in
    // `<budget_report>`).
    let now = ctx.engine.budget();
    let report = report_json(ctx, now.used, now.max, now.soft_limit, level);
    let text = serde_json::to_string_pretty(&report).unwrap_or_default();
    ctx.engine.report_budget(text, level)?;
    ctx.reported = Some(level);
    transcript.record(
        Rec::new("context")
            .field("turn", turn)
            .field("step", "budget_report")
            .field("pressure", level)
            .field("used", now.used),
    );
    Ok(())
}

/// CPAT's report: the budget, the five largest visible inline tool results, replies or
/// summaries with the ops that would shrink them, what must be preserved.
fn report_json(
    ctx: &ContextLoop,
    used: u64,
    max: u64,
    soft: u64,
    level: Pressure,
) -> serde_json::Value {
    let mut largest: Vec<&Block> = ctx
        .engine
        .store()
        .iter()
        .filter(|b| {
            b.is_visible()
                && !b.content.is_ref()
                && matches!(
                    b.kind,
                    Kind::ToolResult | Kind::AssistantMessage | Kind::Summary
                )
        })
        .collect();
    largest.sort_by_key(|b| std::cmp::Reverse(b.token_count));
    let blocks: Vec<serde_json::Value> = largest
        .iter()
        .take(5)
        .map(|b| {
            let ops = if b.kind == Kind::ToolResult {
                ["payload_offload", "compact"]
            } else {
                ["compact", "set_visibility:archived"]
            };
            json!({
                "block_id": b.id,
                "kind": b.kind.as_str(),
                "tokens": b.token_count,
                "description": b.description,
                "suggested_ops": ops,
            })
        })
        .collect();
    json!({
        "used_tokens": used,
        "max_tokens": max,
        "soft_limit": soft,
        "pressure": level,
        "largest_blocks": blocks,
        "required_preserve": REQUIRED_PRESERVE,
    })
}
