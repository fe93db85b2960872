//! The eight ops, one module each, with CPAT's checks in CPAT's order (`cpat_reference.md`
//! §3.1). [`check`] runs the checks every op shares (ids, existence, unpatchable kinds) and
//! hands the targets to the op's own module, which checks and changes the staged copies.
//!
//! | module | op |
//! |---|---|
//! | [`set_visibility`] | park or bring back whole blocks |
//! | [`offload`] | `payload_offload`: a reference in place of the payload, zero-copy |
//! | [`restore`] | the payload back inline |
//! | [`collapse`] | what compact, merge and fold share: archive the sources, stage a summary |
//! | [`compact`], [`merge`], [`fold`] | their own checks before the collapse |
//! | [`replace`], [`redact`] | history rewrites, off unless enabled |

pub mod collapse;
pub mod compact;
pub mod fold;
pub mod merge;
pub mod offload;
pub mod redact;
pub mod replace;
pub mod restore;
pub mod set_visibility;

use super::args::Operation;
use super::block::{Kind, Visibility};
use super::rules::{self, Unpatchable, Violation};
use super::stage::Stage;
use super::store::Slot;

/// Which gated ops are enabled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Options {
    /// `replace` (off by default).
    #[serde(rename = "allowReplace", default)]
    pub allow_replace: bool,
    /// `redact` (off by default).
    #[serde(rename = "allowRedact", default)]
    pub allow_redact: bool,
}

/// Checks one op against the stage and stages its changes; the first broken rule.
pub fn check(stage: &mut Stage<'_>, op: &Operation, options: Options) -> Result<(), Violation> {
    let ids = op.ids();
    let targets = targets(stage, &ids)?;
    match op {
        Operation::SetVisibility { visibility, .. } => {
            set_visibility::check(stage, &targets, visibility)
        }
        Operation::PayloadOffload { replace_with, .. } => {
            offload::check(stage, &targets, replace_with)
        }
        Operation::Restore { .. } => restore::check(stage, &targets),
        Operation::Compact {
            output,
            preserve,
            drop,
            ..
        } => compact::check(stage, &targets, &ids, output, preserve, drop),
        Operation::Merge {
            output, resolution, ..
        } => merge::check(stage, &targets, &ids, output, resolution),
        Operation::Fold {
            output,
            scope_label,
            ..
        } => fold::check(stage, &targets, &ids, output, scope_label),
        Operation::Replace {
            content,
            description,
            ..
        } => replace::check(
            stage,
            &targets,
            content,
            description.as_ref().and_then(|d| d.as_deref()),
            options,
        ),
        Operation::Redact { drop_fields, .. } => {
            redact::check(stage, &targets, drop_fields, options)
        }
    }
}

/// The checks every op shares, in order: ids present, then for each id (duplicates
/// included) that it exists and that its staged block is patchable.
fn targets(stage: &Stage<'_>, ids: &[String]) -> Result<Vec<Slot>, Violation> {
    if ids.is_empty() {
        return Err(rules::empty_ids());
    }
    ids.iter()
        .map(|id| {
            let slot = stage.store.slot(id).ok_or_else(|| rules::unknown_id(id))?;
            let b = stage.get(slot);
            let why = match (b.kind, b.visibility) {
                (Kind::SystemPrompt, _) => Some(Unpatchable::SystemPrompt),
                (Kind::BudgetReport, _) => Some(Unpatchable::BudgetReport),
                (_, Visibility::ApiRequired) => Some(Unpatchable::ApiRequired),
                _ => None,
            };
            match why {
                Some(why) => Err(rules::protected_kind(id, why)),
                None => Ok(slot),
            }
        })
        .collect()
}

/// Re-estimates a staged block's `token_count` from its rendered content.
fn recount(stage: &mut Stage<'_>, slot: Slot) {
    let tokens = stage.store.tokens().clone();
    let b = stage.get_mut(slot);
    b.token_count = tokens.count(&b.content.rendered());
}
