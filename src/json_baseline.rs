//! The JSON-buffer baseline: what runtimes do today, kept to be measured against.
//!
//! A JSON-framed tool call cannot be confirmed piece by piece: until the closing brace arrives,
//! a later byte can change the meaning of everything before it (an unclosed `"` turns the rest
//! of the stream into a string). So the baseline accumulates every byte and re-parses the whole
//! buffer after each push, yielding calls only once the buffer parses. Its cost per push grows
//! with the buffer, and a stream cut off before the end yields nothing at all.
//!
//! Accepted shapes, alone or in a JSON array:
//!
//! - `{"name": "read_file", "arguments": {"path": "a.txt"}}` (`arguments` may also be a JSON
//!   string holding the object, as the OpenAI API encodes it);
//! - the OpenAI message shape `{"tool_calls": [{"id": "c1", "type": "function", "function":
//!   {"name": "read_file", "arguments": "{\"path\":\"a.txt\"}"}}]}`.
//!
//! Argument values that are JSON strings become their text; any other value becomes its JSON
//! text. Calls without an `id` are numbered `call_0`, `call_1`, … in order.

use bytes::Bytes;
use serde_json::{Map, Value};

use crate::ctl::ToolCall;

/// Why parsed JSON is not a tool call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeError(pub String);

impl std::fmt::Display for ShapeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not a tool call: {}", self.0)
    }
}

impl std::error::Error for ShapeError {}

/// What the buffer holds after a push.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BufferState {
    /// The bytes do not parse yet: nothing can be executed.
    Waiting,
    /// The bytes parse: these are the calls.
    Parsed(Vec<ToolCall>),
    /// The bytes parse but are not tool calls.
    Invalid(ShapeError),
}

/// Accumulates a JSON-framed turn and re-parses it after every push.
#[derive(Clone, Debug, Default)]
pub struct JsonBuffer {
    buffer: Vec<u8>,
}

impl JsonBuffer {
    /// Appends `chunk` and re-parses the whole buffer.
    pub fn push(&mut self, chunk: &[u8]) -> BufferState {
        self.buffer.extend_from_slice(chunk);
        self.state()
    }

    /// Parses the buffer as it is.
    pub fn state(&self) -> BufferState {
        match serde_json::from_slice::<Value>(&self.buffer) {
            Err(_) => BufferState::Waiting,
            Ok(value) => match calls_from_value(&value) {
                Ok(calls) => BufferState::Parsed(calls),
                Err(e) => BufferState::Invalid(e),
            },
        }
    }

    /// Bytes held.
    pub fn len(&self) -> usize {
        self.buffer.len()
    }

    /// Whether nothing has been pushed.
    pub fn is_empty(&self) -> bool {
        self.buffer.is_empty()
    }
}

/// The calls a parsed JSON value describes.
pub fn calls_from_value(value: &Value) -> Result<Vec<ToolCall>, ShapeError> {
    let mut calls = Vec::new();
    collect(value, &mut calls)?;
    Ok(calls)
}

fn collect(value: &Value, calls: &mut Vec<ToolCall>) -> Result<(), ShapeError> {
    match value {
        Value::Array(items) => items.iter().try_for_each(|item| collect(item, calls)),
        Value::Object(object) => {
            if let Some(list) = object.get("tool_calls") {
                return collect(list, calls);
            }
            let (id, body) = match object.get("function") {
                Some(Value::Object(function)) => (object.get("id"), function),
                Some(_) => return Err(ShapeError("`function` is not an object".into())),
                None => (object.get("id"), object),
            };
            let name = match body.get("name") {
                Some(Value::String(name)) => name.clone(),
                _ => return Err(ShapeError("missing string `name`".into())),
            };
            let id = match id {
                Some(Value::String(id)) => id.clone(),
                None => format!("call_{}", calls.len()),
                Some(_) => return Err(ShapeError("`id` is not a string".into())),
            };
            let args = arguments(body.get("arguments"))?;
            calls.push(ToolCall { id, name, args });
            Ok(())
        }
        _ => Err(ShapeError("expected an object or an array".into())),
    }
}

fn arguments(value: Option<&Value>) -> Result<Vec<(String, Bytes)>, ShapeError> {
    let object: Map<String, Value> = match value {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(object)) => object.clone(),
        Some(Value::String(text)) => match serde_json::from_str(text) {
            Ok(Value::Object(object)) => object,
            _ => return Err(ShapeError("`arguments` string is not a JSON object".into())),
        },
        Some(_) => return Err(ShapeError("`arguments` is not an object".into())),
    };
    Ok(object
        .into_iter()
        .map(|(key, value)| {
            let bytes = match value {
                Value::String(text) => Bytes::from(text),
                other => Bytes::from(other.to_string()),
            };
            (key, bytes)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yields_nothing_until_the_buffer_parses() {
        let text = br#"{"name":"read_file","arguments":{"path":"a.txt","n":3}}"#;
        let mut buffer = JsonBuffer::default();
        for (i, &b) in text.iter().enumerate() {
            let state = buffer.push(&[b]);
            if i + 1 < text.len() {
                assert_eq!(state, BufferState::Waiting, "after {} bytes", i + 1);
            } else {
                let BufferState::Parsed(calls) = state else {
                    panic!("{state:?}")
                };
                assert_eq!(calls.len(), 1);
                assert_eq!(calls[0].name, "read_file");
                assert_eq!(calls[0].id, "call_0");
                assert_eq!(calls[0].arg("path").unwrap().as_ref(), b"a.txt");
                assert_eq!(calls[0].arg("n").unwrap().as_ref(), b"3");
            }
        }
    }

    #[test]
    fn reads_the_openai_tool_calls_shape() {
        let text = br#"{"tool_calls":[{"id":"c7","type":"function","function":{"name":"shell","arguments":"{\"command\":\"ls -l\"}"}}]}"#;
        let BufferState::Parsed(calls) = JsonBuffer::default().push(text) else {
            panic!()
        };
        assert_eq!(calls[0].id, "c7");
        assert_eq!(calls[0].name, "shell");
        assert_eq!(calls[0].arg("command").unwrap().as_ref(), b"ls -l");
    }

    #[test]
    fn refuses_json_that_is_not_a_call() {
        let state = JsonBuffer::default().push(br#"{"arguments":{}}"#);
        assert!(matches!(state, BufferState::Invalid(_)), "{state:?}");
        assert!(matches!(
            JsonBuffer::default().push(b"42"),
            BufferState::Invalid(_)
        ));
    }
}
