//! Applying patches to a workspace (being built; see issue 5).

pub mod workspace;

pub use workspace::{PathError, Workspace};
