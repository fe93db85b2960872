//! The provider stream readers cut at every byte: exactly the calls complete before the cut,
//! never one more, never a partial one; and the bad input of issue 15 through the library.

use std::path::Path;

use frontier::language::CtlMode;
use frontier::streams::{
    Api, Arguments, Call, Event, Format, Limits, StreamErrorKind, StreamReader, Summary,
};
use frontier::ErrorKind;

fn corpus(path: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("corpora/streams")
            .join(path),
    )
    .unwrap()
}

/// Reads `bytes` in pieces of `chunk` bytes: the calls with the number of bytes pushed when
/// each was confirmed, and the summary.
fn read(api: Api, bytes: &[u8], chunk: usize) -> (Vec<(Call, usize)>, Summary) {
    let mut reader = StreamReader::new(api, Format::Sse);
    let mut calls = Vec::new();
    let mut pushed = 0;
    for piece in bytes.chunks(chunk.max(1)) {
        pushed += piece.len();
        let result = reader.push(piece, &mut |e| {
            if let Event::Call(call) = e {
                calls.push((call.clone(), pushed));
            }
        });
        if result.is_err() {
            break;
        }
    }
    let summary = reader.finish(&mut |e| {
        if let Event::Call(call) = e {
            calls.push((call.clone(), pushed));
        }
    });
    (calls, summary)
}

/// What confirms a call, written in the event that does: a finish, a later call's first
/// fragment, a block's stop, an item's done event.
const CONFIRMING: &[&str] = &[
    "\"finish_reason\":\"tool_calls\"",
    "\"finish_reason\":\"stop\"",
    "\"type\":\"function\"",
    "\"type\":\"content_block_stop\"",
    "\"type\":\"response.output_item.done\"",
];

const STREAMS: &[(Api, &str)] = &[
    (Api::OpenAiChat, "openai-chat/two_calls.sse"),
    (Api::OpenAiChat, "openai-chat/entries_in_one_chunk.sse"),
    (Api::OpenAiChat, "openai-chat/keepalive_crlf_padded.sse"),
    (Api::OpenAiChat, "openai-chat/same_index_new_id.sse"),
    (Api::OpenAiResponses, "openai-responses/function_calls.sse"),
    (
        Api::OpenAiResponses,
        "openai-responses/apply_patch_custom.sse",
    ),
    (
        Api::OpenAiResponses,
        "openai-responses/no_deltas_data_first.sse",
    ),
    (Api::AnthropicMessages, "anthropic-messages/tool_use.sse"),
    (
        Api::AnthropicMessages,
        "anthropic-messages/thinking_server_tool.sse",
    ),
];

#[test]
fn every_cut_point_gives_exactly_the_calls_complete_before_it() {
    for &(api, path) in STREAMS {
        let stream = corpus(path);
        // Byte by byte: where each call is confirmed.
        let (full, summary) = read(api, &stream, 1);
        assert!(summary.ended_cleanly, "{path}");
        assert!(!full.is_empty(), "{path}");
        assert_eq!(read(api, &stream, stream.len()).0.len(), full.len());
        for (call, at) in &full {
            // The call is confirmed by the blank line that ends an event (its CR, in CRLF
            // framing: a CR ends a line), and that event is one that finishes a call.
            let before = &stream[..*at];
            assert!(
                before.ends_with(b"\n\n") || before.ends_with(b"\r\n\r"),
                "{path}: {at}"
            );
            let text = String::from_utf8_lossy(before).replace('\r', "");
            let text = text.replace(' ', "");
            let event = text.trim_end_matches('\n').rsplit("\n\n").next().unwrap();
            assert!(
                CONFIRMING.iter().any(|c| event.contains(c)),
                "{path}: {} confirmed by {event}",
                call.id
            );
            if let Arguments::Json { text, object } = &call.arguments {
                assert_eq!(
                    serde_json::from_str::<serde_json::Value>(text)
                        .ok()
                        .as_ref()
                        .and_then(|v| v.as_object()),
                    Some(object)
                );
            }
        }
        for cut in 0..=stream.len() {
            let (calls, summary) = read(api, &stream[..cut], stream.len());
            let expected: Vec<&Call> = full
                .iter()
                .filter(|(_, at)| *at <= cut)
                .map(|(c, _)| c)
                .collect();
            let got: Vec<&Call> = calls.iter().map(|(c, _)| c).collect();
            assert_eq!(got, expected, "{path} cut at {cut}");
            assert!(summary.malformed.is_empty(), "{path} cut at {cut}");
            assert_eq!(summary.error, None, "{path} cut at {cut}");
            if cut < stream.len() && !summary.ended_cleanly {
                // What was started and not confirmed is reported, not executed.
                let confirmed = got.len() + summary.incomplete.len();
                assert!(confirmed <= full.len(), "{path} cut at {cut}");
            }
        }
    }
}

