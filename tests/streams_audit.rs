//! Cases from an audit of the provider stream readers against `streams.md`, each read whole
//! and at every chunking.

use frontier::streams::{Api, Call, Event, Format, StreamReader, Summary};

/// `body` read in pieces of `chunk` bytes: the calls confirmed and the summary (the same for
/// every chunking).
fn read(api: Api, body: &str) -> (Vec<Call>, Summary) {
    let read = |chunk: usize| {
        let mut reader = StreamReader::new(api, Format::Sse);
        let mut calls = Vec::new();
        let mut on_event = |e: Event<'_>| {
            if let Event::Call(call) = e {
                calls.push(call.clone());
            }
        };
        for piece in body.as_bytes().chunks(chunk) {
            if reader.push(piece, &mut on_event).is_err() {
                break;
            }
        }
        let summary = reader.finish(&mut on_event);
        (calls, summary)
    };
    let whole = read(body.len().max(1));
    for chunk in [1, 2, 3, 7] {
        assert_eq!(read(chunk), whole, "chunks of {chunk}");
    }
    whole
}

fn summary(api: Api, body: &str) -> Summary {
    read(api, body).1
}

/// An SSE body of `(event name, data)` pairs.
fn events(list: &[(&str, &str)]) -> String {
    list.iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}

fn ids(calls: &[Call]) -> Vec<&str> {
    calls.iter().map(|c| c.id.as_str()).collect()
}

/// A Chat stream of these deltas, then `stop` and `[DONE]`.
fn chat(deltas: &[&str]) -> String {
    let mut body = String::new();
    for delta in deltas {
        body.push_str(&format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":null}}]}}\n\n"
        ));
    }
    body.push_str(
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
    );
    body.push_str("data: [DONE]\n\n");
    body
}

#[test]
fn a_delta_with_both_reasoning_fields_counts_its_reasoning_once() {
    // Servers moving from `reasoning_content` to `reasoning` (vLLM) send both, the same text.
    let body = chat(&[
        r#"{"reasoning_content":"Look first.","reasoning":"Look first."}"#,
        r#"{"reasoning":" Then act."}"#,
        r#"{"reasoning_content":" Done.","reasoning":null}"#,
        r#"{"content":"ok"}"#,
    ]);
    let summary = summary(Api::OpenAiChat, &body);
    assert_eq!(summary.reasoning, "Look first. Then act. Done.");
    assert_eq!(summary.text, "ok");
    assert!(summary.ended_cleanly);
}

/// Anthropic events: two tool blocks open at once, both stopped with no input, then `tail`.
fn two_empty_blocks(tail: &[(&str, &str)]) -> String {
    let start = |index: u32, id: &str| {
        format!(
            r#"{{"type":"content_block_start","index":{index},"content_block":{{"type":"tool_use","id":"{id}","name":"get_time","input":{{}}}}}}"#
        )
    };
    let (first, second) = (start(0, "toolu_a"), start(1, "toolu_b"));
    let mut list = vec![
        ("message_start", r#"{"type":"message_start","message":{}}"#),
        ("content_block_start", first.as_str()),
        ("content_block_start", second.as_str()),
        (
            "content_block_stop",
            r#"{"type":"content_block_stop","index":0}"#,
        ),
        (
            "content_block_stop",
            r#"{"type":"content_block_stop","index":1}"#,
        ),
    ];
    list.extend_from_slice(tail);
    events(&list)
}

#[test]
fn tool_blocks_stopped_with_no_input_are_each_confirmed_or_reported() {
    // Finished by the model: both confirmed, in the order they stopped.
    let (calls, summary) = read(
        Api::AnthropicMessages,
        &two_empty_blocks(&[
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"}}"#,
            ),
            ("message_stop", r#"{"type":"message_stop"}"#),
        ]),
    );
    assert_eq!(ids(&calls), ["toolu_a", "toolu_b"]);
    assert!(summary.incomplete.is_empty() && summary.ended_cleanly);
    // Cut by the output limit, or by the end of the body: both incomplete, neither lost.
    for tail in [
        &[
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"}}"#,
            ),
            ("message_stop", r#"{"type":"message_stop"}"#),
        ][..],
        &[],
    ] {
        let (calls, summary) = read(Api::AnthropicMessages, &two_empty_blocks(tail));
        assert!(calls.is_empty());
        let incomplete: Vec<&str> = summary.incomplete.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(incomplete, ["toolu_a", "toolu_b"]);
    }
}

#[test]
fn an_empty_type_on_a_later_chat_fragment_is_no_type() {
    // A gateway whose Go struct has no `omitempty` sends `"type":""` (and `""` ids and names)
    // on the fragments after the first, as others send `""` ids.
    let body = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",",
        "\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{\\\"path\\\"\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"\",",
        "\"type\":\"\",\"function\":{\"name\":\"\",\"arguments\":\":\\\"a\\\"}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: [DONE]\n\n",
    );
    let (calls, summary) = read(Api::OpenAiChat, body);
    assert_eq!(summary.error, None);
    assert_eq!(ids(&calls), ["call_1"]);
    assert_eq!(calls[0].name, "read_file");
    assert!(summary.ended_cleanly);
    // A type that is not a function's is still refused, never guessed.
    let custom = body.replace("\"type\":\"\"", "\"type\":\"custom\"");
    let (_, summary) = read(Api::OpenAiChat, &custom);
    assert_eq!(summary.error.map(|e| e.kind.name()), Some("bad_event"));
}

