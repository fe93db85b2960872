//! An OpenAI-compatible endpoint: chat completions, streamed as server-sent events.
//!
//! `POST $OPENAI_BASE_URL/chat/completions` with `"stream": true`; each event's
//! `choices[0].delta.content` is a chunk of the model's output (CTL), handed to the loop as it
//! arrives, and `choices[0].finish_reason` says how the turn ended; `data: [DONE]` closes the
//! stream. The request asks for the turn's token usage (`"stream_options":
//! {"include_usage": true}`): the last chunk's `usage`, read as [`crate::streams::usage`]
//! says, is the turn's ([`ModelSource::take_usage`]). The request goes through [`http`] (a reader thread, so every wait has
//! its own deadline) and the body through the [`SseReader`].
//!
//! Quirks of servers in the wild that are handled rather than failed:
//!
//! - a server that ignores `stream: true` and answers `application/json` with one whole
//!   `chat.completion`: its `message.content` and `finish_reason` are the turn;
//! - event streams with CR, LF or CRLF line ends (the reader takes all three);
//! - after the `finish_reason` the turn is complete: what comes later that is not a valid
//!   event (garbage, an error event, a broken connection) is reported as a notice and
//!   ignored, and if neither `[DONE]` nor the close comes within the finish grace
//!   ([`DEFAULT_FINISH_GRACE`]) the turn ends without them;
//! - the output limit's field: `max_tokens` or `max_completion_tokens` ([`TokenField`]); a
//!   400 that names the one sent as unsupported is retried once with the other, which is kept
//!   for the rest of the session;
//! - a server that refuses `stream_options` as unsupported (a 400 or 422 naming it): the
//!   request is sent again without it, and it is left out for the rest of the session (the
//!   turns then report no usage);
//! - chat templates that refuse a conversation without a user message: one is always sent
//!   ([`DEFAULT_TASK`] when the conversation has none).
//!
//! Error statuses are retried as [`super::retry`] says (429 with its `retry-after`, 500, 502,
//! 503, 504, 529; bounded by [`OpenAiConfig::retry`]); the others end the turn at once.
//! Failures are sorted for the loop: an error status whose body names a context overflow
//! (`context_length_exceeded`) is [`ModelError::ContextOverflow`], which the loop recovers
//! from by compacting once; a connection that ends, or stays silent for the read timeout,
//! before a `finish_reason` is [`ModelError::Disconnected`]; an event that is not the expected
//! JSON is [`ModelError::Malformed`].

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::http::{self, Exchange, Head, Next};
use super::model::{Finish, Flow, ModelError, ModelSource, Request, Role};
use super::sse::{self, SseReader};
use crate::streams::{Api, Usage};

mod config;
mod wire;

pub use config::{
    seconds, OpenAiConfig, TokenField, DEFAULT_FINISH_GRACE, DEFAULT_READ_TIMEOUT,
    MAX_FINISH_GRACE, MAX_READ_TIMEOUT,
};
pub(crate) use wire::{overflows_context, Refusals};
use wire::{parse_completion, parse_event, Delta};

/// The API's base URL when `OPENAI_BASE_URL` is not set.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// The bound on one event-stream line, one event's data and a whole JSON answer: 8 MiB.
pub const MAX_EVENT: usize = sse::DEFAULT_MAX;
/// The user message sent when the conversation has none before the model's first message
/// (a library caller that gave no task: `frontier run` refuses to start without one).
pub const DEFAULT_TASK: &str = "Begin. No task was given: look at the workspace and do what it \
     asks for, or end the session with an empty reply if there is nothing to do.";

/// The model source of `--model openai`.
pub struct OpenAi {
    config: OpenAiConfig,
    agent: ureq::Agent,
    /// What the server refused, adapted to.
    refusals: Refusals,
    notices: Box<dyn FnMut(&str) + Send>,
    /// The usage the last turn reported.
    usage: Option<Usage>,
    /// The reasoning the last turn streamed (`reasoning_content` or `reasoning` deltas).
    reasoning: Option<String>,
}

impl OpenAi {
    /// A client for `config`; notices (quirks handled, see the module documentation) go to
    /// standard error unless [`OpenAi::with_notices`] says otherwise.
    pub fn new(config: OpenAiConfig) -> OpenAi {
        // The caller's waits decide; the agent's read timeout, a little longer, only bounds
        // how long an abandoned reader thread can live.
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(Duration::from_secs(30))
            .timeout_read(config.read_timeout.saturating_add(Duration::from_secs(1)))
            .build();
        OpenAi {
            config,
            agent,
            refusals: Refusals::default(),
            notices: Box::new(|notice| eprintln!("frontier: openai: {notice}")),
            usage: None,
            reasoning: None,
        }
    }

    /// Sends the notices to `notices` instead of standard error.
    pub fn with_notices(mut self, notices: impl FnMut(&str) + Send + 'static) -> OpenAi {
        self.notices = Box::new(notices);
        self
    }

