//! OpenAI Responses: typed events, calls as output items keyed by `item_id` (or
//! `output_index` when an event has no `item_id`).
//!
//! - `response.output_item.added` opens a call item: `function_call` (JSON arguments),
//!   `custom_tool_call` (raw input; named `apply_patch`, the input is a patch parsed as it
//!   streams) or the built-in `apply_patch_call` (one file operation whose `diff` streams; it
//!   is parsed as the patch of that one operation). Other items (messages, reasoning) are not
//!   calls; their text deltas are read by type.
//! - `response.function_call_arguments.delta`, `response.custom_tool_call_input.delta` and
//!   `response.apply_patch_call_operation_diff.delta` append to the open item; their `.done`
//!   events, and the done item, hold the whole value: it fills an item that had no deltas and
//!   must equal what the deltas gave otherwise (a mismatch makes the call malformed).
//! - `response.output_item.done` finishes the item: status `completed` confirms the call;
//!   `incomplete` (or any other) leaves it incomplete. An item with no status (custom tool
//!   items have none) is held until the response shows it went on past it: the next output
//!   item (added or done) or `response.completed` confirms it; `response.incomplete`, a
//!   failure, an error or the end of the body leaves it incomplete, since an output limit may
//!   have cut it. A done call item that was never added is read as added and done at once.
//! - A delta for an item that is not open is an `unknown_call` error.
//! - `response.completed` and `response.incomplete` are the terminal events (`finish_reason`
//!   `completed`, `incomplete:<reason>`), and their `response.usage` is the turn's usage
//!   ([`super::usage`]); `response.failed` ends with `failed` and the
//!   response's error, and an `error` event with its message: neither ends cleanly.
//!
//! Text is `response.output_text.delta` (and `response.refusal.delta`); reasoning
//! `response.reasoning_text.delta` and `response.reasoning_summary_text.delta`. Lifecycle
//! events that carry nothing new (`.added`/`.done` of content parts, text `.done` events) are
//! known and ignored; any other type is skipped and counted.

use std::borrow::Cow;

use serde::Deserialize;

use super::call::{CallKind, Pending};
use super::patch::PatchInput;
use super::turn::{Event, Turn};
use super::{error_message, event_type, parse, Api, StreamError, StreamErrorKind};

#[derive(Deserialize)]
struct ResponseEvent<'a> {
    #[serde(borrow, rename = "type")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    item_id: Option<Cow<'a, str>>,
    output_index: Option<u64>,
    #[serde(borrow)]
    delta: Option<Cow<'a, str>>,
    #[serde(borrow)]
    arguments: Option<Cow<'a, str>>,
    #[serde(borrow)]
    input: Option<Cow<'a, str>>,
    #[serde(borrow)]
    diff: Option<Cow<'a, str>>,
    #[serde(borrow)]
    item: Option<Item<'a>>,
    response: Option<Response>,
    message: Option<String>,
    /// An `error` event's object, where a server nests it (`{"type":"error","error":{…}}`)
    /// rather than giving its `message` beside the type as OpenAI does.
    error: Option<serde_json::Value>,
}

/// Only the type, for an event whose other fields did not fit.
#[derive(Deserialize)]
struct TypeOnly {
    #[serde(rename = "type")]
    kind: Option<String>,
}

#[derive(Deserialize)]
struct Item<'a> {
    #[serde(borrow, rename = "type")]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    call_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    arguments: Option<Cow<'a, str>>,
    #[serde(borrow)]
    input: Option<Cow<'a, str>>,
    #[serde(borrow)]
    status: Option<Cow<'a, str>>,
    operation: Option<Operation>,
}

#[derive(Deserialize)]
struct Operation {
    #[serde(rename = "type")]
    kind: String,
    path: Option<String>,
    diff: Option<String>,
}

