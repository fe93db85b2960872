//! OpenAI Chat Completions: `chat.completion.chunk` objects, `[DONE]` at the end.
//!
//! Calls arrive as `choices[0].delta.tool_calls[]` entries keyed by `index`; the first
//! fragment of a call carries its `id` and `function.name`, later ones `function.arguments`
//! pieces (and often `""` or `null` ids and names, which never overwrite the first). One call
//! is open at a time:
//!
//! - an entry with the open call's index continues it, unless it brings a different non-empty
//!   id (servers that number every call 0): that is a new call;
//! - an entry with a higher index, or the first entry of the stream, starts a call when it
//!   has an id or a name; the call it follows is then finished (confirmed);
//! - an entry for an index that never started (no id, no name) is an `unknown_call` error,
//!   and one for a call already finished is `call_ended`: a fragment that cannot be placed is
//!   never guessed into a call;
//! - an entry without `index` continues the open call, or starts the next one when it has an
//!   id;
//! - `finish_reason` `tool_calls`, `function_call` or `stop` finishes the open call; any other
//!   (`length`, `content_filter`) leaves it incomplete. A `finish_reason` of `""` (sent by some servers
//!   on every chunk before the last, where OpenAI sends `null`) is no finish.
//!
//! The deprecated `delta.function_call` (the `functions` API: one call a message, no id) is
//! read as the entry of a call at index 0.
//!
//! Several entries in one chunk are taken in order, so a whole call in one delta, or the end
//! of one call and the start of the next, are read like any other split. A chunk's `usage`
//! (the last chunk's, `choices: []`, when the request asked for it) is the turn's usage
//! ([`super::usage`]); `obfuscation` and other unknown fields are ignored. Text is `delta.content` (and
//! `delta.refusal`, as the Responses reader takes `response.refusal.delta`); reasoning
//! `delta.reasoning_content` or `delta.reasoning` (a delta with both, as vLLM sends, has its
//! reasoning in `reasoning_content`).
//! Only choice 0 is read: a stream of several choices (`n` > 1) is a `bad_event` error. An
//! object with an `error` field, or an event named `error`, is the server's error.

use std::borrow::Cow;

use serde::Deserialize;

use super::call::{CallKind, Pending};
use super::turn::{Event, Turn};
use super::{error_message, parse, Api, StreamError, StreamErrorKind};

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow)]
    choices: Option<Vec<Choice<'a>>>,
    error: Option<serde_json::Value>,
    usage: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    index: Option<u64>,
    #[serde(borrow)]
    delta: Option<Delta<'a>>,
    #[serde(borrow)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow)]
    content: Option<Cow<'a, str>>,
    /// A refusal streamed in place of content: text, as the Responses API's
    /// `response.refusal.delta` is.
    #[serde(borrow)]
    refusal: Option<Cow<'a, str>>,
    #[serde(borrow)]
    reasoning_content: Option<Cow<'a, str>>,
    #[serde(borrow)]
    reasoning: Option<Cow<'a, str>>,
    #[serde(borrow)]
    tool_calls: Option<Vec<ToolCallDelta<'a>>>,
    /// The deprecated `functions` API's one call per message.
    #[serde(borrow)]
    function_call: Option<FunctionDelta<'a>>,
}

#[derive(Deserialize)]
struct ToolCallDelta<'a> {
    index: Option<u64>,
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, rename = "type")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    function: Option<FunctionDelta<'a>>,
}

#[derive(Deserialize)]
struct FunctionDelta<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    arguments: Option<Cow<'a, str>>,
}

/// The Chat assembler. See the module documentation.
#[derive(Debug, Default)]
pub struct Chat {
    /// The open call and its index.
    open: Option<(u64, Pending)>,
    /// The highest index a call started at.
    highest: Option<u64>,
    /// Every index a call started at (as many as the turn's calls, which its limits bound): a
    /// call may start at an index below the highest that no call had.
    used: Vec<u64>,
}