#[test]
fn every_chunking_gives_the_same_calls_and_summary() {
    for &(api, path) in STREAMS {
        let stream = corpus(path);
        let (whole, summary) = read(api, &stream, stream.len());
        let whole: Vec<Call> = whole.into_iter().map(|(c, _)| c).collect();
        for chunk in [1, 2, 3, 7, 64] {
            let (calls, other) = read(api, &stream, chunk);
            let calls: Vec<Call> = calls.into_iter().map(|(c, _)| c).collect();
            assert_eq!(calls, whole, "{path} by {chunk}");
            assert_eq!(other, summary, "{path} by {chunk}");
        }
    }
}

#[test]
fn a_relabelled_length_is_malformed_and_never_emitted() {
    let stream = corpus("openai-chat/relabelled_length.sse");
    let (calls, summary) = read(Api::OpenAiChat, &stream, 7);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].0.name, "read_file");
    assert_eq!(summary.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(summary.malformed.len(), 1);
    let malformed = &summary.malformed[0];
    assert_eq!(malformed.name, "apply_patch");
    assert!(malformed.reason.as_deref().unwrap().contains("not JSON"));
}

#[test]
fn garbage_in_a_data_line_is_an_error_at_its_offset_and_earlier_calls_stay() {
    let stream = corpus("openai-chat/garbage_data.sse");
    let text = String::from_utf8_lossy(&stream);
    let garbage_at = text.find("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"argu").unwrap();
    for chunk in [1, 7, stream.len()] {
        let (calls, summary) = read(Api::OpenAiChat, &stream, chunk);
        assert_eq!(calls.len(), 1);
        let error = summary.error.unwrap();
        assert_eq!(error.kind, StreamErrorKind::NotJson);
        assert_eq!(error.offset, garbage_at as u64);
        // The call after the garbage is never confirmed: the reader stopped there.
        assert_eq!(summary.incomplete.len(), 1);
        assert!(!summary.ended_cleanly);
    }
}

#[test]
fn limits_bound_lines_calls_and_text_with_clear_errors() {
    let call = |args: &str| {
        format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"hi\",\"tool_calls\":[{{\"index\":0,\"id\":\"c\",\"function\":{{\"name\":\"f\",\"arguments\":{args:?}}}}}]}}}}]}}\n\n"
        )
    };
    let body = call("{\"a\":\"0123456789\"}");
    for (limits, kind) in [
        (
            Limits {
                max_line: 64,
                ..Limits::default()
            },
            StreamErrorKind::LineTooLong,
        ),
        (
            Limits {
                max_call_bytes: 8,
                ..Limits::default()
            },
            StreamErrorKind::CallTooLong,
        ),
        (
            Limits {
                max_text: 1,
                ..Limits::default()
            },
            StreamErrorKind::TextTooLong,
        ),
    ] {
        for chunk in [1, body.len()] {
            let mut reader = StreamReader::with_options(Api::OpenAiChat, Format::Sse, limits, None);
            let mut failed = None;
            for piece in body.as_bytes().chunks(chunk) {
                if let Err(e) = reader.push(piece, &mut |_| {}) {
                    failed = Some(e);
                    break;
                }
            }
            let error = failed.expect("over a bound");
            assert_eq!((error.kind, error.offset), (kind, 0));
            assert_eq!(reader.finish(&mut |_| {}).error, Some(error));
        }
    }
}

