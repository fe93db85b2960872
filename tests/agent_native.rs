//! Native tool calling against loopback servers speaking OpenAI Chat, OpenAI Responses and
//! Anthropic Messages, streamed in random pieces: calls run once when confirmed, cut calls
//! never run and are sent again, malformed calls are refused, broken streams and HTTP errors
//! are retried within their bounds or reported, and every request is in the API's shape.

mod agent_support;

use std::time::{Duration, Instant};

use agent_support::native::{body, c, done, made, provider, results, stream, write_file, End};
use agent_support::server::{serve, Received, Reply, Rng};
use agent_support::{run_native_with, RunResult};
use frontier::agent::provider::{Provider, ProviderConfig, ToolMode};
use frontier::agent::EndStatus;
use frontier::streams::Api;
use serde_json::{json, Value};

const APIS: [Api; 3] = [
    Api::OpenAiChat,
    Api::OpenAiResponses,
    Api::AnthropicMessages,
];

/// Each API under four seeds (fragment sizes and HTTP chunk sizes): `(seed, api)`.
fn cases() -> impl Iterator<Item = (usize, Api)> {
    (0..4).flat_map(|round| {
        APIS.into_iter()
            .enumerate()
            .map(move |(i, api)| (round * 3 + i, api))
    })
}

/// Where the event that names `needle` ends in the stream `text` (just past its blank line).
fn end_of_event_naming(text: &str, needle: &str) -> usize {
    let at = text.find(needle).unwrap();
    at + text[at..].find("\n\n").unwrap() + 2
}

/// Runs a native session of `api` against `replies`, with `files` in the workspace first.
fn run(
    api: Api,
    replies: Vec<Reply>,
    seed: u64,
    files: &[(&str, &str)],
) -> (RunResult, Vec<Received>) {
    let (base, server) = serve(replies, seed);
    let mut model = provider(api, &base);
    let files: Vec<(String, String)> = files
        .iter()
        .map(|(p, c)| (p.to_string(), c.to_string()))
        .collect();
    let run = run_native_with(&mut model, |config| {
        config.task = Some("do the task".into());
        for (path, content) in &files {
            std::fs::write(config.workspace.root().join(path), content).unwrap();
        }
    });
    (run, server.join().unwrap())
}

fn count(run: &RunResult, kind: &str, id: &str) -> usize {
    run.of_type(kind).iter().filter(|r| r["id"] == id).count()
}

fn reasons(run: &RunResult) -> Vec<String> {
    run.of_type("transition")
        .iter()
        .map(|r| r["reason"].as_str().unwrap().to_owned())
        .collect()
}

/// Every call shown as made has exactly one result, right after the calls of its turn.
fn assert_paired(api: Api, body: &Value) {
    let made = made(api, body);
    let answered: Vec<String> = results(api, body).into_iter().map(|(id, _)| id).collect();
    assert_eq!(made, answered, "{}: calls and results", api.name());
}

fn max_tokens(api: Api, body: &Value) -> u64 {
    let field = match api {
        Api::OpenAiChat => "max_tokens",
        Api::OpenAiResponses => "max_output_tokens",
        Api::AnthropicMessages => "max_tokens",
    };
    body[field].as_u64().unwrap()
}

const PATCH: &str =
    "*** Begin Patch\n*** Update File: a.txt\n@@\n-hello\n+hello, world\n*** End Patch\n";

