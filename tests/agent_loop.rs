//! The loop's semantics on hand-made streams: refusals, toolsets, broken streams, failing
//! tools, the recovery state machine, concurrency partitioning.

mod agent_support;

use std::time::Duration;

use agent_support::{replay, run_with};
use frontier::agent::replay::{Replay, Turn};
use frontier::agent::shell::{self, ShellLimits};
use frontier::agent::{EndStatus, Finish, Toolset};

fn call(id: &str, name: &str, args: &[(&str, &str)]) -> String {
    let mut out = format!("call {id} {name}\n");
    for (key, value) in args {
        out.push_str(&format!("arg {key} {}\n{value}", value.len()));
    }
    out.push_str("end\n");
    out
}

fn out(text: impl Into<String>, finish: Finish) -> Turn {
    Turn::Output {
        bytes: text.into().into_bytes(),
        finish,
    }
}

fn reason(run: &agent_support::RunResult, id: &str) -> String {
    run.of_type("refused")
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("{id} was not refused: {}", run.transcript))["reason"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn refusals_have_stable_kinds_and_touch_nothing() {
    let turns = vec![out(
        [
            call("c1", "format_disk", &[("path", "a")]),
            call("c2", "write_file", &[("path", "a.txt")]),
            call(
                "c3",
                "write_file",
                &[("path", "a.txt"), ("content", "x"), ("content", "y")],
            ),
            call(
                "c4",
                "write_file",
                &[("path", "../a.txt"), ("content", "x")],
            ),
            call(
                "c5",
                "write_file",
                &[("path", "/tmp/a.txt"), ("content", "x")],
            ),
            call("c6", "shell", &[("command", "echo hi; rm -rf /")]),
            call("c7", "list_dir", &[("path", "."), ("recursive", "yes")]),
            call(
                "c8",
                "apply_patch",
                &[("patch", "*** Begin Patch\n*** End Patch\n")],
            ),
        ]
        .concat(),
        Finish::ToolCalls,
    )];
    let run = replay("refusals", &turns, 1, Toolset::Interactive);
    assert!(reason(&run, "c1").starts_with("unknown_tool: "));
    assert!(reason(&run, "c2").starts_with("missing_argument: "));
    assert!(reason(&run, "c3").starts_with("repeated_argument: "));
    assert!(reason(&run, "c4").starts_with("path_escapes_root: "));
    assert!(reason(&run, "c5").starts_with("absolute_path: "));
    assert!(reason(&run, "c6").starts_with("hard_line: remove_root"));
    assert!(reason(&run, "c7").starts_with("unknown_argument: "));
    assert!(run.of_type("tool_result").is_empty());
    // Every call is recorded, then refused, in order.
    let kinds: Vec<_> = run
        .records
        .iter()
        .filter(|r| r["type"] == "tool_call" || r["type"] == "refused")
        .map(|r| {
            format!(
                "{}:{}",
                r["type"].as_str().unwrap(),
                r["id"].as_str().unwrap()
            )
        })
        .collect();
    let expected: Vec<String> = (1..=8)
        .flat_map(|i| [format!("tool_call:c{i}"), format!("refused:c{i}")])
        .collect();
    assert_eq!(kinds, expected);
    assert!(run.files.is_empty(), "{:?}", run.files);
    assert_eq!(run.status, EndStatus::SourceEnded);
}

#[test]
fn a_symlink_out_of_the_root_is_refused() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "s").unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
    let config = frontier::agent::Config::new(frontier::apply::Workspace::new(dir.path()).unwrap());
    let turns = vec![out(
        call("c1", "read_file", &[("path", "out/secret")])
            + &call("c2", "write_file", &[("path", "out/new"), ("content", "x")]),
        Finish::ToolCalls,
    )];
    let mut model = Replay::new("symlink", turns, 1);
    let mut transcript = Vec::new();
    frontier::agent::run(&config, &mut model, &mut transcript).unwrap();
    let text = String::from_utf8(transcript).unwrap();
    assert_eq!(text.matches("symlink_outside_root").count(), 2, "{text}");
    assert!(!outside.path().join("new").exists());
}

