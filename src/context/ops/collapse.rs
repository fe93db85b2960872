//! What compact, merge and fold share (CPAT's `collapseIntoBlock`): the sources are archived
//! and one summary is staged right after the block that precedes the earliest source.

use crate::context::block::{Kind, Visibility};
use crate::context::rules::{self, Violation};
use crate::context::stage::{PendingSummary, Stage};
use crate::context::store::{Anchor, Slot};

/// The guards (per target: `protected_state`, `protected_current_question`), then per target
/// `hidden_target` while archiving, then the summary.
pub fn collapse(
    stage: &mut Stage<'_>,
    targets: &[Slot],
    ids: &[String],
    description: String,
    content: String,
) -> Result<(), Violation> {
    let question = stage.store.current_question();
    for &t in targets {
        let b = stage.get(t);
        if b.kind == Kind::TaskState {
            return Err(rules::protected_state(&b.id));
        }
        if Some(t) == question {
            return Err(rules::protected_current_question(&b.id));
        }
    }
    for &t in targets {
        let b = stage.get(t);
        if b.visibility == Visibility::Hidden {
            return Err(rules::hidden_target(&b.id));
        }
        stage.get_mut(t).visibility = Visibility::Archived;
    }
    let first = targets
        .iter()
        .map(|&t| stage.store.position(t))
        .min()
        .expect("targets are not empty");
    // divergence 6: CPAT appends a summary of the first block at the end of the store.
    let anchor = match first {
        0 => Anchor::Start,
        i => Anchor::After(stage.store.at(i - 1)),
    };
    stage.push_summary(PendingSummary {
        anchor,
        description,
        content,
        source_ids: ids.to_vec(),
    });
    Ok(())
}
