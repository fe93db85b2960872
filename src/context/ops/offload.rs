//! `payload_offload`: a zero-copy flip. The payload already sits in the content store under
//! the block's current version key; the block's content becomes a reference to that key and
//! its description the offload's. Version, kind, visibility and api stay, so the block stays
//! in its tool-call chain.

use crate::context::args::ReplaceWith;
use crate::context::block::{ArtifactRef, Content, Kind};
use crate::context::rules::{self, Violation};
use crate::context::stage::Stage;
use crate::context::store::Slot;
use crate::context::text::is_blank;

/// `offload_replacement`, then per target `offload_kind` and `already_offloaded`.
pub fn check(stage: &mut Stage<'_>, targets: &[Slot], with: &ReplaceWith) -> Result<(), Violation> {
    if is_blank(&with.summary) || is_blank(&with.retrieval_hint) || is_blank(&with.description) {
        return Err(rules::offload_replacement());
    }
    for &t in targets {
        let b = stage.get(t);
        if !matches!(b.kind, Kind::ToolResult | Kind::AssistantMessage) {
            return Err(rules::offload_kind(&b.id, b.kind.as_str()));
        }
        let Content::Inline(text) = &b.content else {
            return Err(rules::already_offloaded(&b.id));
        };
        let key = b.content_key();
        // divergence 1: after a replace or redact in the same patch this version was never
        // stored; keep its text so that the reference resolves.
        if stage.payload(&key).is_none() {
            let text = text.clone();
            stage.stash_payload(key.clone(), text);
        }
        let b = stage.get_mut(t);
        b.content = Content::Ref(ArtifactRef::new(&key, &with.summary, &with.retrieval_hint));
        b.description = with.description.clone();
        super::recount(stage, t);
    }
    Ok(())
}
