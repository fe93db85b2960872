//! An OpenAI-compatible endpoint: chat completions, streamed as server-sent events.
//!
//! `POST $OPENAI_BASE_URL/chat/completions` with `"stream": true`; each event's
//! `choices[0].delta.content` is a chunk of the model's output (CTL), handed to the loop as it
//! arrives, and `choices[0].finish_reason` says how the turn ended; `data: [DONE]` closes the
//! stream. The request goes through [`http`](super::http) (a reader thread, so every wait has
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
//! - chat templates that refuse a conversation without a user message: one is always sent
//!   ([`DEFAULT_TASK`] when the conversation has none).
//!
//! Failures are sorted for the loop: an error status whose body names a context overflow
//! (`context_length_exceeded`) is [`ModelError::ContextOverflow`], which the loop recovers
//! from by compacting once; a connection that ends, or stays silent for the read timeout,
//! before a `finish_reason` is [`ModelError::Disconnected`]; an event that is not the expected
//! JSON is [`ModelError::Malformed`].

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::http::{self, Exchange, Head, HeadError, Next};
use super::model::{Finish, Flow, ModelError, ModelSource, Request, Role};
use super::sse::{self, SseReader};

/// The API's base URL when `OPENAI_BASE_URL` is not set.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// How long the server may stay silent (before the head, or between two reads of the body)
/// when `OPENAI_READ_TIMEOUT` is not set: 300 s.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(300);
/// The longest read timeout accepted: one day.
pub const MAX_READ_TIMEOUT: Duration = Duration::from_secs(24 * 3600);
/// How long to wait after the `finish_reason` for `[DONE]` or the close when
/// `OPENAI_FINISH_GRACE` is not set: 2 s.
pub const DEFAULT_FINISH_GRACE: Duration = Duration::from_secs(2);
/// The longest finish grace accepted: 60 s.
pub const MAX_FINISH_GRACE: Duration = Duration::from_secs(60);
/// The bound on one event-stream line, one event's data and a whole JSON answer: 8 MiB.
pub const MAX_EVENT: usize = sse::DEFAULT_MAX;
/// The user message sent when the conversation has none before the model's first message
/// (a library caller that gave no task: `frontier run` refuses to start without one).
pub const DEFAULT_TASK: &str = "Begin. No task was given: look at the workspace and do what it \
     asks for, or end the session with an empty reply if there is nothing to do.";

/// Which request field carries the output limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenField {
    /// `max_tokens`: what OpenAI-compatible servers (vLLM, llama.cpp, Ollama, …) take.
    MaxTokens,
    /// `max_completion_tokens`: what OpenAI's own API wants (its newer models refuse
    /// `max_tokens`).
    MaxCompletionTokens,
}

impl TokenField {
    /// The field's name in the request.
    pub fn name(self) -> &'static str {
        match self {
            TokenField::MaxTokens => "max_tokens",
            TokenField::MaxCompletionTokens => "max_completion_tokens",
        }
    }

    /// The field called `name`.
    pub fn from_name(name: &str) -> Option<TokenField> {
        match name {
            "max_tokens" => Some(TokenField::MaxTokens),
            "max_completion_tokens" => Some(TokenField::MaxCompletionTokens),
            _ => None,
        }
    }

    /// The default for `base_url`: `max_completion_tokens` for `api.openai.com`,
    /// `max_tokens` for every other server.
    pub fn default_for(base_url: &str) -> TokenField {
        let rest = base_url
            .split_once("://")
            .map_or(base_url, |(_, rest)| rest);
        let host = rest.split(['/', ':']).next().unwrap_or("");
        if host.eq_ignore_ascii_case("api.openai.com") {
            TokenField::MaxCompletionTokens
        } else {
            TokenField::MaxTokens
        }
    }

    fn other(self) -> TokenField {
        match self {
            TokenField::MaxTokens => TokenField::MaxCompletionTokens,
            TokenField::MaxCompletionTokens => TokenField::MaxTokens,
        }
    }
}

/// Where and what to ask.
#[derive(Clone, Debug)]
pub struct OpenAiConfig {
    /// The API's base URL, up to and including `/v1` (`OPENAI_BASE_URL`).
    pub base_url: String,
    /// The bearer token (`OPENAI_API_KEY`); none for local servers that need none.
    pub api_key: Option<String>,
    /// The model's name (`OPENAI_MODEL`).
    pub model: String,
    /// How long the server may stay silent before the turn fails as disconnected
    /// (`OPENAI_READ_TIMEOUT`, seconds).
    pub read_timeout: Duration,
    /// How long to wait after the `finish_reason` for `[DONE]` or the close
    /// (`OPENAI_FINISH_GRACE`, seconds).
    pub finish_grace: Duration,
    /// The field of the output limit (`OPENAI_TOKEN_FIELD`).
    pub token_field: TokenField,
}

