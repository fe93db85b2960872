//! Codex mode (in progress).

/// Placeholder.
#[derive(Clone, Copy, Debug, Default)]
pub struct CodexMachine;
/// Placeholder.
#[derive(Clone, Debug, Default)]
pub struct CodexParser;
