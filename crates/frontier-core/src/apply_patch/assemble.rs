//! Whole file operations from [`PatchEvent`]s, for consumers that want values.
//!
//! ```
//! use frontier_core::apply_patch::{OperationAssembler, StrictParser};
//! use frontier_core::apply_patch::units::FileOperation;
//! use frontier_core::contract::PushParser;
//!
//! let mut parser = StrictParser::default();
//! let mut assembler = OperationAssembler::default();
//! let mut done = Vec::new();
//! let patch = b"*** Begin Patch\n*** Delete File: old.txt\n*** End Patch\n";
//! parser.push(patch, &mut |e| done.extend(assembler.on_event(&e))).unwrap();
//! assert_eq!(done, vec![FileOperation::Delete { path: "old.txt".into() }]);
//! ```
//!
//! Memory is the operation being assembled. Paths and lines are decoded as UTF-8 (both modes
//! only confirm valid UTF-8, so nothing is lost).

use super::event::PatchEvent;
use super::units::{ChangeLine, Chunk, FileOperation};
use super::{LineOp, Op};

/// Where the next data bytes go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Target {
    #[default]
    None,
    Path,
    MovePath,
    Environment,
    Context,
    Line(LineOp),
}

/// Builds [`FileOperation`]s from [`PatchEvent`]s: feed it every event in order;
/// [`on_event`](Self::on_event) returns an operation when its `file_end` arrives.
#[derive(Clone, Debug, Default)]
pub struct OperationAssembler {
    current: Option<FileOperation>,
    chunk: Option<Chunk>,
    target: Target,
    bytes: Vec<u8>,
    environment: Option<String>,
}

impl OperationAssembler {
    /// Takes one event; returns the file operation it completes, if any.
    pub fn on_event(&mut self, event: &PatchEvent<'_>) -> Option<FileOperation> {
        match *event {
            PatchEvent::BeginPatch | PatchEvent::EndPatch | PatchEvent::EndOfFile => {
                if matches!(event, PatchEvent::EndOfFile) {
                    if let Some(chunk) = self.chunk.as_mut() {
                        chunk.end_of_file = true;
                    }
                }
            }
            PatchEvent::Environment => self.start(Target::Environment),
            PatchEvent::FileStart { op } => {
                let path = String::new();
                self.current = Some(match op {
                    Op::Add => FileOperation::Add {
                        path,
                        lines: Vec::new(),
                    },
                    Op::Delete => FileOperation::Delete { path },
                    Op::Update => FileOperation::Update {
                        path,
                        move_to: None,
                        chunks: Vec::new(),
                    },
                });
                self.start(Target::Path);
            }
            PatchEvent::MoveTo => self.start(Target::MovePath),
            PatchEvent::Path(d) | PatchEvent::Context(d) | PatchEvent::Text(d) => {
                self.bytes.extend_from_slice(d)
            }
            PatchEvent::HeaderEnd | PatchEvent::LineEnd => self.end_text(),
            PatchEvent::ChunkStart { header } => {
                self.chunk = Some(Chunk::default());
                if header == super::ChunkHeader::Context {
                    self.start(Target::Context);
                }
            }
            PatchEvent::LineStart { op } => self.start(Target::Line(op)),
            PatchEvent::ChunkEnd => {
                if let (Some(chunk), Some(FileOperation::Update { chunks, .. })) =
                    (self.chunk.take(), self.current.as_mut())
                {
                    chunks.push(chunk);
                }
            }
            PatchEvent::FileEnd { .. } => {
                self.chunk = None;
                return self.current.take();
            }
        }
        None
    }

    /// The operation being assembled, if its header has been confirmed and its end has not.
    pub fn in_progress(&self) -> Option<&FileOperation> {
        self.current.as_ref()
    }

    /// The id of `*** Environment ID:`, if the patch had one.
    pub fn environment(&self) -> Option<&str> {
        self.environment.as_deref()
    }

    fn start(&mut self, target: Target) {
        self.end_text();
        self.target = target;
    }

    /// Stores the text collected for the current target.
    fn end_text(&mut self) {
        let target = std::mem::take(&mut self.target);
        if target == Target::None {
            return;
        }
        let text = String::from_utf8_lossy(&self.bytes).into_owned();
        self.bytes.clear();
        match (target, self.current.as_mut()) {
            (Target::Environment, _) => self.environment = Some(text),
            (Target::Path, Some(FileOperation::Add { path, .. }))
            | (Target::Path, Some(FileOperation::Delete { path }))
            | (Target::Path, Some(FileOperation::Update { path, .. })) => *path = text,
            (Target::MovePath, Some(FileOperation::Update { move_to, .. })) => {
                *move_to = Some(text)
            }
            (Target::Context, _) => {
                if let Some(chunk) = self.chunk.as_mut() {
                    chunk.context = Some(text);
                }
            }
            (Target::Line(_), Some(FileOperation::Add { lines, .. })) => lines.push(text),
            (Target::Line(op), _) => {
                if let Some(chunk) = self.chunk.as_mut() {
                    chunk.lines.push(match op {
                        LineOp::Add => ChangeLine::Add(text),
                        LineOp::Remove => ChangeLine::Remove(text),
                        LineOp::Context => ChangeLine::Context(text),
                    });
                }
            }
            _ => {}
        }
    }
}
