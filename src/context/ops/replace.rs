//! `replace`: new text for a block that is not a protected original; off unless enabled,
//! because history must not be rewritten by default.

use crate::context::block::{Content, Kind};
use crate::context::rules::{self, Violation};
use crate::context::stage::Stage;
use crate::context::store::Slot;
use crate::context::text::is_blank;

use super::Options;

/// `op_disabled`, `replace_protected`, `replace_content`.
pub fn check(
    stage: &mut Stage<'_>,
    targets: &[Slot],
    content: &str,
    description: Option<&str>,
    options: Options,
) -> Result<(), Violation> {
    if !options.allow_replace {
        return Err(rules::replace_disabled());
    }
    let t = targets[0];
    let b = stage.get(t);
    if b.kind == Kind::UserMessage || b.is_protected() {
        return Err(rules::replace_protected(&b.id));
    }
    if is_blank(content) {
        return Err(rules::replace_content());
    }
    let b = stage.get_mut(t);
    b.content = Content::Inline(content.to_owned());
    if let Some(d) = description.filter(|d| !d.is_empty()) {
        b.description = d.to_owned();
    }
    b.version += 1;
    super::recount(stage, t);
    Ok(())
}
