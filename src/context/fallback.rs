//! CPAT's critical fallback (`runtime.ts:201-238`): under critical pressure the runtime
//! offloads the largest inline tool results of 300 tokens or more, largest first, until the
//! estimate is below the soft limit. Each offload is an engine patch with actor `runtime`,
//! journaled like the agent's.

use super::args::{ContextUpdate, Operation, ReplaceWith};
use super::block::{Content, Kind};
use super::engine::{Actor, Engine, EngineError};
use super::text::head_utf16;

/// The smallest tool result the fallback offloads, in tokens.
pub const MIN_FALLBACK_TOKENS: u64 = 300;
/// The UTF-16 units of payload the offload's summary keeps.
pub const FALLBACK_HEAD_UNITS: usize = 300;

/// Offloads the largest inline tool results until the budget is below its soft limit; the
/// number of offloads committed. (CPAT also counts the rejected ones.)
pub fn critical_fallback(engine: &mut Engine) -> Result<usize, EngineError> {
    let mut candidates: Vec<(u64, String)> = engine
        .store()
        .iter()
        .filter(|b| {
            b.is_visible()
                && b.kind == Kind::ToolResult
                && !b.content.is_ref()
                && b.token_count >= MIN_FALLBACK_TOKENS
        })
        .map(|b| (b.token_count, b.id.clone()))
        .collect();
    candidates.sort_by_key(|c| std::cmp::Reverse(c.0));
    let mut done = 0;
    for (_, id) in candidates {
        let budget = engine.budget();
        if (budget.used as f64) < engine.config().max_tokens as f64 * engine.config().soft_ratio {
            break;
        }
        let b = engine.store().get(&id).expect("a candidate exists");
        let Content::Inline(text) = &b.content else {
            continue;
        };
        let update = ContextUpdate {
            reason: "critical budget pressure".to_owned(),
            operations: vec![Ok(Operation::PayloadOffload {
                ids: vec![id.clone()],
                store: "file".to_owned(),
                replace_with: ReplaceWith {
                    description: format!("{} (runtime auto-offloaded)", b.description),
                    summary: format!(
                        "Auto-offloaded under critical budget pressure. Head of payload:\n{}",
                        head_utf16(text, FALLBACK_HEAD_UNITS)
                    ),
                    retrieval_hint:
                        "Call artifact_get with this block's uri if the raw payload is needed."
                            .to_owned(),
                },
            })],
        };
        if engine.apply(&update, Actor::Runtime)?.ok {
            done += 1;
        }
    }
    Ok(done)
}
