//! How the commands read their input: as it arrives from a pipe, in bounded memory, with
//! file names that are not UTF-8, and with the exit status each outcome calls for.

mod cli_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

fn frontier() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_frontier"));
    // `run` makes its run directories there, not in the home directory.
    command.env("XDG_STATE_HOME", env!("CARGO_TARGET_TMPDIR"));
    command
}

fn spawn(args: &[&str]) -> Child {
    frontier()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The child's standard output, line by line, read on a thread of its own.
fn lines_of(child: &mut Child) -> Receiver<String> {
    let stdout = child.stdout.take().unwrap();
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if send.send(line).is_err() {
                break;
            }
        }
    });
    receive
}

/// Generous: the first line is expected within milliseconds; the bound only keeps a broken
/// build from hanging the test run.
const WAIT: Duration = Duration::from_secs(30);

/// Writes `first`, waits for the first output line while the input is still open, then
/// writes `rest` and returns that first line and every other.
fn first_line_before_the_rest(args: &[&str], first: &[u8], rest: &[u8]) -> (String, Vec<String>) {
    let mut child = spawn(args);
    let lines = lines_of(&mut child);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(first).unwrap();
    stdin.flush().unwrap();
    let early = lines.recv_timeout(WAIT).unwrap_or_else(|_| {
        let _ = child.kill();
        panic!("{args:?}: nothing printed while the input was still open");
    });
    stdin.write_all(rest).unwrap();
    drop(stdin);
    child.wait().unwrap();
    (early, lines.iter().collect())
}

const FIRST: &[u8] = b"call c1 read_file\narg path 1\naend\n";
const REST: &[u8] = b"call c2 x\nend\n";

