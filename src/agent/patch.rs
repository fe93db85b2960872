//! The seam between the loop and the patch machinery for the `apply_patch` tool.
//!
//! A [`PatchTool`] opens one [`PatchSession`] per `apply_patch` call, the moment the call's
//! `patch` argument header is confirmed. The loop pushes the argument's bytes into the session
//! as they arrive, so a malformed patch is known before the call's `end` line; once the call
//! is confirmed and judged, the session applies the patch to the workspace (or is dropped).

use crate::apply::Workspace;

/// Opens patch sessions.
pub trait PatchTool: Send + Sync {
    /// A fresh session for one `apply_patch` call.
    fn begin(&self) -> Box<dyn PatchSession>;
}

/// One patch, streamed in, then applied once.
pub trait PatchSession: Send {
    /// The next bytes of the `patch` argument.
    fn push(&mut self, bytes: &[u8]);
    /// Why the patch cannot be applied, if that is already known: a stable kind
    /// (`malformed_patch`, `unavailable`) and the details.
    fn error(&self) -> Option<(&'static str, String)>;
    /// The argument's last byte arrived.
    fn finish(&mut self);
    /// Applies the patch; returns a summary of what changed, or why nothing did.
    fn apply(self: Box<Self>, workspace: &Workspace) -> Result<String, String>;
}

/// The tool when no patch engine is built in: every call is refused, with that reason.
#[derive(Clone, Copy, Debug, Default)]
pub struct Unavailable;

struct UnavailableSession;

impl PatchTool for Unavailable {
    fn begin(&self) -> Box<dyn PatchSession> {
        Box::new(UnavailableSession)
    }
}

impl PatchSession for UnavailableSession {
    fn push(&mut self, _bytes: &[u8]) {}
    fn error(&self) -> Option<(&'static str, String)> {
        Some((
            "unavailable",
            "no apply_patch engine is built into this binary".to_owned(),
        ))
    }
    fn finish(&mut self) {}
    fn apply(self: Box<Self>, _workspace: &Workspace) -> Result<String, String> {
        Err(self.error().map(|(_, detail)| detail).unwrap_or_default())
    }
}
