//! `set_visibility`: the cheapest, most reversible op; parks a block (`archived`, still in the
//! manifest), removes it (`hidden`) or brings it back (`model`).

use crate::context::block::Visibility;
use crate::context::rules::{self, Violation};
use crate::context::stage::Stage;
use crate::context::store::Slot;

/// `visibility_missing`, `visibility_invalid`, then per target `protected_hidden`.
pub fn check(stage: &mut Stage<'_>, targets: &[Slot], visibility: &str) -> Result<(), Violation> {
    if visibility.is_empty() {
        return Err(rules::visibility_missing());
    }
    // divergence 2: CPAT stores any string ("api_required" locks the block, "foo" makes it
    // vanish past `protected_hidden`).
    let to =
        Visibility::settable(visibility).ok_or_else(|| rules::visibility_invalid(visibility))?;
    for &t in targets {
        let b = stage.get(t);
        if to == Visibility::Hidden && b.is_protected() {
            return Err(rules::protected_hidden(&b.id));
        }
        stage.get_mut(t).visibility = to;
    }
    Ok(())
}