impl OpenAiConfig {
    /// `model` at `base_url`, no key, the default timeouts and token field.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> OpenAiConfig {
        let base_url = base_url.into();
        OpenAiConfig {
            token_field: TokenField::default_for(&base_url),
            base_url,
            api_key: None,
            model: model.into(),
            read_timeout: DEFAULT_READ_TIMEOUT,
            finish_grace: DEFAULT_FINISH_GRACE,
        }
    }

    /// Reads `OPENAI_BASE_URL` (default [`DEFAULT_BASE_URL`]), `OPENAI_API_KEY`,
    /// `OPENAI_MODEL` (required), `OPENAI_READ_TIMEOUT` (seconds, more than 0, at most
    /// 86400; default 300), `OPENAI_FINISH_GRACE` (seconds, 0 to 60; default 2) and
    /// `OPENAI_TOKEN_FIELD` (`max_tokens` or `max_completion_tokens`; default by host, see
    /// [`TokenField::default_for`]). An error names the variable at fault.
    pub fn from_env() -> Result<OpenAiConfig, String> {
        let base_url = env("OPENAI_BASE_URL")?.unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
        let model = env("OPENAI_MODEL")?
            .ok_or_else(|| "OPENAI_MODEL is not set (the model to ask)".to_owned())?;
        let mut config = OpenAiConfig::new(base_url, model);
        config.api_key = env("OPENAI_API_KEY")?.filter(|k| !k.is_empty());
        if let Some(text) = env("OPENAI_READ_TIMEOUT")? {
            config.read_timeout = seconds(&text, false, MAX_READ_TIMEOUT)
                .map_err(|e| format!("OPENAI_READ_TIMEOUT={text:?}: {e}"))?;
        }
        if let Some(text) = env("OPENAI_FINISH_GRACE")? {
            config.finish_grace = seconds(&text, true, MAX_FINISH_GRACE)
                .map_err(|e| format!("OPENAI_FINISH_GRACE={text:?}: {e}"))?;
        }
        if let Some(text) = env("OPENAI_TOKEN_FIELD")? {
            config.token_field = TokenField::from_name(&text).ok_or_else(|| {
                format!("OPENAI_TOKEN_FIELD={text:?}: expected max_tokens or max_completion_tokens")
            })?;
        }
        Ok(config)
    }
}

