//! `redact`: fields removed from an inline JSON tool result; off unless enabled.

use crate::context::block::{Content, Kind};
use crate::context::json_object::{remove_members, NotAnObject};
use crate::context::rules::{self, Violation};
use crate::context::stage::Stage;
use crate::context::store::Slot;

use super::Options;

/// `op_disabled`, `redact_fields`, then per target `redact_kind` and `redact_not_json`.
/// A JSON array is not an object here (CPAT turns a dropped index into `null` and throws on
/// `length`).
pub fn check(
    stage: &mut Stage<'_>,
    targets: &[Slot],
    drop_fields: &[String],
    options: Options,
) -> Result<(), Violation> {
    if !options.allow_redact {
        return Err(rules::redact_disabled());
    }
    if drop_fields.is_empty() {
        return Err(rules::redact_fields());
    }
    for &t in targets {
        let b = stage.get(t);
        let Content::Inline(text) = &b.content else {
            return Err(rules::redact_kind(&b.id));
        };
        if b.kind != Kind::ToolResult {
            return Err(rules::redact_kind(&b.id));
        }
        let redacted = remove_members(text, drop_fields).map_err(|e| match e {
            NotAnObject::NotJson => rules::redact_not_json(&b.id),
            NotAnObject::NotObject => rules::redact_not_object(&b.id),
        })?;
        let b = stage.get_mut(t);
        b.content = Content::Inline(redacted);
        b.version += 1;
        super::recount(stage, t);
    }
    Ok(())
}
