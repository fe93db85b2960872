//! Scripted turns of the three provider APIs for the native-tools tests: the event stream a
//! server of each API sends for a turn of text and calls (every string in random pieces),
//! the client that talks to the loopback server, and the calls and results of a request body
//! read back in each API's shape.

use std::time::Duration;

use frontier::agent::provider::{Provider, ProviderConfig, ToolMode};
use frontier::agent::retry::RetryPolicy;
use frontier::streams::Api;
use serde_json::{json, Value};

use super::server::{Reply, Rng};

/// One tool call a scripted turn makes: its id, tool and JSON arguments; `cut` keeps only
/// that many bytes of the arguments (the stream stops there).
#[derive(Clone)]
pub struct C {
    pub id: &'static str,
    pub name: &'static str,
    pub args: Value,
    pub cut: Option<usize>,
}

pub fn c(id: &'static str, name: &'static str, args: Value) -> C {
    C {
        id,
        name,
        args,
        cut: None,
    }
}

/// A `write_file` call of `content` to `path`.
pub fn write_file(id: &'static str, path: &str, content: &str) -> C {
    c(id, "write_file", json!({"path": path, "content": content}))
}

impl C {
    pub fn cut_at(mut self, n: usize) -> C {
        self.cut = Some(n);
        self
    }

    /// What streams of the call: the arguments' JSON text, or on Responses the raw patch
    /// of the freeform `apply_patch`.
    pub fn text(&self, api: Api) -> String {
        let whole = if self.custom(api) {
            self.args["patch"].as_str().unwrap().to_owned()
        } else {
            self.args.to_string()
        };
        match self.cut {
            Some(n) => whole[..n].to_owned(),
            None => whole,
        }
    }

    pub fn custom(&self, api: Api) -> bool {
        api == Api::OpenAiResponses && self.name == "apply_patch"
    }
}

/// How a scripted turn ends.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The model finished its calls (`tool_calls`, `completed`, `tool_use`), or its text
    /// (`stop`, `end_turn`) when it made none.
    Done,
    /// The token limit (`length`, `incomplete:max_output_tokens`, `max_tokens`).
    Limit,
    /// The server claims the calls finished though the last one's arguments are cut.
    Relabelled,
    /// An error event after the calls.
    ErrorEvent,
}

pub fn frame(api: Api, name: &str, data: Value) -> String {
    match api {
        Api::OpenAiChat => format!("data: {data}\n\n"),
        _ => format!("event: {name}\ndata: {data}\n\n"),
    }
}

