//! The events of a unified diff, borrowed from the pushed chunk or the parser's buffers.

use crate::event::{Event, Value};

use super::units::{BinaryKind, FileHeader, LineKind};

/// A confirmed piece of a unified diff.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UdiffEvent<'a> {
    /// Bytes outside any file patch that were skipped (`git`, `recount`). `start` is the
    /// offset of the first byte of the span of consecutive garbage lines this piece belongs to.
    Garbage {
        /// Offset where the span starts.
        start: u64,
        /// The bytes, LFs included.
        data: &'a [u8],
    },
    /// A file patch's header, confirmed: names and git metadata (`binary` is set for
    /// `Binary files … differ`; `binary_patch` says a `GIT binary patch` follows).
    FileHeader {
        /// The header.
        header: &'a FileHeader,
        /// `GIT binary patch` blocks follow.
        binary_patch: bool,
    },
    /// A hunk header: the ranges as written (in `recount` mode, zero when absent).
    HunkStart {
        /// `a` of `-a,b`.
        old_start: u64,
        /// `b` (1 when omitted).
        old_count: u64,
        /// `c` of `+c,d`.
        new_start: u64,
        /// `d` (1 when omitted).
        new_count: u64,
        /// The text after the closing `@@`, without its leading space.
        section: &'a [u8],
        /// The header has ranges; `false` only in `recount` mode for `@@ ... @@`, `@@` and
        /// other headers without ranges in the usual form (the four numbers are then 0). Not
        /// part of the JSON record, which says 0.
        ranges_stated: bool,
    },
    /// A body line starts; its content follows as [`UdiffEvent::LineData`].
    Line {
        /// Its side.
        kind: LineKind,
    },
    /// Content of the current body line (no prefix byte, no LF).
    LineData(&'a [u8]),
    /// A `\` line: the previous body line has no final newline.
    NoNewline,
    /// The hunk is complete: its real line counts.
    HunkEnd {
        /// Old-side lines (context and removed).
        old_count: u64,
        /// New-side lines (context and added).
        new_count: u64,
    },
    /// A `literal N` or `delta N` block of a `GIT binary patch` starts.
    BinaryBlock {
        /// Which form.
        kind: BinaryKind,
        /// The stated (inflated) size.
        size: u64,
    },
    /// Decoded (still deflated) bytes of the current binary block, one base85 line's worth.
    BinaryData(&'a [u8]),
    /// The blank line that ends a binary block.
    BinaryBlockEnd,
    /// The file patch is complete.
    FileEnd,
}

fn side_name(kind: LineKind) -> &'static str {
    match kind {
        LineKind::Context => "context",
        LineKind::Remove => "remove",
        LineKind::Add => "add",
    }
}

fn opt_bytes<'v>(v: &'v Option<Vec<u8>>) -> Value<'v> {
    v.as_deref().map_or(Value::Null, Value::Bytes)
}

fn opt_u64<T: Into<u64> + Copy>(v: Option<T>) -> Value<'static> {
    v.map_or(Value::Null, |n| Value::U64(n.into()))
}

impl Event for UdiffEvent<'_> {
    fn name(&self) -> &'static str {
        match self {
            UdiffEvent::Garbage { .. } => "garbage",
            UdiffEvent::FileHeader { .. } => "file_header",
            UdiffEvent::HunkStart { .. } => "hunk_start",
            UdiffEvent::Line { .. } => "line",
            UdiffEvent::LineData(_) => "line_data",
            UdiffEvent::NoNewline => "no_newline",
            UdiffEvent::HunkEnd { .. } => "hunk_end",
            UdiffEvent::BinaryBlock { .. } => "binary_block",
            UdiffEvent::BinaryData(_) => "binary_data",
            UdiffEvent::BinaryBlockEnd => "binary_block_end",
            UdiffEvent::FileEnd => "file_end",
        }
    }

    fn data(&self) -> Option<&[u8]> {
        match self {
            UdiffEvent::Garbage { data, .. } => Some(data),
            UdiffEvent::LineData(d) | UdiffEvent::BinaryData(d) => Some(d),
            _ => None,
        }
    }

    fn unit(&self) -> Option<&'static str> {
        match self {
            UdiffEvent::HunkEnd { .. } => Some("hunks"),
            UdiffEvent::FileEnd => Some("files"),
            _ => None,
        }
    }

    fn fields(&self, visit: &mut dyn FnMut(&'static str, Value<'_>)) {
        match *self {
            UdiffEvent::Garbage { start, .. } => visit("start", Value::U64(start)),
            UdiffEvent::FileHeader {
                header: h,
                binary_patch,
            } => {
                let (git_old, git_new) = match &h.git_names {
                    Some((a, b)) => (Value::Bytes(a), Value::Bytes(b)),
                    None => (Value::Null, Value::Null),
                };
                visit("git_old", git_old);
                visit("git_new", git_new);
                visit("old_path", opt_bytes(&h.old_path));
                visit("new_path", opt_bytes(&h.new_path));
                visit("old_mode", opt_u64(h.old_mode));
                visit("new_mode", opt_u64(h.new_mode));
                visit("deleted_file_mode", opt_u64(h.deleted_file_mode));
                visit("new_file_mode", opt_u64(h.new_file_mode));
                visit("rename_from", opt_bytes(&h.rename_from));
                visit("rename_to", opt_bytes(&h.rename_to));
                visit("copy_from", opt_bytes(&h.copy_from));
                visit("copy_to", opt_bytes(&h.copy_to));
                visit("similarity", opt_u64(h.similarity));
                visit("dissimilarity", opt_u64(h.dissimilarity));
                match &h.index {
                    Some((a, b, m)) => {
                        visit("index_old", Value::Bytes(a));
                        visit("index_new", Value::Bytes(b));
                        visit("index_mode", opt_u64(*m));
                    }
                    None => {
                        visit("index_old", Value::Null);
                        visit("index_new", Value::Null);
                        visit("index_mode", Value::Null);
                    }
                }
                let binary = match (&h.binary, binary_patch) {
                    (_, true) => Value::Str("patch"),
                    (Some(_), false) => Value::Str("differ"),
                    (None, false) => Value::Null,
                };
                visit("binary", binary);
            }
            UdiffEvent::HunkStart {
                old_start,
                old_count,
                new_start,
                new_count,
                section,
                ranges_stated: _,
            } => {
                visit("old_start", Value::U64(old_start));
                visit("old_count", Value::U64(old_count));
                visit("new_start", Value::U64(new_start));
                visit("new_count", Value::U64(new_count));
                visit("section", Value::Bytes(section));
            }
            UdiffEvent::Line { kind } => visit("side", Value::Str(side_name(kind))),
            UdiffEvent::HunkEnd {
                old_count,
                new_count,
            } => {
                visit("old_count", Value::U64(old_count));
                visit("new_count", Value::U64(new_count));
            }
            UdiffEvent::BinaryBlock { kind, size } => {
                let kind = match kind {
                    BinaryKind::Literal => "literal",
                    BinaryKind::Delta => "delta",
                };
                visit("kind", Value::Str(kind));
                visit("size", Value::U64(size));
            }
            UdiffEvent::LineData(_)
            | UdiffEvent::NoNewline
            | UdiffEvent::BinaryData(_)
            | UdiffEvent::BinaryBlockEnd
            | UdiffEvent::FileEnd => {}
        }
    }
}
