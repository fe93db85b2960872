//! `compact`: any set of finished blocks into one summary, which must say what it keeps
//! (`preserve`) and what it lets go (`drop`).

use crate::context::args::Output;
use crate::context::rules::{self, Violation};
use crate::context::stage::Stage;
use crate::context::store::Slot;
use crate::context::text::is_blank;

/// `compact_output`, `compact_policy`, then the collapse.
pub fn check(
    stage: &mut Stage<'_>,
    targets: &[Slot],
    ids: &[String],
    output: &Output,
    preserve: &[String],
    _drop: &[String],
) -> Result<(), Violation> {
    if is_blank(&output.content) || is_blank(&output.description) {
        return Err(rules::compact_output());
    }
    // `drop` may be empty; its type was checked when the arguments were read.
    if preserve.is_empty() {
        return Err(rules::compact_policy());
    }
    super::collapse::collapse(
        stage,
        targets,
        ids,
        output.description.clone(),
        output.content.clone(),
    )
}
