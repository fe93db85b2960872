//! The truncation experiment in the providers' wire formats: the corpus's calls streamed as
//! OpenAI Chat tool-call deltas and as Anthropic `input_json_delta`s, the model's output cut at
//! every byte, and what each runtime then executes.
//!
//! The model's output is, call after call, the call's header (its id and name: one unit, sent
//! as the call's first chunk or its `content_block_start`) and then the bytes of its JSON
//! arguments (an object of strings: each argument's bytes as the CTL framing holds them), sent
//! in fragments of [`FRAGMENT`] bytes. A cut at unit `k` keeps the first `k` units (a cut inside
//! a character keeps the bytes before it: JSON strings are whole characters); the server
//! then ends the stream as a token limit makes it: Chat sends `finish_reason` `length` and
//! `[DONE]`; Anthropic stops the open block, sends `stop_reason` `max_tokens` and
//! `message_stop`. With nothing cut the finish is `tool_calls` / `tool_use`. The intended calls
//! at a cut are those whose last argument byte came before it.
//!
//! The runtimes:
//!
//! - `frontier`: [`crate::streams::StreamReader`] on that body; it executes confirmed calls;
//! - `frontier_relabelled`: the same reader on the body a server sends when it relabels the
//!   limit as a normal finish (vLLM's `length` → `tool_calls`, `max_tokens` → `tool_use`):
//!   a cut call is then finished with arguments that do not parse, reported malformed;
//! - `accumulate_parse`: the loop of the SDKs and most agents: accumulate each call's
//!   fragments, parse them at the end, execute every call whose arguments parse, whatever the
//!   finish reason;
//! - `healing`: the same, but arguments that do not parse are first healed (open strings,
//!   arrays and objects closed, [`super::heal`]), as servers streaming partial JSON do.

use serde_json::{json, Map, Value};

use super::framing::{Framed, Intent};
use super::heal::heal;
use super::{judge, Tally};
use crate::streams::{Api, Arguments, Event, Format, StreamReader};

/// Bytes of arguments per delta.
pub const FRAGMENT: usize = 8;

/// The runtimes, in the order they are reported.
pub const RUNTIMES: [&str; 4] = [
    "frontier",
    "frontier_relabelled",
    "accumulate_parse",
    "healing",
];

/// The wire formats, in the order they are reported: `openai_chat`, `anthropic`.
pub const FORMATS: [(&str, Api); 2] = [
    ("openai_chat", Api::OpenAiChat),
    ("anthropic", Api::AnthropicMessages),
];

/// One format's results: a tally per runtime, in [`RUNTIMES`] order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatResult {
    /// The format's name.
    pub format: &'static str,
    /// Per runtime.
    pub tallies: Vec<(&'static str, Tally)>,
}

/// A call as the model writes it: id, name and the JSON text of its arguments.
struct Written {
    id: String,
    name: String,
    arguments: String,
}

fn written(calls: &[Intent]) -> Vec<Written> {
    calls
        .iter()
        .enumerate()
        .map(|(i, call)| {
            let object: Map<String, Value> = call
                .args
                .iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        Value::String(String::from_utf8_lossy(v).into_owned()),
                    )
                })
                .collect();
            Written {
                id: format!("call_{i}"),
                name: call.name.clone(),
                arguments: Value::Object(object).to_string(),
            }
        })
        .collect()
}

