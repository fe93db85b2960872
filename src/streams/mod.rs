//! Provider streams: the wire formats models really stream tool calls in, read so that a call
//! is handed on only when it is complete, whatever the finish reason claims.
//!
//! A [`StreamReader`] takes the bytes of an HTTP response body in chunks of any size, frames
//! them (server-sent events, or JSON lines for recorded fixtures), hands each event to the
//! call assembler of its API, and hands on [`Event`]s as they are confirmed: each confirmed
//! [`Call`], each malformed one, text, reasoning, and the events of an `apply_patch` patch
//! while it streams. [`StreamReader::finish`] gives the [`Summary`]: the finish reason,
//! whether the stream ended cleanly or was truncated, the incomplete and malformed calls, the
//! token usage the provider reported.
//! Nothing is read twice: each byte is framed once, each event's JSON parsed once, and a
//! call's fragments are appended, not re-parsed, until the one strict parse that confirms it.
//!
//! | module | what |
//! |---|---|
//! | [`sse`] | the push reader of `text/event-stream` framing (shared with the agent loop) |
//! | [`jsonl`] | the push reader of JSON lines |
//! | [`chat`] | OpenAI Chat Completions chunks: calls by `index` |
//! | [`responses`] | OpenAI Responses events: items by `item_id` / `output_index` |
//! | [`anthropic`] | Anthropic Messages events: blocks by `index` |
//! | [`call`] | a call while it streams, its strict confirmation, what it becomes |
//! | [`patch`] | an `apply_patch` input parsed in codex mode while it streams |
//! | [`turn`] | what the assemblers share: limits, text, finish, the summary, common errors |
//! | [`think`] | `<think>` blocks in the text, read as reasoning |
//! | [`ctl_text`] | `--ctl`: the text read as a CTL stream |
//! | [`usage`] | the token usage the provider reports, normalised for the context engine |
//!
//! Unknown event types (and unknown Anthropic delta and block types) are skipped and counted
//! in [`Summary::skipped_events`]; `frontier stream` reports the count on standard error.
//! `docs/streams.md` records the decisions the specification leaves open.
//!
//! # Example
//!
//! ```
//! use frontier::streams::{Api, Event, Format, StreamReader};
//!
//! let body = concat!(
//!     "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,",
//!     "\"id\":\"call_1\",\"function\":{\"name\":\"read_file\",\"arguments\":\"\"}}]}}]}\n\n",
//!     "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,",
//!     "\"function\":{\"arguments\":\"{\\\"path\\\":\\\"a\\\"}\"}}]}}]}\n\n",
//!     "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
//!     "data: [DONE]\n\n",
//! );
//! let mut reader = StreamReader::new(Api::OpenAiChat, Format::Sse);
//! let mut names = Vec::new();
//! let mut on_event = |e: Event<'_>| {
//!     if let Event::Call(call) = e {
//!         names.push(call.name.clone());
//!     }
//! };
//! for piece in body.as_bytes().chunks(5) {
//!     reader.push(piece, &mut on_event).unwrap();
//! }
//! let summary = reader.finish(&mut on_event);
//! assert_eq!(names, ["read_file"]);
//! assert!(summary.ended_cleanly && summary.error.is_none());
//! ```

pub mod anthropic;
pub mod call;
pub mod chat;
pub mod ctl_text;
pub mod jsonl;
pub mod patch;
pub mod responses;
pub mod sse;
pub mod think;
pub mod turn;
pub mod usage;

use std::borrow::Cow;
use std::fmt;
use std::ops::ControlFlow;

use frontier_core::contract::ParseError;
use frontier_core::ctl::{CtlErrorKind, CtlMode};

pub use call::{Arguments, Call, CallKind, PartialCall};
pub use turn::{Event, Limits, Summary};
pub use usage::Usage;

use turn::Turn;

/// The three wire formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// OpenAI Chat Completions (and every OpenAI-compatible server).
    OpenAiChat,
    /// OpenAI Responses.
    OpenAiResponses,
    /// Anthropic Messages.
    AnthropicMessages,
}