#[derive(Deserialize)]
struct Response {
    incomplete_details: Option<IncompleteDetails>,
    error: Option<serde_json::Value>,
    usage: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct IncompleteDetails {
    reason: Option<String>,
}

/// An open call item.
#[derive(Debug)]
struct OpenItem {
    item_id: String,
    output_index: Option<u64>,
    call: Pending,
}

/// The Responses assembler. See the module documentation.
#[derive(Debug, Default)]
pub struct Responses {
    open: Vec<OpenItem>,
    /// A done call item with no status, waiting for the response to go on past it.
    held: Option<Pending>,
    /// A Chat-style `data: [DONE]` arrived after the response ended (proxies that put Chat's
    /// terminator on every stream send it): taken once, as nothing.
    done_after_end: bool,
}

/// Event types that carry nothing this reader needs.
const IGNORED: &[&str] = &[
    "response.created",
    "response.in_progress",
    "response.queued",
    "response.content_part.added",
    "response.content_part.done",
    "response.output_text.done",
    "response.output_text.annotation.added",
    "response.refusal.done",
    "response.reasoning_text.done",
    "response.reasoning_summary_part.added",
    "response.reasoning_summary_part.done",
    "response.reasoning_summary_text.done",
];

impl Responses {
    /// One event: its SSE name (empty for none) and its data; the JSON `type` decides.
    pub fn on_event(
        &mut self,
        name: &[u8],
        data: &[u8],
        turn: &mut Turn,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), StreamError> {
        if turn.terminated {
            if data.trim_ascii() == b"[DONE]" && !self.done_after_end {
                self.done_after_end = true;
                return Ok(());
            }
            return Err(turn.error(
                StreamErrorKind::AfterEnd,
                "an event after the response ended",
            ));
        }
        let event: ResponseEvent<'_> = match parse(data, turn) {
            Ok(event) => event,
            Err(e)
                if e.kind == StreamErrorKind::BadEvent
                    && data.trim_ascii_start().starts_with(b"{") =>
            {
                // The fields did not fit: fine for a type this reader does not know.
                let kind = serde_json::from_slice::<TypeOnly>(data)
                    .ok()
                    .and_then(|t| t.kind);
                if kind.is_some_and(|k| !known(&k)) {
                    turn.skip();
                    return Ok(());
                }
                return Err(e);
            }
            Err(e) => return Err(e),
        };
        let kind = event_type(&event.kind, name);
        if let Some(call) = self.held.take() {
            match kind.as_ref() {
                "response.output_item.added"
                | "response.output_item.done"
                | "response.completed" => turn.confirm(call, on_event)?,
                // Anything else says nothing of it; the end of the body makes it incomplete.
                _ => self.held = Some(call),
            }
        }
        match kind.as_ref() {
            "response.output_item.added" => self.added(event, turn, on_event),
            "response.output_item.done" => self.done_item(event, turn, on_event),
            "response.function_call_arguments.delta"
            | "response.custom_tool_call_input.delta"
            | "response.apply_patch_call_operation_diff.delta" => {
                let delta = turn.required(event.delta.as_deref(), "an event", "delta")?;
                let limits = turn.limits;
                let at = self.find(&event, turn)?;
                let call = &mut self.open[at].call;
                call.append(delta, &limits, on_event)
                    .map_err(|kind| turn.call_too_long(kind, call))
            }
            "response.function_call_arguments.done"
            | "response.custom_tool_call_input.done"
            | "response.apply_patch_call_operation_diff.done" => {
                let value = event
                    .arguments
                    .as_deref()
                    .or(event.input.as_deref())
                    .or(event.diff.as_deref());
                let value = turn.required(value, "an event", "arguments, input or diff")?;
                let limits = turn.limits;
                let at = self.find(&event, turn)?;
                let call = &mut self.open[at].call;
                call.complete_with(value, &limits, on_event)
                    .map_err(|kind| turn.call_too_long(kind, call))
            }
            "response.output_text.delta" | "response.refusal.delta" => turn.text(
                turn.required(event.delta.as_deref(), "an event", "delta")?,
                on_event,
            ),
            "response.reasoning_text.delta" | "response.reasoning_summary_text.delta" => turn
                .reasoning(
                    turn.required(event.delta.as_deref(), "an event", "delta")?,
                    on_event,
                ),
            "response.completed" => {
                if let Some(usage) = event.response.as_ref().and_then(|r| r.usage.as_ref()) {
                    turn.usage(Api::OpenAiResponses, usage);
                }
                turn.summary.finish_reason = Some("completed".to_owned());
                turn.terminated = true;
                Ok(())
            }
            "response.incomplete" => {
                if let Some(usage) = event.response.as_ref().and_then(|r| r.usage.as_ref()) {
                    turn.usage(Api::OpenAiResponses, usage);
                }
                let reason = event
                    .response
                    .and_then(|r| r.incomplete_details)
                    .and_then(|d| d.reason)
                    .unwrap_or_default();
                turn.summary.truncated = reason == "max_output_tokens";
                // With no reason given, `incomplete` alone rather than `incomplete:`.
                turn.summary.finish_reason = Some(if reason.is_empty() {
                    "incomplete".to_owned()
                } else {
                    format!("incomplete:{reason}")
                });
                turn.terminated = true;
                Ok(())
            }
            "response.failed" => {
                turn.summary.finish_reason = Some("failed".to_owned());
                let message = event
                    .response
                    .and_then(|r| r.error)
                    .map_or_else(|| "the response failed".to_owned(), |e| error_message(&e));
                Err(turn.error(StreamErrorKind::ProviderError, message))
            }
            "error" => {
                let message = event
                    .message
                    .or_else(|| {
                        event
                            .error
                            .as_ref()
                            .filter(|e| !e.is_null())
                            .map(error_message)
                    })
                    .unwrap_or_else(|| super::shown(data));
                Err(turn.error(StreamErrorKind::ProviderError, message))
            }
            other if IGNORED.contains(&other) => Ok(()),
            "" => Err(turn.error(StreamErrorKind::BadEvent, "an event without a type")),
            _ => {
                turn.skip();
                Ok(())
            }
        }
    }

