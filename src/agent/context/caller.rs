//! The loop's model as the governance machinery reaches it outside the loop's own turns
//! (the compaction call, [`super::compaction`]): the CTL loop's source or the native loop's,
//! each sent the same view in its own rendering ([`ContextLoop::request`],
//! [`ContextLoop::composed`]), with no tool to call.

use crate::streams::{Event, StreamErrorKind, Usage};

use super::super::model::{Finish, Flow, Message, ModelError, ModelSource, Request, Role};
use super::super::native::{ComposedRequest, NativeSource};
use super::super::provider::{Composed, ToolChoice};
use super::ContextLoop;

/// The model as the governance machinery calls it outside the loop's own turns (the
/// compaction call): the CTL loop's source, or the native loop's. The request is the same
/// view in the two renderings of [`ContextLoop`].
pub enum Caller<'m> {
    /// A source of CTL bytes: the view rendered by [`ContextLoop::request`].
    Ctl(&'m mut dyn ModelSource),
    /// A native caller: the view rendered by [`ContextLoop::composed`].
    Native(&'m mut dyn NativeSource),
}

/// What a [`Caller::text_call`] gave: how it ended, and the usage its provider reported.
#[derive(Debug)]
pub struct Answered {
    /// How it finished (`None`: the source has nothing more), or why it failed.
    pub ended: Result<Option<Finish>, ModelError>,
    /// The usage the provider reported for the call, if any.
    pub usage: Option<Usage>,
}

impl Caller<'_> {
    /// The model, as the transcript names it.
    pub fn describe(&self) -> String {
        match self {
            Caller::Ctl(model) => model.describe(),
            Caller::Native(model) => model.describe(),
        }
    }

    /// One call with no tool to call: the view, then `prompt` as a user message; the
    /// answer's text into `sink`. How it finished (`None` when the source has nothing
    /// more), and the usage reported.
    pub fn text_call(
        &mut self,
        ctx: &ContextLoop,
        prompt: &str,
        max_tokens: u32,
        sink: &mut dyn FnMut(&[u8]) -> Flow,
    ) -> Answered {
        match self {
            Caller::Ctl(model) => {
                let ended = Self::ctl_call(&mut **model, ctx, prompt, max_tokens, sink);
                Answered {
                    ended,
                    usage: model.take_usage(),
                }
            }
            Caller::Native(model) => {
                let mut usage = None;
                let ended =
                    Self::native_call(&mut **model, ctx, prompt, max_tokens, sink, &mut usage);
                Answered { ended, usage }
            }
        }
    }

    fn ctl_call(
        model: &mut dyn ModelSource,
        ctx: &ContextLoop,
        prompt: &str,
        max_tokens: u32,
        sink: &mut dyn FnMut(&[u8]) -> Flow,
    ) -> Result<Option<Finish>, ModelError> {
        let mut messages = ctx.request();
        messages.push(Message::new(Role::User, prompt));
        let request = Request {
            messages: &messages,
            max_tokens,
        };
        model.turn(&request, sink)
    }

    fn native_call(
        model: &mut dyn NativeSource,
        ctx: &ContextLoop,
        prompt: &str,
        max_tokens: u32,
        sink: &mut dyn FnMut(&[u8]) -> Flow,
        usage: &mut Option<Usage>,
    ) -> Result<Option<Finish>, ModelError> {
        let mut messages = ctx.composed();
        messages.push(Composed::User(prompt.to_owned()));
        let request = ComposedRequest {
            messages: &messages,
            tools: &[],
            choice: ToolChoice::Auto,
            max_tokens,
        };
        let mut stopped = false;
        let turn = model.compose_turn(&request, &mut |event| {
            if let Event::Text(text) = event {
                if !stopped && sink(text.as_bytes()) == Flow::Stop {
                    stopped = true;
                }
            }
        })?;
        let summary = turn.summary;
        usage.clone_from(&summary.usage);
        if let Some(error) = &summary.error {
            return Err(match error.kind {
                StreamErrorKind::ProviderError => ModelError::Server(error.to_string()),
                _ => ModelError::Malformed(error.to_string()),
            });
        }
        if let Some(dropped) = turn.dropped.filter(|_| !stopped) {
            return Err(ModelError::Disconnected(dropped));
        }
        Ok(Some(if summary.truncated {
            Finish::Length
        } else {
            Finish::Stop
        }))
    }
}