fn env(name: &str) -> Result<Option<String>, String> {
    match std::env::var(name) {
        Ok(value) => Ok(Some(value)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(format!("{name} is not UTF-8")),
    }
}

/// A number of seconds (decimals allowed), above 0 unless `zero` is allowed, at most `max`.
pub fn seconds(text: &str, zero: bool, max: Duration) -> Result<Duration, String> {
    let range = format!(
        "expected seconds, {} to {}",
        if zero { "0" } else { "more than 0" },
        max.as_secs()
    );
    let secs: f64 = text.trim().parse().map_err(|_| range.clone())?;
    if !secs.is_finite() || secs < 0.0 || (secs == 0.0 && !zero) || secs > max.as_secs_f64() {
        return Err(range);
    }
    Ok(Duration::from_secs_f64(secs))
}

/// The model source of `--model openai`.
pub struct OpenAi {
    config: OpenAiConfig,
    agent: ureq::Agent,
    /// The token field was already switched once after a refusal.
    field_switched: bool,
    notices: Box<dyn FnMut(&str) + Send>,
}

impl OpenAi {
    /// A client for `config`; notices (quirks handled, see the module documentation) go to
    /// standard error unless [`OpenAi::with_notices`] says otherwise.
    pub fn new(config: OpenAiConfig) -> OpenAi {
        // The caller's waits decide; the agent's read timeout, a little longer, only bounds
        // how long an abandoned reader thread can live.
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(Duration::from_secs(30))
            .timeout_read(config.read_timeout + Duration::from_secs(1))
            .build();
        OpenAi {
            config,
            agent,
            field_switched: false,
            notices: Box::new(|notice| eprintln!("frontier: openai: {notice}")),
        }
    }

    /// Sends the notices to `notices` instead of standard error.
    pub fn with_notices(mut self, notices: impl FnMut(&str) + Send + 'static) -> OpenAi {
        self.notices = Box::new(notices);
        self
    }

    fn body(&self, request: &Request<'_>) -> String {
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        let mut user_first = false;
        for m in request.messages {
            if !user_first && m.role != Role::System {
                if m.role != Role::User {
                    messages.push(json!({"role": "user", "content": DEFAULT_TASK}));
                }
                user_first = true;
            }
            messages.push(json!({"role": m.role.name(), "content": m.content}));
        }
        if !user_first {
            messages.push(json!({"role": "user", "content": DEFAULT_TASK}));
        }
        let mut body = Map::new();
        body.insert("model".into(), json!(self.config.model));
        body.insert("messages".into(), Value::Array(messages));
        body.insert("stream".into(), json!(true));
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
        loop {
            let mut exchange = http::post(&self.agent, &url, &headers, self.body(request));
            let (code, body) = match exchange.head(self.config.read_timeout) {
                Ok(Head::Ok { content_type }) => return Ok((exchange, content_type)),
                Ok(Head::Status { code, body }) => (code, body),
                Err(HeadError::Transport(e)) => return Err(ModelError::Transport(e)),
                Err(HeadError::TimedOut) => {
                    return Err(ModelError::Disconnected(format!(
                        "no answer within the read timeout ({:?}, OPENAI_READ_TIMEOUT)",
                        self.config.read_timeout
                    )))
                }
            };
            if body.contains("context_length_exceeded") || body.contains("maximum context length") {
                return Err(ModelError::ContextOverflow(format!("HTTP {code}: {body}")));
            }
            let sent = self.config.token_field;
            if !self.field_switched && refuses_field(code, &body, sent.name()) {
                self.field_switched = true;
                self.config.token_field = sent.other();
                let notice = format!(
                    "the server refused `{}` (HTTP {code}); retrying with `{}`, kept for the rest \
                     of the session (set OPENAI_TOKEN_FIELD to skip this)",
                    sent.name(),
                    sent.other().name()
                );
                (self.notices)(&notice);
                continue;
            }
            return Err(ModelError::Server(format!("HTTP {code}: {body}")));
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
        let (content, finish) = parse_completion(&body)?;
        if let Some(text) = content.filter(|t| !t.is_empty()) {
            let _ = sink(text.as_bytes());
        }
        Ok(Some(finish.unwrap_or(Finish::Stop)))
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

/// Whether an error status refuses the request field `field` as unsupported: a 400 or 422
/// whose body names the field (its `error.param` when it has one, else as a word anywhere)
/// and says it is unsupported, unknown or not allowed.
fn refuses_field(code: u16, body: &str, field: &str) -> bool {
    if code != 400 && code != 422 {
        return false;
    }
    let lower = body.to_ascii_lowercase();
    let param = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.pointer("/error/param")?.as_str().map(str::to_owned));
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let names_it = match param {
        Some(param) => param == field,
        None => lower.match_indices(field).any(|(at, _)| {
            let before = lower.as_bytes().get(at.wrapping_sub(1)).copied();
            let after = lower.as_bytes().get(at + field.len()).copied();
            !before.is_some_and(word) && !after.is_some_and(word)
        }),
    };
    names_it
        && [
            "unsupported",
            "not supported",
            "unrecognized",
            "unknown",
            "extra",
            "not permitted",
            "not allowed",
        ]
        .iter()
        .any(|w| lower.contains(w))
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
}

impl StreamState {
    fn event(&mut self, data: &[u8], sink: &mut dyn FnMut(&[u8]) -> Flow) -> ControlFlow<()> {
        let (content, reason) = match parse_event(data) {
            Ok(Delta::Done) => {
                self.done = true;
                return ControlFlow::Break(());
            }
            Ok(Delta::Content(content, reason)) => (content, reason),
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

/// What one stream event said.
enum Delta {
    Content(Option<String>, Option<Finish>),
    Done,
}

fn shown(data: &[u8]) -> String {
    String::from_utf8_lossy(&data[..data.len().min(200)]).into_owned()
}

/// The JSON of an event or of a whole answer, refused when it is an error object.
fn parse_json(data: &[u8], what: &str) -> Result<Value, ModelError> {
    let value: Value = serde_json::from_slice(data)
        .map_err(|e| ModelError::Malformed(format!("{what} is not JSON ({e}): {}", shown(data))))?;
    if let Some(error) = value.get("error") {
        return Err(ModelError::Server(format!("error {what}: {error}")));
    }
    Ok(value)
}

/// `choices[0]`, or none when `choices` is empty.
fn first_choice<'v>(
    value: &'v Value,
    data: &[u8],
    what: &str,
) -> Result<Option<&'v Value>, ModelError> {
    Ok(value
        .get("choices")
        .and_then(Value::as_array)
        .ok_or_else(|| ModelError::Malformed(format!("{what} without choices: {}", shown(data))))?
        .first())
}

/// A text field that may be absent or null.
fn text(value: Option<&Value>, what: &str) -> Result<Option<String>, ModelError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(ModelError::Malformed(format!(
            "{what} is not a string: {other}"
        ))),
    }
}

fn finish_of(choice: &Value) -> Result<Option<Finish>, ModelError> {
    let Some(reason) = text(choice.get("finish_reason"), "finish_reason")? else {
        return Ok(None);
    };
    match reason.as_str() {
        "stop" => Ok(Some(Finish::Stop)),
        "tool_calls" | "function_call" => Ok(Some(Finish::ToolCalls)),
        "length" => Ok(Some(Finish::Length)),
        other => Err(ModelError::Server(format!(
            "the turn ended with finish_reason {other:?}"
        ))),
    }
}

fn parse_event(data: &[u8]) -> Result<Delta, ModelError> {
    if data == b"[DONE]" {
        return Ok(Delta::Done);
    }
    let value = parse_json(data, "event")?;
    let Some(choice) = first_choice(&value, data, "event")? else {
        // Some servers send a last event with usage only and no choices.
        return Ok(Delta::Content(None, None));
    };
    let content = text(
        choice.get("delta").and_then(|d| d.get("content")),
        "delta.content",
    )?;
    Ok(Delta::Content(content, finish_of(choice)?))
}

/// A whole `chat.completion`: `choices[0].message.content` and its finish.
fn parse_completion(data: &[u8]) -> Result<(Option<String>, Option<Finish>), ModelError> {
    let value = parse_json(data, "answer")?;
    let choice = first_choice(&value, data, "answer")?
        .ok_or_else(|| ModelError::Malformed(format!("answer with no choice: {}", shown(data))))?;
    let content = text(
        choice.get("message").and_then(|m| m.get("content")),
        "message.content",
    )?;
    Ok((content, finish_of(choice)?))
}

impl ModelSource for OpenAi {
    fn turn(
        &mut self,
        request: &Request<'_>,
        sink: &mut dyn FnMut(&[u8]) -> Flow,
    ) -> Result<Option<Finish>, ModelError> {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_field_refusal_is_recognised_and_nothing_else() {
        let openai = r#"{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}"#;
        assert!(refuses_field(400, openai, "max_tokens"));
        // Its `param` says which field it refuses, though it names both.
        assert!(!refuses_field(400, openai, "max_completion_tokens"));
        let strict =
            r#"{"detail":"Unrecognized request argument supplied: max_completion_tokens"}"#;
        assert!(refuses_field(400, strict, "max_completion_tokens"));
        assert!(!refuses_field(400, strict, "max_tokens"));
        // Too large is not unsupported; a 500 is not a refusal of the field.
        let too_large = r#"{"error":{"message":"max_tokens is too large: 100000"}}"#;
        assert!(!refuses_field(400, too_large, "max_tokens"));
        assert!(!refuses_field(500, openai, "max_tokens"));
    }

    #[test]
    fn the_default_token_field_depends_on_the_host() {
        for (url, field) in [
            ("https://api.openai.com/v1", TokenField::MaxCompletionTokens),
            (
                "https://API.openai.com:443/v1/",
                TokenField::MaxCompletionTokens,
            ),
            ("http://localhost:8000/v1", TokenField::MaxTokens),
            (
                "https://api.openai.com.example.org/v1",
                TokenField::MaxTokens,
            ),
            ("api.openai.com", TokenField::MaxCompletionTokens),
        ] {
            assert_eq!(TokenField::default_for(url), field, "{url}");
        }
    }

    #[test]
    fn seconds_are_bounded() {
        let max = Duration::from_secs(60);
        assert_eq!(seconds("0.25", false, max), Ok(Duration::from_millis(250)));
        assert_eq!(seconds("0", true, max), Ok(Duration::ZERO));
        assert_eq!(seconds(" 60 ", true, max), Ok(max));
        for bad in ["0", "-1", "61", "nan", "inf", "", "1e400", "2s"] {
            assert!(seconds(bad, false, max).is_err(), "{bad}");
        }
    }
}