/// The body a server of `api` streams for a turn of `text` then `calls`, ending as `end`;
/// every string is streamed in random pieces.
pub fn body(api: Api, text: &str, calls: &[C], end: End, rng: &mut Rng) -> Vec<u8> {
    let mut out = String::new();
    match api {
        Api::OpenAiChat => {
            let chunk = |delta: Value, finish: Value| {
                frame(
                    api,
                    "",
                    json!({"id": "x", "object": "chat.completion.chunk",
                           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
                )
            };
            out.push_str(&chunk(
                json!({"role": "assistant", "content": ""}),
                Value::Null,
            ));
            for piece in rng.pieces(text, 9) {
                out.push_str(&chunk(json!({"content": piece}), Value::Null));
            }
            for (i, call) in calls.iter().enumerate() {
                out.push_str(&chunk(
                    json!({"tool_calls": [{"index": i, "id": call.id, "type": "function",
                           "function": {"name": call.name, "arguments": ""}}]}),
                    Value::Null,
                ));
                for piece in rng.pieces(&call.text(api), 7) {
                    out.push_str(&chunk(
                        json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                        Value::Null,
                    ));
                }
            }
            match end {
                End::ErrorEvent => {
                    out.push_str(&frame(api, "", json!({"error": {"message": "overloaded"}})))
                }
                _ => {
                    let finish = match end {
                        End::Limit => "length",
                        _ if calls.is_empty() => "stop",
                        _ => "tool_calls",
                    };
                    out.push_str(&chunk(json!({}), json!(finish)));
                    out.push_str("data: [DONE]\n\n");
                }
            }
        }
        Api::OpenAiResponses => {
            out.push_str(&frame(api, "response.created",
                json!({"type": "response.created", "response": {"id": "r", "status": "in_progress", "output": []}})));
            let mut index = 0;
            if !text.is_empty() {
                out.push_str(&frame(api, "response.output_item.added",
                    json!({"type": "response.output_item.added", "output_index": 0,
                           "item": {"type": "message", "id": "msg", "role": "assistant", "content": []}})));
                for piece in rng.pieces(text, 9) {
                    out.push_str(&frame(api, "response.output_text.delta",
                        json!({"type": "response.output_text.delta", "item_id": "msg", "output_index": 0,
                               "content_index": 0, "delta": piece})));
                }
                out.push_str(&frame(api, "response.output_item.done",
                    json!({"type": "response.output_item.done", "output_index": 0,
                           "item": {"type": "message", "id": "msg", "status": "completed", "role": "assistant",
                                    "content": [{"type": "output_text", "text": text}]}})));
                index = 1;
            }
            for (i, call) in calls.iter().enumerate() {
                let at = index + i;
                let item_id = format!("it_{}", call.id);
                let custom = call.custom(api);
                let (kind, field, delta) = if custom {
                    (
                        "custom_tool_call",
                        "input",
                        "response.custom_tool_call_input.delta",
                    )
                } else {
                    (
                        "function_call",
                        "arguments",
                        "response.function_call_arguments.delta",
                    )
                };
                out.push_str(&frame(api, "response.output_item.added",
                    json!({"type": "response.output_item.added", "output_index": at,
                           "item": {"type": kind, "id": item_id, "call_id": call.id, "name": call.name, field: ""}})));
                let streamed = call.text(api);
                for piece in rng.pieces(&streamed, 7) {
                    out.push_str(&frame(api, delta,
                        json!({"type": delta, "item_id": item_id, "output_index": at, "delta": piece})));
                }
                let status = if call.cut.is_some() && end == End::Limit {
                    "incomplete"
                } else {
                    "completed"
                };
                if call.cut.is_some() && end == End::ErrorEvent {
                    continue;
                }
                out.push_str(&frame(api, "response.output_item.done",
                    json!({"type": "response.output_item.done", "output_index": at,
                           "item": {"type": kind, "id": item_id, "call_id": call.id, "name": call.name,
                                    field: streamed, "status": status}})));
            }
            match end {
                End::Limit => out.push_str(&frame(api, "response.incomplete",
                    json!({"type": "response.incomplete", "response": {"id": "r", "status": "incomplete", "output": [],
                           "incomplete_details": {"reason": "max_output_tokens"}}}))),
                End::ErrorEvent => out.push_str(&frame(api, "error",
                    json!({"type": "error", "code": "server_error", "message": "The server had an error"}))),
                _ => out.push_str(&frame(api, "response.completed",
                    json!({"type": "response.completed", "response": {"id": "r", "status": "completed", "output": []}}))),
            }
        }
        Api::AnthropicMessages => {
            out.push_str(&frame(api, "message_start",
                json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant",
                       "content": [], "stop_reason": null}})));
            let mut index = 0;
            if !text.is_empty() {
                out.push_str(&frame(api, "content_block_start",
                    json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})));
                for piece in rng.pieces(text, 9) {
                    out.push_str(&frame(api, "content_block_delta",
                        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}})));
                }
                out.push_str(&frame(
                    api,
                    "content_block_stop",
                    json!({"type": "content_block_stop", "index": 0}),
                ));
                index = 1;
            }
            for (i, call) in calls.iter().enumerate() {
                let at = index + i;
                out.push_str(&frame(api, "content_block_start",
                    json!({"type": "content_block_start", "index": at,
                           "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}})));
                out.push_str(&frame(api, "ping", json!({"type": "ping"})));
                for piece in rng.pieces(&call.text(api), 7) {
                    out.push_str(&frame(
                        api,
                        "content_block_delta",
                        json!({"type": "content_block_delta", "index": at,
                               "delta": {"type": "input_json_delta", "partial_json": piece}}),
                    ));
                }
                if call.cut.is_some() && end == End::ErrorEvent {
                    continue;
                }
                out.push_str(&frame(
                    api,
                    "content_block_stop",
                    json!({"type": "content_block_stop", "index": at}),
                ));
            }
            if end == End::ErrorEvent {
                out.push_str(&frame(api, "error",
                    json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})));
            } else {
                let stop = match end {
                    End::Limit => "max_tokens",
                    _ if calls.is_empty() => "end_turn",
                    _ => "tool_use",
                };
                out.push_str(&frame(
                    api,
                    "message_delta",
                    json!({"type": "message_delta", "delta": {"stop_reason": stop}}),
                ));
                out.push_str(&frame(api, "message_stop", json!({"type": "message_stop"})));
            }
        }
    }
    out.into_bytes()
}