    fn added(
        &mut self,
        event: ResponseEvent<'_>,
        turn: &mut Turn,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), StreamError> {
        let item = turn.required(event.item, "an output item event", "item")?;
        let item_id = item.id.as_deref().unwrap_or("").to_owned();
        if !item_id.is_empty() && self.open.iter().any(|o| o.item_id == item_id) {
            return Err(turn.error(
                StreamErrorKind::BadEvent,
                format!("item {item_id:?} added twice"),
            ));
        }
        let Some(call) = open_call(&item, turn, on_event)? else {
            return Ok(());
        };
        turn.room_for_call(self.open.len(), "call items")?;
        self.open.push(OpenItem {
            item_id,
            output_index: event.output_index,
            call,
        });
        Ok(())
    }

    fn done_item(
        &mut self,
        event: ResponseEvent<'_>,
        turn: &mut Turn,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), StreamError> {
        let item = turn.required(event.item.as_ref(), "an output item event", "item")?;
        let at = self.open.iter().position(|o| match item.id.as_deref() {
            Some(id) if !o.item_id.is_empty() => o.item_id == id,
            _ => o.output_index.is_some() && o.output_index == event.output_index,
        });
        let mut call = match at {
            Some(at) => self.open.remove(at).call,
            // Added and done at once, or not a call.
            None => match open_call(item, turn, on_event)? {
                Some(call) => call,
                None => return Ok(()),
            },
        };
        call.fill(item.call_id.as_deref(), item.name.as_deref());
        let value = item
            .arguments
            .as_deref()
            .or(item.input.as_deref())
            .or(item.operation.as_ref().and_then(|o| o.diff.as_deref()));
        if let Some(value) = value {
            let limits = turn.limits;
            call.complete_with(value, &limits, on_event)
                .map_err(|kind| turn.call_too_long(kind, &call))?;
        }
        match item.status.as_deref() {
            Some("completed") => turn.confirm(call, on_event),
            None => {
                self.held = Some(call);
                Ok(())
            }
            Some(_) => turn.incomplete(call),
        }
    }

    /// The open item an event is about: by `item_id`, else by `output_index`.
    fn find(&self, event: &ResponseEvent<'_>, turn: &Turn) -> Result<usize, StreamError> {
        let at = match event.item_id.as_deref() {
            Some(id) => self.open.iter().position(|o| o.item_id == id),
            None => self
                .open
                .iter()
                .position(|o| event.output_index.is_some() && o.output_index == event.output_index),
        };
        at.ok_or_else(|| {
            let key = match (&event.item_id, event.output_index) {
                (Some(id), _) => format!("item {id:?}"),
                (None, Some(index)) => format!("output index {index}"),
                (None, None) => "no item id nor output index".to_owned(),
            };
            turn.error(
                StreamErrorKind::UnknownCall,
                format!("a fragment for a call item that is not open ({key})"),
            )
        })
    }