impl Api {
    /// The name `--api` takes: `openai-chat`, `openai-responses`, `anthropic-messages`.
    pub fn name(self) -> &'static str {
        match self {
            Api::OpenAiChat => "openai-chat",
            Api::OpenAiResponses => "openai-responses",
            Api::AnthropicMessages => "anthropic-messages",
        }
    }
}

/// How the body is framed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `text/event-stream`, as sent.
    Sse,
    /// One event or chunk object per line (a line may also be `[DONE]`).
    Jsonl,
}

/// Why reading stopped: a stable kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamErrorKind {
    /// The body is not an event stream.
    NotSse,
    /// A line over [`Limits::max_line`].
    LineTooLong,
    /// An event's data over [`Limits::max_line`].
    DataTooLong,
    /// An event's data is not JSON.
    NotJson,
    /// JSON, but not the shape of an event of the API.
    BadEvent,
    /// A fragment for a call (index, item, block) that never started.
    UnknownCall,
    /// A fragment for a call that already ended.
    CallEnded,
    /// More calls open at once than [`Limits::max_open_calls`].
    TooManyCalls,
    /// A call's arguments over [`Limits::max_call_bytes`].
    CallTooLong,
    /// The text or the reasoning over [`Limits::max_text`].
    TextTooLong,
    /// An event after the protocol's terminal marker.
    AfterEnd,
    /// `--ctl`: the text is not CTL.
    NotCtl,
    /// The server sent an error event.
    ProviderError,
}

impl StreamErrorKind {
    /// The stable name, as printed in `"kind"`.
    pub fn name(self) -> &'static str {
        match self {
            StreamErrorKind::NotSse => "not_sse",
            StreamErrorKind::LineTooLong => "line_too_long",
            StreamErrorKind::DataTooLong => "data_too_long",
            StreamErrorKind::NotJson => "not_json",
            StreamErrorKind::BadEvent => "bad_event",
            StreamErrorKind::UnknownCall => "unknown_call",
            StreamErrorKind::CallEnded => "call_ended",
            StreamErrorKind::TooManyCalls => "too_many_calls",
            StreamErrorKind::CallTooLong => "call_too_long",
            StreamErrorKind::TextTooLong => "text_too_long",
            StreamErrorKind::AfterEnd => "after_end",
            StreamErrorKind::NotCtl => "not_ctl",
            StreamErrorKind::ProviderError => "provider_error",
        }
    }
}

/// Why reading stopped, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamError {
    /// What went wrong.
    pub kind: StreamErrorKind,
    /// The body offset of the event (or line) where it was found.
    pub offset: u64,
    /// For people.
    pub message: String,
    /// For [`StreamErrorKind::NotCtl`] from the parser: its error, at an offset in the answer
    /// text (the text outside `<think>` blocks), with the byte and the CTL kind.
    pub ctl: Option<ParseError<CtlErrorKind>>,
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at byte {}: {}",
            self.kind.name(),
            self.offset,
            self.message
        )
    }
}

impl std::error::Error for StreamError {}

/// The body's framing.
#[derive(Debug)]
enum Framing {
    Sse(sse::SseReader),
    Jsonl(jsonl::LineReader),
}

/// The call assembler of the API.
#[derive(Debug)]
enum Assembler {
    Chat(chat::Chat),
    Responses(responses::Responses),
    Anthropic(anthropic::Anthropic),
}

impl Assembler {
    fn on_event(
        &mut self,
        name: &[u8],
        data: &[u8],
        turn: &mut Turn,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), StreamError> {
        match self {
            Assembler::Chat(a) => a.on_event(name, data, turn, on_event),
            Assembler::Responses(a) => a.on_event(name, data, turn, on_event),
            Assembler::Anthropic(a) => a.on_event(name, data, turn, on_event),
        }
    }

    fn finish(&mut self, turn: &mut Turn) -> Result<(), StreamError> {
        match self {
            Assembler::Chat(a) => a.finish(turn),
            Assembler::Responses(a) => a.finish(turn),
            Assembler::Anthropic(a) => a.finish(turn),
        }
    }
}

/// The push reader of one provider stream. See the module documentation.
#[derive(Debug)]
pub struct StreamReader {
    framing: Framing,
    assembler: Assembler,
    turn: Turn,
}

