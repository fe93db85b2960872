//! Streaming: a parser's confirmed events, turned into units and checked against the
//! workspace the moment each is confirmed; the commit comes at the end of the stream.
//!
//! [`PatchStream`] takes [`PatchEvent`]s (from either apply_patch mode): as soon as an Update's
//! path is confirmed the file is read; each chunk is located when its `chunk_end` arrives; each
//! Add, Delete or Move when its `file_end` arrives. [`DiffStream`] does the same for unified
//! diffs with hunks. So a runtime learns that a patch cannot apply while the model is still
//! writing it, from [`PatchStream::failure`] / [`DiffStream::failure`] after any push.
//! [`apply_patch_stream`] and [`apply_diff_stream`] drive a parser over bytes.

use super::error::ApplyError;
use super::patch::{Failure, PatchSession, Policy};
use super::transaction::Change;
use super::udiff::{DiffOptions, DiffSession};
use super::workspace::Workspace;
use crate::apply_patch::units::FileOperation;
use crate::apply_patch::{OperationAssembler, PatchEvent};
use crate::contract::{PushParser, Verdict};
use crate::udiff::{Assembled, PatchAssembler, UdiffEvent};

/// apply_patch events in, checked operations out.
#[derive(Debug)]
pub struct PatchStream {
    assembler: OperationAssembler,
    session: PatchSession,
    /// Chunks of the Update in progress already given to the session (`None`: not begun).
    streamed: Option<usize>,
    units: usize,
}

impl PatchStream {
    /// A stream applying to `ws` under `policy`.
    pub fn new(ws: Workspace, policy: Policy) -> PatchStream {
        PatchStream {
            assembler: OperationAssembler::default(),
            session: PatchSession::new(ws, policy),
            streamed: None,
            units: 0,
        }
    }

    /// The first failure, if any unit so far could not be applied.
    pub fn failure(&self) -> Option<&ApplyError> {
        self.session.failure()
    }

    /// How many units (chunks and file operations) have been checked.
    pub fn units_checked(&self) -> usize {
        self.units
    }

    /// Takes one confirmed event. Errors after the first are the first again.
    pub fn on_event(&mut self, event: &PatchEvent<'_>) -> Result<(), ApplyError> {
        if let Some(e) = self.session.failure() {
            return Err(e.clone());
        }
        if let Some(op) = self.assembler.on_event(event) {
            self.streamed = None;
            self.units += 1;
            return self.session.operation(&op);
        }
        if let Some(FileOperation::Update { path, chunks, .. }) = self.assembler.in_progress() {
            // The path is stored when its line ends, and a path is never empty.
            if path.is_empty() {
                return Ok(());
            }
            let done = match self.streamed {
                Some(done) => done,
                None => {
                    self.session.begin_update(path)?;
                    0
                }
            };
            self.streamed = Some(done);
            for chunk in &chunks[done..] {
                self.units += 1;
                self.session.chunk(chunk)?;
                self.streamed = Some(self.streamed.unwrap_or(0) + 1);
            }
        }
        Ok(())
    }

    /// Ends the stream: commits if the patch was complete, writes nothing otherwise.
    pub fn finish<K: crate::contract::ErrorKind>(
        self,
        verdict: &Verdict<K>,
    ) -> Result<Vec<Change>, Failure> {
        match verdict {
            Verdict::Complete => self.session.commit(),
            other => Err(Failure {
                error: Box::new(incomplete(other)),
                written: Vec::new(),
            }),
        }
    }
}

fn incomplete<K: crate::contract::ErrorKind>(verdict: &Verdict<K>) -> ApplyError {
    match verdict.error() {
        Some(e) => ApplyError::parse(Some((*e).into()), format!("the patch does not parse: {e}")),
        None => ApplyError::parse(None, "the patch was cut off"),
    }
}

/// Runs `parser` over `input` in pieces of `chunk` bytes (all at once for 0), checking each
/// unit as it is confirmed, and commits at the end. `on_failure` is called once, the moment a
/// unit fails, with the number of bytes pushed so far.
pub fn apply_patch_stream<P>(
    parser: P,
    input: &[u8],
    chunk: usize,
    ws: Workspace,
    policy: Policy,
    on_failure: impl FnMut(&ApplyError, u64),
) -> Result<Vec<Change>, Failure>
where
    P: for<'e> PushParser<Event<'e> = PatchEvent<'e>>,
{
    let (outcome, stream) = drive(
        parser,
        input,
        chunk,
        PatchStream::new(ws, policy),
        on_failure,
    );
    stream.finish(&outcome.verdict)
}

/// Unified-diff events in, checked file patches out: each header opens its file, each hunk is
/// applied to the file's image when its `hunk_end` arrives, each file patch is completed at its
/// `file_end`.
#[derive(Debug)]
pub struct DiffStream {
    assembler: PatchAssembler,
    session: DiffSession,
    units: usize,
}

impl DiffStream {
    /// A stream applying to `ws`.
    pub fn new(ws: Workspace, options: DiffOptions) -> DiffStream {
        DiffStream {
            assembler: PatchAssembler::default(),
            session: DiffSession::new(ws, options),
            units: 0,
        }
    }

    /// The first failure, if any.
    pub fn failure(&self) -> Option<&ApplyError> {
        self.session.failure()
    }

