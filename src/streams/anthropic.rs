//! Anthropic Messages: `message_start`, content blocks keyed by `index`, `message_delta`,
//! `message_stop`, `ping` anywhere.
//!
//! - `content_block_start` opens a block: `tool_use` and `server_tool_use` blocks are calls,
//!   `text` and `thinking` blocks carry their first text; other block types (tool results,
//!   redacted thinking) are skipped and counted, and so are their deltas.
//! - `content_block_delta`: `input_json_delta` appends `partial_json` to the call;
//!   `text_delta` is text, `thinking_delta` reasoning; `signature_delta` and
//!   `citations_delta` are known and ignored in text and thinking blocks; other delta types
//!   are skipped and counted there, and are a `bad_event` error in a tool block (they may hold
//!   part of its input).
//!   A delta for an index with no open block (never started, or already stopped) is an
//!   `unknown_call` error.
//! - `content_block_stop` finishes the block: a call is confirmed when its joined input parses
//!   as a JSON object (`""`, a tool with no input, reads as `{}`); a call whose start already
//!   held a non-empty `input` and got no deltas has that input. A block stopped with no input
//!   at all is held: the API also stops the block an output limit cut right after its start.
//!   The next block's `content_block_start`, or a `stop_reason` that is not a token limit
//!   (in `message_delta`, or none given before `message_stop`), confirms it; a token limit
//!   leaves it incomplete, and so does the end of the body or an error while it is held.
//!   Pings and events of unknown types do not decide. Only an empty input is ambiguous: a
//!   non-empty prefix of a JSON object never parses as one.
//! - `message_delta` gives the `stop_reason` (`max_tokens` and `model_context_window_exceeded`,
//!   the output cut by a token limit, are truncations); `message_stop` is the terminal event;
//!   `error` is the server's error. After `message_stop` only a `ping` is taken (and ignored);
//!   any other event is an `after_end` error.
//! - The turn's usage ([`super::usage`]) is `message_start`'s `message.usage`, each member
//!   replaced by the one of that name in a `message_delta`'s `usage`.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

use super::call::{CallKind, Pending};
use super::turn::{Event, Turn};
use super::{error_message, event_type, parse, Api, StreamError, StreamErrorKind};

#[derive(Deserialize)]
struct MessageEvent<'a> {
    #[serde(borrow, rename = "type")]
    kind: Option<Cow<'a, str>>,
    index: Option<u64>,
    #[serde(borrow)]
    content_block: Option<Block<'a>>,
    #[serde(borrow)]
    delta: Option<Delta<'a>>,
    error: Option<Value>,
    /// `message_start`'s message (its `usage`).
    message: Option<Value>,
    /// `message_delta`'s usage.
    usage: Option<Value>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(borrow, rename = "type")]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    input: Option<Value>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    thinking: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow, rename = "type")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    partial_json: Option<Cow<'a, str>>,
    #[serde(borrow)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow)]
    stop_reason: Option<Cow<'a, str>>,
}

/// What an open block is.
#[derive(Debug)]
enum Open {
    Call {
        call: Pending,
        /// A non-empty `input` given at the start.
        initial: Option<String>,
    },
    Text,
    Other,
}

/// The Anthropic assembler. See the module documentation.
#[derive(Debug, Default)]
pub struct Anthropic {
    open: Vec<(u64, Open)>,
    /// The tool blocks stopped with no input, in the order they stopped, waiting for an event
    /// that says whether the message was cut (more than one only when blocks were open at
    /// once; never more than [`super::Limits::max_open_calls`]).
    held: Vec<Pending>,
    /// The usage so far: `message_start`'s, updated by `message_delta`'s.
    usage: Option<Value>,
    /// The usage so far outgrew its bound: only its counts are held, not the provider's
    /// whole object.
    usage_trimmed: bool,
}