impl Chat {
    /// One event: its name (empty for none) and its data.
    pub fn on_event(
        &mut self,
        name: &[u8],
        data: &[u8],
        turn: &mut Turn,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), StreamError> {
        if turn.terminated {
            return Err(turn.error(StreamErrorKind::AfterEnd, "an event after [DONE]"));
        }
        if data.trim_ascii() == b"[DONE]" {
            turn.terminated = true;
            return Ok(());
        }
        if name == b"error" {
            let message = match serde_json::from_slice::<serde_json::Value>(data) {
                Ok(value) => error_message(value.get("error").unwrap_or(&value)),
                Err(_) => super::shown(data),
            };
            return Err(turn.error(StreamErrorKind::ProviderError, message));
        }
        let chunk: Chunk<'_> = parse(data, turn)?;
        if let Some(error) = chunk.error {
            return Err(turn.error(StreamErrorKind::ProviderError, error_message(&error)));
        }
        if let Some(usage) = chunk.usage.as_ref().filter(|u| !u.is_null()) {
            turn.usage(Api::OpenAiChat, usage);
        }
        let Some(choices) = chunk.choices else {
            return Err(turn.error(StreamErrorKind::BadEvent, "a chunk without choices"));
        };
        for choice in choices {
            if choice.index.unwrap_or(0) != 0 {
                return Err(turn.error(
                    StreamErrorKind::BadEvent,
                    "a chunk of choice other than 0: only single-choice streams are read",
                ));
            }
            if let Some(delta) = choice.delta {
                self.delta(delta, turn, on_event)?;
            }
            // `""` is no finish: SGLang, Ollama and LocalAI have sent it on every chunk before
            // the last, where OpenAI sends `null`.
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                self.finished(&reason, turn, on_event)?;
            }
        }
        Ok(())
    }

    fn delta(
        &mut self,
        delta: Delta<'_>,
        turn: &mut Turn,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), StreamError> {
        // One delta's reasoning is in one of the two fields; a server moving from one name to
        // the other (vLLM) sends the same text in both, read once.
        let reasoning = [&delta.reasoning_content, &delta.reasoning]
            .into_iter()
            .flatten()
            .find(|r| !r.is_empty());
        if let Some(reasoning) = reasoning {
            turn.reasoning(reasoning, on_event)?;
        }
        for text in [&delta.content, &delta.refusal].into_iter().flatten() {
            turn.text(text, on_event)?;
        }
        for entry in delta.tool_calls.into_iter().flatten() {
            self.entry(entry, turn, on_event)?;
        }
        if let Some(function) = delta.function_call {
            // One call with no id, at index 0: its first fragment names it.
            let entry = ToolCallDelta {
                index: Some(0),
                id: None,
                kind: None,
                function: Some(function),
            };
            self.entry(entry, turn, on_event)?;
        }
        Ok(())
    }

    fn entry(
        &mut self,
        entry: ToolCallDelta<'_>,
        turn: &mut Turn,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), StreamError> {
        // `""` is no type, as `""` is no id (a later fragment from a server that sends every
        // field).
        if entry
            .kind
            .as_deref()
            .is_some_and(|k| !k.is_empty() && k != "function")
        {
            return Err(turn.error(
                StreamErrorKind::BadEvent,
                format!("a tool call of type {:?}", entry.kind.unwrap_or_default()),
            ));
        }
        let id = entry.id.as_deref().filter(|id| !id.is_empty());
        let (name, arguments) = match &entry.function {
            Some(f) => (
                f.name.as_deref().filter(|n| !n.is_empty()),
                f.arguments.as_deref(),
            ),
            None => (None, None),
        };
        let open_index = self.open.as_ref().map(|(index, _)| *index);
        let index = match (entry.index, open_index) {
            (Some(index), _) => index,
            (None, Some(open)) if id.is_none() => open,
            (None, _) => self.highest.map_or(0, |h| h + 1),
        };
        let continues = match &self.open {
            Some((open, call)) if *open == index => {
                id.is_none_or(|id| call.id.is_empty() || call.id == id)
            }
            _ => false,
        };
        if !continues {
            let starts = id.is_some() || name.is_some();
            let used = self.used.contains(&index);
            let later = !used || open_index == Some(index);
            if !starts || !later {
                let ended = used;
                let (kind, what) = if ended && starts {
                    (
                        StreamErrorKind::CallEnded,
                        "a new call at the index of a finished call",
                    )
                } else if ended {
                    (StreamErrorKind::CallEnded, "a fragment of a finished call")
                } else {
                    (
                        StreamErrorKind::UnknownCall,
                        "a fragment of a call that never started",
                    )
                };
                return Err(turn.error(kind, format!("{what} (index {index})")));
            }
            if let Some((_, call)) = self.open.take() {
                turn.confirm(call, on_event)?;
            }
            self.open = Some((
                index,
                Pending::new(id.unwrap_or(""), name.unwrap_or(""), CallKind::Function),
            ));
            self.highest = self.highest.max(Some(index));
            if !used {
                self.used.push(index);
            }
        }
        let Some((_, call)) = &mut self.open else {
            return Ok(());
        };
        call.fill(id, name);
        if let Some(arguments) = arguments {
            let limits = turn.limits;
            call.append(arguments, &limits, &mut |_| {})
                .map_err(|kind| turn.call_too_long(kind, call))?;
        }
        Ok(())
    }

    fn finished(
        &mut self,
        reason: &str,
        turn: &mut Turn,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), StreamError> {
        turn.summary.finish_reason = Some(reason.to_owned());
        turn.summary.truncated = reason == "length";
        if let Some((_, call)) = self.open.take() {
            match reason {
                "tool_calls" | "function_call" | "stop" => turn.confirm(call, on_event)?,
                _ => turn.incomplete(call)?,
            }
        }
        Ok(())
    }

    /// The end of the stream: the open call, if any, is incomplete.
    pub fn finish(&mut self, turn: &mut Turn) -> Result<(), StreamError> {
        match self.open.take() {
            Some((_, call)) => turn.incomplete(call),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{read, shown, triples};
    use super::super::{Api, StreamErrorKind};

    fn entry(index: &str, id: &str, name: &str, arguments: &str) -> String {
        format!(
            r#"{{"choices":[{{"index":0,"delta":{{"tool_calls":[{{{index}"id":{id},"function":{{"name":{name},"arguments":{arguments}}}}}]}},"finish_reason":null}}]}}"#
        )
    }
    const FINISH: &str = r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#;

    #[test]
    fn empty_and_null_ids_and_names_on_later_fragments_do_not_overwrite() {
        let (calls, summary) = read(
            Api::OpenAiChat,
            &[
                &entry(r#""index":0,"#, r#""call_1""#, r#""f""#, r#""{\"a\":""#),
                &entry(r#""index":0,"#, r#""""#, r#""""#, r#""1}""#),
                &entry(r#""index":0,"#, "null", "null", "null"),
                FINISH,
                "[DONE]",
            ],
        );
        assert_eq!(shown(&calls), triples(&[("call_1", "f", r#"{"a":1}"#)]));
        assert!(summary.ended_cleanly);
    }

    #[test]
    fn entries_without_index_continue_the_open_call_or_start_the_next() {
        let (calls, summary) = read(
            Api::OpenAiChat,
            &[
                &entry("", r#""c1""#, r#""f""#, r#""{}""#),
                &entry("", r#""c2""#, r#""g""#, r#""{\"x\"""#),
                &entry("", "null", "null", r#"":2}""#),
                FINISH,
            ],
        );
        assert_eq!(summary.error, None);
        assert_eq!(
            shown(&calls),
            triples(&[("c1", "f", "{}"), ("c2", "g", r#"{"x":2}"#)])
        );
    }

    #[test]
    fn fragments_that_cannot_be_placed_are_errors() {
        let first = entry(r#""index":0,"#, r#""c1""#, r#""f""#, r#""{}""#);
        let second = entry(r#""index":1,"#, r#""c2""#, r#""g""#, r#""{}""#);
        for (lines, kind) in [
            // A fragment for call 0 after call 1 started.
            (
                vec![
                    first.clone(),
                    second.clone(),
                    entry(r#""index":0,"#, "null", "null", r#""x""#),
                ],
                StreamErrorKind::CallEnded,
            ),
            // A fragment for index 2, which never started.
            (
                vec![
                    first.clone(),
                    entry(r#""index":2,"#, "null", "null", r#""{}""#),
                ],
                StreamErrorKind::UnknownCall,
            ),
            // After [DONE].
            (
                vec![
                    first.clone(),
                    FINISH.to_owned(),
                    "[DONE]".to_owned(),
                    first.clone(),
                ],
                StreamErrorKind::AfterEnd,
            ),
            // A second choice.
            (
                vec![r#"{"choices":[{"index":1,"delta":{"content":"x"}}]}"#.to_owned()],
                StreamErrorKind::BadEvent,
            ),
            // No choices at all.
            (vec![r#"{"id":"x"}"#.to_owned()], StreamErrorKind::BadEvent),
            // Not JSON.
            (vec!["{\"choices\":[".to_owned()], StreamErrorKind::NotJson),
            // The server's error object.
            (
                vec![r#"{"error":{"message":"overloaded"}}"#.to_owned()],
                StreamErrorKind::ProviderError,
            ),
        ] {
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            let (calls, summary) = read(Api::OpenAiChat, &lines);
            let error = summary.error.clone().unwrap_or_else(|| panic!("{lines:?}"));
            assert_eq!(error.kind, kind, "{lines:?}");
            // The first call, when a later one started it, was confirmed before the error.
            assert!(calls.len() <= 1, "{lines:?}");
            assert!(!summary.ended_cleanly);
        }
    }

    #[test]
    fn a_finish_other_than_tool_calls_or_stop_leaves_the_call_incomplete() {
        for reason in ["length", "content_filter"] {
            let finish =
                format!(r#"{{"choices":[{{"index":0,"delta":{{}},"finish_reason":"{reason}"}}]}}"#);
            let (calls, summary) = read(
                Api::OpenAiChat,
                &[
                    &entry(r#""index":0,"#, r#""c1""#, r#""f""#, r#""{}""#),
                    &finish,
                    "[DONE]",
                ],
            );
            assert!(calls.is_empty());
            assert_eq!(summary.incomplete.len(), 1);
            assert_eq!(summary.truncated, reason == "length");
            assert_eq!(summary.finish_reason.as_deref(), Some(reason));
        }
    }

    #[test]
    fn a_legacy_function_call_is_one_call_without_an_id() {
        let fragment = |name: &str, arguments: &str| {
            format!(
                r#"{{"choices":[{{"index":0,"delta":{{"function_call":{{"name":{name},"arguments":{arguments:?}}}}},"finish_reason":null}}]}}"#
            )
        };
        let finish = |reason: &str| {
            format!(r#"{{"choices":[{{"index":0,"delta":{{}},"finish_reason":"{reason}"}}]}}"#)
        };
        let first = fragment(r#""get""#, "{\"a\"");
        let rest = fragment("null", ":1}");
        let (calls, _) = read(Api::OpenAiChat, &[&first, &rest, &finish("function_call")]);
        assert_eq!(shown(&calls), triples(&[("", "get", r#"{"a":1}"#)]));
        let (calls, summary) = read(Api::OpenAiChat, &[&first, &finish("length")]);
        assert!(calls.is_empty());
        assert_eq!(summary.incomplete[0].text, "{\"a\"");
    }

    #[test]
    fn a_refusal_is_text() {
        let refusal = |r: &str| {
            format!(r#"{{"choices":[{{"index":0,"delta":{{"content":null,"refusal":"{r}"}}}}]}}"#)
        };
        let stop = r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#;
        let (calls, summary) = read(
            Api::OpenAiChat,
            &[&refusal("I can"), &refusal("not."), stop, "[DONE]"],
        );
        assert!(calls.is_empty());
        assert_eq!(summary.text, "I cannot.");
    }

    #[test]
    fn the_last_usage_chunk_is_the_turns_usage_and_a_wrong_one_is_ignored() {
        let text = r#"{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}],"usage":null}"#;
        let stop = r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}"#;
        let usage = r#"{"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":32}}}"#;
        let (_, summary) = read(Api::OpenAiChat, &[text, stop, usage, "[DONE]"]);
        let usage = summary.usage.unwrap();
        assert_eq!(
            (
                usage.prompt_tokens,
                usage.completion_tokens,
                usage.prompt_cache_hit_tokens
            ),
            (40, Some(2), Some(32))
        );
        // None asked for, none sent.
        let (_, summary) = read(Api::OpenAiChat, &[text, stop, "[DONE]"]);
        assert_eq!(summary.usage, None);
        // A usage of the wrong shape: ignored, and the turn ends as it would have.
        let wrong = r#"{"choices":[],"usage":{"prompt_tokens":"many"}}"#;
        let (_, summary) = read(Api::OpenAiChat, &[text, stop, wrong, "[DONE]"]);
        assert_eq!((summary.usage, summary.error), (None, None));
        assert!(summary.ended_cleanly);
    }
}
