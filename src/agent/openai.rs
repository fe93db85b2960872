//! An OpenAI-compatible endpoint: streaming chat completions over server-sent events.
//!
//! `POST $OPENAI_BASE_URL/chat/completions` with `"stream": true`; each event's
//! `choices[0].delta.content` is a chunk of the model's output (CTL), handed to the loop as it
//! arrives, and `choices[0].finish_reason` says how the turn ended; `data: [DONE]` closes the
//! stream. A blocking client ([`ureq`]) and the [`SseDecoder`] over its body reader keep the
//! loop synchronous.
//!
//! Failures are sorted for the loop: an error status whose body names a context overflow
//! (`context_length_exceeded`) is [`ModelError::ContextOverflow`], which the loop recovers
//! from by compacting once; a connection that ends before a `finish_reason` is
//! [`ModelError::Disconnected`]; an event that is not the expected JSON is
//! [`ModelError::Malformed`].

use std::io::Read;
use std::time::Duration;

use serde_json::{json, Value};

use super::model::{Finish, Flow, ModelError, ModelSource, Request};
use super::sse::SseDecoder;

/// Where and what to ask.
#[derive(Clone, Debug)]
pub struct OpenAiConfig {
    /// The API's base URL, up to and including `/v1` (`OPENAI_BASE_URL`).
    pub base_url: String,
    /// The bearer token (`OPENAI_API_KEY`); none for local servers that need none.
    pub api_key: Option<String>,
    /// The model's name (`OPENAI_MODEL`).
    pub model: String,
    /// How long to wait for the next bytes before giving up on a stream.
    pub read_timeout: Duration,
}

impl OpenAiConfig {
    /// Reads `OPENAI_BASE_URL` (default `https://api.openai.com/v1`), `OPENAI_API_KEY` and
    /// `OPENAI_MODEL` (required).
    pub fn from_env() -> Result<OpenAiConfig, String> {
        let base_url = std::env::var("OPENAI_BASE_URL")
            .unwrap_or_else(|_| "https://api.openai.com/v1".to_owned());
        let model = std::env::var("OPENAI_MODEL")
            .map_err(|_| "OPENAI_MODEL is not set (the model to ask)".to_owned())?;
        Ok(OpenAiConfig {
            base_url,
            api_key: std::env::var("OPENAI_API_KEY")
                .ok()
                .filter(|k| !k.is_empty()),
            model,
            read_timeout: Duration::from_secs(300),
        })
    }
}

/// The model source of `--model openai`.
pub struct OpenAi {
    config: OpenAiConfig,
    agent: ureq::Agent,
}

impl OpenAi {
    /// A client for `config`.
    pub fn new(config: OpenAiConfig) -> OpenAi {
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(Duration::from_secs(30))
            .timeout_read(config.read_timeout)
            .build();
        OpenAi { config, agent }
    }

    fn body(&self, request: &Request<'_>) -> String {
        let messages: Vec<Value> = request
            .messages
            .iter()
            .map(|m| json!({"role": m.role.name(), "content": m.content}))
            .collect();
        json!({
            "model": self.config.model,
            "messages": messages,
            "stream": true,
            "max_tokens": request.max_tokens,
        })
        .to_string()
    }
}

/// What one stream event said.
enum Delta {
    Content(Option<String>, Option<Finish>),
    Done,
}

