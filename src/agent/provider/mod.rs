//! The three provider APIs as model sources: OpenAI Chat Completions, OpenAI Responses and
//! Anthropic Messages, streamed from the real endpoint and read by [`crate::streams`].
//!
//! One client, [`Provider`], for the three: the request goes out through [`http`] (a reader
//! thread, so every wait has its own deadline) with the retries of [`super::retry`]; the body
//! goes into a [`StreamReader`] of the API, which confirms each call only when its protocol
//! has finished it and its arguments are whole. The client serves the loop in two ways:
//!
//! - `--tools native`: [`NativeSource`] (for [`super::native`]): the five tools declared as
//!   the API's own tools ([`shape`]), the conversation kept in the API's shape, the reader's
//!   events (confirmed calls, malformed calls, text) handed to the loop as they arrive;
//! - `--tools ctl`: [`ModelSource`]: no API tools, the text deltas handed on as the bytes of
//!   a CTL stream (the loop's CTL parser reads them, as for `--model openai`).
//!
//! Endpoints: `{OPENAI_BASE_URL}/chat/completions`, `{OPENAI_BASE_URL}/responses`,
//! `{ANTHROPIC_BASE_URL}/v1/messages` (with `anthropic-version: 2023-06-01`).

use std::time::Duration;

use serde_json::Value;

use super::http::{self, Exchange, Head, Next};
use super::model::{Finish, Flow, ModelError, ModelSource, Request, Role};
use super::native::{ComposedRequest, NativeSource, NativeTurn};
use super::openai::{
    overflows_context, OpenAiConfig, Refusals, TokenField, DEFAULT_READ_TIMEOUT, MAX_READ_TIMEOUT,
};
use super::retry::RetryPolicy;
use super::tools::Tool;
use crate::streams::{Api, Event, Format, Limits, StreamReader, Usage};

pub mod shape;

pub use shape::{Composed, Conversation, SentCall, ToolChoice, ToolMode, ToolReply};

/// The Anthropic API's base URL when `ANTHROPIC_BASE_URL` is not set.
pub const DEFAULT_ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// What a tool result's output becomes when a context overflow compacts the conversation.
pub const COMPACTED: &str = "[earlier tool results cleared to fit the context window]";

/// The `anthropic-version` header sent.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Where and what to ask.
#[derive(Clone, Debug)]
pub struct ProviderConfig {
    /// Which API.
    pub api: Api,
    /// The base URL (`OPENAI_BASE_URL`, up to `/v1`; `ANTHROPIC_BASE_URL`, the host).
    pub base_url: String,
    /// The key (`OPENAI_API_KEY`: a bearer token; `ANTHROPIC_API_KEY`: `x-api-key`).
    pub api_key: Option<String>,
    /// The model's name (`OPENAI_MODEL`, `ANTHROPIC_MODEL`).
    pub model: String,
    /// How long the server may stay silent (`OPENAI_READ_TIMEOUT`, `ANTHROPIC_READ_TIMEOUT`).
    pub read_timeout: Duration,
    /// Chat's output limit field (`OPENAI_TOKEN_FIELD`).
    pub token_field: TokenField,
    /// Which HTTP errors are retried, how often, how long apart.
    pub retry: RetryPolicy,
    /// The stream reader's bounds.
    pub limits: Limits,
}

impl ProviderConfig {
    /// `model` of `api` at `base_url`, no key, the default waits and retries.
    pub fn new(api: Api, base_url: impl Into<String>, model: impl Into<String>) -> ProviderConfig {
        let base_url = base_url.into();
        ProviderConfig {
            api,
            token_field: TokenField::default_for(&base_url),
            base_url,
            api_key: None,
            model: model.into(),
            read_timeout: DEFAULT_READ_TIMEOUT,
            retry: RetryPolicy::default(),
            limits: Limits::default(),
        }
    }