impl Anthropic {
    /// One event: its SSE name (empty for none) and its data; the JSON `type` decides.
    pub fn on_event(
        &mut self,
        name: &[u8],
        data: &[u8],
        turn: &mut Turn,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), StreamError> {
        let event: MessageEvent<'_> = parse(data, turn)?;
        let kind = event_type(&event.kind, name);
        if turn.terminated {
            // `ping` anywhere: a keep-alive after the end is one too.
            if kind == "ping" {
                return Ok(());
            }
            return Err(turn.error(StreamErrorKind::AfterEnd, "an event after message_stop"));
        }
        if !self.held.is_empty() {
            let stop_reason = event.delta.as_ref().and_then(|d| d.stop_reason.as_deref());
            let cut = match (kind.as_ref(), stop_reason) {
                // The model went on to another block, or stopped by its own choice.
                ("content_block_start", _) => Some(false),
                ("message_delta", Some(reason)) => Some(cut_by_limit(reason)),
                ("message_stop", _) => Some(turn.summary.truncated),
                // A ping, an event of a type this reader does not know, a delta without a stop
                // reason or an error says nothing of them; the end of the body makes them
                // incomplete.
                _ => None,
            };
            if let Some(cut) = cut {
                for call in std::mem::take(&mut self.held) {
                    if cut {
                        turn.incomplete(call)?;
                    } else {
                        turn.confirm(call, on_event)?;
                    }
                }
            }
        }
        match kind.as_ref() {
            "message_start" => {
                if let Some(usage) = event.message.as_ref().and_then(|m| m.get("usage")) {
                    self.update_usage(usage, turn);
                }
                Ok(())
            }
            "ping" => Ok(()),
            "content_block_start" => self.start(event, turn, on_event),
            "content_block_delta" => self.delta(event, turn, on_event),
            "content_block_stop" => {
                let at = self.find(event.index, turn)?;
                match self.open.remove(at).1 {
                    Open::Call { mut call, initial } => {
                        if let (Some(initial), false) = (initial, call.streamed) {
                            let limits = turn.limits;
                            call.complete_with(&initial, &limits, &mut |_| {})
                                .map_err(|kind| turn.error(kind, "a tool input over the bound"))?;
                        }
                        if call.text.is_empty() {
                            self.held.push(call);
                            return Ok(());
                        }
                        turn.confirm(call, on_event)
                    }
                    Open::Text | Open::Other => Ok(()),
                }
            }
            "message_delta" => {
                if let Some(usage) = &event.usage {
                    self.update_usage(usage, turn);
                }
                if let Some(reason) = event.delta.and_then(|d| d.stop_reason) {
                    turn.summary.truncated = cut_by_limit(&reason);
                    turn.summary.finish_reason = Some(reason.into_owned());
                }
                Ok(())
            }
            "message_stop" => {
                turn.terminated = true;
                Ok(())
            }
            "error" => {
                let message = event
                    .error
                    .as_ref()
                    .map_or_else(|| super::shown(data), error_message);
                Err(turn.error(StreamErrorKind::ProviderError, message))
            }
            "" => Err(turn.error(StreamErrorKind::BadEvent, "an event without a type")),
            _ => {
                turn.skip();
                Ok(())
            }
        }
    }

    /// A usage object: merged into the usage so far, which becomes the turn's.
    fn update_usage(&mut self, usage: &Value, turn: &mut Turn) {
        self.usage_trimmed |= !super::usage::merge(&mut self.usage, usage);
        if let Some(merged) = &self.usage {
            turn.usage(Api::AnthropicMessages, merged);
            if let Some(read) = turn.summary.usage.as_mut().filter(|_| self.usage_trimmed) {
                read.provider = None;
            }
        }
    }