#[test]
fn sse_and_json_lines_of_the_same_events_read_the_same() {
    let sse = corpus("openai-responses/function_calls.sse");
    let mut jsonl = String::new();
    for line in String::from_utf8(sse.clone()).unwrap().lines() {
        if let Some(data) = line.strip_prefix("data: ") {
            jsonl.push_str(data);
            jsonl.push('\n');
        }
    }
    let (calls, summary) = read(Api::OpenAiResponses, &sse, 5);
    let mut reader = StreamReader::new(Api::OpenAiResponses, Format::Jsonl);
    let mut from_lines = Vec::new();
    for piece in jsonl.as_bytes().chunks(5) {
        reader
            .push(piece, &mut |e| {
                if let Event::Call(call) = e {
                    from_lines.push(call.clone());
                }
            })
            .unwrap();
    }
    let other = reader.finish(&mut |_| {});
    let calls: Vec<Call> = calls.into_iter().map(|(c, _)| c).collect();
    assert_eq!(from_lines, calls);
    assert_eq!(other, summary);
}

#[test]
fn a_malformed_patch_is_known_before_its_call_ends() {
    let stream = corpus("openai-responses/custom_tools.sse");
    let text = String::from_utf8_lossy(&stream);
    let done_at = text.find("event: response.output_item.done").unwrap();
    let mut reader = StreamReader::new(Api::OpenAiResponses, Format::Sse);
    let (mut patch_events, mut refused) = (0, Vec::new());
    // Up to the done item of the bad patch: its parser has refused a byte already.
    reader
        .push(&stream[..done_at], &mut |e| match e {
            Event::Patch { .. } => patch_events += 1,
            Event::PatchRefused { id, message } => {
                refused.push((id.to_owned(), message.to_owned()))
            }
            _ => {}
        })
        .unwrap();
    assert!(
        patch_events >= 1,
        "the Begin Patch line was confirmed while streaming"
    );
    assert_eq!(refused.len(), 1);
    assert_eq!(refused[0].0, "call_bad");
    assert!(
        refused[0].1.contains("bad_marker at byte 20"),
        "{}",
        refused[0].1
    );
    let summary = reader.finish(&mut |_| {});
    // Cut before its done item, the call is incomplete; whole, it is malformed (corpus).
    assert_eq!(summary.incomplete.len(), 1);
}

/// Reads `bytes` of `api` in `format`, cut into pieces at `cuts` (sorted offsets).
fn read_at(api: Api, format: Format, bytes: &[u8], cuts: &[usize]) -> (Vec<Call>, Summary) {
    let mut reader = StreamReader::new(api, format);
    let mut calls = Vec::new();
    let mut on_event = |e: Event<'_>| {
        if let Event::Call(call) = e {
            calls.push(call.clone());
        }
    };
    let mut at = 0;
    for &cut in cuts.iter().chain([&bytes.len()]) {
        let cut = cut.clamp(at, bytes.len());
        if reader.push(&bytes[at..cut], &mut on_event).is_err() {
            break;
        }
        at = cut;
    }
    let summary = reader.finish(&mut on_event);
    (calls, summary)
}

mod damaged {
    use super::*;
    use proptest::prelude::*;

