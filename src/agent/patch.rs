//! The `apply_patch` tool: the apply_patch parser fed while the argument streams, the
//! application engine's safe policy once the call is confirmed.
//!
//! A [`PatchTool`] opens one [`PatchSession`] per `apply_patch` call, the moment the call's
//! `call` line is confirmed. The loop pushes the bytes of the call's `patch` argument into the
//! session as they arrive: the strict apply_patch parser ([`StrictParser`]) turns them into
//! confirmed events, and the engine's [`PatchStream`] checks each unit against the workspace
//! as it is confirmed (the file read, the chunk located). So a malformed patch, or one whose
//! context is not in the file, is known before the call's `end` line; the loop records it then.
//! Nothing is written until the call is confirmed, judged and applied, and under the safe
//! policy a failing patch writes nothing at all.

use crate::apply::{PatchStream, Policy, Workspace};
use crate::apply_patch::{PatchErrorKind, StrictParser};
use crate::contract::{ErrorKind, PushParser, Unclosed, Verdict};

/// What is already known to be wrong with a patch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatchProblem {
    /// The bytes are not an apply_patch patch (or it was cut off): the call is refused.
    Malformed(String),
    /// The patch parses but does not apply to the workspace: the call fails, writing nothing.
    DoesNotApply(String),
    /// The patch touches one of the runtime's own files (a protected path, moves onto it and
    /// deletions of it included): the call is refused.
    Protected(String),
}

impl PatchProblem {
    /// `malformed_patch` or `does_not_apply`.
    pub fn kind(&self) -> &'static str {
        match self {
            PatchProblem::Malformed(_) => "malformed_patch",
            PatchProblem::DoesNotApply(_) => "does_not_apply",
            PatchProblem::Protected(_) => "protected_path",
        }
    }

    /// The details.
    pub fn detail(&self) -> &str {
        match self {
            PatchProblem::Malformed(d)
            | PatchProblem::DoesNotApply(d)
            | PatchProblem::Protected(d) => d,
        }
    }
}

/// Opens patch sessions.
pub trait PatchTool: Send + Sync {
    /// A fresh session for one `apply_patch` call in `workspace`.
    fn begin(&self, workspace: &Workspace) -> Box<dyn PatchSession>;
}

/// One patch, streamed in, then applied once.
pub trait PatchSession: Send {
    /// The next bytes of the `patch` argument.
    fn push(&mut self, bytes: &[u8]);
    /// The argument's last byte arrived.
    fn finish(&mut self);
    /// What is already known to be wrong, if anything.
    fn problem(&self) -> Option<PatchProblem>;
    /// Applies the patch; returns a summary of what changed, or why nothing did.
    fn apply(self: Box<Self>) -> Result<String, String>;
}

/// The crate's own machinery: strict apply_patch parsing, the safe application policy.
#[derive(Clone, Copy, Debug, Default)]
pub struct Engine;

impl PatchTool for Engine {
    fn begin(&self, workspace: &Workspace) -> Box<dyn PatchSession> {
        Box::new(EngineSession {
            parser: Some(StrictParser::default()),
            stream: PatchStream::new(workspace.clone(), Policy::Safe),
            verdict: None,
        })
    }
}

struct EngineSession {
    /// `None` once finished.
    parser: Option<StrictParser>,
    stream: PatchStream,
    verdict: Option<Verdict<PatchErrorKind>>,
}

impl PatchSession for EngineSession {
    fn push(&mut self, bytes: &[u8]) {
        let Some(parser) = self.parser.as_mut() else {
            return;
        };
        if parser.error().is_some() {
            return;
        }
        // The parser keeps reading after the engine has failed, so a malformed patch is still
        // refused as malformed; the engine stops taking events at its first failure.
        let stream = &mut self.stream;
        let _ = parser.push(bytes, &mut |event| {
            if stream.failure().is_none() {
                let _ = stream.on_event(&event);
            }
        });
    }

    fn finish(&mut self) {
        if let Some(parser) = self.parser.take() {
            let stream = &mut self.stream;
            let outcome = parser.finish(&mut |event| {
                if stream.failure().is_none() {
                    let _ = stream.on_event(&event);
                }
            });
            self.verdict = Some(outcome.verdict);
        }
    }

    fn problem(&self) -> Option<PatchProblem> {
        let parse_error = match (&self.parser, &self.verdict) {
            (Some(parser), _) => parser.error(),
            (None, Some(verdict)) => verdict.error().copied(),
            (None, None) => None,
        };
        if let Some(e) = parse_error {
            return Some(PatchProblem::Malformed(format!(
                "{} at byte {} of the patch (0x{:02x})",
                e.kind.as_str(),
                e.offset,
                e.byte
            )));
        }
        if let Some(failure) = self.stream.failure() {
            if failure.kind == crate::apply::ErrorKind::ProtectedPath {
                return Some(PatchProblem::Protected(failure.to_string()));
            }
            return Some(PatchProblem::DoesNotApply(failure.to_string()));
        }
        if let Some(Verdict::Incomplete(unclosed)) = self.verdict {
            return Some(PatchProblem::Malformed(format!(
                "the patch ends before `*** End Patch`: {unclosed}"
            )));
        }
        None
    }

    fn apply(mut self: Box<Self>) -> Result<String, String> {
        self.finish();
        let verdict = self
            .verdict
            .unwrap_or(Verdict::Incomplete(Unclosed::at("patch", 0)));
        match self.stream.finish(&verdict) {
            Ok(changes) => {
                let mut summary = String::new();
                for change in changes {
                    summary.push(change.kind.letter());
                    summary.push(' ');
                    summary.push_str(&change.path);
                    summary.push('\n');
                }
                Ok(summary)
            }
            Err(failure) => Err(failure.error.to_string()),
        }
    }
}