    fn start(
        &mut self,
        event: MessageEvent<'_>,
        turn: &mut Turn,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), StreamError> {
        let (Some(index), Some(block)) = (event.index, event.content_block) else {
            return Err(turn.error(
                StreamErrorKind::BadEvent,
                "a content_block_start without its index or block",
            ));
        };
        if self.open.iter().any(|(i, _)| *i == index) {
            return Err(turn.error(
                StreamErrorKind::BadEvent,
                format!("block {index} started twice"),
            ));
        }
        turn.room_for_call(self.open.len(), "blocks")?;
        let open = match block.kind.as_ref() {
            "tool_use" | "server_tool_use" => {
                let kind = if block.kind == "tool_use" {
                    CallKind::ToolUse
                } else {
                    CallKind::ServerToolUse
                };
                let initial = match &block.input {
                    None | Some(Value::Null) => None,
                    Some(Value::Object(o)) if o.is_empty() => None,
                    Some(input) => Some(input.to_string()),
                };
                let call = Pending::new(
                    block.id.as_deref().unwrap_or(""),
                    block.name.as_deref().unwrap_or(""),
                    kind,
                );
                Open::Call { call, initial }
            }
            "text" => {
                turn.text(block.text.as_deref().unwrap_or(""), on_event)?;
                Open::Text
            }
            "thinking" => {
                turn.reasoning(block.thinking.as_deref().unwrap_or(""), on_event)?;
                Open::Text
            }
            _ => {
                turn.skip();
                Open::Other
            }
        };
        self.open.push((index, open));
        Ok(())
    }

    fn delta(
        &mut self,
        event: MessageEvent<'_>,
        turn: &mut Turn,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), StreamError> {
        let at = self.find(event.index, turn)?;
        let delta = turn.required(event.delta, "a content_block_delta", "delta")?;
        match (delta.kind.as_deref().unwrap_or(""), &mut self.open[at].1) {
            (_, Open::Other) => {
                turn.skip();
                Ok(())
            }
            ("input_json_delta", Open::Call { call, .. }) => {
                let json = turn.required(delta.partial_json, "a delta", "partial_json")?;
                let limits = turn.limits;
                call.append(&json, &limits, &mut |_| {}).map_err(|kind| {
                    turn.error(
                        kind,
                        format!(
                            "the input of block {} is longer than {} bytes",
                            event.index.unwrap_or(0),
                            limits.max_call_bytes
                        ),
                    )
                })
            }
            ("text_delta", Open::Text) => {
                turn.text(&turn.required(delta.text, "a delta", "text")?, on_event)
            }
            ("thinking_delta", Open::Text) => turn.reasoning(
                &turn.required(delta.thinking, "a delta", "thinking")?,
                on_event,
            ),
            ("signature_delta" | "citations_delta", Open::Text) => Ok(()),
            // A tool block's input comes in `input_json_delta`s only: a delta of another type
            // may hold part of it, so the input can no longer be known whole.
            (kind, Open::Call { .. }) => Err(turn.error(
                StreamErrorKind::BadEvent,
                format!(
                    "a {} for tool block {}, whose input comes in input_json_deltas",
                    if kind.is_empty() {
                        "delta without a type"
                    } else {
                        kind
                    },
                    event.index.unwrap_or(0)
                ),
            )),
            ("input_json_delta", Open::Text) => Err(turn.error(
                StreamErrorKind::BadEvent,
                format!(
                    "an input_json_delta for block {}, which is not a tool block",
                    event.index.unwrap_or(0)
                ),
            )),
            _ => {
                turn.skip();
                Ok(())
            }
        }
    }

    fn find(&self, index: Option<u64>, turn: &Turn) -> Result<usize, StreamError> {
        let Some(index) = index else {
            return Err(turn.error(StreamErrorKind::BadEvent, "a block event without its index"));
        };
        self.open.iter().position(|(i, _)| *i == index).ok_or_else(|| {
            turn.error(
                StreamErrorKind::UnknownCall,
                format!("an event for block {index}, which is not open (never started or already stopped)"),
            )
        })
    }

