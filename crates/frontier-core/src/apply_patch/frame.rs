//! Which units are open: the file operation and the chunk that later lines may still extend.
//!
//! Both parsers feed it the structure they confirm, with the offset of the line that opens a
//! unit; it emits `chunk_end` and `file_end` the moment a line that cannot belong to the open
//! unit is confirmed, and says which unit a stream cut off here leaves open, and where it
//! began ([`Frame::open`]). [`Construct`] names every construct a cut can leave open.

use super::event::PatchEvent;
use super::{ChunkHeader, LineOp, Op};

/// A construct of apply_patch that a cut-off stream can leave open (both modes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Construct {
    /// The patch, between file operations (or before its first line is complete).
    Patch,
    /// An `*** Add File:` operation.
    AddFile,
    /// An `*** Delete File:` header line.
    DeleteFile,
    /// An `*** Update File:` operation.
    UpdateFile,
    /// A chunk of an Update.
    Chunk,
    /// A `*** Move to:` line.
    MoveTo,
    /// A `*** Environment ID:` line.
    Environment,
    /// A `+`, `-` or ` ` line cut before its LF.
    Line,
    /// A `*** ` or `@@` line whose marker is not complete.
    Marker,
    /// Codex mode, heredoc form: the final line ending with `EOF`.
    HeredocEnd,
}

impl Construct {
    /// The construct's stable name (`docs/apply_patch.md`).
    pub fn as_str(self) -> &'static str {
        match self {
            Construct::Patch => "patch",
            Construct::AddFile => "add_file",
            Construct::DeleteFile => "delete_file",
            Construct::UpdateFile => "update_file",
            Construct::Chunk => "chunk",
            Construct::MoveTo => "move_to",
            Construct::Environment => "environment",
            Construct::Line => "line",
            Construct::Marker => "marker",
            Construct::HeredocEnd => "heredoc_end",
        }
    }

    /// The construct of a file operation.
    pub fn of(op: Op) -> Construct {
        match op {
            Op::Add => Construct::AddFile,
            Op::Delete => Construct::DeleteFile,
            Op::Update => Construct::UpdateFile,
        }
    }
}

/// The open file operation and chunk, and the offsets of the lines that opened them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Frame {
    op: Option<Op>,
    chunk: bool,
    file_at: u64,
    chunk_at: u64,
}

impl Frame {
    /// Closes the open chunk, if any.
    pub fn close_chunk<F: for<'e> FnMut(PatchEvent<'e>)>(&mut self, on_event: &mut F) {
        if std::mem::take(&mut self.chunk) {
            on_event(PatchEvent::ChunkEnd);
        }
    }

    /// Closes the open chunk and file operation, if any.
    pub fn close_file<F: for<'e> FnMut(PatchEvent<'e>)>(&mut self, on_event: &mut F) {
        self.close_chunk(on_event);
        if let Some(op) = self.op.take() {
            on_event(PatchEvent::FileEnd { op });
        }
    }

    /// A file-operation header, its line beginning at offset `at`: closes what was open and
    /// opens `op`.
    pub fn file_start<F: for<'e> FnMut(PatchEvent<'e>)>(
        &mut self,
        op: Op,
        at: u64,
        on_event: &mut F,
    ) {
        self.close_file(on_event);
        on_event(PatchEvent::FileStart { op });
        self.op = Some(op);
        self.file_at = at;
    }

    /// A chunk header (`@@` line) beginning at `at`: closes the open chunk and opens a new one.
    pub fn chunk_start<F: for<'e> FnMut(PatchEvent<'e>)>(
        &mut self,
        header: ChunkHeader,
        at: u64,
        on_event: &mut F,
    ) {
        self.close_chunk(on_event);
        on_event(PatchEvent::ChunkStart { header });
        self.chunk = true;
        self.chunk_at = at;
    }

    /// A `+`, `-` or ` ` line beginning at `at`: inside an Update with no open chunk, it opens
    /// one without `@@`.
    pub fn line_start<F: for<'e> FnMut(PatchEvent<'e>)>(
        &mut self,
        op: LineOp,
        at: u64,
        on_event: &mut F,
    ) {
        if self.op == Some(Op::Update) && !self.chunk {
            on_event(PatchEvent::ChunkStart {
                header: ChunkHeader::None,
            });
            self.chunk = true;
            self.chunk_at = at;
        }
        on_event(PatchEvent::LineStart { op });
    }

    /// The innermost open unit and where its first line began: the chunk, else the file
    /// operation, else the patch (which begins with the stream).
    pub fn open(&self) -> (Construct, u64) {
        match self.op {
            _ if self.chunk => (Construct::Chunk, self.chunk_at),
            Some(op) => (Construct::of(op), self.file_at),
            None => (Construct::Patch, 0),
        }
    }
}
