//! Applying patches to a workspace.
//!
//! - [`workspace`]: the root directory and path confinement;
//! - [`transaction`]: changes staged in memory, verified, then written by [`commit`]: through
//!   temporary files and renames that keep every original until the last succeeded, all or
//!   nothing;
//! - [`seek`]: locating lines with Codex's four passes over an index of the file;
//! - [`patch`]: apply_patch operations under the `safe` and `codex` policies;
//! - [`udiff`]: unified diffs as `git apply` applies them (offset search, anchoring, fuzz,
//!   renames, modes, binary patches);
//! - [`stream`]: parser events in, each unit checked as it is confirmed, commit at the end;
//! - [`binary`]: git's binary patches: zlib, the delta format, base85;
//! - [`error`]: the one error type, with stable kinds.

pub mod binary;
pub mod commit;
pub mod error;
pub mod patch;
pub mod seek;
pub mod stream;
pub mod transaction;
pub mod udiff;
pub mod workspace;

pub use error::{ApplyError, ErrorKind, ParseErrorInfo};
pub use patch::{apply_operations, Failure, PatchSession, Policy};
pub use stream::{
    apply_diff_stream, apply_patch_stream, CheckedStream, DiffStream, PatchStream, UnitCheck,
};
pub use transaction::{Change, ChangeKind, Transaction};
pub use udiff::{DiffOptions, DiffSession};
pub use workspace::{PathError, Workspace};
