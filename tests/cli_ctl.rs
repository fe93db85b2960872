//! The CLI's stable formats for CTL, run as a user runs them.

mod cli_support;

use std::io::Write;
use std::process::{Command, Stdio};

fn frontier() -> Command {
    Command::new(env!("CARGO_BIN_EXE_frontier"))
}

fn corpus(path: &str) -> String {
    format!("{}/corpora/ctl/{path}", env!("CARGO_MANIFEST_DIR"))
}

fn run(args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    cli_support::run(args, stdin)
}

#[test]
fn check_json_prints_the_stable_format() {
    let good = corpus("valid/01_agent_turn.ctl");
    let cut = corpus("truncated/03_cut_in_body.ctl");
    let bad = corpus("invalid/02_cr_in_header.ctl");
    let (code, out, _) = run(
        &["check", "--lang", "ctl", "--json", &good, &cut, &bad],
        b"",
    );
    assert_eq!(code, 1, "not every file is complete");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        format!(
            r#"{{"file":"{good}","verdict":"complete","consumed":256,"confirmed":256,"error":null,"units":{{"calls":4}}}}"#
        )
    );
    assert_eq!(
        lines[1],
        format!(
            r#"{{"file":"{cut}","verdict":"incomplete","consumed":308,"confirmed":308,"error":null,"units":{{"calls":4}}}}"#
        )
    );
    assert_eq!(
        lines[2],
        format!(
            r#"{{"file":"{bad}","verdict":"error","consumed":17,"confirmed":0,"error":{{"offset":17,"byte":13,"kind":"unexpected_byte"}},"units":{{"calls":0}}}}"#
        )
    );
    let (code, _, _) = run(&["check", "--lang", "ctl", "--json", &good], b"");
    assert_eq!(code, 0);
}

