//! Model sources: where a turn's bytes come from.
//!
//! A [`ModelSource`] streams one turn at a time into a sink, as byte chunks, and says how the
//! turn ended. The loop does not care whether the bytes come from a recorded session
//! ([`Replay`](super::replay::Replay)) or an HTTP endpoint
//! ([`OpenAi`](super::openai::OpenAi)): both sit behind this one interface.

use std::fmt;

use crate::streams::Usage;

/// How a turn ended, as the model reported it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finish {
    /// The model ended its message.
    Stop,
    /// The model ended its message to have tools run.
    ToolCalls,
    /// The model hit its output limit: the output is cut off and continues next turn.
    Length,
}

impl Finish {
    /// `stop`, `tool_calls`, `length`.
    pub fn name(self) -> &'static str {
        match self {
            Finish::Stop => "stop",
            Finish::ToolCalls => "tool_calls",
            Finish::Length => "length",
        }
    }

    /// The finish called `name`.
    pub fn from_name(name: &str) -> Option<Finish> {
        match name {
            "stop" => Some(Finish::Stop),
            "tool_calls" => Some(Finish::ToolCalls),
            "length" => Some(Finish::Length),
            _ => None,
        }
    }
}

/// Whether the sink wants more of the turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Keep streaming.
    Continue,
    /// Stop reading this turn (the stream broke): the source drops the rest.
    Stop,
}

/// Why a turn failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelError {
    /// The request did not fit the model's context window. Recoverable: compact and retry.
    ContextOverflow(String),
    /// The connection ended before the turn did.
    Disconnected(String),
    /// The server sent something that is not a well-formed stream event.
    Malformed(String),
    /// The server answered with an error status or an error event.
    Server(String),
    /// The request could not be sent (connection refused, bad URL, …).
    Transport(String),
    /// The server refused the request with an error status, after the retries
    /// ([`super::retry`]) for the statuses that are retried.
    Status {
        /// The HTTP status.
        code: u16,
        /// What it means, and the start of the server's answer.
        detail: String,
    },
}

impl ModelError {
    /// A stable name.
    pub fn kind(&self) -> &'static str {
        match self {
            ModelError::ContextOverflow(_) => "context_overflow",
            ModelError::Disconnected(_) => "disconnected",
            ModelError::Malformed(_) => "malformed_event",
            ModelError::Server(_) => "server_error",
            ModelError::Transport(_) => "transport_error",
            ModelError::Status { code, .. } => match code {
                401 | 403 => "unauthorized",
                429 => "rate_limited",
                500..=599 => "server_error",
                _ => "bad_request",
            },
        }
    }

    fn detail(&self) -> &str {
        match self {
            ModelError::ContextOverflow(d)
            | ModelError::Disconnected(d)
            | ModelError::Malformed(d)
            | ModelError::Server(d)
            | ModelError::Transport(d)
            | ModelError::Status { detail: d, .. } => d,
        }
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind(), self.detail())
    }
}

/// Who wrote a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The system prompt.
    System,
    /// The user: the task, tool results, nudges.
    User,
    /// The model.
    Assistant,
}

impl Role {
    /// The role's name in the chat API.
    pub fn name(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// One message of the conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// What it says.
    pub content: String,
}

impl Message {
    /// A message.
    pub fn new(role: Role, content: impl Into<String>) -> Message {
        Message {
            role,
            content: content.into(),
        }
    }
}

/// What the loop asks for in one turn.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// The conversation so far.
    pub messages: &'a [Message],
    /// The output limit for this turn.
    pub max_tokens: u32,
}

/// A source of model turns.
pub trait ModelSource {
    /// Streams the next turn into `sink`, chunk by chunk, and returns how it ended; `Ok(None)`
    /// when the source has no more turns (a replay's end). When `sink` returns [`Flow::Stop`]
    /// the source stops reading and returns as soon as it can (with any finish).
    fn turn(
        &mut self,
        request: &Request<'_>,
        sink: &mut dyn FnMut(&[u8]) -> Flow,
    ) -> Result<Option<Finish>, ModelError>;

    /// A short description for the transcript (`replay:FILE`, `openai:MODEL`).
    fn describe(&self) -> String;

    /// The token usage the provider reported for the last turn, taken (a second call gives
    /// `None`); `None` when it reported none, as a replayed model never does.
    fn take_usage(&mut self) -> Option<Usage> {
        None
    }

    /// The reasoning the provider streamed for the last turn apart from its output (a
    /// `reasoning_content` or `reasoning` field, thinking), taken (a second call gives
    /// `None`); `None` when there was none, as a replayed model never has. The governed loop
    /// hands it to the context engine with the turn.
    fn take_reasoning(&mut self) -> Option<String> {
        None
    }
}