    const ALL: &[(Api, &str)] = &[
        (Api::OpenAiChat, "openai-chat/two_calls.sse"),
        (Api::OpenAiChat, "openai-chat/keepalive_crlf_padded.sse"),
        (
            Api::OpenAiResponses,
            "openai-responses/apply_patch_custom.sse",
        ),
        (Api::OpenAiResponses, "openai-responses/function_calls.sse"),
        (
            Api::AnthropicMessages,
            "anthropic-messages/thinking_server_tool.sse",
        ),
        (Api::AnthropicMessages, "anthropic-messages/tool_use.sse"),
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        /// A damaged stream (bytes removed, inserted or changed), read in any format and any
        /// chunking: no panic, and the same calls and summary whatever the chunking.
        #[test]
        fn damaged_streams_read_the_same_at_every_chunking(
            which in 0..ALL.len(),
            start in 0usize..4000,
            removed in 0usize..40,
            inserted in proptest::collection::vec(any::<u8>(), 0..12),
            mut cuts in proptest::collection::vec(0usize..4000, 0..12),
            jsonl in any::<bool>(),
        ) {
            let (api, path) = ALL[which];
            let mut bytes = corpus(path);
            let start = start.min(bytes.len());
            let end = (start + removed).min(bytes.len());
            bytes.splice(start..end, inserted);
            cuts.sort_unstable();
            let format = if jsonl { Format::Jsonl } else { Format::Sse };
            let whole = read_at(api, format, &bytes, &[]);
            prop_assert_eq!(&read_at(api, format, &bytes, &cuts), &whole);
            let ones: Vec<usize> = (1..bytes.len()).collect();
            prop_assert_eq!(&read_at(api, format, &bytes, &ones), &whole);
            // Nothing is both confirmed and reported.
            for call in &whole.0 {
                prop_assert!(!whole.1.malformed.iter().any(|m| m.id == call.id && !m.id.is_empty()));
            }
        }
    }
}

/// The usage each recorded stream reports, normalised (`None`: it reports none), the same
/// for every chunking.
#[test]
fn recorded_streams_give_their_normalised_usage() {
    let cases: &[(Api, &str, Option<serde_json::Value>)] = &[
        (
            Api::OpenAiChat,
            "openai-chat/usage_cached.sse",
            Some(
                serde_json::json!({"prompt_tokens": 2006, "completion_tokens": 18,
                                    "prompt_cache_hit_tokens": 1920}),
            ),
        ),
        (
            Api::OpenAiChat,
            "openai-chat/two_calls.sse",
            Some(serde_json::json!({"prompt_tokens": 12, "completion_tokens": 40})),
        ),
        (Api::OpenAiChat, "openai-chat/no_done.sse", None),
        (
            Api::OpenAiResponses,
            "openai-responses/usage.sse",
            Some(
                serde_json::json!({"prompt_tokens": 5230, "completion_tokens": 41,
                                    "prompt_cache_hit_tokens": 4864}),
            ),
        ),
        (
            Api::OpenAiResponses,
            "openai-responses/function_calls.sse",
            None,
        ),
        (
            Api::AnthropicMessages,
            "anthropic-messages/cache_usage.sse",
            Some(
                serde_json::json!({"prompt_tokens": 4000, "completion_tokens": 27,
                                    "prompt_cache_hit_tokens": 3688}),
            ),
        ),
        (
            Api::AnthropicMessages,
            "anthropic-messages/tool_use.sse",
            Some(serde_json::json!({"prompt_tokens": 25, "completion_tokens": 60})),
        ),
        // Cut before its message_delta: message_start's counts.
        (
            Api::AnthropicMessages,
            "anthropic-messages/dropped.sse",
            Some(serde_json::json!({"prompt_tokens": 25, "completion_tokens": 1})),
        ),
    ];
    for (api, path, want) in cases {
        let stream = corpus(path);
        for chunk in [1, 7, stream.len()] {
            let (_, summary) = read(*api, &stream, chunk);
            let got = summary.usage.map(|u| {
                let mut json = u.to_json();
                let provider = json.as_object_mut().unwrap().shift_remove("provider");
                assert!(provider.is_some_and(|p| p.is_object()), "{path}");
                json
            });
            assert_eq!(&got, want, "{path} by {chunk}");
        }
    }
}

/// Reads `bytes` whole with the answer text read as CTL in `mode`: the confirmed CTL calls (id
/// and arguments) and the summary.
fn read_ctl(bytes: &[u8], mode: CtlMode) -> (Vec<(String, Arguments)>, Summary) {
    let mut reader =
        StreamReader::with_options(Api::OpenAiChat, Format::Sse, Limits::default(), Some(mode));
    let mut calls = Vec::new();
    let mut on_event = |e: Event<'_>| {
        if let Event::Call(call) = e {
            calls.push((call.id.clone(), call.arguments.clone()));
        }
    };
    let _ = reader.push(bytes, &mut on_event);
    let summary = reader.finish(&mut on_event);
    (calls, summary)
}