    /// How many units (hunks and file patches) have been checked.
    pub fn units_checked(&self) -> usize {
        self.units
    }

    /// Takes one confirmed event. Errors after the first are the first again.
    pub fn on_event(&mut self, event: &UdiffEvent<'_>) -> Result<(), ApplyError> {
        if let Some(e) = self.session.failure() {
            return Err(e.clone());
        }
        match self.assembler.on_event(event) {
            Some(Assembled::Header(h)) => self.session.begin_file(h),
            Some(Assembled::Hunk(h)) => {
                self.units += 1;
                self.session.hunk(h)
            }
            Some(Assembled::File(f)) => {
                self.units += 1;
                self.session.file_patch(&f)
            }
            None => Ok(()),
        }
    }

    /// Ends the stream: commits if the diff was complete, writes nothing otherwise.
    pub fn finish<K: crate::contract::ErrorKind>(
        self,
        verdict: &Verdict<K>,
    ) -> Result<Vec<Change>, ApplyError> {
        match verdict {
            Verdict::Complete => self.session.commit(),
            other => Err(incomplete(other)),
        }
    }
}

/// Runs a unified-diff `parser` over `input` in pieces of `chunk` bytes (all at once for 0),
/// checking each hunk and file patch as it is confirmed, and commits at the end (all or
/// nothing). `on_failure` is called once, the moment a unit fails, with the bytes pushed so far.
pub fn apply_diff_stream<P>(
    parser: P,
    input: &[u8],
    chunk: usize,
    ws: Workspace,
    options: DiffOptions,
    on_failure: impl FnMut(&ApplyError, u64),
) -> Result<Vec<Change>, ApplyError>
where
    P: for<'e> PushParser<Event<'e> = UdiffEvent<'e>>,
{
    let (outcome, stream) = drive(
        parser,
        input,
        chunk,
        DiffStream::new(ws, options),
        on_failure,
    );
    stream.finish(&outcome.verdict)
}

/// What the two streaming checkers have in common: they take a parser's events and remember
/// the first failure.
pub trait UnitCheck<E> {
    /// Takes one event.
    fn take(&mut self, event: &E);
    /// The first unit that failed, if any.
    fn first_failure(&self) -> Option<&ApplyError>;
}

impl<'e> UnitCheck<PatchEvent<'e>> for PatchStream {
    fn take(&mut self, event: &PatchEvent<'e>) {
        let _ = self.on_event(event);
    }

    fn first_failure(&self) -> Option<&ApplyError> {
        self.failure()
    }
}

impl<'e> UnitCheck<UdiffEvent<'e>> for DiffStream {
    fn take(&mut self, event: &UdiffEvent<'e>) {
        let _ = self.on_event(event);
    }

    fn first_failure(&self) -> Option<&ApplyError> {
        self.failure()
    }
}

/// A parser and a streaming checker driven together, chunk by chunk, for callers whose bytes
/// arrive from a reader or a model rather than a slice.
pub struct CheckedStream<P, S> {
    parser: P,
    stream: S,
    reported: bool,
}

impl<P, S> CheckedStream<P, S>
where
    P: PushParser,
    S: for<'e> UnitCheck<P::Event<'e>>,
{
    /// Pairs `parser` with `stream`.
    pub fn new(parser: P, stream: S) -> Self {
        CheckedStream {
            parser,
            stream,
            reported: false,
        }
    }

    /// Pushes the next chunk. The first time a unit fails, `on_failure` hears of it with the
    /// bytes pushed so far. Returns `false` once the parser has refused a byte.
    pub fn push(&mut self, piece: &[u8], on_failure: &mut impl FnMut(&ApplyError, u64)) -> bool {
        let stream = &mut self.stream;
        let _ = self.parser.push(piece, &mut |e| stream.take(&e));
        if let (Some(e), false) = (self.stream.first_failure(), self.reported) {
            self.reported = true;
            on_failure(e, self.parser.consumed());
        }
        self.parser.error().is_none()
    }

    /// Whether a failure has been reported through `push`.
    pub fn reported(&self) -> bool {
        self.reported
    }

    /// Ends the stream: the parser's outcome and the checker, ready to commit.
    pub fn finish(self) -> (crate::contract::Outcome<P::ErrorKind>, S) {
        let mut stream = self.stream;
        let outcome = self.parser.finish(&mut |e| stream.take(&e));
        (outcome, stream)
    }
}

/// Feeds `input` to `parser` in pieces of `chunk` bytes (all at once for 0), checking every
/// event with `stream`; `on_failure` hears of the first failure once, the moment it is known.
fn drive<P, S>(
    parser: P,
    input: &[u8],
    chunk: usize,
    stream: S,
    mut on_failure: impl FnMut(&ApplyError, u64),
) -> (crate::contract::Outcome<P::ErrorKind>, S)
where
    P: PushParser,
    S: for<'e> UnitCheck<P::Event<'e>>,
{
    let mut checked = CheckedStream::new(parser, stream);
    let size = if chunk == 0 {
        input.len().max(1)
    } else {
        chunk
    };
    for piece in input.chunks(size) {
        if !checked.push(piece, &mut on_failure) {
            break;
        }
    }
    let reported = checked.reported();
    let (outcome, stream) = checked.finish();
    if let (Some(e), false) = (stream.first_failure(), reported) {
        on_failure(e, outcome.consumed);
    }
    (outcome, stream)
}