#[test]
fn a_session_of_native_calls_runs_each_once_and_answers_in_the_apis_shape() {
    for (seed, api) in cases() {
        let mut rng = Rng(0x9e37 + seed as u64);
        let calls = [
            c("call_1", "read_file", json!({"path": "a.txt"})),
            write_file("call_2", "b.txt", "new\n"),
            c("call_3", "apply_patch", json!({"patch": PATCH})),
        ];
        let replies = vec![
            stream(api, "Reading and editing.", &calls, End::Done, &mut rng),
            done(api, &mut rng),
        ];
        let (run, requests) = run(api, replies, 7 + seed as u64, &[("a.txt", "hello\n")]);
        let name = api.name();
        assert_eq!(run.status, EndStatus::Done, "{name}: {}", run.transcript);
        assert_eq!(run.files["b.txt"], b"new\n", "{name}");
        assert_eq!(run.files["a.txt"], b"hello, world\n", "{name}");
        for call in &calls {
            assert_eq!(
                count(&run, "tool_result", call.id),
                1,
                "{name}: {}",
                call.id
            );
        }
        assert_eq!(reasons(&run), ["next_turn"], "{name}");
        assert_eq!(requests.len(), 2, "{name}");
        // The first request declares the tools; Responses offers apply_patch as the freeform
        // tool with its grammar.
        let tools = requests[0].body["tools"].as_array().unwrap();
        assert_eq!(tools.len(), 5, "{name}");
        let patch_tool = &tools[3];
        match api {
            Api::OpenAiChat => assert_eq!(patch_tool["function"]["name"], "apply_patch"),
            Api::OpenAiResponses => {
                assert_eq!(patch_tool["type"], "custom");
                assert_eq!(patch_tool["format"]["syntax"], "lark");
                assert!(patch_tool["format"]["definition"]
                    .as_str()
                    .unwrap()
                    .contains("begin_patch"));
            }
            Api::AnthropicMessages => {
                assert!(patch_tool["input_schema"]["properties"]["patch"].is_object())
            }
        }
        assert_eq!(requests[0].body["stream"], true);
        // The second request carries the calls and their results, paired by id.
        assert_paired(api, &requests[1].body);
        let got = results(api, &requests[1].body);
        assert_eq!(got.len(), 3, "{name}");
        assert_eq!(
            got[0],
            ("call_1".to_owned(), "hello\n".to_owned()),
            "{name}"
        );
        match api {
            Api::OpenAiChat => {
                assert_eq!(requests[0].path, "/v1/chat/completions");
                assert_eq!(requests[0].headers["authorization"], "Bearer test-key");
                assert_eq!(requests[0].body["messages"][0]["role"], "system");
            }
            Api::OpenAiResponses => {
                assert_eq!(requests[0].path, "/v1/responses");
                assert_eq!(requests[0].headers["authorization"], "Bearer test-key");
                let kinds: Vec<&str> = requests[1].body["input"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|i| i["type"].as_str().unwrap_or("message"))
                    .collect();
                assert_eq!(
                    kinds,
                    [
                        "message",
                        "message",
                        "function_call",
                        "function_call",
                        "custom_tool_call",
                        "function_call_output",
                        "function_call_output",
                        "custom_tool_call_output"
                    ]
                );
                assert_eq!(requests[1].body["input"][4]["input"], PATCH);
            }
            Api::AnthropicMessages => {
                assert_eq!(requests[0].path, "/v1/messages");
                assert_eq!(requests[0].headers["x-api-key"], "test-key");
                assert_eq!(requests[0].headers["anthropic-version"], "2023-06-01");
                let messages = requests[1].body["messages"].as_array().unwrap();
                let roles: Vec<&str> = messages
                    .iter()
                    .map(|m| m["role"].as_str().unwrap())
                    .collect();
                assert_eq!(roles, ["user", "assistant", "user"]);
                assert_eq!(messages[1]["content"][1]["input"], json!({"path": "a.txt"}));
                assert_eq!(messages[2]["content"][0]["is_error"], false);
            }
        }
    }
}

