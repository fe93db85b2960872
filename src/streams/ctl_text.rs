//! `--ctl`: the answer text of a provider stream read as a CTL stream (`ctl.md`), so that a
//! model told to write CTL through a provider's API is confirmed call by call as in `frontier
//! calls`. The text outside `<think>` blocks goes into the CTL parser of the mode asked for
//! (strict, or extended: what `frontier run` teaches a real model) and its call assembler; a
//! call is confirmed by its `end` line.

use frontier_core::contract::{ParseError, PushParser, Verdict};
use frontier_core::ctl::{CallAssembler, CtlErrorKind, CtlMode, CtlParser, Limits};

use super::call::{Arguments, Call, CallKind, PartialCall};

/// The CTL parser of a stream's text.
#[derive(Debug, Default)]
pub struct CtlText {
    parser: CtlParser,
    assembler: CallAssembler,
}

/// Why a stream's text is not CTL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotCtl {
    /// The parser's error (offset in the text, byte, kind); `None` when the text is CTL but a
    /// call is over the assembler's bounds.
    pub error: Option<ParseError<CtlErrorKind>>,
    /// For people: what and where in the text.
    pub message: String,
}

impl CtlText {
    /// A parser of CTL text in `mode`, with the default limits.
    pub fn new(mode: CtlMode) -> CtlText {
        CtlText {
            parser: CtlParser::with_mode(Limits::default(), mode),
            assembler: CallAssembler::default(),
        }
    }

    /// Whether the text so far is whole frames (none open): where a `<think>` block may
    /// stand.
    pub fn between_frames(&self) -> bool {
        self.parser.accepting()
    }

    /// Pushes answer text; each call it confirms goes to `on_call`. `Err` when the text is
    /// not CTL (or a call is over the assembler's bounds).
    pub fn push(&mut self, text: &[u8], on_call: &mut dyn FnMut(Call)) -> Result<(), NotCtl> {
        let assembler = &mut self.assembler;
        let mut too_large = None;
        let pushed = self
            .parser
            .push(text, &mut |e| match assembler.on_event(&e) {
                Ok(Some(call)) => on_call(Call {
                    id: call.id,
                    name: call.name,
                    kind: CallKind::Ctl,
                    arguments: Arguments::Ctl(call.args),
                }),
                Ok(None) => {}
                Err(e) => {
                    too_large.get_or_insert(e.to_string());
                }
            });
        match (pushed, too_large) {
            (Err(e), _) => Err(NotCtl {
                error: Some(e),
                message: format!(
                    "the CTL text: {e} of the answer (the text outside <think> blocks)"
                ),
            }),
            (Ok(()), Some(e)) => Err(NotCtl {
                error: None,
                message: format!("the CTL text: {e}"),
            }),
            (Ok(()), None) => Ok(()),
        }
    }

    /// The end of the text: the call left open, if any, as an incomplete call.
    pub fn finish(self) -> Option<PartialCall> {
        let open = self.assembler.in_progress().map(|call| PartialCall {
            id: call.id.clone(),
            name: call.name.clone(),
            kind: CallKind::Ctl,
            text: String::new(),
            reason: None,
        });
        match self.parser.finish(&mut |_| {}).verdict {
            Verdict::Incomplete(_) => open,
            Verdict::Complete | Verdict::Error(_) => None,
        }
    }
}