    /// The end of the stream: open items are incomplete.
    pub fn finish(&mut self, turn: &mut Turn) -> Result<(), StreamError> {
        if let Some(call) = self.held.take() {
            turn.incomplete(call)?;
        }
        for item in self.open.drain(..) {
            turn.incomplete(item.call)?;
        }
        Ok(())
    }
}

/// The types `on_event` reads.
const READ: &[&str] = &[
    "error",
    "response.output_item.added",
    "response.output_item.done",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.done",
    "response.custom_tool_call_input.delta",
    "response.custom_tool_call_input.done",
    "response.apply_patch_call_operation_diff.delta",
    "response.apply_patch_call_operation_diff.done",
    "response.output_text.delta",
    "response.refusal.delta",
    "response.reasoning_text.delta",
    "response.reasoning_summary_text.delta",
    "response.completed",
    "response.incomplete",
    "response.failed",
];

/// The types `on_event` reads or ignores on purpose.
fn known(kind: &str) -> bool {
    READ.contains(&kind) || IGNORED.contains(&kind)
}

/// The call an item opens, or `None` for an item that is not a call.
fn open_call(
    item: &Item<'_>,
    turn: &Turn,
    on_event: &mut dyn FnMut(Event<'_>),
) -> Result<Option<Pending>, StreamError> {
    let id = item.call_id.as_deref().unwrap_or("");
    let name = item.name.as_deref().unwrap_or("");
    let limits = turn.limits;
    let (mut call, first) = match item.kind.as_ref() {
        "function_call" => (
            Pending::new(id, name, CallKind::Function),
            item.arguments.as_deref(),
        ),
        "custom_tool_call" => {
            let kind = if name == "apply_patch" {
                CallKind::ApplyPatch
            } else {
                CallKind::Custom
            };
            (Pending::new(id, name, kind), item.input.as_deref())
        }
        "apply_patch_call" => {
            let Some(op) = &item.operation else {
                return Err(turn.error(
                    StreamErrorKind::BadEvent,
                    "an apply_patch_call without its operation",
                ));
            };
            let mut call = Pending::new(id, "apply_patch", CallKind::ApplyPatch);
            let path = op.path.as_deref().unwrap_or("");
            call.patch = Some(Box::new(
                PatchInput::operation(id, &op.kind, path, on_event)
                    .map_err(|m| turn.error(StreamErrorKind::BadEvent, m))?,
            ));
            (call, op.diff.as_deref())
        }
        _ => return Ok(None),
    };
    if let Some(first) = first.filter(|f| !f.is_empty()) {
        call.append(first, &limits, on_event)
            .map_err(|kind| turn.call_too_long(kind, &call))?;
    }
    Ok(Some(call))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{read, shown, triples};
    use super::super::{Api, StreamErrorKind};

    const ADDED: &str = r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":""}}"#;

    fn done(arguments: &str, status: &str) -> String {
        format!(
            r#"{{"type":"response.output_item.done","output_index":0,"item":{{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":{arguments:?},"status":"{status}"}}}}"#
        )
    }

    #[test]
    fn a_done_item_confirms_and_its_value_must_match_the_deltas() {
        let delta = r#"{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"{}"}"#;
        let (calls, summary) = read(
            Api::OpenAiResponses,
            &[ADDED, delta, &done("{}", "completed")],
        );
        assert_eq!(shown(&calls), triples(&[("call_1", "f", "{}")]));
        assert!(!summary.ended_cleanly, "no response.completed");
        let (calls, summary) = read(
            Api::OpenAiResponses,
            &[ADDED, delta, &done("{\"a\":1}", "completed")],
        );
        assert!(calls.is_empty());
        assert_eq!(summary.malformed.len(), 1);
        // Done without being added: read as added and done at once.
        let (calls, _) = read(Api::OpenAiResponses, &[&done("{\"b\":2}", "completed")]);
        assert_eq!(shown(&calls), triples(&[("call_1", "f", "{\"b\":2}")]));
        let (calls, summary) = read(Api::OpenAiResponses, &[ADDED, &done("{", "incomplete")]);
        assert!(calls.is_empty());
        assert_eq!(summary.incomplete[0].text, "{");
    }

    #[test]
    fn a_done_item_with_no_status_waits_for_the_response_to_go_on() {
        let bare = r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}"}}"#;
        let custom = r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"custom_tool_call","id":"ct_1","call_id":"call_2","name":"sql","input":"SELECT 1"}}"#;
        let next = r#"{"type":"response.output_item.added","output_index":1,"item":{"type":"message","id":"msg_1"}}"#;
        let completed = r#"{"type":"response.completed","response":{"status":"completed"}}"#;
        let incomplete = r#"{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}}"#;
        let ping = r#"{"type":"response.some_new_event"}"#;
        for done in [bare, custom] {
            // The next item, or the response completed: it was whole.
            for went_on in [next, completed] {
                let (calls, summary) = read(Api::OpenAiResponses, &[done, ping, went_on]);
                assert_eq!(calls.len(), 1, "{done} {went_on}");
                assert!(summary.incomplete.is_empty());
            }
            // The response cut, or the body ended, while it waited: incomplete.
            for lines in [&[done, ping, incomplete][..], &[done]] {
                let (calls, summary) = read(Api::OpenAiResponses, lines);
                assert!(calls.is_empty(), "{lines:?}");
                assert_eq!(summary.incomplete.len(), 1);
            }
        }
        let (calls, _) = read(Api::OpenAiResponses, &[bare, next, completed]);
        assert_eq!(shown(&calls), triples(&[("call_1", "f", "{}")]));
    }

    #[test]
    fn deltas_for_items_that_are_not_open_and_failures_are_errors() {
        let stray = r#"{"type":"response.function_call_arguments.delta","item_id":"fc_9","output_index":3,"delta":"{}"}"#;
        let (_, summary) = read(Api::OpenAiResponses, &[ADDED, stray]);
        assert_eq!(summary.error.unwrap().kind, StreamErrorKind::UnknownCall);
        assert_eq!(summary.incomplete.len(), 1);
        for error in [
            r#"{"type":"error","code":"server_error","message":"boom","sequence_number":3}"#,
            r#"{"type":"error","error":{"type":"server_error","message":"boom"}}"#,
        ] {
            let (_, summary) = read(Api::OpenAiResponses, &[ADDED, error]);
            let error = summary.error.unwrap();
            assert_eq!(
                (error.kind, error.message.as_str()),
                (StreamErrorKind::ProviderError, "boom")
            );
        }
        let failed = r#"{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"boom"}}}"#;
        let (_, summary) = read(Api::OpenAiResponses, &[failed]);
        assert_eq!(summary.finish_reason.as_deref(), Some("failed"));
        let error = summary.error.unwrap();
        assert_eq!(
            (error.kind, error.message.as_str()),
            (StreamErrorKind::ProviderError, "boom")
        );
        let (_, summary) = read(Api::OpenAiResponses, &[r#"{"sequence_number":1}"#]);
        assert_eq!(summary.error.unwrap().kind, StreamErrorKind::BadEvent);
        let (_, summary) = read(
            Api::OpenAiResponses,
            &[r#"{"type":"response.output_item.added","output_index":0}"#],
        );
        assert_eq!(summary.error.unwrap().kind, StreamErrorKind::BadEvent);
    }

    #[test]
    fn the_usage_of_the_terminal_event_is_the_turns() {
        let completed = r#"{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":900,"input_tokens_details":{"cached_tokens":512},"output_tokens":12}}}"#;
        let (_, summary) = read(Api::OpenAiResponses, &[completed]);
        let usage = summary.usage.unwrap();
        assert_eq!(
            (usage.prompt_tokens, usage.prompt_cache_hit_tokens),
            (900, Some(512))
        );
        let incomplete = r#"{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":7,"output_tokens":3}}}"#;
        let (_, summary) = read(Api::OpenAiResponses, &[incomplete]);
        assert_eq!(summary.usage.map(|u| u.prompt_tokens), Some(7));
        assert!(summary.truncated);
        // The usage of `response.created` (null) is not the turn's, nor one of a wrong shape.
        let created =
            r#"{"type":"response.created","response":{"status":"in_progress","usage":null}}"#;
        let bare = r#"{"type":"response.completed","response":{"status":"completed"}}"#;
        let (_, summary) = read(Api::OpenAiResponses, &[created, bare]);
        assert_eq!(summary.usage, None);
        let wrong =
            r#"{"type":"response.completed","response":{"status":"completed","usage":[1,2]}}"#;
        let (_, summary) = read(Api::OpenAiResponses, &[wrong]);
        assert_eq!((summary.usage, summary.ended_cleanly), (None, true));
    }
}
