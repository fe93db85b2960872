//! The byte-level events of an apply_patch stream, shared by both modes.
//!
//! Content (paths, `@@` context, line text) streams as data events as it is confirmed; the
//! structural events around it say where each piece belongs. `chunk_end` and `file_end` are
//! the unit events: each is emitted once no later line can belong to its chunk or file
//! operation.
//!
//! | event | fields | when |
//! |---|---|---|
//! | `begin_patch` | | the `*** Begin Patch` line is confirmed |
//! | `environment` | | `*** Environment ID: ` (its id follows as `path` data) |
//! | `file_start` | `op`: `add`, `delete`, `update` | a file-operation header marker |
//! | `move_to` | | `*** Move to: ` (its path follows as `path` data) |
//! | `path` | data | bytes of a path or environment id |
//! | `header_end` | | the LF of a header line: its path (or context) is final |
//! | `chunk_start` | `header`: `none`, `bare`, `context` | an Update chunk begins (`context`: its text follows as `context` data) |
//! | `context` | data | bytes of the text after `@@ ` |
//! | `line_start` | `op`: `add`, `remove`, `context` | a `+`, `-` or ` ` line (Add lines are `add`) |
//! | `text` | data | bytes of a line's text (no prefix, no line ending) |
//! | `line_end` | | the line's end: its text is final |
//! | `end_of_file` | | `*** End of File` |
//! | `chunk_end` | | unit `chunks`: the chunk is complete |
//! | `file_end` | `op` | unit `files`: the file operation is complete |
//! | `end_patch` | | the patch is complete |

use crate::event::{Event, Value};

use super::{ChunkHeader, LineOp, Op};

/// A confirmed piece of an apply_patch stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchEvent<'a> {
    /// `*** Begin Patch`.
    BeginPatch,
    /// `*** Environment ID: `; the id follows as [`PatchEvent::Path`].
    Environment,
    /// A file-operation header; its path follows as [`PatchEvent::Path`].
    FileStart {
        /// The operation.
        op: Op,
    },
    /// `*** Move to: `; the destination follows as [`PatchEvent::Path`].
    MoveTo,
    /// Bytes of a path (or environment id), as they are confirmed.
    Path(&'a [u8]),
    /// The end of a header line (path, move, environment or `@@ ` context line).
    HeaderEnd,
    /// An Update chunk begins.
    ChunkStart {
        /// How the chunk was introduced.
        header: ChunkHeader,
    },
    /// Bytes of the text after `@@ `.
    Context(&'a [u8]),
    /// A line of an Add or of a chunk begins.
    LineStart {
        /// Its kind.
        op: LineOp,
    },
    /// Bytes of a line's text, without its prefix and its line ending.
    Text(&'a [u8]),
    /// The current line is complete.
    LineEnd,
    /// `*** End of File`.
    EndOfFile,
    /// Unit `chunks`: the current chunk is complete.
    ChunkEnd,
    /// Unit `files`: the current file operation is complete.
    FileEnd {
        /// The operation.
        op: Op,
    },
    /// The patch is complete.
    EndPatch,
}

impl Event for PatchEvent<'_> {
    fn name(&self) -> &'static str {
        match self {
            PatchEvent::BeginPatch => "begin_patch",
            PatchEvent::Environment => "environment",
            PatchEvent::FileStart { .. } => "file_start",
            PatchEvent::MoveTo => "move_to",
            PatchEvent::Path(_) => "path",
            PatchEvent::HeaderEnd => "header_end",
            PatchEvent::ChunkStart { .. } => "chunk_start",
            PatchEvent::Context(_) => "context",
            PatchEvent::LineStart { .. } => "line_start",
            PatchEvent::Text(_) => "text",
            PatchEvent::LineEnd => "line_end",
            PatchEvent::EndOfFile => "end_of_file",
            PatchEvent::ChunkEnd => "chunk_end",
            PatchEvent::FileEnd { .. } => "file_end",
            PatchEvent::EndPatch => "end_patch",
        }
    }

    fn data(&self) -> Option<&[u8]> {
        match self {
            PatchEvent::Path(d) | PatchEvent::Context(d) | PatchEvent::Text(d) => Some(d),
            _ => None,
        }
    }

    fn unit(&self) -> Option<&'static str> {
        match self {
            PatchEvent::ChunkEnd => Some("chunks"),
            PatchEvent::FileEnd { .. } => Some("files"),
            _ => None,
        }
    }

    fn fields(&self, visit: &mut dyn FnMut(&'static str, Value<'_>)) {
        match *self {
            PatchEvent::FileStart { op } | PatchEvent::FileEnd { op } => {
                visit("op", Value::Str(op.as_str()))
            }
            PatchEvent::ChunkStart { header } => visit("header", Value::Str(header.as_str())),
            PatchEvent::LineStart { op } => visit("op", Value::Str(op.as_str())),
            _ => {}
        }
    }
}
