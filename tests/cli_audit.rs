//! The conformance audit of `cli.md` (2 December): the exact lines of `check --json`, `trace`
//! and `calls` at extended CTL's edges, standard input, and exit status 2 for a file that
//! cannot be read, by every command that reads one.

mod cli_support;

use cli_support::run;

/// A file path under the system's temporary directory, unique to this test process.
fn temp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("frontier-cli-audit-{}-{name}", std::process::id()))
}

#[test]
fn check_json_counts_held_tag_bytes_and_a_bare_inline_header_as_pending() {
    // `EO` at a body line start may be the tag line: consumed but not confirmed.
    let (code, out, err) = run(
        [
            "check", "--lang", "ctl", "--mode", "extended", "--json", "-",
        ],
        b"call c1 w\narg k <<EOF\nabc\nEO",
    );
    assert_eq!((code, err.as_str()), (1, ""));
    assert_eq!(
        out,
        "{\"file\":\"-\",\"verdict\":\"incomplete\",\"consumed\":28,\"confirmed\":26,\"error\":null,\"units\":{\"calls\":0}}\n"
    );
    // `arg k = ` waits for its first value byte.
    let (_, out, _) = run(
        [
            "check", "--lang", "ctl", "--mode", "extended", "--json", "-",
        ],
        b"call c1 w\narg k = ",
    );
    assert!(out.contains("\"consumed\":18,\"confirmed\":10,"), "{out}");
    let (_, out, _) = run(
        [
            "check", "--lang", "ctl", "--mode", "extended", "--json", "-",
        ],
        b"call c1 w\narg k = v",
    );
    assert!(out.contains("\"consumed\":19,\"confirmed\":19,"), "{out}");
}