    /// Reads the environment of `api`: the `OPENAI_*` variables of [`OpenAiConfig::from_env`]
    /// for the two OpenAI APIs; `ANTHROPIC_BASE_URL` (default
    /// [`DEFAULT_ANTHROPIC_BASE_URL`]), `ANTHROPIC_API_KEY`, `ANTHROPIC_MODEL` (required) and
    /// `ANTHROPIC_READ_TIMEOUT` (seconds, as `OPENAI_READ_TIMEOUT`) for Anthropic.
    pub fn from_env(api: Api) -> Result<ProviderConfig, String> {
        if api != Api::AnthropicMessages {
            let openai = OpenAiConfig::from_env()?;
            let mut config = ProviderConfig::new(api, openai.base_url, openai.model);
            config.api_key = openai.api_key;
            config.read_timeout = openai.read_timeout;
            config.token_field = openai.token_field;
            return Ok(config);
        }
        let var = |name: &str| match std::env::var(name) {
            Ok(v) => Ok(Some(v)),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(format!("{name} is not UTF-8")),
        };
        let base = var("ANTHROPIC_BASE_URL")?.unwrap_or_else(|| DEFAULT_ANTHROPIC_BASE_URL.into());
        let model = var("ANTHROPIC_MODEL")?
            .ok_or_else(|| "ANTHROPIC_MODEL is not set (the model to ask)".to_owned())?;
        let mut config = ProviderConfig::new(api, base, model);
        config.api_key = var("ANTHROPIC_API_KEY")?.filter(|k| !k.is_empty());
        if let Some(text) = var("ANTHROPIC_READ_TIMEOUT")? {
            config.read_timeout = super::openai::seconds(&text, false, MAX_READ_TIMEOUT)
                .map_err(|e| format!("ANTHROPIC_READ_TIMEOUT={text:?}: {e}"))?;
        }
        Ok(config)
    }

    fn url(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        match self.api {
            Api::OpenAiChat => format!("{base}/chat/completions"),
            Api::OpenAiResponses => format!("{base}/responses"),
            Api::AnthropicMessages => format!("{base}/v1/messages"),
        }
    }

    fn headers(&self) -> Vec<(&'static str, String)> {
        let mut headers = vec![
            ("Content-Type", "application/json".to_owned()),
            ("Accept", "text/event-stream".to_owned()),
        ];
        match (self.api, &self.api_key) {
            (Api::AnthropicMessages, key) => {
                headers.push(("anthropic-version", ANTHROPIC_VERSION.to_owned()));
                if let Some(key) = key {
                    headers.push(("x-api-key", key.clone()));
                }
            }
            (_, Some(key)) => headers.push(("Authorization", format!("Bearer {key}"))),
            (_, None) => {}
        }
        headers
    }

    /// The variable that holds the key, for messages.
    fn key_variable(&self) -> &'static str {
        match self.api {
            Api::AnthropicMessages => "ANTHROPIC_API_KEY",
            _ => "OPENAI_API_KEY",
        }
    }

    /// The environment variable of the read timeout.
    fn timeout_variable(&self) -> &'static str {
        match self.api {
            Api::AnthropicMessages => "ANTHROPIC_READ_TIMEOUT",
            _ => "OPENAI_READ_TIMEOUT",
        }
    }
}

/// The model source of `--model openai|openai-responses|anthropic`. See the module
/// documentation.
pub struct Provider {
    client: Client,
    mode: ToolMode,
    /// The native conversation (`--tools native`); the CTL path builds it from the loop's
    /// messages at each request.
    conversation: Conversation,
    tools: Vec<Tool>,
    /// What the turn being answered said: its text and the calls it made.
    said: String,
    calls: Vec<SentCall>,
    /// The usage the last CTL turn reported (a native turn's is in its summary).
    usage: Option<Usage>,
    /// The reasoning the last CTL turn streamed apart from its text (a native turn's is in
    /// its summary).
    reasoning: Option<String>,
}

/// The HTTP side: one request with its retries, one body into a stream reader.
struct Client {
    config: ProviderConfig,
    agent: ureq::Agent,
    /// What the Chat server refused, adapted to.
    refusals: Refusals,
    notices: Box<dyn FnMut(&str) + Send>,
}

impl Provider {
    /// A client for `config` offering tools as `mode` says; notices (retries) go to standard
    /// error unless [`Provider::with_notices`] says otherwise.
    pub fn new(config: ProviderConfig, mode: ToolMode) -> Provider {
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(Duration::from_secs(30))
            .timeout_read(config.read_timeout.saturating_add(Duration::from_secs(1)))
            .build();
        let name = config.api.name();
        Provider {
            conversation: Conversation::new(config.api, ""),
            client: Client {
                config,
                agent,
                refusals: Refusals::default(),
                notices: Box::new(move |notice| eprintln!("frontier: {name}: {notice}")),
            },
            mode,
            tools: Vec::new(),
            said: String::new(),
            calls: Vec::new(),
            usage: None,
            reasoning: None,
        }
    }

