//! Whole file patches and hunks from [`UdiffEvent`]s, for consumers that want values.
//!
//! [`PatchAssembler::on_event`] returns an [`Assembled`] item the moment a unit is confirmed:
//! the file header, then each hunk, then the whole file patch. An application engine can check
//! each hunk against the file as soon as it arrives and apply the file patch at its end.
//! Memory is the file patch being assembled.

use super::event::UdiffEvent;
use super::units::{Binary, BinaryBlock, FileHeader, FilePatch, Hunk, HunkLine};

/// A unit the assembler completed.
#[derive(Debug, PartialEq, Eq)]
pub enum Assembled<'a> {
    /// A file patch's header was confirmed (its hunks follow).
    Header(&'a FileHeader),
    /// A hunk of the current file patch was confirmed whole.
    Hunk(&'a Hunk),
    /// The file patch is complete (binary blocks filled in).
    File(Box<FilePatch>),
}

/// Builds [`FilePatch`]es and [`Hunk`]s from events.
#[derive(Clone, Debug, Default)]
pub struct PatchAssembler {
    file: FilePatch,
    hunk: Hunk,
    blocks: Vec<BinaryBlock>,
}

impl PatchAssembler {
    /// Takes one event; returns the unit it completes, if any.
    pub fn on_event(&mut self, event: &UdiffEvent<'_>) -> Option<Assembled<'_>> {
        match *event {
            UdiffEvent::Garbage { .. } => {}
            UdiffEvent::FileHeader { header, .. } => {
                self.file = FilePatch {
                    header: header.clone(),
                    hunks: Vec::new(),
                };
                self.blocks.clear();
                return Some(Assembled::Header(&self.file.header));
            }
            UdiffEvent::HunkStart {
                old_start,
                old_count,
                new_start,
                new_count,
                section,
                ranges_stated,
            } => {
                self.hunk = Hunk {
                    old_start,
                    old_count,
                    new_start,
                    new_count,
                    section: section.to_vec(),
                    lines: Vec::new(),
                    ranges_stated,
                };
            }
            UdiffEvent::Line { kind } => self.hunk.lines.push(HunkLine {
                kind,
                content: Vec::new(),
                no_newline: false,
            }),
            UdiffEvent::LineData(data) => {
                if let Some(line) = self.hunk.lines.last_mut() {
                    line.content.extend_from_slice(data);
                }
            }
            UdiffEvent::NoNewline => {
                if let Some(line) = self.hunk.lines.last_mut() {
                    line.no_newline = true;
                }
            }
            UdiffEvent::HunkEnd {
                old_count,
                new_count,
            } => {
                let mut hunk = std::mem::take(&mut self.hunk);
                hunk.old_count = old_count;
                hunk.new_count = new_count;
                self.file.hunks.push(hunk);
                return self.file.hunks.last().map(Assembled::Hunk);
            }
            UdiffEvent::BinaryBlock { kind, size } => self.blocks.push(BinaryBlock {
                kind,
                size,
                deflated: Vec::new(),
            }),
            UdiffEvent::BinaryData(data) => {
                if let Some(block) = self.blocks.last_mut() {
                    block.deflated.extend_from_slice(data);
                }
            }
            UdiffEvent::BinaryBlockEnd => {}
            UdiffEvent::FileEnd => {
                let mut file = std::mem::take(&mut self.file);
                let mut blocks = std::mem::take(&mut self.blocks).into_iter();
                if let Some(forward) = blocks.next() {
                    file.header.binary = Some(Binary::Patch {
                        forward,
                        reverse: blocks.next(),
                    });
                }
                return Some(Assembled::File(Box::new(file)));
            }
        }
        None
    }
}

/// Parses a whole buffer and returns its file patches (and the outcome), a convenience for
/// tests and tools that have the whole diff at hand.
pub fn parse_all(
    parser: super::UdiffParser,
    input: &[u8],
) -> (
    Vec<FilePatch>,
    crate::contract::Outcome<super::UdiffErrorKind>,
) {
    use crate::contract::PushParser;
    let mut parser = parser;
    let mut assembler = PatchAssembler::default();
    let mut files = Vec::new();
    let mut on_event = |e: UdiffEvent<'_>| {
        if let Some(Assembled::File(f)) = assembler.on_event(&e) {
            files.push(*f);
        }
    };
    let _ = parser.push(input, &mut on_event);
    let outcome = parser.finish(&mut on_event);
    (files, outcome)
}