#[test]
fn check_json_reports_each_extended_error_at_its_byte() {
    let cases: &[(&[u8], &str)] = &[
        // `<<` without a tag: the LF.
        (
            b"call c1 w\narg k <<\n",
            r#""offset":18,"byte":10,"kind":"unexpected_byte""#,
        ),
        // A space before the tag.
        (
            b"call c1 w\narg k << EOF\n",
            r#""offset":18,"byte":32,"kind":"unexpected_byte""#,
        ),
        // A tag that is not a token.
        (
            b"call c1 w\narg k <<E\"\n",
            r#""offset":19,"byte":34,"kind":"unexpected_byte""#,
        ),
        // `=` not followed by a space.
        (
            b"call c1 w\narg k =x\n",
            r#""offset":17,"byte":120,"kind":"unexpected_byte""#,
        ),
        // A heredoc value over max_arg (2): the second content byte needs room for an LF.
        (
            b"call c1 w\narg k <<E\nab\nE\n",
            r#""offset":21,"byte":98,"kind":"arg_too_large""#,
        ),
    ];
    for (input, error) in cases {
        let (code, out, _) = run(
            [
                "check",
                "--lang",
                "ctl",
                "--mode",
                "extended",
                "--max-arg",
                "2",
                "--json",
                "-",
            ],
            input,
        );
        assert_eq!(code, 1);
        assert!(
            out.contains(&format!("\"error\":{{{error}}}")),
            "{:?}: {out}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
fn an_inline_line_of_exactly_max_line_is_complete_and_one_more_byte_is_line_too_long() {
    // `arg k = ` (8 bytes), the value, LF: 256 bytes with a 247-byte value.
    for (value, verdict) in [(247, "complete"), (248, "error")] {
        let mut input = b"call c1 w\narg k = ".to_vec();
        input.resize(input.len() + value, b'v');
        input.extend_from_slice(b"\nend\n");
        let (_, out, _) = run(
            [
                "check", "--lang", "ctl", "--mode", "extended", "--json", "-",
            ],
            &input,
        );
        assert!(out.contains(&format!("\"verdict\":\"{verdict}\"")), "{out}");
        if verdict == "error" {
            // The value byte at the line's 256th position leaves no room for the LF.
            assert!(
                out.contains(r#""error":{"offset":265,"byte":118,"kind":"line_too_long"}"#),
                "{out}"
            );
        }
    }
}

#[test]
fn trace_reads_standard_input_and_ends_with_the_error_line() {
    let (code, out, err) = run(
        ["trace", "--lang", "ctl", "--mode", "extended", "-"],
        b"call c1 w\narg k <<\n",
    );
    assert_eq!((code, err.as_str()), (1, ""));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 18 + 1 + 1, "prefixes 0..=18, then the error");
    assert_eq!(lines[0], r#"{"at":0,"accepting":true,"allowed":[[99,99]]}"#);
    // After `<<` only a tag character may come.
    assert_eq!(
        lines[18],
        r#"{"at":18,"accepting":false,"allowed":[[45,46],[48,58],[65,90],[95,95],[97,122]]}"#
    );
    assert_eq!(
        lines[19],
        r#"{"at":18,"error":{"offset":18,"byte":10,"kind":"unexpected_byte"}}"#
    );
    let (code, out, _) = run(
        ["trace", "--lang", "ctl", "--summary", "-"],
        b"call c1 w\nend\n",
    );
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 1);
    assert!(
        out.starts_with("{\"prefixes\":15,\"allowed_total\":"),
        "{out}"
    );
    assert!(out.ends_with(",\"accepting\":2}\n"), "{out}");
}

#[test]
fn calls_prints_the_confirmed_calls_of_every_form_and_never_an_unclosed_heredoc() {
    let (code, out, err) = run(
        ["calls", "--mode", "extended", "-"],
        b"call c1 w\narg a = x y\narg b <<end\nEOFX\nend\narg c 2\n\xff\nend\ncall c2 w\narg d <<EOF\nabc\nEO",
    );
    assert_eq!(
        out,
        "{\"id\":\"c1\",\"name\":\"w\",\"args\":{\"a\":\"x y\",\"b\":\"EOFX\\n\",\"c\":{\"base64\":\"/wo=\"}}}\n"
    );
    assert_eq!(code, 1);
    assert!(err.contains("heredoc_body"), "{err}");
}

#[test]
fn every_command_that_reads_a_file_exits_2_when_it_cannot() {
    let missing = temp("missing");
    let missing = missing.to_str().unwrap();
    let dir = std::env::temp_dir();
    let dir = dir.to_str().unwrap();
    let root = temp("root");
    std::fs::create_dir_all(&root).unwrap();
    let root = root.to_str().unwrap();
    for file in [missing, dir] {
        for args in [
            &["check", "--lang", "ctl", "--json"][..],
            &["check", "--lang", "udiff", "--json"],
            &["trace", "--lang", "ctl"],
            &["trace", "--lang", "ctl", "--summary"],
            &["events", "--lang", "ctl"],
            &["calls"],
            &["apply", "--lang", "apply_patch", "--root", root],
            &["apply", "--lang", "udiff", "--root", root],
        ] {
            let mut all = args.to_vec();
            all.push(file);
            let (code, _, err) = run(&all, b"");
            assert_eq!(code, 2, "{all:?}");
            assert!(err.starts_with("frontier: "), "{all:?}: {err}");
        }
    }
    let replay = format!("replay:{missing}");
    let (code, _, _) = run(
        [
            "run",
            "--model",
            &replay,
            "--root",
            root,
            "--context",
            "off",
        ],
        b"",
    );
    assert_eq!(code, 2);
    let (code, _, _) = run(["truncate", "--json", "--corpus", missing], b"");
    assert_eq!(code, 2);
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn check_json_prints_the_units_of_each_language_for_empty_input() {
    for (lang, units, code) in [
        ("ctl", r#"{"calls":0}"#, 0),
        ("apply_patch", r#"{"files":0,"chunks":0}"#, 1),
        ("udiff", r#"{"files":0,"hunks":0}"#, 0),
    ] {
        let (got, out, _) = run(["check", "--lang", lang, "--json", "-"], b"");
        assert_eq!(got, code, "{lang}");
        assert!(
            out.ends_with(&format!(",\"units\":{units}}}\n")),
            "{lang}: {out}"
        );
    }
}