#[test]
fn a_call_cut_by_the_token_limit_never_runs_and_runs_once_when_sent_again() {
    for (seed, api) in cases() {
        let mut rng = Rng(0x51 + seed as u64);
        let write = write_file("call_2", "b.txt", "whole\n");
        let first = [
            c("call_1", "read_file", json!({"path": "a.txt"})),
            write.clone().cut_at(20),
        ];
        let again = [write_file("call_3", "b.txt", "whole\n")];
        let replies = vec![
            stream(api, "", &first, End::Limit, &mut rng),
            stream(api, "", &again, End::Done, &mut rng),
            done(api, &mut rng),
        ];
        let (run, requests) = run(api, replies, 11 + seed as u64, &[("a.txt", "hello\n")]);
        let name = api.name();
        assert_eq!(run.status, EndStatus::Done, "{name}: {}", run.transcript);
        assert_eq!(run.files["b.txt"], b"whole\n", "{name}");
        // The cut call never ran; the one sent again ran once.
        assert_eq!(count(&run, "tool_result", "call_2"), 0, "{name}");
        assert_eq!(count(&run, "tool_call", "call_2"), 0, "{name}");
        assert_eq!(count(&run, "tool_result", "call_3"), 1, "{name}");
        assert_eq!(count(&run, "tool_result", "call_1"), 1, "{name}");
        assert_eq!(
            reasons(&run),
            ["escalate_output_limit", "next_turn"],
            "{name}"
        );
        // The continuation raised the limit and told the model what ran.
        assert_eq!(max_tokens(api, &requests[0].body), 4096, "{name}");
        assert_eq!(max_tokens(api, &requests[1].body), 16384, "{name}");
        assert_paired(api, &requests[1].body);
        let text = requests[1].body.to_string();
        assert!(text.contains("output limit"), "{name}: {text}");
        // A cut call is shown as not made (Chat, Responses), or made and refused (Anthropic,
        // whose block was stopped with the JSON cut).
        let made = made(api, &requests[1].body);
        match api {
            Api::AnthropicMessages => assert_eq!(made, ["call_1", "call_2"]),
            _ => {
                assert_eq!(made, ["call_1"], "{name}");
                assert_eq!(count(&run, "incomplete_call", "call_2"), 1, "{name}");
                assert!(text.contains("call_2 (write_file) was cut"), "{name}");
            }
        }
    }
}

#[test]
fn a_call_finished_with_cut_arguments_is_refused_as_malformed() {
    for (seed, api) in APIS.into_iter().enumerate() {
        let mut rng = Rng(0x77 + seed as u64);
        let cut = [write_file("call_1", "b.txt", "never").cut_at(25)];
        let replies = vec![
            stream(api, "", &cut, End::Relabelled, &mut rng),
            stream(api, "Giving up.", &[], End::Done, &mut rng),
        ];
        let (run, requests) = run(api, replies, 3 + seed as u64, &[]);
        let name = api.name();
        assert_eq!(run.status, EndStatus::Done, "{name}: {}", run.transcript);
        assert!(!run.files.contains_key("b.txt"), "{name}");
        assert_eq!(count(&run, "malformed_call", "call_1"), 1, "{name}");
        assert_eq!(count(&run, "tool_result", "call_1"), 0, "{name}");
        assert_eq!(count(&run, "refused", "call_1"), 1, "{name}");
        assert_eq!(reasons(&run), ["stream_error_nudge"], "{name}");
        assert_paired(api, &requests[1].body);
        let got = results(api, &requests[1].body);
        assert_eq!(got.len(), 1, "{name}");
        assert!(
            got[0].1.starts_with("refused: malformed_call"),
            "{name}: {}",
            got[0].1
        );
        if api == Api::AnthropicMessages {
            assert_eq!(
                requests[1].body["messages"][2]["content"][0]["is_error"],
                true
            );
        }
    }
}

#[test]
fn a_dropped_connection_keeps_what_ran_and_asks_again_once() {
    for (seed, api) in cases() {
        let mut rng = Rng(0x33 + seed as u64);
        let calls = [
            write_file("call_1", "a.txt", "one\n"),
            write_file("call_2", "b.txt", "two\n"),
        ];
        let whole = body(api, "", &calls, End::Done, &mut rng);
        // Cut inside the event after the one that starts the second call: the first is
        // confirmed by then (on Chat, by that very event).
        let text = String::from_utf8(whole.clone()).unwrap();
        let at = end_of_event_naming(&text, "\"call_2\"") + 10;
        let again = [write_file("call_3", "b.txt", "two\n")];
        let replies = vec![
            Reply::dropped(whole, at),
            stream(api, "", &again, End::Done, &mut rng),
            done(api, &mut rng),
        ];
        let (run, requests) = run(api, replies, 5 + seed as u64, &[]);
        let name = api.name();
        assert_eq!(run.status, EndStatus::Done, "{name}: {}", run.transcript);
        assert_eq!(count(&run, "tool_result", "call_1"), 1, "{name}");
        assert_eq!(count(&run, "tool_result", "call_2"), 0, "{name}");
        assert_eq!(count(&run, "tool_result", "call_3"), 1, "{name}");
        assert_eq!(run.files["b.txt"], b"two\n");
        assert_eq!(
            run.of_type("model_error")[0]["kind"],
            "disconnected",
            "{name}"
        );
        assert_eq!(reasons(&run), ["retry_turn", "next_turn"], "{name}");
        assert_eq!(made(api, &requests[1].body), ["call_1"], "{name}");
        assert_paired(api, &requests[1].body);
        assert!(requests[1].body.to_string().contains("broke off"), "{name}");
    }
}