fn parse_event(data: &[u8]) -> Result<Delta, ModelError> {
    if data == b"[DONE]" {
        return Ok(Delta::Done);
    }
    let shown = || String::from_utf8_lossy(&data[..data.len().min(200)]).into_owned();
    let value: Value = serde_json::from_slice(data)
        .map_err(|e| ModelError::Malformed(format!("event is not JSON ({e}): {}", shown())))?;
    if let Some(error) = value.get("error") {
        return Err(ModelError::Server(format!("error event: {error}")));
    }
    let choice = value
        .get("choices")
        .and_then(Value::as_array)
        .ok_or_else(|| ModelError::Malformed(format!("event without choices: {}", shown())))?
        .first();
    let Some(choice) = choice else {
        // Some servers send a last event with usage only and no choices.
        return Ok(Delta::Content(None, None));
    };
    let content = match choice.get("delta").and_then(|d| d.get("content")) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            return Err(ModelError::Malformed(format!(
                "delta.content is not a string: {other}"
            )))
        }
    };
    let finish = match choice.get("finish_reason") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(match s.as_str() {
            "stop" => Finish::Stop,
            "tool_calls" | "function_call" => Finish::ToolCalls,
            "length" => Finish::Length,
            other => {
                return Err(ModelError::Server(format!(
                    "the turn ended with finish_reason {other:?}"
                )))
            }
        }),
        Some(other) => {
            return Err(ModelError::Malformed(format!(
                "finish_reason is not a string: {other}"
            )))
        }
    };
    Ok(Delta::Content(content, finish))
}

impl ModelSource for OpenAi {
    fn turn(
        &mut self,
        request: &Request<'_>,
        sink: &mut dyn FnMut(&[u8]) -> Flow,
    ) -> Result<Option<Finish>, ModelError> {
        let url = format!(
            "{}/chat/completions",
            self.config.base_url.trim_end_matches('/')
        );
        let mut call = self
            .agent
            .post(&url)
            .set("Content-Type", "application/json")
            .set("Accept", "text/event-stream");
        if let Some(key) = &self.config.api_key {
            call = call.set("Authorization", &format!("Bearer {key}"));
        }
        let response = match call.send_string(&self.body(request)) {
            Ok(response) => response,
            Err(ureq::Error::Status(code, response)) => {
                let body = response.into_string().unwrap_or_default();
                if body.contains("context_length_exceeded")
                    || body.contains("maximum context length")
                {
                    return Err(ModelError::ContextOverflow(format!("HTTP {code}: {body}")));
                }
                return Err(ModelError::Server(format!("HTTP {code}: {body}")));
            }
            Err(ureq::Error::Transport(t)) => return Err(ModelError::Transport(t.to_string())),
        };
        let mut reader = response.into_reader();
        let mut decoder = SseDecoder::default();
        let mut finish: Option<Finish> = None;
        let mut done = false;
        let mut stopped = false;
        let mut buf = vec![0u8; 16 * 1024];
        while !done && !stopped {
            let n = match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(ModelError::Disconnected(format!(
                        "reading the stream failed: {e}"
                    )))
                }
            };
            let mut failure: Option<ModelError> = None;
            let pushed = decoder.push(&buf[..n], &mut |data| {
                if done || stopped {
                    return Ok(());
                }
                match parse_event(data) {
                    Ok(Delta::Done) => done = true,
                    Ok(Delta::Content(content, reason)) => {
                        if let Some(text) = content.filter(|t| !t.is_empty()) {
                            if sink(text.as_bytes()) == Flow::Stop {
                                stopped = true;
                            }
                        }
                        if reason.is_some() {
                            finish = reason;
                        }
                    }
                    Err(e) => {
                        failure = Some(e);
                        return Err(String::new());
                    }
                }
                Ok(())
            });
            if let Some(e) = failure {
                return Err(e);
            }
            if let Err(e) = pushed {
                return Err(ModelError::Malformed(e));
            }
        }
        if stopped {
            return Ok(Some(finish.unwrap_or(Finish::Stop)));
        }
        match finish {
            Some(finish) => Ok(Some(finish)),
            // `[DONE]` without a finish_reason: a server that does not report one.
            None if done => Ok(Some(Finish::Stop)),
            None => Err(ModelError::Disconnected(
                "the connection closed before the turn finished (no finish_reason, no [DONE])"
                    .into(),
            )),
        }
    }

    fn describe(&self) -> String {
        format!("openai:{}", self.config.model)
    }
}