#[test]
fn calls_prints_a_call_as_soon_as_it_arrives_on_a_pipe() {
    let (early, later) = first_line_before_the_rest(&["calls", "-"], FIRST, REST);
    assert_eq!(
        early,
        r#"{"id":"c1","name":"read_file","args":{"path":"a"}}"#
    );
    assert_eq!(later, [r#"{"id":"c2","name":"x","args":{}}"#]);
}

#[test]
fn events_and_trace_print_as_the_input_arrives() {
    let (early, later) = first_line_before_the_rest(
        &["events", "--lang", "ctl", "--chunk", "1", "-"],
        FIRST,
        REST,
    );
    assert_eq!(
        early,
        r#"{"event":"call_start","id":"c1","name":"read_file"}"#
    );
    let n = FIRST.len() + REST.len();
    assert_eq!(
        later.last().unwrap(),
        &format!(
            r#"{{"event":"end","verdict":"complete","consumed":{n},"confirmed":{n},"error":null}}"#
        )
    );
    let (early, later) = first_line_before_the_rest(&["trace", "--lang", "ctl", "-"], FIRST, REST);
    assert_eq!(early, r#"{"at":0,"accepting":true,"allowed":[[99,99]]}"#);
    assert_eq!(later.len(), FIRST.len() + REST.len());
}

/// Peak resident memory of a running process, from /proc (Linux).
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs `args` on `input` written through a pipe, reading the peak memory while the input is
/// still open (everything written has been read by then: a pipe holds 64 KiB). Returns the
/// peak in KiB (if /proc has it), the exit status, the output and the error output.
fn run_measured(
    args: &[&str],
    input: impl Fn(&mut ChildStdin),
) -> (Option<u64>, i32, Vec<u8>, String) {
    let mut child = spawn(args);
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        stdout.read_to_end(&mut out).unwrap();
        out
    });
    let mut stdin = child.stdin.take().unwrap();
    input(&mut stdin);
    stdin.flush().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let peak = peak_rss_kib(child.id());
    drop(stdin);
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap().code().unwrap();
    (peak, status, reader.join().unwrap(), err)
}

const MIB: usize = 1 << 20;

/// Read system calls made so far by a running process, from /proc (Linux).
fn read_calls(pid: u32) -> Option<u64> {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    let line = io.lines().find(|l| l.starts_with("syscr:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn chunk_1_reads_in_blocks() {
    // A regular file (standard input has a buffer of its own), then standard input, kept open
    // so that the process is still there to be measured once the file's report is out.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("one.ctl");
    let mut stream = format!("call c1 w\narg k {MIB}\n").into_bytes();
    stream.extend_from_slice(&vec![b'x'; MIB]);
    stream.extend_from_slice(b"end\n");
    std::fs::write(&file, &stream).unwrap();
    let mut child = spawn(&[
        "check",
        "--lang",
        "ctl",
        "--json",
        "--chunk",
        "1",
        file.to_str().unwrap(),
        "-",
    ]);
    let lines = lines_of(&mut child);
    let report = lines.recv_timeout(WAIT).expect("the file's report");
    let reads = read_calls(child.id());
    drop(child.stdin.take());
    child.wait().unwrap();
    assert!(report.contains(r#""verdict":"complete""#), "{report}");
    if let Some(reads) = reads {
        // 64 KiB per read: 17 for the file; one read per byte would be over a million.
        assert!(reads < 1000, "{reads} reads for 1 MiB");
    }
}

#[test]
fn a_long_garbage_run_is_printed_in_bounded_records_in_bounded_memory() {
    let block = "hello world\n".repeat(MIB / 12);
    let (peak, status, out, _) = run_measured(&["events", "--lang", "udiff", "-"], |stdin| {
        for _ in 0..32 {
            stdin.write_all(block.as_bytes()).unwrap();
        }
    });
    assert_eq!(status, 0);
    let out = String::from_utf8(out).unwrap();
    let records: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (end, garbage) = records.split_last().unwrap();
    assert_eq!(end["consumed"], (block.len() * 32) as u64);
    // One span: every record keeps its start; together they are the whole input.
    let mut data = String::new();
    for record in garbage {
        assert_eq!(record["event"], "garbage");
        assert_eq!(record["start"], 0);
        let piece = record["data"].as_str().unwrap();
        assert!(
            piece.len() <= 64 * 1024,
            "a record of {} bytes",
            piece.len()
        );
        data.push_str(piece);
    }
    assert_eq!(data.len(), block.len() * 32);
    assert!(data
        .as_bytes()
        .chunks(block.len())
        .all(|c| c == block.as_bytes()));
    if let Some(peak) = peak {
        assert!(peak < 16 * 1024, "peak resident memory {peak} KiB");
    }
}

#[test]
fn trace_summary_streams_its_input() {
    let body = vec![b'x'; MIB];
    let (peak, status, out, _) = run_measured(
        &[
            "trace",
            "--lang",
            "ctl",
            "--max-arg",
            "1073741824",
            "--summary",
            "-",
        ],
        |stdin| {
            stdin
                .write_all(format!("call c1 w\narg k {}\n", 32 * MIB).as_bytes())
                .unwrap();
            for _ in 0..32 {
                stdin.write_all(&body).unwrap();
            }
            stdin.write_all(b"end\n").unwrap();
        },
    );
    assert_eq!(status, 0);
    let header = format!("call c1 w\narg k {}\n", 32 * MIB).len() as u64;
    let prefixes = header + 32 * MIB as u64 + 4 + 1;
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.starts_with(&format!("{{\"prefixes\":{prefixes},")),
        "{out}"
    );
    if let Some(peak) = peak {
        assert!(peak < 16 * 1024, "peak resident memory {peak} KiB");
    }
}

#[test]
fn a_call_over_its_byte_bound_is_reported_and_never_held() {
    let body = vec![b'x'; MIB];
    let (peak, status, out, err) =
        run_measured(&["calls", "--max-call-bytes", "4194304", "-"], |stdin| {
            stdin.write_all(b"call c1 w\n").unwrap();
            for i in 0..32 {
                stdin
                    .write_all(format!("arg a{i} {MIB}\n").as_bytes())
                    .unwrap();
                stdin.write_all(&body).unwrap();
            }
            stdin.write_all(b"end\ncall c2 r\narg k 1\nvend\n").unwrap();
        });
    assert_eq!(status, 1, "a refused call fails the command");
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "{\"id\":\"c2\",\"name\":\"r\",\"args\":{\"k\":\"v\"}}\n"
    );
    assert!(
        err.contains("call c1 (w) not assembled: args_too_large: argument 5 brings the call to 5242880 bytes, over the bound of 4194304"),
        "{err}"
    );
    if let Some(peak) = peak {
        assert!(peak < 16 * 1024, "peak resident memory {peak} KiB");
    }
}

#[test]
fn calls_prints_a_call_of_many_arguments_by_default() {
    // A sentence of the language, whatever its arguments' count: printed, exit 0.
    let stream = format!("call c1 w\n{}end\n", "arg k 1\na".repeat(1000));
    let mut child = spawn(&["calls", "-"]);
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stream.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let line: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(line["id"], "c1");
    assert_eq!(line["args"]["k"], "a");
    let printed = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        printed.matches("\"k\":\"a\"").count(),
        1000,
        "every argument printed"
    );
}

#[test]
fn a_call_over_its_argument_count_is_reported() {
    let mut child = spawn(&["calls", "--max-call-args", "2", "-"]);
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"call c1 w\narg a 0\narg b 0\narg c 0\nend\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("call c1 (w) not assembled: too_many_args: argument 3 is over the bound of 2 arguments per call"),
        "{err}"
    );
}

fn run(args: &[std::ffi::OsString], stdin: &[u8]) -> (i32, String, String) {
    cli_support::run(args, stdin)
}

fn os(args: &[&str]) -> Vec<std::ffi::OsString> {
    args.iter().map(|a| a.into()).collect()
}

#[test]
fn trace_exits_1_unless_the_input_is_complete() {
    assert_eq!(
        run(&os(&["trace", "--lang", "ctl", "-"]), b"call a b\nend\n").0,
        0
    );
    assert_eq!(
        run(&os(&["trace", "--lang", "ctl", "-"]), b"call a b\nX").0,
        1
    );
    assert_eq!(
        run(
            &os(&["trace", "--lang", "ctl", "--summary", "-"]),
            b"call a b\nX"
        )
        .0,
        1
    );
    assert_eq!(
        run(&os(&["trace", "--lang", "ctl", "-"]), b"call a b\n").0,
        1
    );
}

/// A directory opens on Linux and fails only its first read: refused before anything is
/// printed, by every command that reads a `FILE`, with exit status 2.
#[test]
fn a_directory_is_refused_before_anything_is_printed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for args in [
        vec!["trace", "--lang", "ctl", d],
        vec!["trace", "--lang", "udiff", "--summary", d],
        vec!["trace", "--lang", "ctl", "--chunk", "3", d],
        vec!["events", "--lang", "apply_patch", d],
        vec!["check", "--lang", "ctl", "--json", d],
        vec!["calls", d],
        vec!["stream", "--api", "openai-chat", d],
    ] {
        let (code, out, err) = run(&os(&args), b"");
        assert_eq!((code, out.as_str()), (2, ""), "{args:?}: {err}");
        assert!(err.contains("is a directory"), "{args:?}: {err}");
    }
}

