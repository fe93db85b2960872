//! Which units are open: the file operation and the chunk that later lines may still extend.
//!
//! Both parsers feed it the structure they confirm; it emits `chunk_end` and `file_end` the
//! moment a line that cannot belong to the open unit is confirmed.

use super::event::PatchEvent;
use super::{ChunkHeader, LineOp, Op};

/// The open file operation and chunk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Frame {
    op: Option<Op>,
    chunk: bool,
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

    /// A file-operation header: closes what was open and opens `op`.
    pub fn file_start<F: for<'e> FnMut(PatchEvent<'e>)>(&mut self, op: Op, on_event: &mut F) {
        self.close_file(on_event);
        on_event(PatchEvent::FileStart { op });
        self.op = Some(op);
    }

    /// A chunk header (`@@` line): closes the open chunk and opens a new one.
    pub fn chunk_start<F: for<'e> FnMut(PatchEvent<'e>)>(
        &mut self,
        header: ChunkHeader,
        on_event: &mut F,
    ) {
        self.close_chunk(on_event);
        on_event(PatchEvent::ChunkStart { header });
        self.chunk = true;
    }

    /// A `+`, `-` or ` ` line: inside an Update with no open chunk, it opens one without `@@`.
    pub fn line_start<F: for<'e> FnMut(PatchEvent<'e>)>(&mut self, op: LineOp, on_event: &mut F) {
        if self.op == Some(Op::Update) && !self.chunk {
            on_event(PatchEvent::ChunkStart {
                header: ChunkHeader::None,
            });
            self.chunk = true;
        }
        on_event(PatchEvent::LineStart { op });
    }
}
