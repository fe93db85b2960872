//! Reading a Chat Completions stream of tool-call deltas: frontier's reader against the loop
//! the Anthropic SDK runs on streamed tool input, on the same body, in the same run.
//!
//! The body: four `write_file` calls whose arguments (a long `content` string) arrive in
//! 12-byte `function.arguments` fragments, one `chat.completion.chunk` per `data:` event, as
//! OpenAI streams them; each call's arguments are a quarter of the stream, so a longer stream
//! has longer calls, as a model writing a bigger file does. Two sizes, 1 MB and 10 MB, show how
//! each reader scales.
//!
//! - `frontier`: [`StreamReader`] fed 16 KiB pieces (a network read), counting confirmed calls;
//! - `sdk_jiter_partial`: the SDK's accumulate-and-reparse loop: the same SSE framing, each
//!   event's JSON parsed, the fragment appended to its call's buffer, and the whole buffer
//!   parsed again with jiter in partial mode after every delta, to show the partial input.
//!
//! Throughput is in bytes of the stream.

use std::hint::black_box;
use std::ops::ControlFlow;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use frontier::streams::sse::SseReader;
use frontier::streams::{Api, Event, Format, StreamReader};
use serde_json::{json, Value};

/// A Chat stream of about `size` bytes: four calls of tool-call deltas.
fn chat_stream(size: usize) -> Vec<u8> {
    let chunk = |delta: Value, finish: Value| {
        let c = json!({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1764547200,
            "model":"gpt-4.1","choices":[{"index":0,"delta":delta,"finish_reason":finish}]});
        format!("data: {c}\n\n")
    };
    let mut body = String::new();
    let per_call = size / 4;
    for index in 0..4 {
        let start = body.len();
        let first = json!({"tool_calls":[{"index":index,"id":format!("call_{index}"),"type":"function",
            "function":{"name":"write_file","arguments":""}}]});
        body.push_str(&chunk(first, Value::Null));
        let mut arguments = format!("{{\"path\":\"file{index}.txt\",\"content\":\"");
        let mut line = 0;
        while body.len() - start < per_call {
            // Grow the arguments by a line of text, streamed in 12-byte fragments.
            let text = format!("line {line} of a file the model writes\\n");
            line += 1;
            arguments.push_str(&text);
            while arguments.len() >= 12 {
                let rest = arguments.split_off(12);
                let fragment = std::mem::replace(&mut arguments, rest);
                let delta =
                    json!({"tool_calls":[{"index":index,"function":{"arguments":fragment}}]});
                body.push_str(&chunk(delta, Value::Null));
            }
        }
        arguments.push_str("\"}");
        let delta = json!({"tool_calls":[{"index":index,"function":{"arguments":arguments}}]});
        body.push_str(&chunk(delta, Value::Null));
    }
    body.push_str(&chunk(json!({}), json!("tool_calls")));
    body.push_str("data: [DONE]\n\n");
    body.into_bytes()
}

fn frontier(body: &[u8]) -> usize {
    let mut reader = StreamReader::new(Api::OpenAiChat, Format::Sse);
    let mut calls = 0;
    let mut on_event = |e: Event<'_>| calls += usize::from(matches!(e, Event::Call(_)));
    for piece in body.chunks(16 * 1024) {
        reader.push(piece, &mut on_event).unwrap();
    }
    let summary = reader.finish(&mut on_event);
    assert!(summary.ended_cleanly);
    calls
}

/// The SDK's loop: accumulate each call's fragments, re-parse the whole buffer per delta.
fn sdk_jiter_partial(body: &[u8]) -> usize {
    let mut reader = SseReader::default();
    let mut buffers: Vec<String> = Vec::new();
    let mut parsed = 0;
    for piece in body.chunks(16 * 1024) {
        let flow = reader
            .push(piece, &mut |e| {
                if e.data == b"[DONE]" {
                    return ControlFlow::Continue(());
                }
                let chunk: Value = serde_json::from_slice(e.data).unwrap();
                let Some(calls) = chunk.pointer("/choices/0/delta/tool_calls") else {
                    return ControlFlow::Continue(());
                };
                for call in calls.as_array().unwrap() {
                    let index = call["index"].as_u64().unwrap() as usize;
                    if buffers.len() <= index {
                        buffers.resize(index + 1, String::new());
                    }
                    if let Some(fragment) = call.pointer("/function/arguments") {
                        buffers[index].push_str(fragment.as_str().unwrap());
                    }
                    let partial = jiter::JsonValue::parse_with_config(
                        buffers[index].as_bytes(),
                        false,
                        jiter::PartialMode::TrailingStrings,
                    );
                    parsed += usize::from(partial.is_ok());
                }
                ControlFlow::Continue(())
            })
            .unwrap();
        assert!(flow.is_continue());
    }
    parsed
}

fn streams(c: &mut Criterion) {
    let mut group = c.benchmark_group("chat_tool_call_deltas");
    group.sample_size(10);
    for (label, size) in [("1MB", 1_000_000), ("10MB", 10_000_000)] {
        let body = chat_stream(size);
        assert_eq!(frontier(&body), 4);
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_with_input(BenchmarkId::new("frontier", label), &body, |b, body| {
            b.iter(|| black_box(frontier(body)))
        });
        group.bench_with_input(
            BenchmarkId::new("sdk_jiter_partial", label),
            &body,
            |b, body| b.iter(|| black_box(sdk_jiter_partial(body))),
        );
    }
    group.finish();
}

criterion_group!(benches, streams);
criterion_main!(benches);