/// `body` (a scripted body of `api`, which reports no usage) reporting a prompt of `prompt`
/// tokens, `cached` of them from the provider's cache, in the API's own shape: Chat's last
/// chunk, Responses' `response.completed`, Anthropic's `message_start` and `message_delta`.
pub fn with_usage(api: Api, body: Vec<u8>, prompt: u64, cached: Option<u64>) -> Vec<u8> {
    let text = String::from_utf8(body).unwrap();
    let (at, insert) = match api {
        Api::OpenAiChat => {
            let mut usage = json!({"prompt_tokens": prompt, "completion_tokens": 9,
                                   "total_tokens": prompt + 9});
            if let Some(cached) = cached {
                usage["prompt_tokens_details"] = json!({"cached_tokens": cached});
            }
            let chunk = json!({"id": "x", "object": "chat.completion.chunk", "choices": [],
                               "usage": usage});
            ("data: [DONE]", format!("data: {chunk}\n\n"))
        }
        Api::OpenAiResponses => {
            let mut usage = json!({"input_tokens": prompt, "output_tokens": 9});
            if let Some(cached) = cached {
                usage["input_tokens_details"] = json!({"cached_tokens": cached});
            }
            (
                r#""status":"completed","output":[]"#,
                format!(r#","usage":{usage}"#),
            )
        }
        Api::AnthropicMessages => {
            let mut usage = json!({"input_tokens": prompt - cached.unwrap_or(0),
                                   "output_tokens": 1});
            if let Some(cached) = cached {
                usage["cache_read_input_tokens"] = json!(cached);
            }
            (r#""stop_reason":null"#, format!(r#","usage":{usage}"#))
        }
    };
    let mut at = text.rfind(at).expect("the event that carries the usage");
    if api != Api::OpenAiChat {
        at += match api {
            Api::OpenAiResponses => r#""status":"completed","output":[]"#.len(),
            _ => r#""stop_reason":null"#.len(),
        };
    }
    let mut out = text;
    out.insert_str(at, &insert);
    if api == Api::AnthropicMessages {
        let delta = r#"{"type":"message_delta","delta":{"stop_reason":"#;
        let at = out.rfind(delta).expect("a message_delta");
        let end = at + out[at..].find("}}").unwrap() + 1;
        out.insert_str(end, r#","usage":{"output_tokens":9}"#);
    }
    out.into_bytes()
}

pub fn stream(api: Api, text: &str, calls: &[C], end: End, rng: &mut Rng) -> Reply {
    Reply::stream(body(api, text, calls, end, rng))
}

/// The model's last turn: a short answer without calls.
pub fn done(api: Api, rng: &mut Rng) -> Reply {
    stream(api, "Done.", &[], End::Done, rng)
}

pub fn provider(api: Api, base: &str) -> Provider {
    let base = match api {
        Api::AnthropicMessages => base.to_owned(),
        _ => format!("{base}/v1"),
    };
    let mut config = ProviderConfig::new(api, base, "test-model");
    config.api_key = Some("test-key".into());
    config.read_timeout = Duration::from_secs(10);
    config.retry = RetryPolicy {
        max_retries: 3,
        base: Duration::from_millis(20),
        max_wait: Duration::from_secs(5),
    };
    Provider::new(config, ToolMode::Native).with_notices(|_| {})
}

/// The conversation items of a request body: Chat `messages`, Responses `input`,
/// Anthropic `messages`.
pub fn items(api: Api, body: &Value) -> Vec<Value> {
    let key = if api == Api::OpenAiResponses {
        "input"
    } else {
        "messages"
    };
    body[key].as_array().unwrap().clone()
}

/// The `(call id, output)` of every tool result in a request, in the API's shape.
pub fn results(api: Api, body: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for item in items(api, body) {
        match api {
            Api::OpenAiChat if item["role"] == "tool" => out.push((
                item["tool_call_id"].as_str().unwrap().into(),
                item["content"].as_str().unwrap().into(),
            )),
            Api::OpenAiResponses
                if item["type"] == "function_call_output"
                    || item["type"] == "custom_tool_call_output" =>
            {
                out.push((
                    item["call_id"].as_str().unwrap().into(),
                    item["output"].as_str().unwrap().into(),
                ))
            }
            Api::AnthropicMessages if item["role"] == "user" => {
                for block in item["content"].as_array().unwrap() {
                    if block["type"] == "tool_result" {
                        out.push((
                            block["tool_use_id"].as_str().unwrap().into(),
                            block["content"].as_str().unwrap().into(),
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The ids of every call the assistant is shown to have made in a request.
pub fn made(api: Api, body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for item in items(api, body) {
        match api {
            Api::OpenAiChat => {
                for call in item["tool_calls"].as_array().into_iter().flatten() {
                    out.push(call["id"].as_str().unwrap().into());
                }
            }
            Api::OpenAiResponses
                if item["type"] == "function_call" || item["type"] == "custom_tool_call" =>
            {
                out.push(item["call_id"].as_str().unwrap().into())
            }
            Api::AnthropicMessages if item["role"] == "assistant" => {
                for block in item["content"].as_array().unwrap() {
                    if block["type"] == "tool_use" {
                        out.push(block["id"].as_str().unwrap().into());
                    }
                }
            }
            _ => {}
        }
    }
    out
}
