//! `frontier frame`: JSON lines in, a CTL stream out; bad lines stop it with a structured
//! error after the calls before them.

mod cli_support;

use cli_support::run;

const WRITE: &str =
    r#"{"id":"c1","name":"write_file","arguments":{"path":"a.txt","content":"one\nEOF\n"}}"#;

#[test]
fn frames_calls_in_each_mode() {
    let input = format!(
        "{WRITE}\n\n{}\n",
        r#"{"id":"c2","name":"list_dir","arguments":{}}"#
    );
    let (code, out, err) = run(["frame", "--mode", "extended"], input.as_bytes());
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(
        out,
        "call c1 write_file\narg path = a.txt\narg content <<EOF1\none\nEOF\nEOF1\nend\n\
         call c2 list_dir\nend\n"
    );
    let (code, out, _) = run(["frame"], input.as_bytes());
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "call c1 write_file\narg path 5\na.txtarg content 8\none\nEOF\nend\ncall c2 list_dir\nend\n"
    );
}

#[test]
fn bytes_that_are_not_utf8_come_as_base64_and_order_and_repeats_are_kept() {
    let input = r#"{"id":"c1","name":"t","args":{"b":"x","a":{"base64":"/wo="},"b":"y"}}"#;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_frontier"))
        .args(["frame", "--mode", "extended"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        out.stdout,
        b"call c1 t\narg b = x\narg a <<EOF\n\xff\nEOF\narg b = y\nend\n"
    );
}

#[test]
fn the_output_of_calls_frames_back_into_the_same_calls() {
    let strict = "call c1 write_file\narg path 5\na.txtarg content 7\nx=1\ny=2end\n\
                  call c2 shell\narg command 2\nlsend\n";
    let (code, json, _) = run(["calls", "-"], strict.as_bytes());
    assert_eq!(code, 0);
    let (code, extended, _) = run(["frame", "--mode", "extended"], json.as_bytes());
    assert_eq!(code, 0);
    assert_eq!(
        extended,
        "call c1 write_file\narg path = a.txt\narg content 7\nx=1\ny=2end\n\
         call c2 shell\narg command = ls\nend\n"
    );
    let (code, again, _) = run(["calls", "--mode", "extended", "-"], extended.as_bytes());
    assert_eq!((code, again), (0, json.clone()));
    let (code, back, _) = run(["frame", "--mode", "strict"], json.as_bytes());
    assert_eq!((code, back.as_str()), (0, strict));
}

#[test]
fn a_bad_line_stops_after_the_calls_before_it() {
    let cases = [
        (
            r#"{"id":"c 2","name":"t"}"#,
            "line 2: not_a_token: call \"c 2\": the id has the byte 0x20 at offset 1; a CTL \
             token is made of letters, digits and _ . : -",
        ),
        (
            r#"{"id":"c2","name":"t","arguments":{"k":1}}"#,
            "line 2: invalid_call: an argument's value is a string or {\"base64\": \"...\"} at \
             line 1 column 41",
        ),
        (
            r#"{"id":"c2","name":"t","argz":{}}"#,
            "line 2: invalid_call: unknown field `argz`, expected one of `id`, `name`, `args`, \
             `arguments` at line 1 column 28",
        ),
        (
            r#"{"id":"c2","name":"t","arguments":{"k":"12345"}}"#,
            "line 2: arg_too_large: call \"c2\": argument 1 is 5 bytes, over max_arg (4)",
        ),
        (
            "not json",
            "line 2: invalid_call: expected ident at line 1 column 2",
        ),
    ];
    let first = r#"{"id":"c1","name":"t","arguments":{"k":"v"}}"#;
    for (bad, message) in cases {
        let input = format!("{first}\n{bad}\n{WRITE}\n");
        let (code, out, err) = run(["frame", "--max-arg", "4"], input.as_bytes());
        assert_eq!(code, 1, "{bad}");
        assert_eq!(out, "call c1 t\narg k 1\nvend\n", "{bad}");
        assert_eq!(err, format!("frontier: -: {message}\n"), "{bad}");
    }
}

#[test]
fn a_last_line_without_its_newline_is_framed_and_limits_apply() {
    let (code, out, _) = run(
        ["frame", "--mode", "extended"],
        br#"{"id":"c1","name":"t"}"#,
    );
    assert_eq!((code, out.as_str()), (0, "call c1 t\nend\n"));
    // With a 12-byte header line, `arg k = abcd` LF (13 bytes) no longer fits: counted.
    let input = br#"{"id":"c1","name":"t","args":{"k":"abcd"}}"#;
    let (code, out, _) = run(["frame", "--mode", "extended", "--max-line", "12"], input);
    assert_eq!((code, out.as_str()), (0, "call c1 t\narg k 4\nabcdend\n"));
    let (code, _, err) = run(["frame", "--mode", "loose"], b"");
    assert_eq!(code, 2);
    assert!(err.contains("unknown mode \"loose\" for ctl"), "{err}");
}