#[test]
fn toolsets_refuse_what_they_do_not_hold() {
    let turns = vec![out(
        [
            call("c1", "read_file", &[("path", "x")]),
            call("c2", "list_dir", &[("path", ".")]),
            call("c3", "write_file", &[("path", "x"), ("content", "y")]),
            call("c4", "shell", &[("command", "touch y")]),
            call("c5", "apply_patch", &[("patch", "")]),
        ]
        .concat(),
        Finish::ToolCalls,
    )];
    let allowed = |toolset| {
        let run = replay("toolsets", &turns, 3, toolset);
        if toolset != Toolset::Interactive {
            assert!(run.files.is_empty(), "{toolset:?} wrote {:?}", run.files);
        }
        (1..=5)
            .filter(|i| {
                let id = format!("c{i}");
                !run.ids("refused").contains(&id)
                    || !reason(&run, &id).starts_with("forbidden_by_toolset")
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(allowed(Toolset::Webhook), [1]);
    assert_eq!(allowed(Toolset::Background), [1, 2]);
    assert_eq!(allowed(Toolset::Interactive), [1, 2, 3, 4, 5]);
}

#[test]
fn a_broken_stream_runs_the_calls_before_the_bad_byte_and_none_after() {
    let good = call("c1", "write_file", &[("path", "a.txt"), ("content", "a\n")]);
    let later = call("c2", "write_file", &[("path", "b.txt"), ("content", "b\n")]);
    for noise in [
        "I will now write b.txt:\n",
        "call c9 shell\r\n",
        "\n",
        "end\n",
    ] {
        let turns = vec![out(format!("{good}{noise}{later}"), Finish::ToolCalls)];
        for chunk in [1, 5, usize::MAX] {
            let run = replay("noise", &turns, chunk, Toolset::Interactive);
            assert_eq!(run.status, EndStatus::StreamError, "{noise:?}");
            assert_eq!(run.status.exit_code(), 1);
            assert_eq!(run.ids("tool_result"), ["c1"]);
            assert_eq!(run.files.keys().collect::<Vec<_>>(), ["a.txt"]);
            let error = run.of_type("stream_error");
            assert_eq!(error.len(), 1);
            assert_eq!(error[0]["offset"], good.len() + first_bad(noise));
        }
    }
}

/// The offset of the first byte of `noise` that CTL refuses after a frame boundary.
fn first_bad(noise: &str) -> usize {
    let mut parser = frontier::ctl::CtlParser::default();
    use frontier::contract::PushParser;
    match parser.push(noise.as_bytes(), &mut |_| {}) {
        Err(e) => e.offset as usize,
        Ok(()) => panic!("{noise:?} is valid CTL"),
    }
}

#[test]
fn a_stream_that_stops_inside_a_call_runs_nothing_of_it() {
    let whole = call("c1", "write_file", &[("path", "a.txt"), ("content", "abc")]);
    let turns = vec![out(&whole[..whole.len() - 2], Finish::Stop)];
    let run = replay("cut", &turns, 1, Toolset::Interactive);
    assert_eq!(run.status, EndStatus::StreamIncomplete);
    assert!(run.of_type("tool_call").is_empty());
    assert_eq!(run.of_type("stream_incomplete")[0]["call"], "c1");
    assert!(run.files.is_empty());
}

#[test]
fn failing_tools_end_in_a_clear_result() {
    let turns = vec![out(
        [
            call("c1", "read_file", &[("path", "missing.txt")]),
            call("c2", "list_dir", &[("path", "nowhere")]),
            call("c3", "shell", &[("command", "echo partial; exit 3")]),
            call("c4", "write_file", &[("path", "d/f.txt"), ("content", "x")]),
            call("c5", "write_file", &[("path", "d"), ("content", "x")]),
            call("c6", "read_file", &[("path", "d")]),
        ]
        .concat(),
        Finish::ToolCalls,
    )];
    let run = replay("failures", &turns, 2, Toolset::Interactive);
    let results = run.of_type("tool_result");
    let ok: Vec<bool> = results.iter().map(|r| r["ok"].as_bool().unwrap()).collect();
    assert_eq!(ok, [false, false, false, true, false, false]);
    assert_eq!(results[2]["output"], "partial\n[exit status 3]\n");
    assert_eq!(results[4]["output"], "is a directory");
    assert_eq!(run.files.keys().collect::<Vec<_>>(), ["d/", "d/f.txt"]);
    // A failing tool is the model's business, not the loop's: the run ends cleanly.
    assert_eq!(run.status, EndStatus::SourceEnded);
}

#[test]
fn shell_has_a_timeout_no_stdin_and_a_capped_output() {
    let dir = tempfile::tempdir().unwrap();
    let limits = ShellLimits {
        timeout: Duration::from_millis(300),
        max_output: 100,
    };
    let start = std::time::Instant::now();
    let slow = shell::run(dir.path(), "sleep 5 & sleep 5; echo never", limits).unwrap();
    assert!(slow.timed_out && !slow.success());
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    let stdin = shell::run(dir.path(), "cat; echo done", limits).unwrap();
    assert_eq!(stdin.output, b"done\n");
    let big = shell::run(dir.path(), "yes | head -c 1000", limits).unwrap();
    assert!(big.success());
    assert!(big.output.starts_with(&b"y\n".repeat(50)));
    assert!(String::from_utf8_lossy(&big.output).contains("900 more bytes not kept"));
    let here = shell::run(dir.path(), "pwd", limits).unwrap();
    let pwd = String::from_utf8(here.output).unwrap();
    assert_eq!(
        std::path::Path::new(pwd.trim()).canonicalize().unwrap(),
        dir.path().canonicalize().unwrap()
    );
}

#[test]
fn output_truncation_escalates_once_then_nudges_three_times_then_gives_up() {
    let long = call(
        "c1",
        "write_file",
        &[("path", "a.txt"), ("content", &"x".repeat(60))],
    );
    let pieces: Vec<&str> = vec![
        &long[..10],
        &long[10..20],
        &long[20..30],
        &long[30..40],
        &long[40..50],
    ];
    let turns: Vec<Turn> = pieces.iter().map(|p| out(*p, Finish::Length)).collect();
    let run = replay("truncated", &turns, 1, Toolset::Interactive);
    let reasons: Vec<_> = run
        .of_type("transition")
        .iter()
        .map(|r| {
            (
                r["reason"].as_str().unwrap().to_owned(),
                r["max_tokens"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        reasons,
        [
            ("escalate_output_limit".to_owned(), 16384),
            ("resume_nudge".to_owned(), 16384),
            ("resume_nudge".to_owned(), 16384),
            ("resume_nudge".to_owned(), 16384),
        ]
    );
    assert_eq!(run.status, EndStatus::RecoveryExhausted);
    assert_eq!(run.of_type("stream_incomplete")[0]["call"], "c1");
    assert!(run.files.is_empty());

    // Normal progress resets the counters: the same four truncations, separated by a
    // completed turn, are all recovered.
    let mut turns: Vec<Turn> = vec![
        out(&long[..10], Finish::Length),
        out(&long[10..20], Finish::Length),
    ];
    turns.push(out(&long[20..], Finish::ToolCalls));
    turns.push(out(&long[..10], Finish::Length));
    turns.push(out(&long[10..20], Finish::Length));
    turns.push(out(&long[20..], Finish::ToolCalls));
    turns.push(out("", Finish::Stop));
    let run = replay("reset", &turns, 1, Toolset::Interactive);
    assert_eq!(run.status, EndStatus::Done);
    assert_eq!(run.ids("tool_result"), ["c1", "c1"]);
}

#[test]
fn context_overflow_compacts_once() {
    let list = call("c1", "list_dir", &[("path", ".")]);
    let turns = vec![
        out(list.clone(), Finish::ToolCalls),
        Turn::ContextOverflow,
        out(list.clone(), Finish::ToolCalls),
        Turn::ContextOverflow,
        Turn::ContextOverflow,
    ];
    let run = replay("overflow", &turns, 1, Toolset::Interactive);
    let reasons: Vec<_> = run
        .of_type("transition")
        .iter()
        .map(|r| r["reason"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        reasons,
        ["next_turn", "compact_retry", "next_turn", "compact_retry"]
    );
    assert_eq!(run.status, EndStatus::RecoveryExhausted);
    assert_eq!(run.of_type("model_error").len(), 3);
}

#[test]
fn the_turn_budget_ends_the_run() {
    let list = call("c1", "list_dir", &[("path", ".")]);
    let turns = vec![out(list, Finish::ToolCalls); 5];
    let mut model = Replay::new("budget", turns, 1);
    let run = run_with(&mut model, |c| c.max_turns = 3);
    assert_eq!(run.status, EndStatus::TurnBudgetExhausted);
    assert_eq!(run.ids("tool_result").len(), 3);
}

#[test]
fn consecutive_reads_run_in_parallel() {
    // Two reads in one batch. (This test used to read FIFOs that a writer opened in reverse
    // order, so that the reads completed only if both were in flight; read_file now refuses
    // FIFOs unopened, so what is checked is the batch: both calls start before either result.)
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p1"), "one").unwrap();
    std::fs::write(dir.path().join("p2"), "two").unwrap();
    let config = frontier::agent::Config::new(frontier::apply::Workspace::new(dir.path()).unwrap());
    let turns = vec![out(
        call("c1", "read_file", &[("path", "p1")])
            + &call("c2", "read_file", &[("path", "p2")])
            + &call("c3", "shell", &[("command", "echo after")]),
        Finish::ToolCalls,
    )];
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut model = Replay::new("fifo", turns, 1);
        let mut transcript = Vec::new();
        frontier::agent::run(&config, &mut model, &mut transcript).unwrap();
        done_tx
            .send(String::from_utf8(transcript).unwrap())
            .unwrap();
    });
    let text = done_rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the reads did not finish");
    let order: Vec<String> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["type"] == "tool_call" || r["type"] == "tool_result")
        .map(|r| {
            format!(
                "{}:{}",
                r["type"].as_str().unwrap(),
                r["id"].as_str().unwrap()
            )
        })
        .collect();
    // Both reads start before either result; the shell call waits for both and runs alone.
    assert_eq!(
        order,
        [
            "tool_call:c1",
            "tool_call:c2",
            "tool_result:c1",
            "tool_result:c2",
            "tool_call:c3",
            "tool_result:c3"
        ]
    );
    assert!(text.contains(r#""output":"one""#) && text.contains(r#""output":"two""#));
}

#[test]
fn parallel_batches_are_capped() {
    let reads: String = (0..20)
        .map(|i| call(&format!("c{i}"), "list_dir", &[("path", ".")]))
        .collect();
    let run = replay(
        "many",
        &[out(reads, Finish::ToolCalls)],
        1,
        Toolset::Interactive,
    );
    let order: Vec<&str> = run
        .records
        .iter()
        .filter_map(|r| match r["type"].as_str() {
            Some("tool_call") => Some("call"),
            Some("tool_result") => Some("result"),
            _ => None,
        })
        .collect();
    let batch = |n| [vec!["call"; n], vec!["result"; n]].concat();
    let expected = [batch(8), batch(8), batch(4)].concat();
    assert_eq!(order, expected);
}

#[test]
fn a_malformed_patch_is_known_before_its_call_ends() {
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n~oops\n*** End Patch\n";
    let setup = call("c0", "write_file", &[("path", "a.txt"), ("content", "a\n")]);
    let whole = setup.clone() + &call("c1", "apply_patch", &[("patch", patch)]);
    // The stream stops right before `end`: the call never completes, yet the problem is known.
    let turns = vec![out(&whole[..whole.len() - 4], Finish::Stop)];
    let run = replay("patch", &turns, 1, Toolset::Interactive);
    let problem = run.of_type("patch_problem");
    assert_eq!(problem.len(), 1, "{}", run.transcript);
    assert_eq!(problem[0]["kind"], "malformed_patch");
    assert_eq!(run.ids("tool_call"), ["c0"]);
    assert_eq!(run.status, EndStatus::StreamIncomplete);

    // A patch whose file is missing is known when its Update header is confirmed.
    let missing = "*** Begin Patch\n*** Update File: nowhere.txt\n@@\n-a\n+b\n*** End Patch\n";
    let whole = call("c1", "apply_patch", &[("patch", missing)]);
    let turns = vec![out(&whole[..whole.len() - 4], Finish::Stop)];
    let run = replay("patch", &turns, 1, Toolset::Interactive);
    assert_eq!(run.of_type("patch_problem")[0]["kind"], "does_not_apply");

    // Confirmed, the malformed patch is refused (even though its file is missing too, which
    // is the first problem reported) and the missing file fails; nothing is written.
    let turns = vec![out(
        call("c1", "apply_patch", &[("patch", patch)])
            + &call("c2", "apply_patch", &[("patch", missing)]),
        Finish::ToolCalls,
    )];
    let run = replay("patch", &turns, 1, Toolset::Interactive);
    assert_eq!(run.of_type("patch_problem")[0]["kind"], "does_not_apply");
    assert!(reason(&run, "c1").starts_with("malformed_patch: "));
    assert_eq!(run.of_type("tool_result")[0]["id"], "c2");
    assert_eq!(run.of_type("tool_result")[0]["ok"], false);
    assert!(run.files.is_empty());
}