    /// Sends the notices to `notices` instead of standard error.
    pub fn with_notices(mut self, notices: impl FnMut(&str) + Send + 'static) -> Provider {
        self.client.notices = Box::new(notices);
        self
    }
}

impl Client {
    /// Sends `body` and waits for a success status, retrying as [`ProviderConfig::retry`]
    /// allows.
    fn open(&mut self, body: &dyn Fn(TokenField) -> Value) -> Result<Exchange, ModelError> {
        let (url, headers) = (self.config.url(), self.config.headers());
        let mut attempt = 0;
        loop {
            let mut sent = body(self.config.token_field);
            if self.refusals.usage {
                if let Some(fields) = sent.as_object_mut() {
                    fields.shift_remove("stream_options");
                }
            }
            let sent = sent.to_string();
            let mut exchange = http::post(&self.agent, &url, &headers, sent);
            let (code, text, retry_after) = match exchange
                .model_head(self.config.read_timeout, self.config.timeout_variable())?
            {
                Head::Ok { .. } => return Ok(exchange),
                Head::Status {
                    code,
                    body,
                    retry_after,
                } => (code, body, retry_after),
            };
            if overflows_context(&text) {
                return Err(ModelError::ContextOverflow(format!("HTTP {code}: {text}")));
            }
            // Only Chat has the two fields a server may refuse.
            let field = &mut self.config.token_field;
            if self.config.api == Api::OpenAiChat
                && self.refusals.adapt(code, &text, field, &mut *self.notices)
            {
                continue;
            }
            self.config.retry.wait_or_refuse(
                code,
                &text,
                retry_after.as_deref(),
                &mut attempt,
                self.config.key_variable(),
                &mut *self.notices,
            )?;
        }
    }

    /// Reads the body of a turn into a stream reader of the API, handing its events to
    /// `on_event` as they are confirmed; `stop` says when the consumer wants no more.
    fn read(
        &mut self,
        mut exchange: Exchange,
        on_event: &mut dyn FnMut(Event<'_>),
        stop: &dyn Fn() -> bool,
    ) -> NativeTurn {
        let mut reader =
            StreamReader::with_options(self.config.api, Format::Sse, self.config.limits, None);
        let mut dropped = None;
        loop {
            match exchange.next(self.config.read_timeout) {
                Next::Bytes(bytes) => {
                    if reader.push(&bytes, on_event).is_err() || stop() {
                        break;
                    }
                }
                Next::End => break,
                Next::Failed(e) => {
                    dropped = Some(format!("reading the stream failed: {e}"));
                    break;
                }
                Next::TimedOut => {
                    dropped = Some(format!(
                        "no bytes within the read timeout ({:?})",
                        self.config.read_timeout
                    ));
                    break;
                }
            }
        }
        let summary = reader.finish(on_event);
        // After its finish a turn stands, whatever happens to the connection (a Chat server
        // that drops it before `[DONE]`, an Anthropic one before `message_stop`): every call
        // has been confirmed or refused by then.
        let dropped = match (&summary.finish_reason, &summary.error) {
            (Some(_), _) | (None, Some(_)) => None,
            (None, None) => Some(
                dropped
                    .unwrap_or_else(|| "the connection closed before the turn finished".to_owned()),
            ),
        };
        NativeTurn { summary, dropped }
    }
}

impl NativeSource for Provider {
    fn start(&mut self, system: &str, task: Option<&str>, tools: &[Tool]) {
        self.conversation = Conversation::new(self.client.config.api, system);
        self.conversation
            .user(task.unwrap_or(super::openai::DEFAULT_TASK));
        self.tools = tools.to_vec();
    }

    fn turn(
        &mut self,
        max_tokens: u32,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<NativeTurn, ModelError> {
        self.said.clear();
        self.calls.clear();
        let (conversation, tools, mode) = (&self.conversation, &self.tools, self.mode);
        let model = self.client.config.model.clone();
        let exchange = self
            .client
            .open(&|field| conversation.body(&model, max_tokens, field.name(), tools, mode))?;
        let mut said = std::mem::take(&mut self.said);
        let mut calls = std::mem::take(&mut self.calls);
        let mut seen = |event: Event<'_>| {
            match event {
                Event::Text(text) => said.push_str(text),
                Event::Call(call) => calls.push(SentCall::confirmed(call)),
                Event::Malformed(call) => calls.push(SentCall::malformed(call)),
                _ => {}
            }
            on_event(event);
        };
        let turn = self.client.read(exchange, &mut seen, &|| false);
        self.said = said;
        self.calls = calls;
        Ok(turn)
    }