#[test]
fn check_reads_standard_input_and_honours_limits() {
    let (code, out, _) = run(
        &["check", "--lang", "ctl", "--json", "--max-line", "10", "-"],
        b"call abc d\n",
    );
    assert_eq!(code, 1);
    assert!(
        out.contains(r#""error":{"offset":7,"byte":99,"kind":"line_too_long"}"#),
        "{out}"
    );
    let (_, out, _) = run(
        &["check", "--lang", "ctl", "--json", "--max-arg", "5", "-"],
        b"call a b\narg k 6\n",
    );
    assert!(out.contains(r#""kind":"arg_too_large""#), "{out}");
}

#[test]
fn check_reports_the_readable_files_around_an_unreadable_one() {
    let dir = tempfile::tempdir().unwrap();
    let ok = dir.path().join("ok.ctl");
    std::fs::write(&ok, "call c1 read_file\narg path 3\nab\nend\n").unwrap();
    let ok = ok.to_str().unwrap();
    let missing = dir.path().join("missing.ctl");
    let missing = missing.to_str().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_frontier"))
        .args(["check", "--lang", "ctl", "--json", ok, missing, ok])
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(lines.iter().all(|l| l.contains(r#""verdict":"complete""#)));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.starts_with(&format!("frontier: {missing}: ")),
        "{stderr}"
    );
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn calls_takes_the_common_lang_option_for_ctl_only() {
    let good = corpus("valid/01_agent_turn.ctl");
    let plain = run(&["calls", &good], b"");
    assert_eq!(plain.0, 0);
    assert_eq!(run(&["calls", "--lang", "ctl", &good], b""), plain);
    let (code, out, err) = run(&["calls", "--lang", "udiff", &good], b"");
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
}

#[test]
fn usage_errors_exit_with_2() {
    assert_eq!(
        run(
            &["check", "--lang", "ctl", "--json", "/nonexistent/file"],
            b""
        )
        .0,
        2
    );
    assert_eq!(run(&["check", "--lang", "cobol", "--json", "-"], b"").0, 2);
    assert_eq!(
        run(
            &["check", "--lang", "ctl", "--mode", "lenient", "--json", "-"],
            b""
        )
        .0,
        2
    );
}

#[test]
fn trace_prints_every_prefix_and_the_error() {
    let (_, out, _) = run(&["trace", "--lang", "ctl", "-"], b"call a b\nX");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 10 + 1, "prefixes 0..=9 and the error");
    assert_eq!(lines[0], r#"{"at":0,"accepting":true,"allowed":[[99,99]]}"#);
    assert_eq!(
        lines[5],
        r#"{"at":5,"accepting":false,"allowed":[[45,46],[48,58],[65,90],[95,95],[97,122]]}"#
    );
    assert_eq!(
        lines[9],
        r#"{"at":9,"accepting":false,"allowed":[[97,97],[101,101]]}"#
    );
    assert_eq!(
        lines[10],
        r#"{"at":9,"error":{"offset":9,"byte":88,"kind":"unexpected_byte"}}"#
    );

    let (_, out, _) = run(
        &["trace", "--lang", "ctl", "--summary", "-"],
        b"call a b\nend\n",
    );
    // 14 prefixes. One byte is allowed in each keyword position and at the end; inside
    // "call a b"'s tokens the 66 token characters, plus SP after the id and LF after the name;
    // after the call line `a` or `e`: 9 × 1 + 66 + 67 + 66 + 67 + 2 = 277. Accepting: the
    // empty prefix and the whole stream.
    assert_eq!(
        out.trim(),
        r#"{"prefixes":14,"allowed_total":277,"accepting":2}"#
    );
}

#[test]
fn events_are_identical_for_every_chunk_size() {
    let file = corpus("valid/03_binary_args.ctl");
    let (code, whole, _) = run(&["events", "--lang", "ctl", &file], b"");
    assert_eq!(code, 0);
    for chunk in ["1", "3", "100"] {
        let (_, out, _) = run(&["events", "--lang", "ctl", "--chunk", chunk, &file], b"");
        assert_eq!(out, whole, "--chunk {chunk}");
    }
    assert!(
        whole.contains(r#"{"event":"arg_data","data":{"base64":"#),
        "binary data is base64"
    );
    assert!(whole.ends_with("{\"event\":\"end\",\"verdict\":\"complete\",\"consumed\":324,\"confirmed\":324,\"error\":null}\n"));
}

#[test]
fn calls_prints_confirmed_calls_even_when_the_stream_breaks() {
    let (code, out, err) = run(
        &[
            "calls",
            "--chunk",
            "1",
            &corpus("truncated/04_cut_before_end.ctl"),
        ],
        b"",
    );
    assert_eq!(code, 1);
    assert_eq!(out.lines().count(), 4);
    assert_eq!(
        out.lines().next().unwrap(),
        r#"{"id":"c1","name":"read_file","args":{"path":"src/lib.rs"}}"#
    );
    assert!(
        err.contains("inside call c5 (shell), not executed"),
        "{err}"
    );

    let (code, out, err) = run(&["calls", "-"], b"call c1 w\narg k 2\nhiend\ncall c2 x\r\n");
    assert_eq!(code, 1);
    assert_eq!(
        out,
        "{\"id\":\"c1\",\"name\":\"w\",\"args\":{\"k\":\"hi\"}}\n"
    );
    assert!(err.contains("unexpected_byte at byte 33"), "{err}");

    let (code, out, _) = run(&["calls", &corpus("valid/03_binary_args.ctl")], b"");
    assert_eq!(code, 0);
    assert!(out.contains(r#""content":{"base64":""#), "{out}");
}

/// Peak resident memory of the running process, from /proc (Linux).
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn a_long_stream_runs_in_constant_memory() {
    // 256 MiB of frames through standard input; the peak is read while the process is still
    // waiting for more input, after it has parsed everything.
    let mut block = Vec::new();
    let mut i = 0;
    while block.len() < 1 << 20 {
        let body = vec![b'x'; (i * 37) % 4000];
        block.extend_from_slice(
            format!("call c{i} write_file\narg content {}\n", body.len()).as_bytes(),
        );
        block.extend_from_slice(&body);
        block.extend_from_slice(b"end\n");
        i += 1;
    }
    let mut child = frontier()
        .args(["check", "--lang", "ctl", "--json", "--chunk", "65536", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for _ in 0..256 {
        stdin.write_all(&block).unwrap();
    }
    stdin.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let peak = peak_rss_kib(child.id());
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let report = String::from_utf8(out.stdout).unwrap();
    assert!(report.contains(r#""verdict":"complete""#), "{report}");
    assert!(
        report.contains(&format!(r#""consumed":{}"#, block.len() * 256)),
        "{report}"
    );
    if let Some(peak) = peak {
        assert!(peak < 16 * 1024, "peak resident memory {peak} KiB");
    }
}

#[test]
fn every_ctl_command_takes_the_extended_mode() {
    let file = corpus("extended/valid/02_heredoc.ctl");
    for command in ["check", "trace", "events"] {
        let (code, out, _) = run(
            &[command, "--lang", "ctl", "--mode", "extended", &file],
            b"",
        );
        assert_eq!(code, 0, "{command}: {out}");
        let (code, out, _) = run(&[command, "--lang", "ctl", &file], b"");
        assert_eq!(code, 1, "{command} strict: {out}");
    }
    // Strict CTL refuses the `=` of `arg path = ` (byte 28).
    let (_, out, _) = run(&["check", "--lang", "ctl", "--json", &file], b"");
    assert!(
        out.contains(r#""error":{"offset":28,"byte":61,"kind":"unexpected_byte"}"#),
        "{out}"
    );
    let (code, out, _) = run(
        &["events", "--lang", "ctl", "--mode", "extended", &file],
        b"",
    );
    let (_, bytewise, _) = run(
        &[
            "events", "--lang", "ctl", "--mode", "extended", "--chunk", "1", &file,
        ],
        b"",
    );
    assert_eq!((code, &out), (0, &bytewise));
    assert!(
        out.contains(r#"{"event":"arg_start","key":"content"}"#),
        "{out}"
    );
    let (code, out, _) = run(&["calls", "--mode", "extended", &file], b"");
    assert_eq!(code, 0);
    assert!(
        out.lines()
            .next()
            .unwrap()
            .contains(r##""content":"# TODO\n\nEOFX\nEOF \nEOF\r\n EOF\nEO\n- [ ] ship it\n""##),
        "{out}"
    );
    let (code, _, err) = run(&["calls", "--mode", "lenient", &file], b"");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("strict, extended"), "{err}");
    let mask = [
        "mask",
        "--lang",
        "ctl",
        "--vocab",
        "tiktoken:cl100k_base",
        "--text",
        &file,
    ];
    let (code, _, err) = run(&[&mask[..], &["--mode", "extended"]].concat(), b"");
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = run(&mask, b"");
    assert_eq!(code, 1, "strict refuses a token: {err}");
}

/// `--chunk N` (common to every command) pushes the parser N bytes at a time; `trace` prints
/// the same states, error line and exit status for every N, valid, cut and broken input.
#[test]
fn trace_prints_the_same_states_for_every_chunk_size() {
    let cases = [
        ("ctl", "strict", corpus("valid/01_agent_turn.ctl")),
        ("ctl", "strict", corpus("truncated/03_cut_in_body.ctl")),
        ("ctl", "strict", corpus("invalid/02_cr_in_header.ctl")),
        (
            "udiff",
            "git",
            format!(
                "{}/corpora/udiff/bad_overrun.diff",
                env!("CARGO_MANIFEST_DIR")
            ),
        ),
        (
            "apply_patch",
            "strict",
            format!(
                "{}/corpora/apply_patch/invalid_utf8.patch",
                env!("CARGO_MANIFEST_DIR")
            ),
        ),
    ];
    for (lang, mode, path) in &cases {
        let base = ["trace", "--lang", lang, "--mode", mode, path.as_str()];
        let byte_at_a_time = run(&base, b"");
        assert!(byte_at_a_time.1.lines().count() > 10, "{path}");
        for chunk in ["1", "2", "3", "7", "4096"] {
            let mut args = base.to_vec();
            args.extend(["--chunk", chunk]);
            assert_eq!(run(&args, b""), byte_at_a_time, "{path} --chunk {chunk}");
            args.push("--summary");
            let mut summary = base.to_vec();
            summary.push("--summary");
            assert_eq!(run(&args, b""), run(&summary, b""), "{path} --summary");
        }
    }
    let (_, _, err) = run(&["trace", "--lang", "ctl", "--chunk", "0", "-"], b"");
    assert!(err.contains("--chunk"), "{err}");
}
