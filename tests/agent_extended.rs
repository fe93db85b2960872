//! The loop in extended CTL: the prompt and the results follow the mode, replay files declare
//! theirs, and `frontier run --ctl-mode` chooses.

mod agent_support;

use std::process::Command;

use agent_support::{run_with, session_path, Recording};
use frontier::agent::replay::{parse_session, Turn};
use frontier::agent::runner::{EXTENDED_SYSTEM_PROMPT, SYSTEM_PROMPT};
use frontier::agent::{EndStatus, Finish, Role};
use frontier::language::CtlMode;

/// A recording replay of `turns`, one byte at a time.
fn recording(turns: &[(&str, Finish)]) -> Recording {
    let turns = turns
        .iter()
        .map(|(text, finish)| Turn::Output {
            bytes: text.as_bytes().to_vec(),
            finish: *finish,
        })
        .collect();
    Recording::new(turns, 1)
}

const CALLS: &str = "call c1 write_file
arg path = a.txt
arg content <<EOF1
one
EOF
EOF1
end
call c2 read_file
arg path = a.txt
end
call c3 shell
arg command = printf 'x\\ny'
end
call c4 read_file
arg path = ../out.txt
end
call c5 shell
arg command = true
end
";

#[test]
fn results_come_back_as_inline_lines_and_heredocs_in_extended_mode() {
    let mut model = recording(&[(CALLS, Finish::ToolCalls), ("", Finish::Stop)]);
    let run = run_with(&mut model, |c| c.ctl_mode = CtlMode::Extended);
    assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
    assert_eq!(model.requests[0][0].content, EXTENDED_SYSTEM_PROMPT);
    let results = &model.requests[1].last().unwrap();
    assert_eq!(results.role, Role::User);
    assert_eq!(
        results.content,
        "result c1 ok = wrote 8 bytes\n\
         result c2 ok <<EOF1\none\nEOF\nEOF1\n\
         result c3 ok (no newline at end) <<EOF\nx\ny\nEOF\n\
         result c4 refused = path_escapes_root: path \"../out.txt\" climbs out of the workspace\n\
         result c5 ok = \n"
    );
}

#[test]
fn strict_mode_keeps_the_counted_results_and_its_prompt() {
    let strict = "call c1 write_file\narg path 5\na.txtarg content 3\nab\nend\n";
    let mut model = recording(&[(strict, Finish::ToolCalls), ("", Finish::Stop)]);
    let run = run_with(&mut model, |c| c.ctl_mode = CtlMode::Strict);
    assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
    assert_eq!(model.requests[0][0].content, SYSTEM_PROMPT);
    assert_eq!(
        model.requests[1].last().unwrap().content,
        "result c1 ok 13\nwrote 3 bytes\n"
    );
}

#[test]
fn a_stream_error_in_extended_mode_teaches_the_extended_forms() {
    let noisy = "call c1 read_file\narg path = a.txt\nend\nSure, here it is.\n";
    let mut model = recording(&[(noisy, Finish::ToolCalls), ("", Finish::Stop)]);
    let run = run_with(&mut model, |c| c.ctl_mode = CtlMode::Extended);
    assert_eq!(run.of_type("stream_error").len(), 1, "{}", run.transcript);
    let note = &model.requests[1].last().unwrap().content;
    assert!(note.starts_with("result c1 error = "), "{note}");
    assert!(note.contains("`arg <key> = <value>`"), "{note}");
    assert!(note.contains("`arg <key> <<EOF`"), "{note}");
}

#[test]
fn a_session_file_declares_its_mode_once_before_its_turns() {
    let turn = r#"{"output":"","finish":"stop"}"#;
    let parsed = parse_session(&format!("{{\"ctl_mode\":\"extended\"}}\n{turn}\n")).unwrap();
    assert_eq!(parsed.ctl_mode, CtlMode::Extended);
    assert_eq!(parsed.turns.len(), 1);
    assert_eq!(parse_session(turn).unwrap().ctl_mode, CtlMode::Strict);
    let bad = [
        (
            format!("{turn}\n{{\"ctl_mode\":\"extended\"}}"),
            "line 2: ctl_mode goes on a line of its own, before the first turn",
        ),
        (
            r#"{"ctl_mode":"extended","output":"","finish":"stop"}"#.to_owned(),
            "line 1: ctl_mode goes on a line of its own, before the first turn",
        ),
        (
            "{\"ctl_mode\":\"strict\"}\n{\"ctl_mode\":\"strict\"}".to_owned(),
            "line 2: ctl_mode goes on a line of its own, before the first turn",
        ),
        (
            r#"{"ctl_mode":"loose"}"#.to_owned(),
            "line 1: ctl_mode: unknown mode \"loose\" for ctl (modes: strict, extended)",
        ),
    ];
    for (text, error) in bad {
        assert_eq!(parse_session(&text).unwrap_err(), error, "{text}");
    }
}

fn run_binary(file: &str, extra: &[&str]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_frontier"))
        .args(["run", "--model"])
        .arg(format!("replay:{}", session_path(file)))
        .arg("--root")
        .arg(dir.path())
        // The CTL modes compared, without governance (whose peak estimate differs with the
        // system prompt).
        .args(["--context", "off"])
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

#[test]
fn run_takes_the_replays_mode_unless_told_otherwise() {
    let (code, transcript) = run_binary("extended.jsonl", &[]);
    assert_eq!(code, 0, "{transcript}");
    assert!(transcript.contains(r#""status":"done""#));
    // Forced to strict, the same turns are not CTL at all.
    let (code, transcript) = run_binary("extended.jsonl", &["--ctl-mode", "strict"]);
    assert_eq!(code, 1);
    assert!(
        !transcript.contains(r#""type":"tool_call""#),
        "{transcript}"
    );
    assert!(transcript.contains(r#""type":"stream_error""#));
    // A strict session replays the same in extended mode: the counted form is in both.
    let strict = run_binary("fix_greeting.jsonl", &[]);
    let extended = run_binary("fix_greeting.jsonl", &["--ctl-mode", "extended"]);
    assert_eq!(strict.0, 0);
    assert_eq!(strict, extended);
    let (code, _) = run_binary("fix_greeting.jsonl", &["--ctl-mode", "loose"]);
    assert_eq!(code, 2);
}

#[test]
fn an_output_holding_every_tag_as_a_line_comes_back_counted() {
    let lines: String = (0..frontier::ctl::TAG_CANDIDATES)
        .map(|n| match n {
            0 => "EOF\n".to_owned(),
            n => format!("EOF{n}\n"),
        })
        .collect();
    let calls = format!(
        "call c1 write_file\narg path = tags.txt\narg content <<X\n{lines}X\nend\n\
         call c2 read_file\narg path = tags.txt\nend\n"
    );
    let mut model = recording(&[(&calls, Finish::ToolCalls), ("", Finish::Stop)]);
    let run = run_with(&mut model, |c| c.ctl_mode = CtlMode::Extended);
    assert_eq!(run.status, EndStatus::Done, "{}", run.transcript);
    let results = &model.requests[1].last().unwrap().content;
    let expected = format!(
        "result c1 ok = wrote {n} bytes\nresult c2 ok {n}\n{lines}\n",
        n = lines.len()
    );
    assert_eq!(results, &expected);
}