#[test]
fn extended_ctl_text_cut_anywhere_confirms_exactly_the_calls_whose_end_line_arrived() {
    let stream = corpus("openai-chat/ctl_extended_text.sse");
    let (full, summary) = read_ctl(&stream, CtlMode::Extended);
    assert_eq!(summary.error, None);
    assert_eq!(full.len(), 2);
    let Arguments::Ctl(args) = &full[0].1 else {
        panic!("{:?}", full[0].1)
    };
    // The heredoc's lines that only look like its tag stay content.
    assert_eq!(
        args[1],
        (
            "content".to_owned(),
            bytes::Bytes::from_static(b"# Todo\nEOFX is not the tag\n  EOF indented is content\n")
        )
    );
    for cut in 0..=stream.len() {
        let (calls, summary) = read_ctl(&stream[..cut], CtlMode::Extended);
        // Independently of the parser: a call is complete once a whole `end` line arrived.
        let ended = summary
            .text
            .split_inclusive('\n')
            .filter(|l| *l == "end\n")
            .count();
        assert_eq!(calls, full[..ended], "cut at {cut}");
        assert_eq!(summary.error, None, "cut at {cut}");
    }
    // Read as strict CTL, the same text is refused at its first inline value, with the
    // parser's error kept whole.
    let (calls, summary) = read_ctl(&stream, CtlMode::Strict);
    assert!(calls.is_empty());
    let error = summary.error.unwrap();
    assert_eq!(error.kind, StreamErrorKind::NotCtl);
    let ctl = error.ctl.unwrap();
    assert_eq!(
        (ctl.offset, ctl.byte, ctl.kind.as_str()),
        (28, b'=', "unexpected_byte")
    );
}

/// A Chat stream whose content is `pieces`, one delta each, then `stop` and `[DONE]`.
fn chat_of(pieces: &[&str]) -> Vec<u8> {
    let mut body = String::new();
    for piece in pieces {
        let delta = serde_json::json!({"choices": [{"index": 0, "delta": {"content": piece},
            "finish_reason": null}]});
        body.push_str(&format!("data: {delta}\n\n"));
    }
    body.push_str(
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
    );
    body.push_str("data: [DONE]\n\n");
    body.into_bytes()
}

#[test]
fn with_ctl_a_think_block_stands_between_frames_and_a_body_holding_the_tags_is_the_body() {
    // The mode, the text, the calls' arguments and the reasoning read from the text.
    type Case<'a> = (CtlMode, &'a str, &'a [(&'a str, &'a [u8])], &'a str);
    let cases: [Case<'_>; 2] = [
        (
            CtlMode::Strict,
            "<think>plan</think>call c1 w\narg c 17\n<think></think>ABend\n\
             <think>then rm</think>call c2 rm\narg p 1\n/end\n",
            &[("c", b"<think></think>AB"), ("p", b"/")],
            "planthen rm",
        ),
        (
            CtlMode::Extended,
            "call c1 w\narg c <<EOF\n<think>\nx</think>\nEOF\narg t = a <think> b\nend\n\
             <think>done</think>",
            &[("c", b"<think>\nx</think>\n"), ("t", b"a <think> b")],
            "done",
        ),
    ];
    for (mode, text, args, reasoning) in cases {
        let expected: Vec<(String, Vec<u8>)> = args
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.to_vec()))
            .collect();
        let got = |stream: &[u8]| {
            let (calls, summary) = read_ctl(stream, mode);
            let args: Vec<(String, Vec<u8>)> = calls
                .iter()
                .flat_map(|(_, a)| match a {
                    Arguments::Ctl(args) => args.clone(),
                    other => panic!("{other:?}"),
                })
                .map(|(k, v)| (k, v.to_vec()))
                .collect();
            (args, summary)
        };
        // Every split of the text into two deltas, and deltas of 1 to 3 bytes.
        let mut splits: Vec<Vec<&str>> = (0..=text.len())
            .map(|i| vec![&text[..i], &text[i..]])
            .collect();
        for n in 1..=3 {
            splits.push(
                text.as_bytes()
                    .chunks(n)
                    .map(|c| std::str::from_utf8(c).unwrap())
                    .collect(),
            );
        }
        for pieces in splits {
            let (args, summary) = got(&chat_of(&pieces));
            assert_eq!(summary.error, None, "{mode:?} {pieces:?}");
            assert_eq!(args, expected, "{mode:?} {pieces:?}");
            assert_eq!(summary.reasoning, reasoning, "{mode:?} {pieces:?}");
            assert_eq!(summary.text, text);
        }
    }
    // A tag that is not a think tag between frames is CTL, and refused at its `<`.
    let (_, summary) = read_ctl(&chat_of(&["call c1 x\nend\n<thing>"]), CtlMode::Strict);
    let ctl = summary.error.unwrap().ctl.unwrap();
    assert_eq!((ctl.offset, ctl.byte), (14, b'<'));
}