#[cfg(unix)]
#[test]
fn file_names_need_not_be_utf8_and_are_shown_escaped() {
    use std::os::unix::ffi::OsStringExt;
    let dir = tempfile::tempdir().unwrap();
    let name = std::ffi::OsString::from_vec(b"calls\xff\x01.ctl".to_vec());
    let path = dir.path().join(&name);
    std::fs::write(&path, b"call c1 w\nend\ncall c2").unwrap();
    let file = path.into_os_string();
    let shown = format!("{}/calls\u{fffd}\\x01.ctl", dir.path().display());

    let (code, out, _) = run(
        &[os(&["check", "--lang", "ctl"]), vec![file.clone()]].concat(),
        b"",
    );
    assert_eq!(code, 1);
    assert_eq!(
        out,
        format!("{shown}: incomplete: unclosed call_line begun at byte 14; after 21 bytes, 14 confirmed; 1 call\n")
    );
    let (code, out, _) = run(
        &[
            os(&["check", "--lang", "ctl", "--json"]),
            vec![file.clone()],
        ]
        .concat(),
        b"",
    );
    assert_eq!(code, 1);
    let report: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        report["file"],
        format!("{}/calls\u{fffd}\u{1}.ctl", dir.path().display())
    );
    let (code, out, err) = run(&[os(&["calls"]), vec![file.clone()]].concat(), b"");
    assert_eq!(
        (code, out.as_str()),
        (1, "{\"id\":\"c1\",\"name\":\"w\",\"args\":{}}\n")
    );
    assert!(
        err.contains(&format!(
            "{shown}: stream cut off after 21 bytes: unclosed call_line begun at byte 14\n"
        )),
        "{err}"
    );
    for command in ["events", "trace"] {
        let (code, _, _) = run(
            &[os(&[command, "--lang", "ctl"]), vec![file.clone()]].concat(),
            b"",
        );
        assert_eq!(code, 1, "{command}");
    }
    // A file that cannot be opened: the error names it, escaped.
    let missing = dir
        .path()
        .join(std::ffi::OsString::from_vec(b"no\x1b[2Jfile".to_vec()));
    let (code, _, err) = run(
        &[os(&["calls"]), vec![missing.into_os_string()]].concat(),
        b"",
    );
    assert_eq!(code, 2);
    assert!(err.contains("no\\x1b[2Jfile: No such file"), "{err}");
    assert!(!err.contains('\x1b'), "{err:?}");
}

#[test]
fn counts_agree_in_number() {
    let (_, out, _) = run(&os(&["check", "--lang", "ctl", "-"]), b"call a b\nend\n");
    assert_eq!(out, "-: complete after 13 bytes, 13 confirmed; 1 call\n");
    let (_, out, _) = run(&os(&["check", "--lang", "ctl", "-"]), b"c");
    assert_eq!(
        out,
        "-: incomplete: unclosed call_line begun at byte 0; after 1 byte, 0 confirmed; 0 calls\n"
    );
}