impl StreamReader {
    /// A reader of `api` in `format`, with the default [`Limits`].
    pub fn new(api: Api, format: Format) -> StreamReader {
        StreamReader::with_options(api, format, Limits::default(), None)
    }

    /// A reader within `limits`; with `ctl`, the answer text is also read as a CTL stream in
    /// that mode and its calls confirmed as CTL calls.
    pub fn with_options(
        api: Api,
        format: Format,
        limits: Limits,
        ctl: Option<CtlMode>,
    ) -> StreamReader {
        let framing = match format {
            Format::Sse => Framing::Sse(sse::SseReader::with_max(limits.max_line).strict()),
            Format::Jsonl => Framing::Jsonl(jsonl::LineReader::with_max(limits.max_line)),
        };
        let assembler = match api {
            Api::OpenAiChat => Assembler::Chat(chat::Chat::default()),
            Api::OpenAiResponses => Assembler::Responses(responses::Responses::default()),
            Api::AnthropicMessages => Assembler::Anthropic(anthropic::Anthropic::default()),
        };
        StreamReader {
            framing,
            assembler,
            turn: Turn::new(limits, ctl),
        }
    }

    /// The error that stopped the reader, if any.
    pub fn error(&self) -> Option<&StreamError> {
        self.turn.summary.error.as_ref()
    }

    /// Reads the next piece of the body; confirmed events go to `on_event` in order. After an
    /// error (returned, and kept for the summary) nothing more is read.
    pub fn push(
        &mut self,
        bytes: &[u8],
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), StreamError> {
        if let Some(e) = &self.turn.summary.error {
            return Err(e.clone());
        }
        let (assembler, turn) = (&mut self.assembler, &mut self.turn);
        let mut failed = None;
        let framed = match &mut self.framing {
            Framing::Sse(reader) => reader
                .push(bytes, &mut |e| {
                    turn.offset = e.offset;
                    match assembler.on_event(e.name, e.data, turn, on_event) {
                        Ok(()) => ControlFlow::Continue(()),
                        Err(error) => {
                            failed = Some(error);
                            ControlFlow::Break(())
                        }
                    }
                })
                .map(|_| ())
                .map_err(sse_error),
            Framing::Jsonl(reader) => reader
                .push(bytes, &mut |line, at| {
                    turn.offset = at;
                    match assembler.on_event(b"", line, turn, on_event) {
                        Ok(()) => true,
                        Err(error) => {
                            failed = Some(error);
                            false
                        }
                    }
                })
                .map_err(line_error),
        };
        match failed.map_or(framed, Err) {
            Ok(()) => Ok(()),
            Err(error) => {
                self.turn.summary.error = Some(error.clone());
                Err(error)
            }
        }
    }

