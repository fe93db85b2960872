//! The loop's semantics on hand-made streams: refusals, toolsets, broken streams, failing
//! tools, the recovery state machine, concurrency partitioning.

mod agent_support;

use std::time::Duration;

use agent_support::{replay, run_with, Recording};
use frontier::agent::replay::{Replay, Turn};
use frontier::agent::shell::{self, ShellLimits};
use frontier::agent::{EndStatus, Finish, Role, Toolset};

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

/// Whether process `pid` still runs (a zombie waiting for its reaper counts as gone).
fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name, which is in parentheses.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z') && !rest.starts_with('X')),
        Err(_) => false,
    }
}

/// Waits up to 5 s for `pid` to stop running.
fn ends_soon(pid: u32) -> bool {
    let until = std::time::Instant::now() + Duration::from_secs(5);
    while std::time::Instant::now() < until {
        if !running(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn background_pid(output: &[u8]) -> u32 {
    let text = String::from_utf8_lossy(output);
    text.trim()
        .parse()
        .unwrap_or_else(|_| panic!("no pid in {text:?}"))
}

#[test]
fn a_background_child_ends_with_its_call() {
    let dir = tempfile::tempdir().unwrap();
    let start = std::time::Instant::now();
    // The child does not hold the output pipes, so nothing waits for it: it must be killed.
    let direct = shell::run(
        dir.path(),
        "sleep 100 > /dev/null 2>&1 & echo $!",
        ShellLimits::default(),
    )
    .unwrap();
    assert!(direct.success(), "{direct:?}");
    assert!(start.elapsed() < Duration::from_secs(5));
    let pid = background_pid(&direct.output);
    assert!(
        ends_soon(pid),
        "the background child {pid} outlived the call"
    );

    // Through the loop too: the pid comes back as the call's result.
    let command = "sleep 100 > /dev/null 2>&1 & echo $!";
    let turns = vec![out(
        call("c1", "shell", &[("command", command)]),
        Finish::ToolCalls,
    )];
    let run = replay("background", &turns, 7, Toolset::Interactive);
    let result = &run.of_type("tool_result")[0]["output"];
    let pid = background_pid(result.as_str().unwrap().as_bytes());
    assert!(
        ends_soon(pid),
        "the background child {pid} outlived the run"
    );
}

#[test]
fn a_timeout_kills_the_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let limits = ShellLimits {
        timeout: Duration::from_millis(300),
        max_output: 1024,
    };
    let start = std::time::Instant::now();
    let out = shell::run(
        dir.path(),
        "sleep 100 > /dev/null 2>&1 & echo $!; sleep 100",
        limits,
    )
    .unwrap();
    assert!(out.timed_out && !out.success());
    assert!(start.elapsed() < Duration::from_secs(5));
    let text = String::from_utf8_lossy(&out.output);
    let pid: u32 = text.lines().next().unwrap().trim().parse().unwrap();
    assert!(
        ends_soon(pid),
        "the background child {pid} outlived the timeout"
    );
}

#[test]
fn a_child_outside_the_group_holding_the_pipes_does_not_block_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let start = std::time::Instant::now();
    // `setsid` leaves the group: it is not killed, but its hold on stdout must not keep the
    // call waiting past the linger.
    let out = shell::run(
        dir.path(),
        "setsid sleep 3 & echo started",
        ShellLimits::default(),
    )
    .unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(out.output, b"started\n");
}

#[test]
fn any_shell_timeout_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    for timeout in [Duration::MAX, Duration::from_secs(u64::MAX), Duration::ZERO] {
        let limits = ShellLimits {
            timeout,
            max_output: 1024,
        };
        let out = shell::run(dir.path(), "echo hi", limits).unwrap();
        if timeout.is_zero() {
            assert!(out.timed_out);
        } else {
            assert!(out.success(), "{timeout:?}: {out:?}");
            assert_eq!(out.output, b"hi\n");
        }
    }
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
fn a_refusal_is_recorded_after_the_results_of_the_calls_in_flight() {
    // c2 is concurrency-safe by its shape, but its path climbs out of the workspace: its
    // refusal waits for c1's result, so the transcript keeps call order.
    let run = replay(
        "refused_in_batch",
        &[out(
            call("c1", "list_dir", &[("path", ".")])
                + &call("c2", "read_file", &[("path", "../outside")])
                + &call("c3", "list_dir", &[("path", ".")]),
            Finish::ToolCalls,
        )],
        1,
        Toolset::Interactive,
    );
    let order: Vec<String> = run
        .records
        .iter()
        .filter(|r| {
            matches!(
                r["type"].as_str(),
                Some("tool_call" | "tool_result" | "refused")
            )
        })
        .map(|r| {
            format!(
                "{}:{}",
                r["type"].as_str().unwrap(),
                r["id"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        order,
        [
            "tool_call:c1",
            "tool_result:c1",
            "tool_call:c2",
            "refused:c2",
            "tool_call:c3",
            "tool_result:c3"
        ],
        "{}",
        run.transcript
    );
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

fn transitions(run: &agent_support::RunResult) -> Vec<String> {
    run.of_type("transition")
        .iter()
        .map(|r| r["reason"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn output_cut_off_with_nothing_after_it_is_not_a_clean_end() {
    let c1 = call("c1", "write_file", &[("path", "a.txt"), ("content", "abc")]);
    // Cut exactly at the call boundary: the call ran, but the output was cut off and no turn
    // continued it.
    let run = replay(
        "cut",
        &[out(c1.clone(), Finish::Length)],
        1,
        Toolset::Interactive,
    );
    assert_eq!(run.status, EndStatus::OutputCutOff);
    assert_eq!(run.status.name(), "output_cut_off");
    assert_eq!(run.status.exit_code(), 1);
    assert_eq!(run.ids("tool_result"), ["c1"]);
    let end = run.of_type("end");
    assert_eq!(end[0]["status"], "output_cut_off");
    assert_eq!(end[0]["exit"], 1);
    // Cut mid-call: the call never ran, and the stream is incomplete.
    let run = replay(
        "cut",
        &[out(&c1[..c1.len() - 3], Finish::Length)],
        1,
        Toolset::Interactive,
    );
    assert_eq!(run.status, EndStatus::StreamIncomplete);
    assert_eq!(run.status.exit_code(), 1);
    assert!(run.of_type("tool_call").is_empty());
    // Continued and completed, it is a normal end.
    let run = replay(
        "cut",
        &[
            out(&c1[..10], Finish::Length),
            out(&c1[10..], Finish::ToolCalls),
        ],
        1,
        Toolset::Interactive,
    );
    assert_eq!(run.status, EndStatus::SourceEnded);
}

#[test]
fn an_empty_stop_after_a_continuation_is_done() {
    let c1 = call("c1", "write_file", &[("path", "a.txt"), ("content", "abc")]);
    let c2 = call("c2", "write_file", &[("path", "b.txt"), ("content", "b")]);
    for turns in [
        // The calls of the continued stream belong to the turn before: the empty turn has none.
        vec![
            out(c1.clone(), Finish::Length),
            out("", Finish::Stop),
            out(c2.clone(), Finish::ToolCalls),
        ],
        vec![
            out(&c1[..10], Finish::Length),
            out(&c1[10..], Finish::Length),
            out("", Finish::Stop),
            out(c2.clone(), Finish::ToolCalls),
        ],
    ] {
        let n = turns.len();
        let mut model = Recording::new(turns, 3);
        let run = run_with(&mut model, |_| {});
        assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
        assert_eq!(run.ids("tool_result"), ["c1"]);
        assert_eq!(
            model.requests.len(),
            n - 1,
            "the turn after the empty one was asked for"
        );
        for request in &model.requests {
            assert!(
                request
                    .iter()
                    .all(|m| m.role != Role::Assistant || !m.content.is_empty()),
                "an empty assistant message: {request:?}"
            );
        }
    }
}

#[test]
fn a_stray_line_of_prose_between_frames_is_explained_and_the_next_frame_runs() {
    let c1 = call("c1", "write_file", &[("path", "a.txt"), ("content", "a\n")]);
    let c2 = call("c2", "write_file", &[("path", "b.txt"), ("content", "b\n")]);
    let c3 = call("c3", "write_file", &[("path", "c.txt"), ("content", "c\n")]);
    for noise in ["Now the second file:\n", "```\n"] {
        let turns = vec![
            out(format!("{c1}{noise}{c2}"), Finish::ToolCalls),
            out(c3.clone(), Finish::ToolCalls),
            out("", Finish::Stop),
        ];
        let mut transcripts = Vec::new();
        for chunk in [1, 5, usize::MAX] {
            let mut model = Recording::new(turns.clone(), chunk);
            let run = run_with(&mut model, |_| {});
            assert_eq!(run.status, EndStatus::Done, "{noise:?}: {}", run.transcript);
            // Before the bad byte ran; after it, in that turn, nothing; the next frame ran.
            assert_eq!(run.ids("tool_result"), ["c1", "c3"]);
            assert_eq!(
                run.files.keys().collect::<Vec<_>>(),
                ["a.txt", "c.txt"],
                "{noise:?}"
            );
            let error = run.of_type("stream_error");
            assert_eq!(error.len(), 1);
            assert_eq!(error[0]["offset"], c1.len() + first_bad(noise));
            assert_eq!(error[0]["kind"], "unexpected_byte");
            assert_eq!(transitions(&run), ["stream_error_nudge", "next_turn"]);
            // The next request tells the model where and why, and what a frame looks like.
            let told = &model.requests[1];
            let last = told.last().unwrap();
            assert_eq!(last.role, Role::User);
            let byte = noise.as_bytes()[first_bad(noise)];
            let expected_where = format!(
                "at byte {} of the stream (unexpected_byte)",
                c1.len() + first_bad(noise)
            );
            assert!(last.content.contains(&expected_where), "{}", last.content);
            assert!(
                last.content.contains(&format!("(0x{byte:02x})")),
                "{}",
                last.content
            );
            // The quoted excerpt is the escaped end of what was accepted (its last 32 bytes).
            let excerpt = r#"after "path 5\na.txtarg content 2\na\nend\n" came the byte"#;
            assert!(last.content.contains(excerpt), "{}", last.content);
            assert!(last.content.contains("result c1 ok"), "{}", last.content);
            assert!(
                last.content.contains("`call <id> <tool>`"),
                "{}",
                last.content
            );
            // The accepted output went back as the model's own message.
            let assistant = &told[told.len() - 2];
            assert_eq!(assistant.role, Role::Assistant);
            assert_eq!(assistant.content, c1);
            transcripts.push(run.transcript);
        }
        assert!(transcripts.windows(2).all(|w| w[0] == w[1]), "{noise:?}");
    }
}

#[test]
fn the_call_a_stray_byte_cuts_is_named_to_the_model() {
    let c1 = call("c1", "write_file", &[("path", "a.txt"), ("content", "a")]);
    let turns = vec![out(format!("{}Oops", &c1[..20]), Finish::Stop)];
    let mut model = Recording::new(turns, 1);
    let run = run_with(&mut model, |_| {});
    assert_eq!(run.of_type("stream_error")[0]["call"], "c1");
    assert!(run.of_type("tool_call").is_empty());
    // The source ended without answering the nudge: the stream stayed broken.
    assert_eq!(run.status, EndStatus::StreamError);
    assert_eq!(run.status.exit_code(), 1);
    assert_eq!(model.requests.len(), 2);
    let note = &model.requests[1].last().unwrap().content;
    assert!(note.contains("inside call c1, which was not run"), "{note}");

    // Prose before any frame: nothing to quote before the byte.
    let mut model = Recording::new(vec![out("Sure!\n", Finish::Stop)], 1);
    run_with(&mut model, |_| {});
    let note = &model.requests[1].last().unwrap().content;
    assert!(
        note.contains(r#"at byte 0 of the stream (unexpected_byte): at the start of your reply came the byte "S" (0x53)."#),
        "{note}"
    );
}

#[test]
fn stream_errors_have_a_budget_reset_by_progress() {
    let noisy = |id: &str| {
        out(
            call(id, "list_dir", &[("path", ".")]) + "Let me explain.\n",
            Finish::Stop,
        )
    };
    // Four broken turns in a row: three are answered, the fourth ends the run.
    let turns: Vec<Turn> = (1..=5).map(|i| noisy(&format!("c{i}"))).collect();
    let run = replay("noisy", &turns, 1, Toolset::Interactive);
    assert_eq!(run.status, EndStatus::StreamError);
    assert_eq!(run.status.exit_code(), 1);
    assert_eq!(transitions(&run), ["stream_error_nudge"; 3]);
    assert_eq!(run.of_type("stream_error").len(), 4);
    assert_eq!(run.ids("tool_result"), ["c1", "c2", "c3", "c4"]);
    assert_eq!(run.of_type("end")[0]["status"], "stream_error");

    // A clean turn in between resets the counter.
    let clean = out(call("ok", "list_dir", &[("path", ".")]), Finish::ToolCalls);
    let mut turns = vec![noisy("a1"), noisy("a2"), noisy("a3"), clean];
    turns.extend([noisy("b1"), noisy("b2"), noisy("b3")]);
    turns.push(out("", Finish::Stop));
    let run = replay("noisy", &turns, 1, Toolset::Interactive);
    assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
}

#[test]
fn the_transcript_is_out_of_the_tools_reach_inside_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("other.txt"), "a\n").unwrap();
    std::fs::create_dir(root.join("x")).unwrap();
    std::os::unix::fs::symlink("run.jsonl", root.join("link")).unwrap();
    let path = root.join("run.jsonl");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .unwrap();
    let mut config = frontier::agent::Config::new(frontier::apply::Workspace::new(root).unwrap());
    config.protect(&path).unwrap();
    let patch = |body: &str| format!("*** Begin Patch\n{body}*** End Patch\n");
    let calls = [
        call(
            "c1",
            "write_file",
            &[("path", "run.jsonl"), ("content", "forged\n")],
        ),
        call(
            "c2",
            "write_file",
            &[("path", "x/../run.jsonl"), ("content", "forged\n")],
        ),
        call(
            "c3",
            "write_file",
            &[("path", "link"), ("content", "forged\n")],
        ),
        call("c4", "read_file", &[("path", "./run.jsonl")]),
        call(
            "c5",
            "apply_patch",
            &[("patch", &patch("*** Delete File: run.jsonl\n"))],
        ),
        call(
            "c6",
            "apply_patch",
            &[(
                "patch",
                &patch("*** Update File: other.txt\n*** Move to: run.jsonl\n@@\n-a\n+b\n"),
            )],
        ),
        call(
            "c7",
            "apply_patch",
            &[("patch", &patch("*** Update File: run.jsonl\n@@\n-x\n+y\n"))],
        ),
        call(
            "c8",
            "apply_patch",
            &[("patch", &patch("*** Add File: run.jsonl\n+forged\n"))],
        ),
        call("c9", "shell", &[("command", "echo forged > run.jsonl")]),
        call("c10", "shell", &[("command", r#"sh -c 'cat "run".jsonl'"#)]),
        call("c11", "shell", &[("command", ": > $(echo ./run.jsonl)")]),
        // Look-alikes run.
        call("c12", "shell", &[("command", "echo run.jsonl.bak")]),
        call(
            "c13",
            "write_file",
            &[("path", "x/run.jsonl"), ("content", "mine\n")],
        ),
    ]
    .concat();
    let turns = vec![out(calls, Finish::ToolCalls)];
    let mut model = Replay::new("forge", turns, 1);
    let status = frontier::agent::run(&config, &mut model, &mut file).unwrap();
    drop(file);
    assert_eq!(status, EndStatus::SourceEnded);
    let text = std::fs::read_to_string(&path).unwrap();
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
        .collect();
    assert_eq!(records[0]["type"], "task");
    assert_eq!(records.last().unwrap()["type"], "end");
    let refused: Vec<(&str, &str)> = records
        .iter()
        .filter(|r| r["type"] == "refused")
        .map(|r| (r["id"].as_str().unwrap(), r["reason"].as_str().unwrap()))
        .collect();
    let ids: Vec<&str> = refused.iter().map(|(id, _)| *id).collect();
    assert_eq!(
        ids,
        ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9", "c10", "c11"],
        "{text}"
    );
    for (id, reason) in &refused {
        assert!(reason.starts_with("protected_path: "), "{id}: {reason}");
        assert!(reason.contains("runtime's own files"), "{id}: {reason}");
    }
    let ran: Vec<&str> = records
        .iter()
        .filter(|r| r["type"] == "tool_result")
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ran, ["c12", "c13"]);
    // The patches' problem is known while they stream.
    let problems: Vec<(&str, &str)> = records
        .iter()
        .filter(|r| r["type"] == "patch_problem")
        .map(|r| (r["id"].as_str().unwrap(), r["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        problems,
        [
            ("c5", "protected_path"),
            ("c6", "protected_path"),
            ("c7", "protected_path"),
            ("c8", "protected_path")
        ]
    );
    assert_eq!(
        std::fs::read_to_string(root.join("other.txt")).unwrap(),
        "a\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("x/run.jsonl")).unwrap(),
        "mine\n"
    );
}