#[test]
fn an_empty_chat_finish_reason_is_no_finish() {
    // SGLang, Ollama and LocalAI have sent `"finish_reason":""` on every chunk before the last.
    let chunk = |delta: &str, finish: &str| {
        format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n\n"
        )
    };
    let first = r#"{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\""}}]}"#;
    let rest = r#"{"tool_calls":[{"index":0,"function":{"arguments":":\"a\"}"}}]}"#;
    let body = [
        chunk(r#"{"role":"assistant","content":"Reading."}"#, r#""""#),
        chunk(first, r#""""#),
        chunk(rest, r#""""#),
        chunk("{}", r#""tool_calls""#),
        "data: [DONE]\n\n".to_owned(),
    ]
    .concat();
    let (calls, summary) = read(Api::OpenAiChat, &body);
    assert_eq!(summary.error, None);
    assert_eq!(ids(&calls), ["call_1"]);
    assert_eq!(summary.finish_reason.as_deref(), Some("tool_calls"));
    assert!(summary.ended_cleanly && summary.incomplete.is_empty());
    // Cut before the real finish: the call is not complete, and there is no finish reason.
    let cut = body
        .split("data: {\"choices\":[{\"index\":0,\"delta\":{},")
        .next()
        .unwrap();
    let (calls, summary) = read(Api::OpenAiChat, cut);
    assert!(calls.is_empty());
    assert_eq!(summary.finish_reason, None);
    assert_eq!(summary.incomplete.len(), 1);
    assert_eq!(summary.text, "Reading.");
}

#[test]
fn an_empty_finish_stream_cut_anywhere_confirms_its_call_only_at_the_real_finish() {
    let chunk = |delta: &str, finish: &str| {
        format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n\n"
        )
    };
    let first = r#"{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\""}}]}"#;
    let rest = r#"{"tool_calls":[{"index":0,"id":"","type":"","function":{"name":"","arguments":":1}"}}]}"#;
    let head = [chunk(first, r#""""#), chunk(rest, r#""""#)].concat();
    let finish = chunk("{}", r#""tool_calls""#);
    let body = format!("{head}{finish}data: [DONE]\n\n");
    // The finish event is dispatched by its blank line: its last byte.
    let confirmed_at = head.len() + finish.len();
    for cut in 0..=body.len() {
        let (calls, summary) = read(Api::OpenAiChat, &body[..cut]);
        assert_eq!(summary.error, None, "cut at {cut}");
        assert_eq!(
            calls.len(),
            usize::from(cut >= confirmed_at),
            "cut at {cut}"
        );
    }
}

#[test]
fn an_event_with_empty_data_is_not_dispatched() {
    // The event-stream standard drops an event whose data is empty: `data:` alone is a
    // keep-alive, not an event whose data is not JSON.
    let body = concat!(
        "data:\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\n",
        "data: \r\n\r\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        "data: [DONE]\n\n",
    );
    let chat = summary(Api::OpenAiChat, body);
    assert_eq!(chat.error, None);
    assert_eq!(chat.text, "hi");
    assert!(chat.ended_cleanly);
    let body = "event: ping\ndata:\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    let anthropic = summary(Api::AnthropicMessages, body);
    assert_eq!(anthropic.error, None);
    assert!(anthropic.ended_cleanly);
}

#[test]
fn a_responses_stream_takes_one_done_after_its_end_and_an_incomplete_with_no_reason() {
    let created =
        r#"{"type":"response.created","response":{"id":"r","status":"in_progress","output":[]}}"#;
    let completed =
        r#"{"type":"response.completed","response":{"id":"r","status":"completed","output":[]}}"#;
    // Proxies that end every stream with Chat's terminator.
    let mut body = events(&[
        ("response.created", created),
        ("response.completed", completed),
    ]);
    body.push_str("data: [DONE]\n\n");
    let s = summary(Api::OpenAiResponses, &body);
    assert_eq!(s.error, None);
    assert!(s.ended_cleanly);
    assert_eq!(s.finish_reason.as_deref(), Some("completed"));
    // A second one is an event after the end.
    body.push_str("data: [DONE]\n\n");
    let s = summary(Api::OpenAiResponses, &body);
    assert_eq!(
        s.error.map(|e| e.kind),
        Some(frontier::streams::StreamErrorKind::AfterEnd)
    );

    let incomplete = r#"{"type":"response.incomplete","response":{"id":"r","status":"incomplete","incomplete_details":null,"output":[]}}"#;
    let body = events(&[
        ("response.created", created),
        ("response.incomplete", incomplete),
    ]);
    let s = summary(Api::OpenAiResponses, &body);
    assert_eq!(s.finish_reason.as_deref(), Some("incomplete"));
    assert!(!s.truncated);
}

#[test]
fn a_chat_call_may_start_at_an_unused_index_below_the_highest() {
    let call = |index: u32, id: &str| {
        format!(
            r#"{{"tool_calls":[{{"index":{index},"id":"{id}","type":"function","function":{{"name":"f","arguments":"{{}}"}}}}]}}"#
        )
    };
    let (first, second) = (call(5, "c1"), call(2, "c2"));
    let body = chat(&[&first, &second]);
    let (calls, summary) = read(Api::OpenAiChat, &body);
    assert_eq!(summary.error, None);
    assert_eq!(ids(&calls), ["c1", "c2"]);
    // A new call at an index a call had is still refused, and so is a fragment at an index
    // no call started at.
    let again = call(5, "c3");
    let (calls, summary) = read(Api::OpenAiChat, &chat(&[&first, &second, &again]));
    assert_eq!(ids(&calls), ["c1"], "c2 stays open at the error");
    assert!(summary
        .error
        .unwrap()
        .message
        .contains("a new call at the index of a finished call (index 5)"));
    let fragment = r#"{"tool_calls":[{"index":3,"function":{"arguments":"x"}}]}"#;
    let (_, summary) = read(Api::OpenAiChat, &chat(&[&first, fragment]));
    assert!(summary
        .error
        .unwrap()
        .message
        .contains("a fragment of a call that never started (index 3)"));
}

#[test]
fn an_event_that_is_a_json_array_is_a_bad_event_in_every_api() {
    // A derived struct takes an array as its fields by position; no server sends one.
    let chat_call = r#"[[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}],null,null]"#;
    for (api, data) in [
        (Api::OpenAiChat, chat_call),
        (Api::OpenAiResponses, r#"["response.completed",null]"#),
        (
            Api::OpenAiResponses,
            r#"["response.not_a_type_we_know",null]"#,
        ),
        (Api::AnthropicMessages, r#"["message_stop",null,null,null]"#),
    ] {
        let (calls, summary) = read(api, &format!("data: {data}\n\ndata: [DONE]\n\n"));
        assert!(calls.is_empty(), "{api:?}");
        let error = summary.error.expect("an error");
        assert_eq!(
            (error.kind.name(), error.offset),
            ("bad_event", 0),
            "{api:?}"
        );
        assert!(!summary.ended_cleanly);
    }
    // JSON that is not even that stays `not_json`.
    let (_, cut) = read(Api::AnthropicMessages, "data: [1,\n\n");
    assert_eq!(cut.error.map(|e| e.kind.name()), Some("not_json"));
}

/// An Anthropic message: one tool block whose deltas are `deltas`, stopped, `tool_use`, then
/// `message_stop` and `after`.
fn anthropic_tool(deltas: &[(&str, &str)], after: &[(&str, &str)]) -> String {
    let mut list = vec![
        ("message_start", r#"{"type":"message_start","message":{}}"#),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"shell","input":{}}}"#,
        ),
    ];
    let deltas: Vec<String> = deltas
        .iter()
        .map(|(kind, field)| {
            format!(
                r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"{kind}",{field}}}}}"#
            )
        })
        .collect();
    list.extend(deltas.iter().map(|d| ("content_block_delta", d.as_str())));
    list.extend_from_slice(&[
        (
            "content_block_stop",
            r#"{"type":"content_block_stop","index":0}"#,
        ),
        (
            "message_delta",
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"}}"#,
        ),
        ("message_stop", r#"{"type":"message_stop"}"#),
    ]);
    list.extend_from_slice(after);
    events(&list)
}

#[test]
fn a_ping_after_message_stop_is_taken_and_any_other_event_is_not() {
    let ping = ("ping", r#"{"type":"ping"}"#);
    let input = [(
        "input_json_delta",
        r#""partial_json":"{\"command\":\"ls\"}""#,
    )];
    let (calls, summary) = read(
        Api::AnthropicMessages,
        &anthropic_tool(&input, &[ping, ping]),
    );
    assert_eq!(ids(&calls), ["t1"]);
    assert!(summary.ended_cleanly && summary.error.is_none());
    let late = ("message_delta", r#"{"type":"message_delta","delta":{}}"#);
    let (calls, summary) = read(
        Api::AnthropicMessages,
        &anthropic_tool(&input, &[ping, late]),
    );
    assert_eq!(ids(&calls), ["t1"]);
    assert_eq!(summary.error.map(|e| e.kind.name()), Some("after_end"));
}

#[test]
fn a_delta_of_another_type_in_a_tool_block_leaves_its_input_unknown() {
    // `rm -rf build` then a fragment in a delta type this reader does not know, then the rest:
    // the joined input parses, but it is not what the model wrote.
    let deltas = [
        (
            "input_json_delta",
            r#""partial_json":"{\"command\":\"rm -rf build""#,
        ),
        ("new_json_delta", r#""partial_json":"/tmp""#),
        ("input_json_delta", r#""partial_json":"\"}""#),
    ];
    let body = anthropic_tool(&deltas, &[]);
    let (calls, read_body) = read(Api::AnthropicMessages, &body);
    assert!(calls.is_empty());
    let error = read_body.error.expect("an error");
    assert_eq!(error.kind.name(), "bad_event");
    assert_eq!(error.offset, body.find("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"new").unwrap() as u64);
    let incomplete: Vec<&str> = read_body.incomplete.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(incomplete, ["t1"]);
    // In a text block the same delta is skipped: text is never executed.
    let text = events(&[
        ("message_start", r#"{"type":"message_start","message":{}}"#),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"new_text_delta","x":1}}"#,
        ),
        (
            "content_block_stop",
            r#"{"type":"content_block_stop","index":0}"#,
        ),
        ("message_stop", r#"{"type":"message_stop"}"#),
    ]);
    assert!(summary(Api::AnthropicMessages, &text).ended_cleanly);
}