#[test]
fn run_refuses_a_call_over_the_assemblers_bounds() {
    let dir = tempfile::tempdir().unwrap();
    // 257 arguments: one over the default bound of 256 per call.
    let output = format!(
        "call c1 read_file\n{}end\ncall c2 list_dir\narg path 1\n.end\n",
        "arg path 0\n".repeat(257)
    );
    let turn = serde_json::json!({"output": output, "finish": "stop"});
    std::fs::write(dir.path().join("turns.jsonl"), format!("{turn}\n")).unwrap();
    let out = frontier()
        .args([
            "run",
            "--model",
            "replay:turns.jsonl",
            "--root",
            ".",
            "--chunk",
            "4096",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let records: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let refused = records
        .iter()
        .find(|r| r["type"] == "refused" && r["id"] == "c1")
        .unwrap_or_else(|| panic!("no refusal of c1: {records:?}"));
    assert_eq!(
        refused["reason"],
        "call c1 (read_file) not assembled: too_many_args: argument 257 is over the bound of 256 arguments per call"
    );
    // Recorded like every confirmed call, its arguments (not held) as null, then refused.
    let call = records
        .iter()
        .position(|r| r["type"] == "tool_call" && r["id"] == "c1")
        .expect("a tool_call record for c1");
    assert_eq!(records[call]["args"], serde_json::Value::Null);
    assert_eq!(records[call + 1]["type"], "refused");
    assert!(records
        .iter()
        .any(|r| r["type"] == "tool_result" && r["id"] == "c2"));
}

#[test]
fn apply_and_run_take_paths_that_are_not_utf8() {
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;
    let dir = tempfile::tempdir().unwrap();
    let name = |s: &[u8]| dir.path().join(OsString::from_vec(s.to_vec()));
    let root = name(b"root\xff");
    std::fs::create_dir(&root).unwrap();
    let patch = name(b"p\xff.patch");
    std::fs::write(
        &patch,
        "*** Begin Patch\n*** Add File: b.txt\n+x\n*** End Patch\n",
    )
    .unwrap();
    let out = frontier()
        .args(["apply", "--lang", "apply_patch", "--root"])
        .arg(&root)
        .arg(&patch)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(std::fs::read(root.join("b.txt")).unwrap(), b"x\n");

    let session = name(b"s\xff.jsonl");
    std::fs::write(
        &session,
        "{\"output\":\"call c1 read_file\\narg path 5\\nb.txtend\\n\",\"finish\":\"stop\"}\n",
    )
    .unwrap();
    let transcript = name(b"t\xff.jsonl");
    let mut model = OsString::from("replay:");
    model.push(&session);
    let out = frontier()
        .arg("run")
        .arg("--model")
        .arg(&model)
        .arg("--root")
        .arg(&root)
        .arg("--transcript")
        .arg(&transcript)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = std::fs::read_to_string(&transcript).unwrap();
    assert!(
        text.contains(r#""type":"tool_result","turn":1,"id":"c1","ok":true,"output":"x\n""#),
        "{text}"
    );
}

#[test]
fn a_reader_that_goes_away_ends_the_command_quietly() {
    // `frontier … | head`: the pipe closes after a few bytes; no panic, no message, 141.
    let file = format!(
        "{}/corpora/ctl/valid/01_agent_turn.ctl",
        env!("CARGO_MANIFEST_DIR")
    );
    let many: Vec<&str> = std::iter::repeat_n(file.as_str(), 3000).collect();
    // Each command must write more than a pipe holds (64 KiB), or it may finish before the
    // reader goes away: twenty copies of the log make `events` write 459 KB.
    let log = std::fs::read(format!(
        "{}/corpora/udiff/git_log.diff",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("twenty_logs.diff");
    std::fs::write(&big, log.repeat(20)).unwrap();
    let udiff = big.to_str().unwrap();
    let commands: Vec<Vec<&str>> = vec![
        [&["check", "--lang", "ctl", "--json"][..], &many].concat(),
        [&["check", "--lang", "ctl"][..], &many].concat(),
        vec!["trace", "--lang", "udiff", udiff],
        vec!["events", "--lang", "udiff", "--chunk", "1", udiff],
    ];
    for args in commands {
        let mut child = frontier()
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 16];
        stdout.read_exact(&mut first).unwrap();
        drop(stdout);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(141), "{}", args[0]);
        assert!(
            out.stderr.is_empty(),
            "{}: {}",
            args[0],
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