/// The body a server sends for the output cut after `units` units.
fn body(api: Api, calls: &[Written], units: usize, relabel: bool) -> Vec<u8> {
    let total: usize = calls.iter().map(|c| 1 + c.arguments.len()).sum();
    let cut = units < total;
    let mut out = String::new();
    let mut event = |name: &str, data: Value| {
        if !name.is_empty() {
            out.push_str("event: ");
            out.push_str(name);
            out.push('\n');
        }
        out.push_str(&format!("data: {data}\n\n"));
    };
    let chat = api == Api::OpenAiChat;
    if !chat {
        event(
            "message_start",
            json!({"type":"message_start","message":{"id":"msg_1","type":"message",
            "role":"assistant","content":[],"stop_reason":null}}),
        );
    }
    let mut left = units;
    for (index, call) in calls.iter().enumerate() {
        if left == 0 {
            break;
        }
        left -= 1;
        if chat {
            event(
                "",
                json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":index,"id":call.id,
                "type":"function","function":{"name":call.name,"arguments":""}}]},"finish_reason":null}]}),
            );
        } else {
            event(
                "content_block_start",
                json!({"type":"content_block_start","index":index,
                "content_block":{"type":"tool_use","id":call.id,"name":call.name,"input":{}}}),
            );
        }
        let mut sent = call.arguments.len().min(left);
        left -= sent;
        // A server sends whole characters: a cut inside one sends the bytes before it.
        while !call.arguments.is_char_boundary(sent) {
            sent -= 1;
        }
        let mut text = &call.arguments[..sent];
        while !text.is_empty() {
            let mut n = FRAGMENT.min(text.len());
            while !text.is_char_boundary(n) {
                n += 1;
            }
            let (fragment, rest) = text.split_at(n);
            text = rest;
            if chat {
                event(
                    "",
                    json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":index,
                    "function":{"arguments":fragment}}]},"finish_reason":null}]}),
                );
            } else {
                event(
                    "content_block_delta",
                    json!({"type":"content_block_delta","index":index,
                    "delta":{"type":"input_json_delta","partial_json":fragment}}),
                );
            }
        }
        if !chat {
            event(
                "content_block_stop",
                json!({"type":"content_block_stop","index":index}),
            );
        }
    }
    let normal = !cut || relabel;
    if chat {
        let finish = if normal { "tool_calls" } else { "length" };
        event(
            "",
            json!({"choices":[{"index":0,"delta":{},"finish_reason":finish}]}),
        );
        out.push_str("data: [DONE]\n\n");
    } else {
        let stop = if normal { "tool_use" } else { "max_tokens" };
        event(
            "message_delta",
            json!({"type":"message_delta","delta":{"stop_reason":stop}}),
        );
        event("message_stop", json!({"type":"message_stop"}));
    }
    out.into_bytes()
}

/// A call's arguments as the experiment compares them.
fn intent(name: &str, object: &Map<String, Value>) -> Intent {
    Intent {
        name: name.to_owned(),
        args: object
            .iter()
            .map(|(k, v)| {
                let bytes = match v {
                    Value::String(s) => s.clone().into_bytes(),
                    other => other.to_string().into_bytes(),
                };
                (k.clone(), bytes)
            })
            .collect(),
    }
}

fn parse_object(text: &[u8]) -> Option<Map<String, Value>> {
    match serde_json::from_slice(text) {
        Ok(Value::Object(object)) => Some(object),
        _ => None,
    }
}

/// What each runtime executes from `body`: (frontier's confirmed calls, the accumulated
/// calls it did not confirm, with their text).
fn read(api: Api, body: &[u8]) -> (Vec<Intent>, Vec<(String, String)>) {
    let mut reader = StreamReader::new(api, Format::Sse);
    let mut confirmed = Vec::new();
    let mut on_event = |e: Event<'_>| {
        if let Event::Call(call) = e {
            if let Arguments::Json { object, .. } = &call.arguments {
                confirmed.push(intent(&call.name, object));
            }
        }
    };
    let _ = reader.push(body, &mut on_event);
    let summary = reader.finish(&mut on_event);
    let unconfirmed = summary
        .incomplete
        .iter()
        .chain(&summary.malformed)
        .map(|c| (c.name.clone(), c.text.clone()))
        .collect();
    (confirmed, unconfirmed)
}

