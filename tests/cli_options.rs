//! Every numeric option of every command is checked when the command line is parsed: a value
//! outside its documented range exits with status 2 and clap's message naming the range, before
//! anything runs; the bounds themselves are accepted.

use std::io::Write;
use std::process::{Command, Stdio};

/// Runs the binary in `dir` with `stdin`; returns the exit status and standard error.
fn run(dir: &std::path::Path, args: &[&str], stdin: &[u8]) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_frontier"))
        .args(args)
        .current_dir(dir)
        // `run` makes its run directory there.
        .env("XDG_STATE_HOME", dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A command line that runs to completion quickly with its other arguments, the option
/// inserted after the command's name.
struct Case {
    command: &'static [&'static str],
    rest: &'static [&'static str],
    option: &'static str,
    min: u64,
    max: u64,
}

const fn case(
    command: &'static [&'static str],
    rest: &'static [&'static str],
    option: &'static str,
    min: u64,
    max: u64,
) -> Case {
    Case {
        command,
        rest,
        option,
        min,
        max,
    }
}

const CHECK: &[&str] = &["check", "--lang", "ctl"];
const EVENTS: &[&str] = &["events", "--lang", "ctl"];
const TRACE: &[&str] = &["trace", "--lang", "ctl", "--summary"];
const CALLS: &[&str] = &["calls"];
const FRAME: &[&str] = &["frame", "--mode", "extended"];
const APPLY: &[&str] = &["apply", "--lang", "udiff", "--root", "."];
const RUN: &[&str] = &["run", "--model", "replay:turns.jsonl", "--root", "."];
const STDIN: &[&str] = &["-"];
const NONE: &[&str] = &[];

const CASES: &[Case] = &[
    case(CHECK, STDIN, "--chunk", 1, 1 << 30),
    case(CHECK, STDIN, "--max-line", 1, 65536),
    case(CHECK, STDIN, "--max-arg", 0, 1 << 30),
    case(EVENTS, STDIN, "--chunk", 1, 1 << 30),
    case(EVENTS, STDIN, "--max-line", 1, 65536),
    case(EVENTS, STDIN, "--max-arg", 0, 1 << 30),
    case(TRACE, STDIN, "--max-line", 1, 65536),
    case(TRACE, STDIN, "--max-arg", 0, 1 << 30),
    case(CALLS, STDIN, "--chunk", 1, 1 << 30),
    case(CALLS, STDIN, "--max-line", 1, 65536),
    case(CALLS, STDIN, "--max-arg", 0, 1 << 30),
    case(CALLS, STDIN, "--max-call-args", 1, 65536),
    case(CALLS, STDIN, "--max-call-bytes", 0, 1 << 30),
    case(FRAME, STDIN, "--max-line", 1, 65536),
    case(FRAME, STDIN, "--max-arg", 0, 1 << 30),
    case(APPLY, STDIN, "--chunk", 1, 1 << 30),
    case(APPLY, STDIN, "-p", 0, 4096),
    case(APPLY, STDIN, "--fuzz", 0, 100),
    case(RUN, NONE, "--chunk", 1, 1 << 30),
    case(RUN, NONE, "--max-turns", 1, 10_000),
    case(RUN, NONE, "--max-tokens", 1, 1_000_000),
    case(RUN, NONE, "--escalated-max-tokens", 1, 1_000_000),
    case(RUN, NONE, "--shell-timeout", 1, 86_400),
    case(RUN, NONE, "--shell-max-output", 0, 64 << 20),
    case(RUN, NONE, "--max-line", 1, 65536),
    case(RUN, NONE, "--max-arg", 0, 1 << 30),
    case(RUN, NONE, "--context-window", 1, 1_000_000_000),
    case(RUN, NONE, "--spill-tokens", 1, 1_000_000_000),
    case(RUN, NONE, "--preview-chars", 0, 1_000_000),
    case(RUN, NONE, "--keep-recent", 1, 10_000),
    case(RUN, NONE, "--cache-ttl", 0, 86_400),
    case(RUN, NONE, "--hard-window", 1, 1_000_000_000),
];

fn line(case: &Case, value: &str) -> Vec<String> {
    let mut args: Vec<String> = case.command.iter().map(|s| s.to_string()).collect();
    args.push(case.option.to_owned());
    args.push(value.to_owned());
    args.extend(case.rest.iter().map(|s| s.to_string()));
    args
}

#[test]
fn values_outside_the_range_are_usage_errors_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut bad: Vec<(&Case, String)> = Vec::new();
    for case in CASES {
        bad.push((case, (case.max + 1).to_string()));
        bad.push((case, u64::MAX.to_string()));
        bad.push((case, "18446744073709551616".to_owned()));
        bad.push((case, "-1".to_owned()));
        bad.push((case, "ten".to_owned()));
        if case.min > 0 {
            bad.push((case, (case.min - 1).to_string()));
        }
    }
    for (case, value) in bad {
        let args = line(case, &value);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, err) = run(dir.path(), &args, b"");
        assert_eq!(code, 2, "{args:?}: {err}");
        if value.starts_with('-') {
            // Taken for an option of its own: a usage error all the same.
            continue;
        }
        assert!(
            err.starts_with(&format!(
                "error: invalid value '{value}' for '{}",
                case.option
            )),
            "{args:?}: {err}"
        );
        if value.parse::<u64>().is_ok() {
            assert!(
                err.contains(&format!("is not in {}..={}", case.min, case.max)),
                "{args:?}: {err}"
            );
        }
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn the_bounds_themselves_are_accepted() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("turns.jsonl"),
        "{\"output\":\"\",\"finish\":\"stop\"}\n",
    )
    .unwrap();
    for case in CASES {
        for value in [case.min, case.max] {
            let args = line(case, &value.to_string());
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (code, err) = run(dir.path(), &args, b"");
            assert_ne!(code, 2, "{args:?}: {err}");
            assert!(!err.contains("panicked"), "{args:?}: {err}");
        }
    }
}

#[test]
fn help_states_every_range() {
    let dir = tempfile::tempdir().unwrap();
    for case in CASES {
        let out = Command::new(env!("CARGO_BIN_EXE_frontier"))
            .args(case.command.iter().take(1))
            .arg("--help")
            .current_dir(dir.path())
            .output()
            .unwrap();
        let help = String::from_utf8(out.stdout).unwrap();
        // The option's entry: its line and the description lines under it.
        let lines: Vec<&str> = help.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.trim_start().starts_with(&format!("{} <", case.option)))
            .unwrap_or_else(|| panic!("{} --help has no {}: {help}", case.command[0], case.option));
        let entry = lines[at..]
            .iter()
            .enumerate()
            .take_while(|(i, l)| *i == 0 || !l.trim_start().starts_with('-'))
            .map(|(_, l)| l.trim())
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            entry.contains(&format!("{} to {}", case.min, case.max)),
            "{} {}: {entry}",
            case.command[0],
            case.option
        );
    }
}
