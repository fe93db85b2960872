//! The OpenAI path against a real HTTP server on the loopback interface: streamed chunks of
//! random sizes, a `length` finish, dropped connections, malformed events, error statuses.

mod agent_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread::JoinHandle;
use std::time::Duration;

use agent_support::{replay, run_with, RunResult};
use frontier::agent::openai::{OpenAi, OpenAiConfig};
use frontier::agent::replay::Turn;
use frontier::agent::{EndStatus, Finish, Toolset};
use serde_json::{json, Value};

/// A tiny deterministic generator for chunk sizes.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// What the server answers to one request.
enum Reply {
    /// A 200 event stream of these raw bytes, written in HTTP chunks of random sizes; with
    /// `drop_after`, the socket is closed after that many body bytes, mid-stream.
    Stream {
        body: Vec<u8>,
        drop_after: Option<usize>,
    },
    /// An error status with a JSON body.
    Status(u16, String),
}

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
    let mut rest = content;
    while !rest.is_empty() {
        let mut n = 1 + rng.below(12);
        while n < rest.len() && !rest.is_char_boundary(n) {
            n += 1;
        }
        let n = n.min(rest.len());
        body.push_str(&event(json!({"content": &rest[..n]}), Value::Null));
        rest = &rest[n..];
    }
    body.push_str(&event(json!({}), json!(finish)));
    body.push_str("data: [DONE]\n\n");
    body.into_bytes()
}

/// Serves `replies` in order, one connection each; returns the request bodies it received.
fn serve(replies: Vec<Reply>, seed: u64) -> (String, JoinHandle<Vec<Value>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let mut rng = Rng(seed);
        let mut requests = Vec::new();
        for reply in replies {
            let (stream, _) = listener.accept().unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            requests.push(read_request(&stream));
            let mut stream = stream;
            match reply {
                Reply::Status(code, body) => {
                    let _ = write!(
                        stream,
                        "HTTP/1.1 {code} Error\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                }
                Reply::Stream { body, drop_after } => {
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                    );
                    let end = drop_after.unwrap_or(body.len()).min(body.len());
                    let mut at = 0;
                    while at < end {
                        let n = (1 + rng.below(40)).min(end - at);
                        let _ = write!(stream, "{n:x}\r\n");
                        let _ = stream.write_all(&body[at..at + n]);
                        let _ = stream.write_all(b"\r\n");
                        let _ = stream.flush();
                        at += n;
                        if rng.below(8) == 0 {
                            std::thread::sleep(Duration::from_millis(1));
                        }
                    }
                    if drop_after.is_none() {
                        let _ = stream.write_all(b"0\r\n\r\n");
                    }
                }
            }
            let _ = stream.flush();
            drop(stream);
        }
        requests
    });
    (base, handle)
}

fn read_request(stream: &TcpStream) -> Value {
    let mut reader = BufReader::new(stream);
    let mut length = 0;
    let mut line = String::new();
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        if line == "\r\n" || line.is_empty() {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    serde_json::from_slice(&body).unwrap()
}

fn config(base: &str) -> OpenAiConfig {
    let mut config = OpenAiConfig::new(base, "test-model");
    config.api_key = Some("test-key".into());
    config.read_timeout = Duration::from_secs(10);
    config
}

fn client(base: &str) -> OpenAi {
    OpenAi::new(config(base))
}

fn run_openai(replies: Vec<Reply>, seed: u64) -> (RunResult, Vec<Value>) {
    let (base, server) = serve(replies, seed);
    let mut model = client(&base);
    let run = run_with(&mut model, |c| c.task = Some("fix the greeting".into()));
    (run, server.join().unwrap())
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
            .map(|(content, finish)| Reply::Stream {
                body: sse(content, finish, &mut rng),
                drop_after: None,
            })
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
            vec![Reply::Stream {
                body: body.clone(),
                drop_after: Some(drop_after),
            }],
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
    let (run, _) = run_openai(
        vec![Reply::Stream {
            body,
            drop_after: None,
        }],
        9,
    );
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
        let (run, _) = run_openai(
            vec![Reply::Stream {
                body,
                drop_after: None,
            }],
            3,
        );
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
    let (run, _) = run_openai(
        vec![Reply::Stream {
            body,
            drop_after: None,
        }],
        4,
    );
    assert_eq!(run.status, EndStatus::StreamError);
    assert_eq!(run.ids("tool_result"), ["c1"]);
    assert_eq!(run.of_type("stream_error")[0]["byte"], u64::from(b'D'));
}

#[test]
fn context_overflow_status_compacts_and_retries_once() {
    let overflow = r#"{"error":{"message":"This model's maximum context length is 8192 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}"#;
    let mut rng = Rng(11);
    let replies = vec![
        Reply::Stream {
            body: sse(
                &call("c1", "list_dir", &[("path", ".")]),
                "tool_calls",
                &mut rng,
            ),
            drop_after: None,
        },
        Reply::Stream {
            body: sse(
                &call("c2", "list_dir", &[("path", ".")]),
                "tool_calls",
                &mut rng,
            ),
            drop_after: None,
        },
        Reply::Status(400, overflow.into()),
        Reply::Stream {
            body: sse("", "stop", &mut rng),
            drop_after: None,
        },
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
        Reply::Status(400, overflow.into()),
        Reply::Status(400, overflow.into()),
    ];
    let (run, _) = run_openai(replies, 13);
    assert_eq!(run.status, EndStatus::RecoveryExhausted);
}

#[test]
fn server_errors_and_refused_connections_are_model_errors() {
    let (run, _) = run_openai(vec![Reply::Status(500, r#"{"error":"boom"}"#.into())], 1);
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
    let (run, _) = run_openai(
        vec![Reply::Stream {
            body,
            drop_after: None,
        }],
        2,
    );
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