#[test]
fn streams_that_keep_breaking_end_the_run_after_the_bound() {
    let api = Api::OpenAiChat;
    let mut rng = Rng(1);
    let calls = [c("call_1", "read_file", json!({"path": "a.txt"}))];
    let whole = body(api, "", &calls, End::Done, &mut rng);
    let replies = (0..3).map(|_| Reply::dropped(whole.clone(), 40)).collect();
    let (run, requests) = run(api, replies, 1, &[]);
    assert_eq!(run.status, EndStatus::ModelError, "{}", run.transcript);
    assert_eq!(requests.len(), 3, "the first request and two retries");
    assert_eq!(reasons(&run), ["retry_turn", "retry_turn"]);
    assert!(run.of_type("tool_call").is_empty());
    // Nothing ran, so each retry was the very same request.
    assert_eq!(requests[0].body, requests[2].body);
}

#[test]
fn an_error_event_mid_stream_keeps_what_ran_and_asks_again() {
    for (seed, api) in APIS.into_iter().enumerate() {
        let mut rng = Rng(0x44 + seed as u64);
        let calls = [
            write_file("call_1", "a.txt", "one\n"),
            write_file("call_2", "b.txt", "two\n").cut_at(12),
        ];
        let replies = vec![
            stream(api, "", &calls, End::ErrorEvent, &mut rng),
            done(api, &mut rng),
        ];
        let (run, requests) = run(api, replies, 9 + seed as u64, &[]);
        let name = api.name();
        assert_eq!(run.status, EndStatus::Done, "{name}: {}", run.transcript);
        assert_eq!(run.files["a.txt"], b"one\n", "{name}");
        assert!(!run.files.contains_key("b.txt"), "{name}");
        assert_eq!(count(&run, "tool_result", "call_1"), 1, "{name}");
        assert_eq!(
            run.of_type("model_error")[0]["kind"],
            "server_error",
            "{name}"
        );
        assert_eq!(reasons(&run), ["retry_turn"], "{name}");
        assert_paired(api, &requests[1].body);
    }
}

fn status_with(code: u16, retry_after: &str) -> Reply {
    Reply::Status {
        code,
        headers: vec![("Retry-After".into(), retry_after.into())],
        body: json!({"error": {"message": "slow down"}}).to_string(),
    }
}

#[test]
fn rate_limits_and_server_errors_are_retried_with_backoff() {
    for (seed, api) in APIS.into_iter().enumerate() {
        let mut rng = Rng(0x21 + seed as u64);
        let calls = [write_file("call_1", "a.txt", "x")];
        let replies = vec![
            status_with(429, "1"),
            status_with(429, "Thu, 01 Jan 1970 00:00:00 GMT"),
            Reply::status(
                if api == Api::AnthropicMessages {
                    529
                } else {
                    500
                },
                "overloaded",
            ),
            stream(api, "", &calls, End::Done, &mut rng),
            done(api, &mut rng),
        ];
        let started = Instant::now();
        let (run, requests) = run(api, replies, 2 + seed as u64, &[]);
        let name = api.name();
        assert_eq!(run.status, EndStatus::Done, "{name}: {}", run.transcript);
        assert!(
            started.elapsed() >= Duration::from_secs(1),
            "{name}: retry-after honoured"
        );
        assert_eq!(requests.len(), 5, "{name}");
        assert_eq!(
            requests[0].body, requests[3].body,
            "{name}: the same request again"
        );
        assert_eq!(count(&run, "tool_result", "call_1"), 1, "{name}");
        assert!(run.of_type("model_error").is_empty(), "{name}");
    }
}