#[test]
fn bytes_that_are_not_utf8_are_not_json_even_in_a_field_the_reader_skips() {
    let mut body =
        b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n".to_vec();
    body.extend_from_slice(
        b"data: {\"obfuscation\":\"\xff\xfe\",\"choices\":[]}\n\ndata: [DONE]\n\n",
    );
    for chunk in [1, 2, 7, body.len()] {
        let (calls, summary) = read(Api::OpenAiChat, &body, chunk);
        assert!(calls.is_empty());
        let error = summary.error.expect("an error");
        assert_eq!(error.kind, StreamErrorKind::NotJson, "{}", error.message);
        assert_eq!(error.offset, 57, "the second event's offset");
        assert!(error
            .message
            .starts_with("not UTF-8: byte 16 of the event's data is 0xff"));
        assert_eq!(summary.text, "a", "the text before it stays");
    }
}

#[test]
fn a_json_lines_recording_cut_anywhere_is_truncated_not_an_error() {
    for (api, path) in [
        (Api::OpenAiChat, "openai-chat/fixture.jsonl"),
        (Api::OpenAiResponses, "openai-responses/fixture.jsonl"),
    ] {
        let stream = corpus(path);
        let whole = {
            let mut reader = StreamReader::new(api, Format::Jsonl);
            let _ = reader.push(&stream, &mut |_| {});
            reader.finish(&mut |_| {})
        };
        assert_eq!(whole.error, None, "{path}");
        assert!(whole.ended_cleanly, "{path}");
        for cut in 0..stream.len() {
            let mut reader = StreamReader::new(api, Format::Jsonl);
            let _ = reader.push(&stream[..cut], &mut |_| {});
            let summary = reader.finish(&mut |_| {});
            assert_eq!(summary.error, None, "{path} cut at {cut}");
        }
    }
    // A last line that is whole but wrong is still an error.
    let mut reader = StreamReader::new(Api::OpenAiChat, Format::Jsonl);
    let _ = reader.push(
        b"{\"choices\":[{\"index\":0,\"delta\":{}}]}\n[DONX",
        &mut |_| {},
    );
    let summary = reader.finish(&mut |_| {});
    assert_eq!(
        summary.error.map(|e| e.kind),
        Some(StreamErrorKind::NotJson)
    );
}

#[test]
fn a_body_cut_inside_its_byte_order_mark_or_first_field_is_truncated() {
    for body in [
        &b"\xef"[..],
        b"\xef\xbb\xbf",
        b"\xef\xbb\xbfda",
        b"\xef\xbb\xbfdata: {\"cho",
    ] {
        let (calls, summary) = read(Api::OpenAiChat, body, 1);
        assert!(calls.is_empty());
        assert_eq!(summary.error, None, "{body:?}");
        assert!(!summary.ended_cleanly);
    }
    let (_, summary) = read(Api::OpenAiChat, b"\xef\xbb\xbfxyz", 1);
    assert_eq!(summary.error.map(|e| e.kind), Some(StreamErrorKind::NotSse));
}
