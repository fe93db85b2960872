//! The JSON the chat completions API answers with: stream events, whole completions, and the
//! error body that refuses a request field. Each function maps a shape it does not expect to
//! the [`ModelError`] the loop acts on.

use serde_json::Value;

use super::TokenField;
use crate::agent::model::{Finish, ModelError};

/// What a chat completions server was found to refuse, kept for the rest of the session: each
/// refusal adapts the request once (`stream_options` left out, the other token field sent),
/// and a second refusal of the same kind is an error like any other.
#[derive(Debug, Default)]
pub(crate) struct Refusals {
    /// The server refused `stream_options`: it is no longer sent.
    pub(crate) usage: bool,
    /// The token field was already switched once.
    field_switched: bool,
}

impl Refusals {
    /// After an error status `code` with `body`: when it refuses what was not refused before,
    /// adapts (records the refused `stream_options`, or switches `token_field` to the other),
    /// tells `notices`, and says that the request is to be sent again.
    pub(crate) fn adapt(
        &mut self,
        code: u16,
        body: &str,
        token_field: &mut TokenField,
        notices: &mut dyn FnMut(&str),
    ) -> bool {
        if !self.usage && refuses_field(code, body, "stream_options") {
            self.usage = true;
            notices(&usage_refused_notice(code));
            return true;
        }
        if !self.field_switched && refuses_field(code, body, token_field.name()) {
            self.field_switched = true;
            notices(&token_field.switch_notice(code));
            *token_field = token_field.other();
            return true;
        }
        false
    }
}