#[test]
fn retries_are_bounded_and_client_errors_are_not_retried() {
    for (seed, api) in APIS.into_iter().enumerate() {
        // Exactly the replies expected: one request more would find no server.
        let replies = (0..4).map(|_| Reply::status(503, "unavailable")).collect();
        let (run, requests) = run(api, replies, seed as u64, &[]);
        assert_eq!(run.status, EndStatus::ModelError);
        assert_eq!(requests.len(), 4, "the first attempt and three retries");
        let error = run.of_type("model_error")[0];
        assert_eq!(error["kind"], "server_error");
        assert!(
            error["error"].as_str().unwrap().contains("after 3 retries"),
            "{error}"
        );

        let (run, requests) = run_once(api, Reply::status(401, "invalid x-api-key"));
        assert_eq!(run.status, EndStatus::ModelError);
        assert_eq!(requests.len(), 1, "a 401 is not retried");
        let error = run.of_type("model_error")[0];
        assert_eq!(error["kind"], "unauthorized");
        let text = error["error"].as_str().unwrap();
        let key = if api == Api::AnthropicMessages {
            "ANTHROPIC_API_KEY"
        } else {
            "OPENAI_API_KEY"
        };
        assert!(
            text.contains("HTTP 401") && text.contains(key) && text.contains("invalid x-api-key"),
            "{text}"
        );

        let (run, requests) = run_once(api, Reply::status(400, "bad tools"));
        assert_eq!(requests.len(), 1);
        assert_eq!(run.of_type("model_error")[0]["kind"], "bad_request");

        // A retry-after beyond the bound is not slept through.
        let (run, requests) = run_once(api, status_with(429, "86400"));
        assert_eq!(requests.len(), 1);
        let error = run.of_type("model_error")[0];
        assert_eq!(error["kind"], "rate_limited");
        assert!(
            error["error"].as_str().unwrap().contains("86400"),
            "{error}"
        );
    }
}

/// One reply: a second request would find no server (a transport error).
fn run_once(api: Api, reply: Reply) -> (RunResult, Vec<Received>) {
    run(api, vec![reply], 0, &[])
}

#[test]
fn ctl_in_the_text_of_responses_and_anthropic_streams() {
    for (seed, api) in [Api::OpenAiResponses, Api::AnthropicMessages]
        .into_iter()
        .enumerate()
    {
        let mut rng = Rng(0x61 + seed as u64);
        let ctl = "call c1 write_file\narg path = a.txt\narg content <<EOF\nfrom ctl\nEOF\nend\n";
        let replies = vec![
            stream(api, ctl, &[], End::Done, &mut rng),
            stream(api, "", &[], End::Done, &mut rng),
        ];
        let (base, server) = serve(replies, 4);
        let base = if api == Api::AnthropicMessages {
            base
        } else {
            format!("{base}/v1")
        };
        let mut config = ProviderConfig::new(api, base, "test-model");
        config.read_timeout = Duration::from_secs(10);
        let mut model = Provider::new(config, ToolMode::Ctl).with_notices(|_| {});
        let run = agent_support::run_with(&mut model, |c| {
            c.ctl_mode = frontier::language::CtlMode::Extended;
        });
        let requests = server.join().unwrap();
        let name = api.name();
        assert_eq!(run.status, EndStatus::Done, "{name}: {}", run.transcript);
        assert_eq!(run.files["a.txt"], b"from ctl\n", "{name}");
        assert!(requests[0].body.get("tools").is_none(), "{name}");
        let text = requests[1].body.to_string();
        assert!(text.contains("result c1 ok"), "{name}: {text}");
        if api == Api::AnthropicMessages {
            let roles: Vec<&str> = requests[1].body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["role"].as_str().unwrap())
                .collect();
            assert_eq!(roles, ["user", "assistant", "user"]);
        }
    }
}