    /// The end of the stream: open calls are incomplete.
    pub fn finish(&mut self, turn: &mut Turn) -> Result<(), StreamError> {
        for call in std::mem::take(&mut self.held) {
            turn.incomplete(call)?;
        }
        for (_, open) in self.open.drain(..) {
            if let Open::Call { call, .. } = open {
                turn.incomplete(call)?;
            }
        }
        Ok(())
    }
}

/// Whether a `stop_reason` says a token limit cut the output.
fn cut_by_limit(reason: &str) -> bool {
    matches!(reason, "max_tokens" | "model_context_window_exceeded")
}

#[cfg(test)]
mod tests {
    use super::super::testing::{read, shown, triples};
    use super::super::{Api, StreamErrorKind};

    const START: &str = r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}"#;
    const STOP: &str = r#"{"type":"content_block_stop","index":0}"#;

    #[test]
    fn a_block_is_confirmed_at_its_stop_with_its_joined_input() {
        let delta = |json: &str| {
            format!(
                r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"input_json_delta","partial_json":{json:?}}}}}"#
            )
        };
        let (calls, _) = read(
            Api::AnthropicMessages,
            &[START, &delta("{\"a\""), &delta(":1}"), STOP],
        );
        assert_eq!(shown(&calls), triples(&[("toolu_1", "f", r#"{"a":1}"#)]));
        // An input given whole at the start, with no deltas.
        let whole = r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_2","name":"g","input":{"q":"x"}}}"#;
        let (calls, _) = read(Api::AnthropicMessages, &[whole, STOP]);
        assert_eq!(shown(&calls), triples(&[("toolu_2", "g", r#"{"q":"x"}"#)]));
        // No input: held until the next event says the message was not cut.
        let empty = r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_3","name":"h","input":{}}}"#;
        let stopped = |reason: &str| {
            format!(r#"{{"type":"message_delta","delta":{{"stop_reason":"{reason}"}}}}"#)
        };
        let (calls, _) = read(Api::AnthropicMessages, &[empty, STOP, &stopped("tool_use")]);
        assert_eq!(shown(&calls), triples(&[("toolu_3", "h", "{}")]));
        let (calls, summary) = read(
            Api::AnthropicMessages,
            &[empty, STOP, &stopped("max_tokens")],
        );
        assert!(calls.is_empty());
        assert_eq!(summary.incomplete.len(), 1);
        let (calls, summary) = read(Api::AnthropicMessages, &[empty, STOP]);
        assert!(calls.is_empty() && summary.incomplete.len() == 1);
        // Cut before its stop: incomplete.
        let (calls, summary) = read(Api::AnthropicMessages, &[START, &delta("{\"a\"")]);
        assert!(calls.is_empty());
        assert_eq!(summary.incomplete[0].text, "{\"a\"");
    }

    #[test]
    fn a_block_stopped_with_no_input_is_decided_by_what_says_whether_the_message_was_cut() {
        let empty = r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_3","name":"h","input":{}}}"#;
        let next =
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#;
        let stopped = |reason: &str| {
            format!(r#"{{"type":"message_delta","delta":{{"stop_reason":"{reason}"}}}}"#)
        };
        let no_reason = r#"{"type":"message_delta","delta":{},"usage":{"output_tokens":3}}"#;
        let ping = r#"{"type":"ping"}"#;
        let unknown = r#"{"type":"some_new_event","x":1}"#;
        let other_block = r#"{"type":"content_block_start","index":1,"content_block":{"type":"web_search_tool_result"}}"#;
        let stop = r#"{"type":"message_stop"}"#;
        let error =
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        let (end_turn, max_tokens, window) = (
            stopped("end_turn"),
            stopped("max_tokens"),
            stopped("model_context_window_exceeded"),
        );
        let confirmed: [&[&str]; 5] = [
            &[empty, STOP, next],
            &[empty, STOP, other_block],
            &[empty, STOP, ping, unknown, &end_turn, stop],
            &[empty, STOP, no_reason, stop],
            &[empty, STOP, ping, &stopped("tool_use")],
        ];
        for lines in confirmed {
            let (calls, summary) = read(Api::AnthropicMessages, lines);
            assert_eq!(
                shown(&calls),
                triples(&[("toolu_3", "h", "{}")]),
                "{lines:?}"
            );
            assert!(summary.incomplete.is_empty(), "{lines:?}");
        }
        let incomplete: [&[&str]; 5] = [
            &[empty, STOP, ping, &max_tokens, stop],
            &[empty, STOP, unknown, &max_tokens, stop],
            &[empty, STOP, &window, stop],
            &[empty, STOP, error],
            &[empty, STOP, ping],
        ];
        for lines in incomplete {
            let (calls, summary) = read(Api::AnthropicMessages, lines);
            assert!(calls.is_empty(), "{lines:?}");
            assert_eq!(summary.incomplete.len(), 1, "{lines:?}");
        }
        let (_, summary) = read(Api::AnthropicMessages, &[&window, stop]);
        assert!(summary.truncated, "the context window cut the output");
    }

    #[test]
    fn events_that_do_not_fit_the_open_blocks_are_errors() {
        let text_delta =
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}"#;
        for (lines, kind) in [
            (vec![START, START], StreamErrorKind::BadEvent),
            (vec![START, text_delta], StreamErrorKind::BadEvent),
            (vec![START, STOP, STOP], StreamErrorKind::UnknownCall),
            (vec![text_delta], StreamErrorKind::UnknownCall),
            (
                vec![r#"{"type":"message_stop"}"#, START],
                StreamErrorKind::AfterEnd,
            ),
            (
                vec![
                    r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
                ],
                StreamErrorKind::ProviderError,
            ),
        ] {
            let (_, summary) = read(Api::AnthropicMessages, &lines);
            assert_eq!(summary.error.map(|e| e.kind), Some(kind), "{lines:?}");
        }
    }

    #[test]
    fn the_usage_of_message_start_is_updated_by_message_delta() {
        let start = r#"{"type":"message_start","message":{"id":"m","usage":{"input_tokens":4,"cache_read_input_tokens":96,"cache_creation_input_tokens":0,"output_tokens":1}}}"#;
        let delta = r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":15}}"#;
        let stop = r#"{"type":"message_stop"}"#;
        let (_, summary) = read(Api::AnthropicMessages, &[start, delta, stop]);
        let usage = summary.usage.unwrap();
        assert_eq!(
            (
                usage.prompt_tokens,
                usage.completion_tokens,
                usage.prompt_cache_hit_tokens
            ),
            (100, Some(15), Some(96))
        );
        assert_eq!(
            usage.provider.unwrap()["output_tokens"],
            15,
            "the provider's object, updated"
        );
        // No usage anywhere: none; a usage of the wrong shape: ignored, no error.
        let bare = r#"{"type":"message_start","message":{"id":"m"}}"#;
        let (_, summary) = read(Api::AnthropicMessages, &[bare, stop]);
        assert_eq!(summary.usage, None);
        let wrong = r#"{"type":"message_start","message":{"id":"m","usage":"lots"}}"#;
        let (_, summary) = read(Api::AnthropicMessages, &[wrong, stop]);
        assert_eq!((summary.usage, summary.error), (None, None));
        // A usage that outgrows its bound keeps its counts, not the provider's object.
        let big = format!(
            r#"{{"type":"message_delta","delta":{{"stop_reason":"end_turn"}},"usage":{{"output_tokens":15,"note":"{}"}}}}"#,
            "x".repeat(super::super::usage::MAX_RAW_BYTES)
        );
        let (_, summary) = read(Api::AnthropicMessages, &[start, &big, stop]);
        let usage = summary.usage.unwrap();
        assert_eq!(
            (usage.prompt_tokens, usage.completion_tokens),
            (100, Some(15))
        );
        assert_eq!(usage.provider, None);
    }
}