    fn body(&self, request: &Request<'_>) -> String {
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        // The first message after the system prompt must be the user's.
        let mut past_system = false;
        for m in request.messages {
            if !past_system && m.role != Role::System {
                if m.role != Role::User {
                    messages.push(json!({"role": "user", "content": DEFAULT_TASK}));
                }
                past_system = true;
            }
            messages.push(json!({"role": m.role.name(), "content": m.content}));
        }
        if !past_system {
            messages.push(json!({"role": "user", "content": DEFAULT_TASK}));
        }
        let mut body = Map::new();
        body.insert("model".into(), json!(self.config.model));
        body.insert("messages".into(), Value::Array(messages));
        body.insert("stream".into(), json!(true));
        if !self.refusals.usage {
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        body.insert(
            self.config.token_field.name().into(),
            json!(request.max_tokens),
        );
        Value::Object(body).to_string()
    }

    /// Sends the request and waits for a success status; retries once with the other token
    /// field when the server refuses the one sent.
    fn open(&mut self, request: &Request<'_>) -> Result<(Exchange, String), ModelError> {
        let url = format!(
            "{}/chat/completions",
            self.config.base_url.trim_end_matches('/')
        );
        let mut headers = vec![
            ("Content-Type", "application/json".to_owned()),
            ("Accept", "text/event-stream, application/json".to_owned()),
        ];
        if let Some(key) = &self.config.api_key {
            headers.push(("Authorization", format!("Bearer {key}")));
        }
        let mut retries = 0;
        loop {
            let mut exchange = http::post(&self.agent, &url, &headers, self.body(request));
            let (code, body, retry_after) =
                match exchange.model_head(self.config.read_timeout, "OPENAI_READ_TIMEOUT")? {
                    Head::Ok { content_type } => return Ok((exchange, content_type)),
                    Head::Status {
                        code,
                        body,
                        retry_after,
                    } => (code, body, retry_after),
                };
            if overflows_context(&body) {
                return Err(ModelError::ContextOverflow(format!("HTTP {code}: {body}")));
            }
            let field = &mut self.config.token_field;
            if self.refusals.adapt(code, &body, field, &mut *self.notices) {
                continue;
            }
            self.config.retry.wait_or_refuse(
                code,
                &body,
                retry_after.as_deref(),
                &mut retries,
                "OPENAI_API_KEY",
                &mut *self.notices,
            )?;
        }
    }

    /// The body is one whole `chat.completion` (a server that does not stream).
    fn whole_body(
        &mut self,
        mut exchange: Exchange,
        sink: &mut dyn FnMut(&[u8]) -> Flow,
    ) -> Result<Option<Finish>, ModelError> {
        let mut body = Vec::new();
        loop {
            match exchange.next(self.config.read_timeout) {
                Next::Bytes(bytes) => {
                    if body.len() + bytes.len() > MAX_EVENT {
                        return Err(ModelError::Malformed(format!(
                            "the JSON answer is longer than {MAX_EVENT} bytes"
                        )));
                    }
                    body.extend_from_slice(&bytes);
                }
                Next::End => break,
                Next::Failed(e) => return Err(self.read_failed(&e)),
                Next::TimedOut => return Err(self.silent()),
            }
        }
        let answer = parse_completion(&body)?;
        self.usage = answer.usage.and_then(|u| Usage::read(Api::OpenAiChat, &u));
        self.reasoning = answer.reasoning;
        if let Some(text) = answer.content.filter(|t| !t.is_empty()) {
            let _ = sink(text.as_bytes());
        }
        Ok(Some(answer.finish.unwrap_or(Finish::Stop)))
    }

    /// The body is an event stream.
    fn event_stream(
        &mut self,
        mut exchange: Exchange,
        sink: &mut dyn FnMut(&[u8]) -> Flow,
    ) -> Result<Option<Finish>, ModelError> {
        let mut reader = SseReader::with_max(MAX_EVENT);
        let mut state = StreamState::default();
        loop {
            let wait = match state.finished_at {
                None => self.config.read_timeout,
                Some(at) => self.config.finish_grace.saturating_sub(at.elapsed()),
            };
            let bytes = match exchange.next(wait) {
                Next::Bytes(bytes) => bytes,
                Next::End => {
                    return match state.finish {
                        Some(finish) => Ok(Some(finish)),
                        None => Err(ModelError::Disconnected(format!(
                            "the connection closed before the turn finished (no finish_reason, \
                             no [DONE]{})",
                            if reader.pending() {
                                ", in the middle of an event"
                            } else {
                                ""
                            }
                        ))),
                    }
                }
                Next::Failed(e) => return self.late(state.finish, self.read_failed(&e)),
                Next::TimedOut => {
                    if let Some(finish) = state.finish {
                        let notice = format!(
                            "neither [DONE] nor the close came within {:?} of the finish_reason \
                             (OPENAI_FINISH_GRACE): the turn ends",
                            self.config.finish_grace
                        );
                        (self.notices)(&notice);
                        return Ok(Some(finish));
                    }
                    return Err(self.silent());
                }
            };
            let pushed = reader.push(&bytes, &mut |event| state.event(event.data, sink));
            if let Some(usage) = state.usage.take() {
                self.usage = Some(usage);
            }
            if !state.reasoning.is_empty() {
                let more = std::mem::take(&mut state.reasoning);
                let kept = self.reasoning.get_or_insert_with(String::new);
                if kept.len() + more.len() <= MAX_EVENT {
                    kept.push_str(&more);
                }
            }
            if let Err(e) = pushed {
                state.failure = Some(ModelError::Malformed(e.to_string()));
            }
            if state.stopped {
                return Ok(Some(state.finish.unwrap_or(Finish::Stop)));
            }
            if let Some(failure) = state.failure.take() {
                return self.late(state.finish, failure);
            }
            if state.done {
                // `[DONE]` without a finish_reason: a server that does not report one.
                return Ok(Some(state.finish.unwrap_or(Finish::Stop)));
            }
        }
    }

    /// A failure of the stream: the turn fails, unless its finish had already come, in which
    /// case the failure is reported and ignored.
    fn late(
        &mut self,
        finish: Option<Finish>,
        failure: ModelError,
    ) -> Result<Option<Finish>, ModelError> {
        match finish {
            Some(finish) => {
                let notice = format!(
                    "after the finish_reason ({}), ignored: {failure}",
                    finish.name()
                );
                (self.notices)(&notice);
                Ok(Some(finish))
            }
            None => Err(failure),
        }
    }

    fn silent(&self) -> ModelError {
        ModelError::Disconnected(format!(
            "no bytes within the read timeout ({:?}, OPENAI_READ_TIMEOUT)",
            self.config.read_timeout
        ))
    }

    fn read_failed(&self, e: &std::io::Error) -> ModelError {
        match e.kind() {
            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => self.silent(),
            _ => ModelError::Disconnected(format!("reading the stream failed: {e}")),
        }
    }
}

/// What the events of one streamed turn have said so far.
#[derive(Default)]
struct StreamState {
    finish: Option<Finish>,
    finished_at: Option<Instant>,
    done: bool,
    /// The sink wants no more.
    stopped: bool,
    failure: Option<ModelError>,
    /// The last usage of the right shape an event carried, not yet taken.
    usage: Option<Usage>,
    /// The reasoning the events carried so far (at most [`MAX_EVENT`] bytes are kept).
    reasoning: String,
}

impl StreamState {
    fn event(&mut self, data: &[u8], sink: &mut dyn FnMut(&[u8]) -> Flow) -> ControlFlow<()> {
        let (content, reason) = match parse_event(data) {
            Ok(Delta::Done) => {
                self.done = true;
                return ControlFlow::Break(());
            }
            Ok(Delta::Content(content, reason, usage, reasoning)) => {
                // A usage of the wrong shape is ignored, never a failure of the turn.
                if let Some(usage) = usage.and_then(|u| Usage::read(Api::OpenAiChat, &u)) {
                    self.usage = Some(usage);
                }
                if let Some(more) = reasoning {
                    if self.reasoning.len() + more.len() <= MAX_EVENT {
                        self.reasoning.push_str(&more);
                    }
                }
                (content, reason)
            }
            Err(e) => {
                self.failure = Some(e);
                return ControlFlow::Break(());
            }
        };
        let content = content.filter(|t| !t.is_empty());
        if self.finish.is_some() {
            // A usage-only chunk, or a repeated finish: fine. More content is not.
            if content.is_some() {
                self.failure = Some(ModelError::Malformed(
                    "content after the finish_reason".into(),
                ));
                return ControlFlow::Break(());
            }
            return ControlFlow::Continue(());
        }
        if let Some(text) = content {
            if sink(text.as_bytes()) == Flow::Stop {
                self.stopped = true;
                return ControlFlow::Break(());
            }
        }
        if reason.is_some() {
            self.finish = reason;
            self.finished_at = Some(Instant::now());
        }
        ControlFlow::Continue(())
    }
}

impl ModelSource for OpenAi {
    fn turn(
        &mut self,
        request: &Request<'_>,
        sink: &mut dyn FnMut(&[u8]) -> Flow,
    ) -> Result<Option<Finish>, ModelError> {
        self.usage = None;
        self.reasoning = None;
        let (exchange, content_type) = self.open(request)?;
        if content_type == "application/json" || content_type.ends_with("+json") {
            self.whole_body(exchange, sink)
        } else {
            self.event_stream(exchange, sink)
        }
    }

    fn describe(&self) -> String {
        format!("openai:{}", self.config.model)
    }

    fn take_usage(&mut self) -> Option<Usage> {
        self.usage.take()
    }

    fn take_reasoning(&mut self) -> Option<String> {
        self.reasoning.take()
    }
}
