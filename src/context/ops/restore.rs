//! `restore`: the inverse of an offload; the payload comes back inline from the block's
//! version key. The version stays; the description becomes CPAT's "Restored payload: …".

use crate::context::block::Content;
use crate::context::rules::{self, Violation};
use crate::context::stage::Stage;
use crate::context::store::Slot;
use crate::context::text::describe_text;

/// Per target: `not_offloaded`, then `artifact_missing`.
pub fn check(stage: &mut Stage<'_>, targets: &[Slot]) -> Result<(), Violation> {
    for &t in targets {
        let b = stage.get(t);
        if !b.content.is_ref() {
            return Err(rules::not_offloaded(&b.id));
        }
        let Some(payload) = stage.payload(&b.content_key()) else {
            return Err(rules::artifact_missing(&b.id));
        };
        let payload = payload.to_owned();
        let b = stage.get_mut(t);
        b.description = describe_text("Restored payload", &payload);
        b.content = Content::Inline(payload);
        super::recount(stage, t);
    }
    Ok(())
}
