//! The OpenAI path against a real HTTP server on the loopback interface: streamed chunks of
//! random sizes, a `length` finish, dropped connections, malformed events, error statuses.

mod agent_support;

use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use agent_support::server::{self, Received, Reply, Rng};
use agent_support::{replay, run_with, RunResult};
use frontier::agent::openai::{OpenAi, OpenAiConfig, TokenField, DEFAULT_TASK};
use frontier::agent::replay::Turn;
use frontier::agent::{EndStatus, Finish, Toolset};
use serde_json::{json, Value};

/// The event stream a server sends for `content`: the content split into deltas of random
/// sizes (on character boundaries), then the finish reason, then `[DONE]`.
fn sse(content: &str, finish: &str, rng: &mut Rng) -> Vec<u8> {
    let mut body = String::new();
    let event = |delta: Value, finish: Value| {
        let v = json!({"id": "x", "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {v}\n\n")
    };
    body.push_str(&event(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    ));
    for piece in rng.pieces(content, 12) {
        body.push_str(&event(json!({"content": piece}), Value::Null));
    }
    body.push_str(&event(json!({}), json!(finish)));
    body.push_str("data: [DONE]\n\n");
    body.into_bytes()
}

/// The shared loopback server, with the `/v1` base the OpenAI client is given.
fn serve(replies: Vec<Reply>, seed: u64) -> (String, JoinHandle<Vec<Received>>) {
    let (base, server) = server::serve(replies, seed);
    (format!("{base}/v1"), server)
}

/// The JSON bodies of the requests the server received.
fn bodies(server: JoinHandle<Vec<Received>>) -> Vec<Value> {
    server.join().unwrap().into_iter().map(|r| r.body).collect()
}

fn config(base: &str) -> OpenAiConfig {
    let mut config = OpenAiConfig::new(base, "test-model");
    config.api_key = Some("test-key".into());
    config.read_timeout = Duration::from_secs(10);
    // One reply per request in these tests: retries are tested in agent_native.
    config.retry.max_retries = 0;
    config
}

fn client(base: &str) -> OpenAi {
    OpenAi::new(config(base))
}

fn run_openai(replies: Vec<Reply>, seed: u64) -> (RunResult, Vec<Value>) {
    let (base, server) = serve(replies, seed);
    let mut model = client(&base);
    let run = run_with(&mut model, |c| c.task = Some("fix the greeting".into()));
    (run, bodies(server))
}

fn call(id: &str, name: &str, args: &[(&str, &str)]) -> String {
    let mut out = format!("call {id} {name}\n");
    for (key, value) in args {
        out.push_str(&format!("arg {key} {}\n{value}", value.len()));
    }
    out.push_str("end\n");
    out
}

/// Records without the `task` record (whose `model` names the source).
fn body_of(run: &RunResult) -> Vec<Value> {
    run.records
        .iter()
        .filter(|r| r["type"] != "task")
        .cloned()
        .collect()
}

#[test]
fn streams_random_chunks_and_continues_after_length() {
    let write = call(
        "c2",
        "write_file",
        &[("path", "hello.txt"), ("content", "Hello, wörld!\n")],
    );
    let cut = write.find("wö").unwrap() + 1;
    let turns = [
        (
            call("c1", "list_dir", &[("path", ".")]) + &write[..cut],
            "length",
        ),
        (
            write[cut..].to_owned() + &call("c3", "read_file", &[("path", "hello.txt")]),
            "tool_calls",
        ),
        (String::new(), "stop"),
    ];
    for seed in 1..=8u64 {
        let mut rng = Rng(seed * 7919);
        let replies = turns
            .iter()
            .map(|(content, finish)| Reply::stream(sse(content, finish, &mut rng)))
            .collect();
        let (run, requests) = run_openai(replies, seed);
        assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
        assert_eq!(run.files["hello.txt"], "Hello, wörld!\n".as_bytes());
        assert_eq!(run.ids("tool_result"), ["c1", "c2", "c3"]);
        // The same turns replayed give the same transcript.
        let recorded: Vec<Turn> = turns
            .iter()
            .map(|(c, f)| Turn::Output {
                bytes: c.clone().into_bytes(),
                finish: Finish::from_name(f).unwrap(),
            })
            .collect();
        let replayed = replay("same", &recorded, 1, Toolset::Interactive);
        assert_eq!(body_of(&run), body_of(&replayed));

        // The requests: streaming, the model, the system prompt and task, the raised limit
        // after `length`, the partial output and the nudge, then the results.
        assert_eq!(requests.len(), 3);
        for r in &requests {
            assert_eq!(r["stream"], true);
            assert_eq!(r["model"], "test-model");
            assert_eq!(r["messages"][0]["role"], "system");
            assert_eq!(r["messages"][1]["content"], "fix the greeting");
        }
        assert_eq!(requests[0]["max_tokens"], 4096);
        assert_eq!(requests[1]["max_tokens"], 16384);
        assert_eq!(requests[2]["max_tokens"], 4096);
        let second = requests[1]["messages"].as_array().unwrap();
        assert_eq!(second[2]["role"], "assistant");
        assert!(second[2]["content"].as_str().unwrap().ends_with("Hello, w"));
        assert!(second[3]["content"]
            .as_str()
            .unwrap()
            .starts_with("result c1 ok"));
        assert!(second[3]["content"]
            .as_str()
            .unwrap()
            .contains("output limit"));
        let third = requests[2]["messages"].as_array().unwrap();
        let results = third.last().unwrap()["content"].as_str().unwrap();
        assert!(
            results.contains("result c2 ok")
                && results.contains("result c3 ok 15\nHello, wörld!\n"),
            "{results}"
        );
    }
}

#[test]
fn a_dropped_connection_runs_what_was_complete_and_nothing_else() {
    let first = call("c1", "write_file", &[("path", "a.txt"), ("content", "a\n")]);
    let second = call("c2", "write_file", &[("path", "b.txt"), ("content", "b\n")]);
    let content = first.clone() + &second;
    let mut rng = Rng(42);
    let body = sse(&content, "tool_calls", &mut rng);
    // Drop at every 7th byte of the body: calls whose `end` arrived in a complete event run,
    // the others do not.
    for drop_after in (0..body.len()).step_by(7) {
        let (run, _) = run_openai(
            vec![Reply::dropped(body.clone(), drop_after)],
            drop_after as u64 + 1,
        );
        let delivered = delivered_content(&body[..drop_after]);
        let expected: &[&str] = if delivered >= content.len() {
            &["c1", "c2"]
        } else if delivered >= first.len() {
            &["c1"]
        } else {
            &[]
        };
        assert_eq!(run.ids("tool_result"), expected, "drop after {drop_after}");
        assert_eq!(run.files.len(), expected.len());
        // Dropped before `[DONE]` and before a finish_reason: a model error, status 1.
        let finish_at = find(&body, b"\"finish_reason\":\"tool_calls\"", 0);
        if drop_after < finish_at {
            assert_eq!(run.status, EndStatus::ModelError, "drop after {drop_after}");
            assert_eq!(run.of_type("model_error")[0]["kind"], "disconnected");
        }
    }
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> usize {
    from + hay[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .unwrap()
}

/// How many content bytes the complete events of a body prefix carry.
fn delivered_content(prefix: &[u8]) -> usize {
    let text = String::from_utf8_lossy(prefix);
    let complete = match text.rfind("\n\n") {
        Some(at) => &text[..at],
        None => return 0,
    };
    complete
        .split("\n\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .map(|v| {
            v["choices"][0]["delta"]["content"]
                .as_str()
                .map_or(0, str::len)
        })
        .sum()
}

#[test]
fn malformed_events_end_the_run_after_the_complete_calls() {
    let first = call("c1", "write_file", &[("path", "a.txt"), ("content", "a\n")]);
    let mut rng = Rng(5);
    let mut body = sse(&first, "tool_calls", &mut rng);
    // Replace the finish event with garbage, then a valid-looking call that must not run.
    let finish_reason = find(&body, b"\"finish_reason\":\"tool_calls\"", 0);
    let finish_event = body[..finish_reason]
        .windows(6)
        .rposition(|w| w == b"data: ")
        .unwrap();
    body.truncate(finish_event);
    body.extend_from_slice(b"data: {\"choices\": [ oops\n\n");
    body.extend_from_slice(&sse(
        &call("c2", "write_file", &[("path", "b.txt"), ("content", "b")]),
        "stop",
        &mut rng,
    ));
    let (run, _) = run_openai(vec![Reply::stream(body)], 9);
    assert_eq!(run.status, EndStatus::ModelError);
    assert_eq!(run.of_type("model_error")[0]["kind"], "malformed_event");
    assert_eq!(run.ids("tool_result"), ["c1"]);
    assert_eq!(run.files.keys().collect::<Vec<_>>(), ["a.txt"]);

    // An event whose content is not a string, and one without choices.
    for bad in [
        r#"data: {"choices":[{"delta":{"content":7}}]}"#,
        r#"data: {"object":"x"}"#,
    ] {
        let body = format!("{bad}\n\n").into_bytes();
        let (run, _) = run_openai(vec![Reply::stream(body)], 3);
        assert_eq!(
            run.of_type("model_error")[0]["kind"],
            "malformed_event",
            "{bad}"
        );
    }
}

#[test]
fn noise_from_the_model_breaks_the_stream_and_closes_it() {
    let content = call("c1", "list_dir", &[("path", ".")]) + "Done! I listed the directory.";
    let mut rng = Rng(77);
    let body = sse(&content, "stop", &mut rng);
    let (run, requests) = run_openai(
        vec![
            Reply::stream(body),
            Reply::stream(sse("", "stop", &mut rng)),
        ],
        4,
    );
    assert_eq!(run.ids("tool_result"), ["c1"]);
    assert_eq!(run.of_type("stream_error")[0]["byte"], u64::from(b'D'));
    // The next request tells the model where its output stopped being CTL.
    let last = requests[1]["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "user");
    let note = last["content"].as_str().unwrap();
    assert!(note.contains(r#"came the byte "D" (0x44)"#), "{note}");
    assert_eq!(run.status, EndStatus::Done);
}

#[test]
fn context_overflow_status_compacts_and_retries_once() {
    let overflow = r#"{"error":{"message":"This model's maximum context length is 8192 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}"#;
    let mut rng = Rng(11);
    let replies = vec![
        Reply::stream(sse(
            &call("c1", "list_dir", &[("path", ".")]),
            "tool_calls",
            &mut rng,
        )),
        Reply::stream(sse(
            &call("c2", "list_dir", &[("path", ".")]),
            "tool_calls",
            &mut rng,
        )),
        Reply::raw_status(400, overflow),
        Reply::stream(sse("", "stop", &mut rng)),
    ];
    let (run, requests) = run_openai(replies, 12);
    assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
    let reasons: Vec<_> = run
        .of_type("transition")
        .iter()
        .map(|r| r["reason"].clone())
        .collect();
    assert_eq!(reasons, ["next_turn", "next_turn", "compact_retry"]);
    // The retried request has the older results cleared, the latest kept.
    let retried = requests[3]["messages"].as_array().unwrap();
    assert!(retried[3]["content"].as_str().unwrap().contains("cleared"));
    assert!(retried[5]["content"]
        .as_str()
        .unwrap()
        .starts_with("result c2 ok"));

    // A second overflow without progress in between exhausts the path.
    let replies = vec![
        Reply::raw_status(400, overflow),
        Reply::raw_status(400, overflow),
    ];
    let (run, _) = run_openai(replies, 13);
    assert_eq!(run.status, EndStatus::RecoveryExhausted);
}

#[test]
fn server_errors_and_refused_connections_are_model_errors() {
    let (run, _) = run_openai(vec![Reply::raw_status(500, r#"{"error":"boom"}"#)], 1);
    assert_eq!(run.status, EndStatus::ModelError);
    assert_eq!(run.of_type("model_error")[0]["kind"], "server_error");

    // An error event in the middle of the stream, after a complete call.
    let mut rng = Rng(21);
    let mut body = sse(
        &call("c1", "list_dir", &[("path", ".")]),
        "tool_calls",
        &mut rng,
    );
    let finish_reason = find(&body, b"\"finish_reason\":\"tool_calls\"", 0);
    let finish_event = body[..finish_reason]
        .windows(6)
        .rposition(|w| w == b"data: ")
        .unwrap();
    body.truncate(finish_event);
    body.extend_from_slice(b"data: {\"error\":{\"message\":\"overloaded\"}}\n\n");
    let (run, _) = run_openai(vec![Reply::stream(body)], 2);
    assert_eq!(run.status, EndStatus::ModelError);
    assert_eq!(run.of_type("model_error")[0]["kind"], "server_error");
    assert_eq!(run.ids("tool_result"), ["c1"]);

    // Nothing listens on this port once the listener is dropped.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut model = client(&format!("http://127.0.0.1:{port}/v1"));
    let run = run_with(&mut model, |_| {});
    assert_eq!(run.status, EndStatus::ModelError);
    assert_eq!(run.of_type("model_error")[0]["kind"], "transport_error");
}

/// Where the event carrying the finish_reason starts in a body made by [`sse`].
fn finish_event(body: &[u8]) -> usize {
    let finish = find(body, b"\"finish_reason\":\"", 0);
    body[..finish]
        .windows(6)
        .rposition(|w| w == b"data: ")
        .unwrap()
}

/// How a quirk test sets the client up.
struct Setup {
    task: Option<&'static str>,
    read_timeout: Duration,
    finish_grace: Duration,
    token_field: Option<TokenField>,
}

impl Default for Setup {
    fn default() -> Setup {
        Setup {
            task: Some("fix the greeting"),
            read_timeout: Duration::from_secs(10),
            finish_grace: Duration::from_secs(10),
            token_field: None,
        }
    }
}

/// A run against the loopback server: the result, the request bodies, the client's notices
/// and how long the run took.
struct Session {
    run: RunResult,
    requests: Vec<Value>,
    notices: Vec<String>,
    took: Duration,
}

fn session(replies: Vec<Reply>, setup: Setup) -> Session {
    let (base, server) = serve(replies, 1);
    let mut config = config(&base);
    config.read_timeout = setup.read_timeout;
    config.finish_grace = setup.finish_grace;
    if let Some(field) = setup.token_field {
        config.token_field = field;
    }
    let notices = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&notices);
    let mut model =
        OpenAi::new(config).with_notices(move |n| kept.lock().unwrap().push(n.to_owned()));
    let started = Instant::now();
    let run = run_with(&mut model, |c| c.task = setup.task.map(str::to_owned));
    let took = started.elapsed();
    let requests = bodies(server);
    let notices = notices.lock().unwrap().clone();
    Session {
        run,
        requests,
        notices,
        took,
    }
}

/// A whole `chat.completion`, as a server that ignores `stream: true` sends it.
fn completion(content: &str, finish: &str) -> String {
    json!({"id": "x", "object": "chat.completion", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
    .to_string()
}

#[test]
fn a_server_that_does_not_stream_answers_with_one_json_body() {
    let mut rng = Rng(3);
    let content = call("c1", "write_file", &[("path", "a.txt"), ("content", "a\n")]);
    let s = session(
        vec![
            Reply::Json(completion(&content, "tool_calls")),
            // The same server may stream the next turn; both work.
            Reply::stream(sse("", "stop", &mut rng)),
        ],
        Setup::default(),
    );
    assert_eq!(s.run.status, EndStatus::Done, "{}", s.run.transcript);
    assert_eq!(s.run.ids("tool_result"), ["c1"]);
    assert_eq!(s.run.files["a.txt"], b"a\n");
    let assistant = s.run.of_type("assistant");
    assert_eq!(assistant[0]["finish"], "tool_calls");
    assert_eq!(assistant[0]["output"], content.as_str());

    // A `length` finish in a JSON body escalates like a streamed one; a null content is an
    // empty turn.
    let s = session(
        vec![
            Reply::Json(completion(&content[..10], "length")),
            Reply::Json(completion(&content[10..], "stop")),
            Reply::Json(
                json!({"choices": [{"message": {"content": null}, "finish_reason": "stop"}]})
                    .to_string(),
            ),
        ],
        Setup::default(),
    );
    assert_eq!(s.run.status, EndStatus::Done, "{}", s.run.transcript);
    assert_eq!(s.run.files["a.txt"], b"a\n");
    assert_eq!(s.requests[1]["max_tokens"], 16384);

    // A JSON answer is bounded like an event.
    let huge = completion(&"x".repeat(frontier::agent::openai::MAX_EVENT), "stop");
    let s = session(vec![Reply::Json(huge)], Setup::default());
    assert_eq!(s.run.status, EndStatus::ModelError);
    let error = s.run.of_type("model_error")[0];
    assert_eq!(error["kind"], "malformed_event");
    assert!(error["error"]
        .as_str()
        .unwrap()
        .contains("longer than 8388608 bytes"));

    // A JSON body that is not a completion is malformed; an error object is a server error.
    for (body, kind) in [
        ("{\"choices\": [", "malformed_event"),
        ("{\"choices\": []}", "malformed_event"),
        (
            "{\"choices\": [{\"message\": {\"content\": 5}}]}",
            "malformed_event",
        ),
        ("{\"error\": {\"message\": \"overloaded\"}}", "server_error"),
    ] {
        let s = session(vec![Reply::Json(body.into())], Setup::default());
        assert_eq!(s.run.status, EndStatus::ModelError, "{body}");
        assert_eq!(s.run.of_type("model_error")[0]["kind"], kind, "{body}");
    }
}

#[test]
fn cr_only_line_ends_frame_the_events() {
    let write = call("c1", "write_file", &[("path", "a.txt"), ("content", "a\n")]);
    for seed in 1..=4u64 {
        let mut rng = Rng(seed);
        let body = |content: &str, finish: &str, rng: &mut Rng| {
            // JSON escapes every newline of the content, so only the framing changes.
            let lf = sse(content, finish, rng);
            String::from_utf8(lf)
                .unwrap()
                .replace('\n', "\r")
                .into_bytes()
        };
        let replies = vec![
            Reply::stream(body(&write, "tool_calls", &mut rng)),
            Reply::stream(body("", "stop", &mut rng)),
        ];
        let (run, _) = run_openai(replies, seed);
        assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
        assert_eq!(run.files["a.txt"], b"a\n");
    }
}

#[test]
fn garbage_after_the_finish_is_reported_and_the_turn_stands() {
    let write = call("c1", "write_file", &[("path", "a.txt"), ("content", "a\n")]);
    for garbage in [
        &b"data: {\"choices\": [ oops\n\n"[..],
        b"data: <html>502 Bad Gateway</html>\n\n",
        b"data: {\"error\": {\"message\": \"late\"}}\n\n",
        b"data: {\"choices\":[{\"delta\":{\"content\":\"more\"}}]}\n\n",
    ] {
        let mut rng = Rng(8);
        let mut body = sse(&write, "tool_calls", &mut rng);
        let done = find(&body, b"data: [DONE]", 0);
        body.splice(done..done, garbage.iter().copied());
        let s = session(
            vec![
                Reply::stream(body),
                Reply::stream(sse("", "stop", &mut rng)),
            ],
            Setup::default(),
        );
        let shown = String::from_utf8_lossy(garbage);
        assert_eq!(
            s.run.status,
            EndStatus::Done,
            "{shown}: {}",
            s.run.transcript
        );
        assert_eq!(s.run.ids("tool_result"), ["c1"], "{shown}");
        assert_eq!(s.run.of_type("assistant")[0]["finish"], "tool_calls");
        assert_eq!(s.notices.len(), 1, "{shown}: {:?}", s.notices);
        assert!(
            s.notices[0].starts_with("after the finish_reason (tool_calls), ignored:"),
            "{:?}",
            s.notices
        );
    }
    // Before the finish, the same garbage still fails the turn.
    let mut rng = Rng(8);
    let mut body = sse(&write, "tool_calls", &mut rng);
    let at = finish_event(&body);
    body.splice(at..at, b"data: oops\n\n".iter().copied());
    let s = session(vec![Reply::stream(body)], Setup::default());
    assert_eq!(s.run.status, EndStatus::ModelError);
    assert_eq!(s.run.of_type("model_error")[0]["kind"], "malformed_event");
}

#[test]
fn a_finish_without_done_or_close_ends_the_turn_after_the_grace() {
    let write = call("c1", "write_file", &[("path", "a.txt"), ("content", "a\n")]);
    let mut rng = Rng(5);
    let mut body = sse(&write, "tool_calls", &mut rng);
    let done = find(&body, b"data: [DONE]", 0);
    body.truncate(done);
    // The server keeps the connection open for 20 s; the grace is 200 ms.
    let s = session(
        vec![
            Reply::Hold(body, Duration::from_secs(20)),
            Reply::stream(sse("", "stop", &mut rng)),
        ],
        Setup {
            finish_grace: Duration::from_millis(200),
            ..Setup::default()
        },
    );
    assert_eq!(s.run.status, EndStatus::Done, "{}", s.run.transcript);
    assert_eq!(s.run.ids("tool_result"), ["c1"]);
    assert!(s.took < Duration::from_secs(5), "took {:?}", s.took);
    assert_eq!(s.notices.len(), 1, "{:?}", s.notices);
    assert!(
        s.notices[0].contains("OPENAI_FINISH_GRACE"),
        "{:?}",
        s.notices
    );
}

#[test]
fn the_read_timeout_is_configurable_and_fires() {
    let write = call("c1", "write_file", &[("path", "a.txt"), ("content", "a\n")]);
    let second = call("c2", "write_file", &[("path", "b.txt"), ("content", "b\n")]);
    let mut rng = Rng(6);
    let mut body = sse(&(write + &second[..12]), "tool_calls", &mut rng);
    // Silent after the first call and part of the second, before the finish_reason: the read
    // timeout (300 ms) fails the turn; what was complete has run.
    body.truncate(finish_event(&body));
    let setup = || Setup {
        read_timeout: Duration::from_millis(300),
        ..Setup::default()
    };
    let s = session(vec![Reply::Hold(body, Duration::from_secs(20))], setup());
    assert_eq!(s.run.status, EndStatus::ModelError, "{}", s.run.transcript);
    let error = s.run.of_type("model_error")[0];
    assert_eq!(error["kind"], "disconnected");
    assert!(
        error["error"].as_str().unwrap().contains("read timeout"),
        "{error}"
    );
    assert_eq!(s.run.ids("tool_result"), ["c1"]);
    assert!(s.took < Duration::from_secs(5), "took {:?}", s.took);

    // A server that never answers at all.
    let s = session(vec![Reply::Silent(Duration::from_secs(20))], setup());
    assert_eq!(s.run.status, EndStatus::ModelError);
    let error = s.run.of_type("model_error")[0];
    assert_eq!(error["kind"], "disconnected");
    assert!(
        error["error"]
            .as_str()
            .unwrap()
            .contains("no answer within"),
        "{error}"
    );
    assert!(s.took < Duration::from_secs(5), "took {:?}", s.took);
}

#[test]
fn a_user_message_is_always_sent() {
    let mut rng = Rng(9);
    let s = session(
        vec![
            Reply::stream(sse(
                &call("c1", "list_dir", &[("path", ".")]),
                "tool_calls",
                &mut rng,
            )),
            Reply::stream(sse("", "stop", &mut rng)),
        ],
        Setup {
            task: None,
            ..Setup::default()
        },
    );
    assert_eq!(s.run.status, EndStatus::Done, "{}", s.run.transcript);
    for r in &s.requests {
        let messages = r["messages"].as_array().unwrap();
        assert_eq!(messages[0]["role"], "system");
        assert_eq!(messages[1]["role"], "user");
        assert_eq!(messages[1]["content"], DEFAULT_TASK);
    }
    // The second request: system, the default task, the model's turn, the results.
    let roles: Vec<_> = s.requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
}

#[test]
fn the_token_field_is_configurable_and_a_refusal_switches_it_once() {
    let mut rng = Rng(10);
    let list = || call("c1", "list_dir", &[("path", ".")]);
    let s = session(
        vec![Reply::stream(sse("", "stop", &mut rng))],
        Setup {
            token_field: Some(TokenField::MaxCompletionTokens),
            ..Setup::default()
        },
    );
    assert_eq!(s.requests[0]["max_completion_tokens"], 4096);
    assert!(s.requests[0].get("max_tokens").is_none());

    let refusal = r#"{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}"#;
    let s = session(
        vec![
            Reply::raw_status(400, refusal),
            Reply::stream(sse(&list(), "tool_calls", &mut rng)),
            Reply::stream(sse("", "stop", &mut rng)),
        ],
        Setup::default(),
    );
    assert_eq!(s.run.status, EndStatus::Done, "{}", s.run.transcript);
    assert_eq!(s.requests.len(), 3);
    assert_eq!(s.requests[0]["max_tokens"], 4096);
    for r in &s.requests[1..] {
        assert_eq!(r["max_completion_tokens"], 4096);
        assert!(r.get("max_tokens").is_none());
    }
    assert_eq!(s.notices.len(), 1, "{:?}", s.notices);
    assert!(s.notices[0].contains("retrying with `max_completion_tokens`"));
    // One retry, not a second turn: the transcript shows a single turn before `done`.
    assert_eq!(s.run.of_type("assistant").len(), 2);

    // The other field refused too: no second switch, the refusal is the turn's error.
    let back =
        r#"{"error":{"message":"Unrecognized request argument supplied: max_completion_tokens"}}"#;
    let s = session(
        vec![
            Reply::raw_status(400, refusal),
            Reply::raw_status(400, back),
        ],
        Setup::default(),
    );
    assert_eq!(s.run.status, EndStatus::ModelError);
    assert_eq!(s.run.of_type("model_error")[0]["kind"], "bad_request");
    assert_eq!(s.requests.len(), 2);
}

/// `frontier run --model openai` against `base` with `env` set, in a fresh workspace.
fn frontier_run(base: &str, task: Option<&str>, env: &[(&str, &str)]) -> std::process::Output {
    frontier_run_with(base, task, env, &[])
}

/// The same with `args` after the others.
fn frontier_run_with(
    base: &str,
    task: Option<&str>,
    env: &[(&str, &str)],
    args: &[&str],
) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_frontier"));
    command
        .args(["run", "--model", "openai", "--root"])
        .arg(dir.path())
        .args(args)
        // A governed run makes its run directory there.
        .env("XDG_STATE_HOME", dir.path().join(".state"))
        .env("OPENAI_BASE_URL", base)
        .env("OPENAI_MODEL", "test-model")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_READ_TIMEOUT")
        .env_remove("OPENAI_FINISH_GRACE")
        .env_remove("OPENAI_TOKEN_FIELD");
    if let Some(task) = task {
        command.args(["--task", task]);
    }
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

#[test]
fn the_cli_reads_the_settings_from_the_environment_and_needs_a_task() {
    // Bad values are usage errors naming the variable; nothing is asked of the server.
    for (name, value) in [
        ("OPENAI_READ_TIMEOUT", "0"),
        ("OPENAI_READ_TIMEOUT", "5m"),
        ("OPENAI_FINISH_GRACE", "61"),
        ("OPENAI_TOKEN_FIELD", "max_new_tokens"),
    ] {
        let out = frontier_run("http://127.0.0.1:9/v1", Some("t"), &[(name, value)]);
        assert_eq!(out.status.code(), Some(2), "{name}={value}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(name), "{name}={value}: {stderr}");
    }
    for task in [None, Some(""), Some("  ")] {
        let out = frontier_run("http://127.0.0.1:9/v1", task, &[]);
        assert_eq!(out.status.code(), Some(2), "{task:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("needs --task"));
    }

    // OPENAI_READ_TIMEOUT reaches the client: a server silent after its head fails the run
    // in about 0.3 s; OPENAI_TOKEN_FIELD reaches the request.
    let (base, server) = serve(vec![Reply::Hold(Vec::new(), Duration::from_secs(20))], 1);
    let started = Instant::now();
    let out = frontier_run(
        &base,
        Some("t"),
        &[
            ("OPENAI_READ_TIMEOUT", "0.3"),
            ("OPENAI_TOKEN_FIELD", "max_completion_tokens"),
        ],
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(out.status.code(), Some(1));
    let transcript = String::from_utf8_lossy(&out.stdout);
    assert!(
        transcript.contains("no bytes within the read timeout (300ms"),
        "{transcript}"
    );
    let requests = bodies(server);
    assert_eq!(requests[0]["max_completion_tokens"], 4096);

    // Notices go to standard error.
    let refusal =
        r#"{"error":{"message":"Unsupported parameter: 'max_tokens'","param":"max_tokens"}}"#;
    let mut rng = Rng(2);
    let (base, server) = serve(
        vec![
            Reply::raw_status(400, refusal),
            Reply::stream(sse("", "stop", &mut rng)),
        ],
        1,
    );
    let out = frontier_run(&base, Some("t"), &[]);
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("frontier: openai: the server refused `max_tokens` (HTTP 400); retrying with `max_completion_tokens`"),
        "{stderr}"
    );
    assert_eq!(bodies(server).len(), 2);
}

#[test]
fn the_cli_asks_a_real_model_for_extended_ctl_unless_told_otherwise() {
    use frontier::agent::runner::{EXTENDED_SYSTEM_PROMPT, SYSTEM_PROMPT};
    let mut rng = Rng(7);
    let content = "call c1 write_file\narg path = a.txt\narg content <<EOF\nhi\nEOF\nend\n";
    let (base, server) = serve(
        vec![
            Reply::Stream {
                body: sse(content, "tool_calls", &mut rng),
                drop_after: None,
            },
            Reply::Stream {
                body: sse("", "stop", &mut rng),
                drop_after: None,
            },
        ],
        7,
    );
    // The plain loop's requests, byte for byte (`--context off`: no engine).
    let out = frontier_run_with(&base, Some("t"), &[], &["--context", "off"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", out);
    let requests = bodies(server);
    assert_eq!(
        requests[0]["messages"][0]["content"],
        EXTENDED_SYSTEM_PROMPT
    );
    let messages = requests[1]["messages"].as_array().unwrap();
    assert_eq!(messages[2]["content"], content);
    assert_eq!(
        messages.last().unwrap()["content"],
        "result c1 ok = wrote 3 bytes\n"
    );

    let (base, server) = serve(
        vec![Reply::Stream {
            body: sse("", "stop", &mut rng),
            drop_after: None,
        }],
        8,
    );
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_frontier"))
        .args([
            "run",
            "--model",
            "openai",
            "--task",
            "t",
            "--ctl-mode",
            "strict",
            "--context",
            "off",
        ])
        .arg("--root")
        .arg(dir.path())
        .env("OPENAI_BASE_URL", &base)
        .env("OPENAI_MODEL", "test-model")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_TOKEN_FIELD")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{:?}", out);
    assert_eq!(bodies(server)[0]["messages"][0]["content"], SYSTEM_PROMPT);
}

#[test]
fn a_refused_stream_options_is_left_out_for_the_rest_of_the_session() {
    let mut rng = Rng(12);
    let list = || call("c1", "list_dir", &[("path", ".")]);
    let refusal = r#"{"error":{"message":"Unrecognized request argument supplied: stream_options","type":"invalid_request_error"}}"#;
    let s = session(
        vec![
            Reply::raw_status(400, refusal),
            Reply::stream(sse(&list(), "tool_calls", &mut rng)),
            Reply::stream(sse("", "stop", &mut rng)),
        ],
        Setup::default(),
    );
    assert_eq!(s.run.status, EndStatus::Done, "{}", s.run.transcript);
    assert_eq!(s.requests.len(), 3);
    assert_eq!(
        s.requests[0]["stream_options"],
        json!({"include_usage": true})
    );
    for r in &s.requests[1..] {
        assert!(r.get("stream_options").is_none(), "{r}");
        assert_eq!(r["max_tokens"], 4096, "the token field is not switched");
    }
    assert_eq!(s.notices.len(), 1, "{:?}", s.notices);
    assert!(s.notices[0].contains("refused `stream_options`"));
}