    /// Ends the stream: calls left open become incomplete, and the summary says how it ended.
    pub fn finish(mut self, on_event: &mut dyn FnMut(Event<'_>)) -> Summary {
        if self.turn.summary.error.is_none() {
            let (assembler, turn) = (&mut self.assembler, &mut self.turn);
            let framed = match &mut self.framing {
                Framing::Sse(reader) => reader.finish().map_err(sse_error),
                Framing::Jsonl(reader) => {
                    let mut failed = None;
                    let framed = reader
                        .finish(&mut |line, at| {
                            // The last line, with no LF: one cut in the middle is not
                            // dispatched, as an SSE event cut mid-way is not.
                            if jsonl::is_cut_line(line) {
                                return true;
                            }
                            turn.offset = at;
                            if let Err(e) = assembler.on_event(b"", line, turn, on_event) {
                                failed = Some(e);
                            }
                            true
                        })
                        .map_err(line_error);
                    failed.map_or(framed, Err)
                }
            };
            if let Err(e) = framed.and_then(|()| self.turn.finish(on_event)) {
                self.turn.summary.error = Some(e);
            }
        }
        if let Err(e) = self.assembler.finish(&mut self.turn) {
            self.turn.summary.error.get_or_insert(e);
        }
        let mut summary = self.turn.summary;
        summary.ended_cleanly = self.turn.terminated && summary.error.is_none();
        summary
    }
}

fn sse_error(e: sse::SseError) -> StreamError {
    let kind = match e.kind {
        sse::SseErrorKind::LineTooLong => StreamErrorKind::LineTooLong,
        sse::SseErrorKind::DataTooLong => StreamErrorKind::DataTooLong,
        sse::SseErrorKind::NotSse => StreamErrorKind::NotSse,
    };
    StreamError {
        kind,
        offset: e.offset,
        message: e.message(),
        ctl: None,
    }
}

fn line_error(e: jsonl::LineTooLong) -> StreamError {
    StreamError {
        kind: StreamErrorKind::LineTooLong,
        offset: e.offset,
        message: format!("a line longer than {} bytes", e.max),
        ctl: None,
    }
}

/// The JSON object of an event, or a `not_json` error at the event (`bad_event` for JSON that
/// is not an object).
/// JSON text is UTF-8 (RFC 8259): an event with other bytes, even in a field this reader
/// skips, is not JSON (serde_json checks only the strings it reads).
fn parse<'a, T: serde::Deserialize<'a>>(data: &'a [u8], turn: &Turn) -> Result<T, StreamError> {
    let text = std::str::from_utf8(data).map_err(|e| {
        let at = e.valid_up_to();
        turn.error(
            StreamErrorKind::NotJson,
            format!(
                "not UTF-8: byte {at} of the event's data is 0x{:02x}: {}",
                data[at],
                shown(data)
            ),
        )
    })?;
    // Every event of the three APIs is an object; a derived struct would also take an array
    // (its fields by position), which no server sends.
    if !text.trim_start().starts_with('{') {
        let kind = match serde_json::from_str::<serde::de::IgnoredAny>(text) {
            Ok(_) => StreamErrorKind::BadEvent,
            Err(_) => StreamErrorKind::NotJson,
        };
        return Err(turn.error(kind, format!("not a JSON object: {}", shown(data))));
    }
    serde_json::from_str(text).map_err(|e| {
        let kind = if e.is_data() {
            StreamErrorKind::BadEvent
        } else {
            StreamErrorKind::NotJson
        };
        turn.error(kind, format!("{e}: {}", shown(data)))
    })
}

/// An event's type: its JSON `type`, else its SSE event name (empty when it has neither).
fn event_type<'a>(kind: &Option<Cow<'a, str>>, name: &[u8]) -> Cow<'a, str> {
    match kind {
        Some(kind) => kind.clone(),
        None => Cow::Owned(String::from_utf8_lossy(name).into_owned()),
    }
}

/// The start of an event's data, for messages.
fn shown(data: &[u8]) -> String {
    let end = data.len().min(120);
    let mut text = String::from_utf8_lossy(&data[..end]).into_owned();
    if end < data.len() {
        text.push('…');
    }
    text
}

/// An error event's message: its `message` field where it has one, else its JSON.
fn error_message(error: &serde_json::Value) -> String {
    error
        .get("message")
        .and_then(serde_json::Value::as_str)
        .map_or_else(|| error.to_string(), str::to_owned)
}

/// Reading whole streams in the assemblers' unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// The calls confirmed and the summary of `lines` read as JSON lines of `api`.
    pub fn read(api: Api, lines: &[&str]) -> (Vec<Call>, Summary) {
        let mut reader = StreamReader::new(api, Format::Jsonl);
        let mut calls = Vec::new();
        let mut on_event = |e: Event<'_>| {
            if let Event::Call(call) = e {
                calls.push(call.clone());
            }
        };
        for line in lines {
            if reader.push(line.as_bytes(), &mut on_event).is_err() {
                break;
            }
            let _ = reader.push(b"\n", &mut on_event);
        }
        let summary = reader.finish(&mut on_event);
        (calls, summary)
    }

    /// `(id, name, arguments text)` of each call.
    pub fn shown(calls: &[Call]) -> Vec<(String, String, String)> {
        calls
            .iter()
            .map(|c| {
                let text = match &c.arguments {
                    Arguments::Json { text, .. } => text.clone(),
                    Arguments::Raw(text) => text.clone(),
                    Arguments::Ctl(args) => format!("{args:?}"),
                };
                (c.id.clone(), c.name.clone(), text)
            })
            .collect()
    }

    /// `(id, name, arguments text)` triples from string slices.
    pub fn triples(list: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
        list.iter()
            .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
            .collect()
    }
}
