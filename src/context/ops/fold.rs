//! `fold`: a contiguous range of blocks (a finished subtask) into one scope summary.

use crate::context::args::Output;
use crate::context::rules::{self, Violation};
use crate::context::stage::Stage;
use crate::context::store::Slot;
use crate::context::text::is_blank;

/// `fold_output`, `fold_scope`, `fold_range`, then the collapse.
pub fn check(
    stage: &mut Stage<'_>,
    targets: &[Slot],
    ids: &[String],
    output: &Output,
    scope_label: &str,
) -> Result<(), Violation> {
    if is_blank(&output.content) || is_blank(&output.description) {
        return Err(rules::fold_output());
    }
    if is_blank(scope_label) {
        return Err(rules::fold_scope());
    }
    // The store's order, parked blocks included, as CPAT: a parked block between two targets
    // breaks the range, and so does a duplicate id.
    let mut at: Vec<usize> = targets.iter().map(|&t| stage.store.position(t)).collect();
    at.sort_unstable();
    if at.windows(2).any(|w| w[1] != w[0] + 1) {
        return Err(rules::fold_range());
    }
    let description = format!("[folded scope: {scope_label}] {}", output.description);
    super::collapse::collapse(stage, targets, ids, description, output.content.clone())
}