/// Whether an error body says the conversation is longer than the model's context window:
/// OpenAI's `context_length_exceeded` (or, from compatible servers, `maximum context
/// length`) and Anthropic's `prompt is too long`.
pub(crate) fn overflows_context(body: &str) -> bool {
    [
        "context_length_exceeded",
        "maximum context length",
        "prompt is too long",
    ]
    .iter()
    .any(|phrase| body.contains(phrase))
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

/// What a client says when the server refuses `stream_options` and the request is sent again
/// without it.
fn usage_refused_notice(code: u16) -> String {
    format!(
        "the server refused `stream_options` (HTTP {code}); retrying without it, kept for the \
         rest of the session: its turns report no token usage"
    )
}

/// What one stream event said.
pub(super) enum Delta {
    /// The content, the finish, the `usage` object (the last chunk's, when asked for), the
    /// reasoning ([`reasoning_of`]).
    Content(
        Option<String>,
        Option<Finish>,
        Option<Value>,
        Option<String>,
    ),
    Done,
}

/// The reasoning of a delta or a message: `reasoning_content`, else `reasoning` (the two
/// names servers use, read as `crate::streams::chat` reads them); a value that is not a
/// string is no reasoning (it never fails the turn: the loop does not run it).
fn reasoning_of(value: Option<&Value>) -> Option<String> {
    let value = value?;
    ["reasoning_content", "reasoning"]
        .iter()
        .find_map(|key| value.get(key).and_then(Value::as_str))
        .filter(|r| !r.is_empty())
        .map(str::to_owned)
}

/// An event's or answer's `usage`, unless absent or null.
fn usage_of(value: &Value) -> Option<Value> {
    value.get("usage").filter(|u| !u.is_null()).cloned()
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

/// A choice's `finish_reason`; `""` is no finish, as `null` is (SGLang, Ollama and LocalAI send
/// it on every chunk before the last, as the stream readers take it: `docs/streams.md`).
fn finish_of(choice: &Value) -> Result<Option<Finish>, ModelError> {
    let Some(reason) = text(choice.get("finish_reason"), "finish_reason")? else {
        return Ok(None);
    };
    match reason.as_str() {
        "" => Ok(None),
        "stop" => Ok(Some(Finish::Stop)),
        "tool_calls" | "function_call" => Ok(Some(Finish::ToolCalls)),
        "length" => Ok(Some(Finish::Length)),
        other => Err(ModelError::Server(format!(
            "the turn ended with finish_reason {other:?}"
        ))),
    }
}

pub(super) fn parse_event(data: &[u8]) -> Result<Delta, ModelError> {
    if data == b"[DONE]" {
        return Ok(Delta::Done);
    }
    let value = parse_json(data, "event")?;
    let usage = usage_of(&value);
    let Some(choice) = first_choice(&value, data, "event")? else {
        // The last event, with usage only and no choices.
        return Ok(Delta::Content(None, None, usage, None));
    };
    let delta = choice.get("delta");
    let content = text(delta.and_then(|d| d.get("content")), "delta.content")?;
    let reasoning = reasoning_of(delta);
    Ok(Delta::Content(
        content,
        finish_of(choice)?,
        usage,
        reasoning,
    ))
}

/// What a whole `chat.completion` said.
pub(super) struct Completion {
    /// `choices[0].message.content`.
    pub content: Option<String>,
    /// Its finish.
    pub finish: Option<Finish>,
    /// Its `usage`.
    pub usage: Option<Value>,
    /// `choices[0].message.reasoning_content` (or `reasoning`).
    pub reasoning: Option<String>,
}

/// A whole `chat.completion`.
pub(super) fn parse_completion(data: &[u8]) -> Result<Completion, ModelError> {
    let value = parse_json(data, "answer")?;
    let choice = first_choice(&value, data, "answer")?
        .ok_or_else(|| ModelError::Malformed(format!("answer with no choice: {}", shown(data))))?;
    let message = choice.get("message");
    let content = text(message.and_then(|m| m.get("content")), "message.content")?;
    Ok(Completion {
        content,
        finish: finish_of(choice)?,
        usage: usage_of(&value),
        reasoning: reasoning_of(message),
    })
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
    fn reasoning_is_read_from_either_field_of_a_delta_or_a_message() {
        let both = br#"{"choices":[{"index":0,"delta":{"reasoning_content":"a","reasoning":"b"},"finish_reason":null}]}"#;
        assert!(
            matches!(parse_event(both), Ok(Delta::Content(None, None, None, Some(r))) if r == "a")
        );
        let other = br#"{"choices":[{"index":0,"delta":{"reasoning":"b"},"finish_reason":null}]}"#;
        assert!(
            matches!(parse_event(other), Ok(Delta::Content(None, None, None, Some(r))) if r == "b")
        );
        let odd = br#"{"choices":[{"index":0,"delta":{"reasoning":7,"content":"x"},"finish_reason":null}]}"#;
        assert!(matches!(
            parse_event(odd),
            Ok(Delta::Content(Some(_), None, None, None))
        ));
        let whole = br#"{"choices":[{"index":0,"message":{"content":"x","reasoning_content":"why"},"finish_reason":"stop"}]}"#;
        assert_eq!(
            parse_completion(whole).unwrap().reasoning.as_deref(),
            Some("why")
        );
    }

    #[test]
    fn an_empty_finish_reason_is_no_finish() {
        let chunk = br#"{"choices":[{"index":0,"delta":{"content":"call"},"finish_reason":""}]}"#;
        assert!(matches!(
            parse_event(chunk),
            Ok(Delta::Content(Some(c), None, None, None)) if c == "call"
        ));
        let last = br#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#;
        assert!(matches!(
            parse_event(last),
            Ok(Delta::Content(None, Some(Finish::Stop), None, None))
        ));
        let odd = br#"{"choices":[{"index":0,"delta":{},"finish_reason":"content_filter"}]}"#;
        assert!(matches!(parse_event(odd), Err(ModelError::Server(_))));
    }

    #[test]
    fn the_usage_of_an_event_or_a_whole_answer_is_read_when_not_null() {
        let usage = br#"{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2}}"#;
        let Ok(Delta::Content(None, None, Some(u), None)) = parse_event(usage) else {
            panic!("a usage chunk");
        };
        assert_eq!(u["prompt_tokens"], 10);
        let null = br#"{"choices":[{"index":0,"delta":{"content":"x"}}],"usage":null}"#;
        assert!(matches!(
            parse_event(null),
            Ok(Delta::Content(Some(_), None, None, None))
        ));
        let whole = br#"{"choices":[{"message":{"content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":7}}"#;
        let usage = parse_completion(whole).unwrap().usage;
        assert_eq!(usage.unwrap()["prompt_tokens"], 7);
    }
}