#[test]
fn the_cli_runs_native_tools_from_the_environment() {
    let mut rng = Rng(5);
    let api = Api::AnthropicMessages;
    let calls = [write_file("toolu_1", "a.txt", "cli\n")];
    let replies = vec![
        stream(api, "", &calls, End::Done, &mut rng),
        done(api, &mut rng),
    ];
    let (base, server) = serve(replies, 6);
    let dir = tempfile::tempdir().unwrap();
    let runs = tempfile::tempdir().unwrap();
    let run_dir = runs.path().join("run");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_frontier"))
        .args([
            "run",
            "--model",
            "anthropic",
            "--tools",
            "native",
            "--task",
            "write it",
            "--generational",
            "--run-dir",
        ])
        .arg(&run_dir)
        .arg("--root")
        .arg(dir.path())
        .env("XDG_STATE_HOME", runs.path())
        .env("ANTHROPIC_BASE_URL", &base)
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_MODEL", "claude-test")
        .output()
        .unwrap();
    let requests = server.join().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"cli\n");
    assert_eq!(requests[0].body["model"], "claude-test");
    assert_eq!(requests[0].headers["x-api-key"], "k");
    // Governed by default (cpat: the context tools declared), with the generational layout
    // recorded in the run directory.
    let declared: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(declared.contains(&"context_update"), "{declared:?}");
    let run_json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(run_json["generational"], true, "{run_json}");
    let transcript = String::from_utf8(out.stdout).unwrap();
    assert!(
        transcript.contains(r#""model":"anthropic-messages:claude-test""#),
        "{transcript}"
    );

    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_frontier"))
        .args([
            "run",
            "--model",
            "replay:x.jsonl",
            "--tools",
            "native",
            "--root",
        ])
        .arg(dir.path())
        .env("XDG_STATE_HOME", runs.path())
        .output()
        .unwrap();
    assert_eq!(
        bad.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--tools native needs a live model"));
    let no_model = std::process::Command::new(env!("CARGO_BIN_EXE_frontier"))
        .args(["run", "--model", "anthropic", "--task", "t", "--root"])
        .arg(dir.path())
        .env("XDG_STATE_HOME", runs.path())
        .env_remove("ANTHROPIC_MODEL")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&no_model.stderr).contains("ANTHROPIC_MODEL is not set"));
}

#[test]
fn the_chat_ctl_client_retries_the_same_statuses() {
    use frontier::agent::openai::{OpenAi, OpenAiConfig};
    let api = Api::OpenAiChat;
    let mut rng = Rng(8);
    let ctl = "call c1 write_file\narg path = a.txt\narg content = x\nend\n";
    let replies = vec![
        status_with(429, "0"),
        Reply::status(502, "bad gateway"),
        stream(api, ctl, &[], End::Done, &mut rng),
        stream(api, "", &[], End::Done, &mut rng),
    ];
    let (base, server) = serve(replies, 3);
    let mut config = OpenAiConfig::new(format!("{base}/v1"), "test-model");
    config.read_timeout = Duration::from_secs(10);
    config.retry.base = Duration::from_millis(10);
    let mut model = OpenAi::new(config).with_notices(|_| {});
    let run = agent_support::run_with(&mut model, |c| {
        c.ctl_mode = frontier::language::CtlMode::Extended;
    });
    let requests = server.join().unwrap();
    assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
    assert_eq!(requests.len(), 4);
    assert_eq!(run.files["a.txt"], b"x");
    assert!(run.of_type("model_error").is_empty());

    let (base, server) = serve(vec![Reply::status(401, "no such key")], 3);
    let mut model = OpenAi::new(OpenAiConfig::new(format!("{base}/v1"), "m")).with_notices(|_| {});
    let run = agent_support::run_with(&mut model, |_| {});
    assert_eq!(server.join().unwrap().len(), 1);
    let error = run.of_type("model_error")[0];
    assert_eq!(error["kind"], "unauthorized");
    assert!(
        error["error"]
            .as_str()
            .unwrap()
            .contains("check OPENAI_API_KEY"),
        "{error}"
    );
}

#[test]
fn a_connection_dropped_after_the_finish_leaves_the_turn_standing() {
    for (seed, api) in [Api::OpenAiChat, Api::AnthropicMessages]
        .into_iter()
        .enumerate()
    {
        let mut rng = Rng(0x90 + seed as u64);
        let calls = [write_file("call_1", "a.txt", "x")];
        let whole = body(api, "", &calls, End::Done, &mut rng);
        let text = String::from_utf8(whole.clone()).unwrap();
        // Before `[DONE]` (Chat) or `message_stop` (Anthropic).
        let at = text
            .find("data: [DONE]")
            .or_else(|| text.find("event: message_stop"))
            .unwrap();
        let replies = vec![Reply::dropped(whole, at), done(api, &mut rng)];
        let (run, requests) = run(api, replies, 12, &[]);
        let name = api.name();
        assert_eq!(run.status, EndStatus::Done, "{name}: {}", run.transcript);
        assert_eq!(reasons(&run), ["next_turn"], "{name}");
        assert!(run.of_type("model_error").is_empty(), "{name}");
        assert_eq!(requests.len(), 2, "{name}");
    }
}

