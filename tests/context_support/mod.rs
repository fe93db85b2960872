//! Helpers for the context engine's tests: a session built message by message, patches
//! sent as the model sends them, and short ways to look at the result.
#![allow(dead_code)]

use frontier::context::block::{Block, FunctionCall, ToolCall, Visibility};
use frontier::context::{Actor, Config, Engine, Message, PatchResult};
use serde_json::Value;

/// An engine in memory with a fixed clock.
pub fn engine_with(config: Config) -> Engine {
    let mut e = Engine::in_memory(config);
    e.set_clock(|| "2026-01-01T00:00:00.000Z".to_owned());
    e
}

/// An engine in memory with the default configuration.
pub fn engine() -> Engine {
    engine_with(Config::default())
}

/// A tool call.
pub fn call(id: &str, name: &str) -> ToolCall {
    ToolCall {
        id: id.to_owned(),
        kind: "function".to_owned(),
        function: FunctionCall {
            name: name.to_owned(),
            arguments: "{}".to_owned(),
        },
    }
}

pub fn system(e: &mut Engine, text: &str) -> String {
    e.ingest(Message::System { text: text.into() })
        .unwrap()
        .remove(0)
}

pub fn user(e: &mut Engine, text: &str) -> String {
    e.ingest(Message::User {
        text: text.into(),
        origin: None,
    })
    .unwrap()
    .remove(0)
}

pub fn reply(e: &mut Engine, text: &str) -> String {
    e.ingest(Message::Assistant {
        text: text.into(),
        tool_calls: vec![],
        reasoning: None,
    })
    .unwrap()
    .remove(0)
}

/// An assistant message calling `calls`, then one result per call (texts in order); the
/// head's id and the results' ids.
pub fn chain(e: &mut Engine, calls: &[(&str, &str)]) -> (String, Vec<String>) {
    let head = e
        .ingest(Message::Assistant {
            text: String::new(),
            tool_calls: calls.iter().map(|(id, _)| call(id, "read_file")).collect(),
            reasoning: None,
        })
        .unwrap()
        .remove(0);
    let results = calls
        .iter()
        .map(|(id, text)| {
            e.ingest(Message::ToolResult {
                tool_call_id: (*id).into(),
                name: "read_file".into(),
                text: (*text).into(),
            })
            .unwrap()
            .remove(0)
        })
        .collect();
    (head, results)
}

/// Sends `context_update` arguments as JSON.
pub fn patch(e: &mut Engine, args: Value) -> PatchResult {
    e.apply_args(&args.to_string(), Actor::Agent).unwrap()
}

/// The rules of a result's rejections.
pub fn rules(r: &PatchResult) -> Vec<&'static str> {
    r.rejections.iter().map(|x| x.rule.name()).collect()
}

pub fn block<'e>(e: &'e Engine, id: &str) -> &'e Block {
    e.store().get(id).unwrap()
}

pub fn visibility(e: &Engine, id: &str) -> Visibility {
    block(e, id).visibility
}

/// The store as JSON (every field), to compare states.
pub fn snapshot(e: &Engine) -> String {
    let blocks: Vec<&Block> = e.store().iter().collect();
    serde_json::to_string(&blocks).unwrap()
}

/// The kinds of the visible blocks, in order.
pub fn visible_kinds(e: &Engine) -> Vec<&'static str> {
    e.store()
        .iter()
        .filter(|b| b.is_visible())
        .map(|b| b.kind.as_str())
        .collect()
}

/// Whether every tool message of the view follows its assistant message's calls, and every
/// call has its result: what an OpenAI-style endpoint demands.
pub fn view_chains_paired(e: &Engine) -> bool {
    let view = e.view();
    let mut open: Vec<String> = Vec::new();
    for m in &view.messages {
        match m.role {
            "tool" => {
                let id = m.tool_call_id.clone().unwrap_or_default();
                match open.iter().position(|c| *c == id) {
                    Some(i) => {
                        open.remove(i);
                    }
                    None => return false,
                }
            }
            _ => {
                if !open.is_empty() {
                    return false;
                }
                if let Some(calls) = &m.tool_calls {
                    open = calls.iter().map(|c| c.id.clone()).collect();
                }
            }
        }
    }
    open.is_empty()
}