    fn answer(&mut self, replies: &[ToolReply], note: Option<&str>) {
        let answered: Vec<SentCall> = self
            .calls
            .drain(..)
            .filter(|c| replies.iter().any(|r| r.id == c.id))
            .collect();
        self.conversation.assistant(&self.said, &answered);
        self.conversation.results(&answered, replies);
        if let Some(note) = note {
            self.conversation.user(note);
        }
        self.said.clear();
    }

    fn discard(&mut self) {
        self.said.clear();
        self.calls.clear();
    }

    fn compact(&mut self) -> usize {
        self.conversation.clear_old_results(COMPACTED)
    }

    fn compose_turn(
        &mut self,
        request: &ComposedRequest<'_>,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<NativeTurn, ModelError> {
        let conversation = Conversation::compose(self.client.config.api, request.messages);
        let model = self.client.config.model.clone();
        let exchange = self.client.open(&|field| {
            conversation.body_with_choice(
                &model,
                request.max_tokens,
                field.name(),
                request.tools,
                ToolMode::Native,
                request.choice,
            )
        })?;
        Ok(self.client.read(exchange, on_event, &|| false))
    }

    fn describe(&self) -> String {
        format!(
            "{}:{}",
            self.client.config.api.name(),
            self.client.config.model
        )
    }
}

impl ModelSource for Provider {
    fn turn(
        &mut self,
        request: &Request<'_>,
        sink: &mut dyn FnMut(&[u8]) -> Flow,
    ) -> Result<Option<Finish>, ModelError> {
        let system = request
            .messages
            .iter()
            .filter(|m| m.role == Role::System)
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n\n");
        let mut conversation = Conversation::new(self.client.config.api, system);
        let mut first = true;
        for m in request.messages.iter().filter(|m| m.role != Role::System) {
            if first && m.role != Role::User {
                conversation.user(super::openai::DEFAULT_TASK);
            }
            first = false;
            match m.role {
                Role::Assistant => conversation.assistant(&m.content, &[]),
                _ => conversation.user(&m.content),
            }
        }
        if first {
            conversation.user(super::openai::DEFAULT_TASK);
        }
        let model = self.client.config.model.clone();
        self.usage = None;
        self.reasoning = None;
        let exchange = self.client.open(&|field| {
            conversation.body(&model, request.max_tokens, field.name(), &[], ToolMode::Ctl)
        })?;
        let stopped = std::cell::Cell::new(false);
        let mut on_event = |event: Event<'_>| {
            if let Event::Text(text) = event {
                if !stopped.get() && sink(text.as_bytes()) == Flow::Stop {
                    stopped.set(true);
                }
            }
        };
        let turn = self.client.read(exchange, &mut on_event, &|| stopped.get());
        self.usage.clone_from(&turn.summary.usage);
        self.reasoning = super::native::apart(&turn.summary);
        if stopped.get() {
            return Ok(Some(Finish::Stop));
        }
        finish_of(turn)
    }

    fn describe(&self) -> String {
        NativeSource::describe(self)
    }

    fn take_usage(&mut self) -> Option<Usage> {
        self.usage.take()
    }

    fn take_reasoning(&mut self) -> Option<String> {
        self.reasoning.take()
    }
}

/// How a CTL turn ended, or why it failed.
fn finish_of(turn: NativeTurn) -> Result<Option<Finish>, ModelError> {
    let summary = turn.summary;
    if let Some(error) = summary.error {
        return Err(match error.kind {
            crate::streams::StreamErrorKind::ProviderError => ModelError::Server(error.to_string()),
            _ => ModelError::Malformed(error.to_string()),
        });
    }
    if let Some(dropped) = turn.dropped {
        return Err(ModelError::Disconnected(dropped));
    }
    if summary.truncated {
        return Ok(Some(Finish::Length));
    }
    Ok(Some(match summary.finish_reason.as_deref() {
        Some("tool_calls" | "tool_use") => Finish::ToolCalls,
        _ => Finish::Stop,
    }))
}