#[test]
fn calls_the_policy_refuses_are_answered_not_run() {
    let api = Api::OpenAiChat;
    let mut rng = Rng(0x12);
    let calls = [
        c(
            "call_1",
            "write_file",
            json!({"path": "a.txt", "content": 5}),
        ),
        c("call_2", "delete_everything", json!({})),
        write_file("call_3", "../out.txt", "x"),
        c(
            "call_4",
            "read_file",
            json!({"path": "a.txt", "extra": "y"}),
        ),
    ];
    let replies = vec![
        stream(api, "", &calls, End::Done, &mut rng),
        stream(api, "", &[], End::Done, &mut rng),
    ];
    let (run, requests) = run(api, replies, 13, &[]);
    assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
    assert!(run.of_type("tool_result").is_empty(), "{}", run.transcript);
    assert_eq!(run.ids("refused"), ["call_1", "call_2", "call_3", "call_4"]);
    let refused = run.of_type("refused");
    assert!(refused[0]["reason"]
        .as_str()
        .unwrap()
        .starts_with("invalid_argument"));
    assert!(refused[1]["reason"]
        .as_str()
        .unwrap()
        .starts_with("unknown_tool"));
    assert_paired(api, &requests[1].body);
    assert!(results(api, &requests[1].body)
        .iter()
        .all(|(_, out)| out.starts_with("refused: ")));
    assert_eq!(run.files.len(), 0);
}

#[test]
fn only_the_toolsets_tools_are_declared() {
    let api = Api::AnthropicMessages;
    let mut rng = Rng(0x13);
    let (base, server) = serve(
        vec![stream(api, "Nothing to do.", &[], End::Done, &mut rng)],
        1,
    );
    let mut model = provider(api, &base);
    let run = run_native_with(&mut model, |c| {
        c.toolset = frontier::agent::Toolset::Background
    });
    let requests = server.join().unwrap();
    assert_eq!(run.status, EndStatus::Done);
    let names: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["read_file", "list_dir"]);
    assert_eq!(requests[0].body["messages"][0]["role"], "user");
    assert_eq!(requests[0].body["max_tokens"], 4096);
}

#[test]
fn garbage_in_the_stream_ends_the_run_with_its_offset_after_the_confirmed_calls() {
    for (seed, api) in APIS.into_iter().enumerate() {
        let mut rng = Rng(0x14 + seed as u64);
        let calls = [
            write_file("call_1", "a.txt", "kept"),
            write_file("call_2", "b.txt", "never"),
        ];
        let whole = String::from_utf8(body(api, "", &calls, End::Done, &mut rng)).unwrap();
        // Garbage right after the event that starts the second call: the first call is
        // confirmed by then (on Chat, by that very event).
        let event_start = end_of_event_naming(&whole, "\"call_2\"");
        let mut broken = whole[..event_start].to_owned();
        broken.push_str("data: {\"not json\n\n");
        let offset = event_start;
        let (run, requests) = run(api, vec![Reply::stream(broken.into_bytes())], 15, &[]);
        let name = api.name();
        assert_eq!(
            run.status,
            EndStatus::ModelError,
            "{name}: {}",
            run.transcript
        );
        assert_eq!(requests.len(), 1, "{name}");
        assert_eq!(run.files["a.txt"], b"kept", "{name}");
        assert!(!run.files.contains_key("b.txt"), "{name}");
        let error = run.of_type("model_error")[0];
        assert_eq!(error["kind"], "malformed_event", "{name}");
        let reported = error["offset"].as_u64().unwrap() as usize;
        assert_eq!(reported, offset, "{name}: the offset of the bad event");
    }
}

