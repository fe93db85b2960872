//! `merge`: two or more overlapping blocks (a file read twice) into one, combining them
//! (`update`) or letting the newer win (`contradiction`).

use crate::context::args::Output;
use crate::context::rules::{self, Violation};
use crate::context::stage::Stage;
use crate::context::store::Slot;
use crate::context::text::is_blank;

/// `merge_output`, `merge_arity` (duplicates counted), `merge_resolution`, then the collapse.
pub fn check(
    stage: &mut Stage<'_>,
    targets: &[Slot],
    ids: &[String],
    output: &Output,
    resolution: &str,
) -> Result<(), Violation> {
    if is_blank(&output.content) || is_blank(&output.description) {
        return Err(rules::merge_output());
    }
    if ids.len() < 2 {
        return Err(rules::merge_arity());
    }
    let tag = match resolution {
        "update" => "[merged] ",
        "contradiction" => "[merged (contradiction resolved)] ",
        _ => return Err(rules::merge_resolution()),
    };
    let description = format!("{tag}{}", output.description);
    super::collapse::collapse(stage, targets, ids, description, output.content.clone())
}
