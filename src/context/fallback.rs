//! CPAT's fallbacks under critical pressure (`cpat_reference.md` §9): the runtime offloads
//! inline tool results of 300 tokens or more, one engine patch with actor `runtime` each
//! (journaled like the agent's), until the estimate is below the soft limit.
//!
//! - [`critical_fallback`] (`runtime.ts:201-238`) takes the largest first.
//! - [`generational_fallback`] (`runtime.ts:258-313`, with [`Config::generational`]) retires
//!   the oldest first, each into a new generation of the generational layout
//!   ([`super::generational`]), and does nothing when so few uncached turns remain that
//!   rewriting the tail would not pay for itself.
//!
//! [`Config::generational`]: super::Config::generational

use serde_json::Value;

use super::args::{ContextUpdate, Operation, ReplaceWith};
use super::block::{Content, Kind};
use super::engine::{Actor, Engine, EngineError};
use super::text::head_utf16;

/// The smallest tool result the fallback offloads, in tokens.
pub const MIN_FALLBACK_TOKENS: u64 = 300;
/// The UTF-16 units of payload the offload's summary keeps.
pub const FALLBACK_HEAD_UNITS: usize = 300;

const CRITICAL_LEAD: &str = "Auto-offloaded under critical budget pressure. Head of payload:\n";
const GENERATIONAL_LEAD: &str =
    "Batch-offloaded under budget pressure (generational tail). Head of payload:\n";

/// The visible inline tool results of [`MIN_FALLBACK_TOKENS`] or more, in store order (which
/// is their insertion order: tool results are always appended), with their token counts.
fn candidates(engine: &Engine) -> Vec<(u64, String)> {
    engine
        .store()
        .iter()
        .filter(|b| {
            b.is_visible()
                && b.kind == Kind::ToolResult
                && !b.content.is_ref()
                && b.token_count >= MIN_FALLBACK_TOKENS
        })
        .map(|b| (b.token_count, b.id.clone()))
        .collect()
}

/// How one fallback offloads a block.
struct Offload {
    reason: &'static str,
    summary_lead: &'static str,
    /// Whether a committed offload retires its block into a new generation.
    retiring: bool,
}

/// Offloads `targets` in order, each while the budget is at or above its soft limit; the
/// number of offloads committed.
fn offload_until_soft(
    engine: &mut Engine,
    targets: impl IntoIterator<Item = String>,
    how: &Offload,
) -> Result<usize, EngineError> {
    let mut done = 0;
    for id in targets {
        let budget = engine.budget();
        if (budget.used as f64) < engine.config().max_tokens as f64 * engine.config().soft_ratio {
            break;
        }
        let b = engine.store().get(&id).expect("a candidate exists");
        let Content::Inline(text) = &b.content else {
            continue;
        };
        let update = ContextUpdate {
            reason: how.reason.to_owned(),
            operations: vec![Ok(Operation::PayloadOffload {
                ids: vec![id.clone()],
                store: "file".to_owned(),
                replace_with: ReplaceWith {
                    description: format!("{} (runtime auto-offloaded)", b.description),
                    summary: format!(
                        "{}{}",
                        how.summary_lead,
                        head_utf16(text, FALLBACK_HEAD_UNITS)
                    ),
                    retrieval_hint:
                        "Call artifact_get with this block's uri if the raw payload is needed."
                            .to_owned(),
                },
            })],
        };
        let result = if how.retiring {
            engine.apply_retiring(&update, Actor::Runtime)?
        } else {
            engine.apply(&update, Actor::Runtime)?
        };
        if result.ok {
            done += 1;
        }
    }
    Ok(done)
}

/// Offloads the largest inline tool results until the budget is below its soft limit; the
/// number of offloads committed. (CPAT also counts the rejected ones.)
pub fn critical_fallback(engine: &mut Engine) -> Result<usize, EngineError> {
    let mut targets = candidates(engine);
    targets.sort_by_key(|c| std::cmp::Reverse(c.0));
    offload_until_soft(
        engine,
        targets.into_iter().map(|(_, id)| id),
        &Offload {
            reason: "critical budget pressure",
            summary_lead: CRITICAL_LEAD,
            retiring: false,
        },
    )
}

/// Whether the generational fallback runs: CPAT's gate, with `estRemainingTurns =
/// max(1, max_turns − llm_calls)`, skips when `estRemainingTurns × (1 − cached_fraction) ≤ 1`
/// (so few uncached turns are left that a rewritten tail would not be reused).
pub fn generational_gate(max_turns: u64, llm_calls: u64, cached_fraction: f64) -> bool {
    let remaining = max_turns.saturating_sub(llm_calls).max(1);
    remaining as f64 * (1.0 - cached_fraction) > 1.0
}

/// The fraction of the last call's prompt served from the cache:
/// `prompt_cache_hit_tokens / prompt_tokens` of its usage, 0 when either is missing or the
/// prompt is empty, at most 1.
pub fn cached_fraction(usage: &Value) -> f64 {
    let field = |name| usage.get(name).and_then(Value::as_u64);
    match (field("prompt_cache_hit_tokens"), field("prompt_tokens")) {
        (Some(hit), Some(prompt)) if prompt > 0 => (hit as f64 / prompt as f64).min(1.0),
        _ => 0.0,
    }
}

/// CPAT's generational fallback: unless [`generational_gate`] says to skip (then nothing is
/// offloaded), retires the inline tool results of [`MIN_FALLBACK_TOKENS`] or more oldest
/// first, each offloaded by its own patch (journaled with its generation, see
/// [`Engine::apply_retiring`]) and given a new generation when committed, until the budget is
/// below its soft limit; the number committed (CPAT counts only these here too).
///
/// `max_turns` is the run's turn limit, `llm_calls` the model calls made so far and
/// `cached_fraction` the last call's ([`cached_fraction`]; 0 before any call).
pub fn generational_fallback(
    engine: &mut Engine,
    max_turns: u64,
    llm_calls: u64,
    cached_fraction: f64,
) -> Result<usize, EngineError> {
    if !generational_gate(max_turns, llm_calls, cached_fraction) {
        return Ok(0);
    }
    let targets = candidates(engine);
    offload_until_soft(
        engine,
        targets.into_iter().map(|(_, id)| id),
        &Offload {
            reason: "generational tail under budget pressure",
            summary_lead: GENERATIONAL_LEAD,
            retiring: true,
        },
    )
}