#[test]
fn a_context_overflow_clears_the_older_results_once_and_asks_again() {
    for (seed, api) in APIS.into_iter().enumerate() {
        let mut rng = Rng(0x15 + seed as u64);
        let overflow = match api {
            Api::AnthropicMessages => "prompt is too long: 210000 tokens > 200000 maximum",
            _ => "context_length_exceeded",
        };
        let replies = vec![
            stream(
                api,
                "",
                &[c("call_1", "read_file", json!({"path": "a.txt"}))],
                End::Done,
                &mut rng,
            ),
            stream(
                api,
                "",
                &[c("call_2", "read_file", json!({"path": "b.txt"}))],
                End::Done,
                &mut rng,
            ),
            Reply::status(400, overflow),
            done(api, &mut rng),
        ];
        let (run, requests) = run(api, replies, 16, &[("a.txt", "first"), ("b.txt", "second")]);
        let name = api.name();
        assert_eq!(run.status, EndStatus::Done, "{name}: {}", run.transcript);
        assert_eq!(
            reasons(&run),
            ["next_turn", "next_turn", "compact_retry"],
            "{name}"
        );
        assert_eq!(
            run.of_type("model_error")[0]["kind"],
            "context_overflow",
            "{name}"
        );
        assert_eq!(
            results(api, &requests[2].body),
            [
                ("call_1".to_owned(), "first".to_owned()),
                ("call_2".to_owned(), "second".to_owned())
            ],
            "{name}"
        );
        let cleared = "[earlier tool results cleared to fit the context window]".to_owned();
        assert_eq!(
            results(api, &requests[3].body),
            [
                ("call_1".to_owned(), cleared),
                ("call_2".to_owned(), "second".to_owned())
            ],
            "{name}"
        );
        assert_paired(api, &requests[3].body);
    }
    // A second overflow in the same stretch ends the run.
    let api = Api::OpenAiChat;
    let replies = vec![
        Reply::status(400, "context_length_exceeded"),
        Reply::status(400, "context_length_exceeded"),
    ];
    let (run, requests) = run(api, replies, 17, &[]);
    assert_eq!(run.status, EndStatus::RecoveryExhausted);
    assert_eq!(requests.len(), 2);
}

#[test]
fn a_refused_token_field_is_switched_once_with_native_tools() {
    let api = Api::OpenAiChat;
    let mut rng = Rng(0x16);
    let refusal =
        r#"{"error":{"message":"Unsupported parameter: 'max_tokens'","param":"max_tokens"}}"#;
    let replies = vec![
        Reply::Status {
            code: 400,
            headers: Vec::new(),
            body: refusal.into(),
        },
        stream(
            api,
            "",
            &[c("call_1", "read_file", json!({"path": "a.txt"}))],
            End::Done,
            &mut rng,
        ),
        done(api, &mut rng),
    ];
    let (run, requests) = run(api, replies, 18, &[("a.txt", "x")]);
    assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].body["max_tokens"], 4096);
    for request in &requests[1..] {
        assert_eq!(request.body["max_completion_tokens"], 4096);
        assert!(request.body.get("max_tokens").is_none());
    }
}

#[test]
fn a_chat_server_that_refuses_stream_options_is_asked_again_without_it() {
    let api = Api::OpenAiChat;
    let mut rng = Rng(19);
    let refusal = r#"{"object":"error","message":"[{'type': 'extra_forbidden', 'loc': ('body', 'stream_options'), 'msg': 'Extra inputs are not permitted'}]","type":"BadRequestError","param":null,"code":400}"#;
    let replies = vec![
        Reply::Status {
            code: 400,
            headers: Vec::new(),
            body: refusal.into(),
        },
        stream(
            api,
            "",
            &[c("call_1", "read_file", json!({"path": "a.txt"}))],
            End::Done,
            &mut rng,
        ),
        done(api, &mut rng),
    ];
    let (run, requests) = run(api, replies, 19, &[("a.txt", "x")]);
    assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
    assert_eq!(requests.len(), 3);
    assert_eq!(
        requests[0].body["stream_options"],
        json!({"include_usage": true})
    );
    for request in &requests[1..] {
        assert!(request.body.get("stream_options").is_none());
        assert_eq!(request.body["max_tokens"], 4096);
    }
}