/// Runs the experiment over the corpus, cut at every unit of each stream's output.
pub fn run(corpus: &[Framed]) -> Vec<FormatResult> {
    FORMATS
        .iter()
        .map(|&(format, api)| {
            let mut tallies: Vec<(&'static str, Tally)> =
                RUNTIMES.iter().map(|&r| (r, Tally::default())).collect();
            for framed in corpus {
                let calls = written(&framed.calls);
                let mut ends = Vec::new();
                let mut at = 0;
                for call in &calls {
                    at += 1 + call.arguments.len();
                    ends.push(at);
                }
                for units in 0..=at {
                    let intended =
                        &framed.calls[..ends.iter().take_while(|&&e| e <= units).count()];
                    let (honest, unconfirmed) = read(api, &body(api, &calls, units, false));
                    let (relabelled, _) = read(api, &body(api, &calls, units, true));
                    let parsed = |heal_it: bool| {
                        let mut executed = honest.clone();
                        for (name, text) in &unconfirmed {
                            let object = parse_object(text.as_bytes()).or_else(|| {
                                heal_it
                                    .then(|| parse_object(&heal(text.as_bytes())))
                                    .flatten()
                            });
                            if let Some(object) = object {
                                executed.push(intent(name, &object));
                            }
                        }
                        executed
                    };
                    let executed = [honest.clone(), relabelled, parsed(false), parsed(true)];
                    for ((_, tally), executed) in tallies.iter_mut().zip(&executed) {
                        let (ok, wrong, lost) = judge(executed, intended);
                        tally.cut_points += 1;
                        tally.executed_ok += ok;
                        tally.executed_wrong += wrong;
                        tally.lost += lost;
                    }
                }
            }
            FormatResult { format, tallies }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus() -> Vec<Framed> {
        let source = json!([
            {"id":"a","name":"read_file","arguments":{"path":"src/lib.rs"}},
            {"id":"b","name":"shell","arguments":{"command":"rm -rf build/tmp"}}
        ]);
        vec![super::super::framing::frame(&source).unwrap()]
    }

    #[test]
    fn frontier_never_executes_a_wrong_call_and_healing_does() {
        for result in run(&corpus()) {
            let tally = |name: &str| result.tallies.iter().find(|(r, _)| *r == name).unwrap().1;
            let cuts = tally("frontier").cut_points;
            // A header unit and 21 argument bytes, one and 30, and the cut before anything.
            assert_eq!(cuts, 1 + (1 + 21) + (1 + 30), "{}", result.format);
            for runtime in RUNTIMES {
                assert_eq!(tally(runtime).cut_points, cuts);
            }
            assert_eq!(tally("frontier").executed_wrong, 0, "{}", result.format);
            // Relabelled, a call cut right after its header is finished with no arguments,
            // which the wire cannot tell from a call that has none (`""` reads as `{}`): one
            // wrong call per call of the stream, and only those.
            assert_eq!(
                tally("frontier_relabelled").executed_wrong,
                2,
                "{}",
                result.format
            );
            assert_eq!(
                tally("accumulate_parse").executed_wrong,
                0,
                "{}",
                result.format
            );
            assert!(tally("healing").executed_wrong > 0, "{}", result.format);
            // Uncut, every runtime runs both calls: the last cut point alone.
            assert!(tally("frontier").executed_ok >= 2);
        }
    }

    #[test]
    fn under_an_honest_length_chat_loses_the_last_whole_call_and_anthropic_does_not() {
        let calls = written(&corpus()[0].calls);
        let units = 1 + calls[0].arguments.len();
        let (chat, unconfirmed) = read(
            Api::OpenAiChat,
            &body(Api::OpenAiChat, &calls, units, false),
        );
        // Chat: under `length` the last call is incomplete, though its arguments are whole.
        assert!(chat.is_empty());
        assert_eq!(unconfirmed.len(), 1);
        let (relabelled, _) = read(Api::OpenAiChat, &body(Api::OpenAiChat, &calls, units, true));
        assert_eq!(relabelled.len(), 1);
        // Anthropic stops the block: whole arguments are confirmed.
        let (anthropic, _) = read(
            Api::AnthropicMessages,
            &body(Api::AnthropicMessages, &calls, units, false),
        );
        assert_eq!(anthropic.len(), 1);
        // One byte short: malformed under both, never executed.
        let (cut, unconfirmed) = read(
            Api::AnthropicMessages,
            &body(Api::AnthropicMessages, &calls, units - 1, true),
        );
        assert!(cut.is_empty());
        assert_eq!(
            unconfirmed[0].1,
            &calls[0].arguments[..calls[0].arguments.len() - 1]
        );
    }
}
