//! What an incomplete verdict names: for every language and mode, a table of cut-off inputs
//! with the construct left open and where it began. Each construct is cut twice where it can
//! recur, the second time after a first one that closed, so that an offset left over from
//! the first is caught. In each input, `|` marks `began_at` (and is not part of the input).
//! Every row is run under the chunking checks, which also check `harness::check_unclosed` at
//! every prefix.

mod cli_support;

use frontier::apply_patch::{CodexParser, StrictOptions, StrictParser};
use frontier::contract::{Owed, PushParser, Unclosed, Verdict};
use frontier::ctl::CtlParser;
use frontier::harness;
use frontier::udiff::UdiffParser;

/// The verdict of `case` with its `|` removed, after the chunking checks.
fn verdict<P: PushParser>(parser: &P, case: &str) -> (Verdict<P::ErrorKind>, u64) {
    let began_at = case.find('|').unwrap_or_else(|| panic!("{case:?}: no `|`"));
    let input = case.replacen('|', "", 1);
    let transcript = harness::check_chunking(parser, input.as_bytes(), 1)
        .unwrap_or_else(|e| panic!("{case:?}: {e}"));
    (transcript.outcome.verdict, began_at as u64)
}

fn expect<P: PushParser>(parser: &P, case: &str, construct: &'static str, owed: Option<Owed>)
where
    P::ErrorKind: PartialEq,
{
    let (verdict, began_at) = verdict(parser, case);
    let expected = Unclosed {
        construct,
        began_at,
        owed,
    };
    assert_eq!(verdict, Verdict::Incomplete(expected), "{case:?}");
}

fn bytes(n: u64) -> Option<Owed> {
    Some(Owed::Bytes(n))
}

fn lines(old: u64, new: u64) -> Option<Owed> {
    Some(Owed::Lines { old, new })
}

#[test]
fn ctl_names_the_open_line_body_or_frame() {
    let ctl = CtlParser::default();
    let table: &[(&str, &str, Option<Owed>)] = &[
        ("|cal", "call_line", None),
        ("call c1 x\nend\n|call c2 y", "call_line", None),
        ("call c1 x\n|ar", "arg_line", None),
        ("call c1 x\narg p 1\nz|arg q 12", "arg_line", None),
        ("call c1 x\n|e", "end_line", None),
        ("call c1 x\narg p 1\nz|en", "end_line", None),
        ("call c1 x\narg p 5\n|ab", "arg_body", bytes(3)),
        ("call c1 x\narg p 5\n|", "arg_body", bytes(5)),
        ("call c1 x\narg p 2\nabarg q 3\n|x", "arg_body", bytes(2)),
        ("|call c1 x\n", "frame", None),
        ("|call c1 x\narg p 0\n", "frame", None),
        ("call c1 x\nend\n|call c2 y\narg p 1\nz", "frame", None),
    ];
    for &(case, construct, owed) in table {
        expect(&ctl, case, construct, owed);
    }
}

#[test]
fn extended_ctl_names_the_open_value_or_heredoc() {
    use frontier::ctl::{CtlMode, Limits};
    let ctl = CtlParser::with_mode(Limits::default(), CtlMode::Extended);
    let table: &[(&str, &str, Option<Owed>)] = &[
        (
            "call c1 x
|arg p = ",
            "arg_line",
            None,
        ),
        (
            "call c1 x
|arg p <<EO",
            "arg_line",
            None,
        ),
        (
            "call c1 x
arg p = |src",
            "inline_value",
            None,
        ),
        (
            "call c1 x
arg p = a
arg q = |b",
            "inline_value",
            None,
        ),
        (
            "call c1 x
arg p <<EOF
|",
            "heredoc_body",
            None,
        ),
        (
            "call c1 x
arg p <<EOF
|a
EOFX
EO",
            "heredoc_body",
            None,
        ),
        (
            "call c1 x
arg p <<E
E
arg q <<E
|x",
            "heredoc_body",
            None,
        ),
        (
            "|call c1 x
arg p <<EOF
EOF
",
            "frame",
            None,
        ),
        (
            "|call c1 x
arg p = 
",
            "frame",
            None,
        ),
    ];
    for &(case, construct, owed) in table {
        expect(&ctl, case, construct, owed);
    }
}

/// Rows both apply_patch modes agree on.
const PATCH_TABLE: &[(&str, &str)] = &[
    ("|", "patch"),
    ("|*** Beg", "marker"),
    ("|*** Begin Patch\n", "patch"),
    ("*** Begin Patch\n|*** Add File: a", "add_file"),
    ("*** Begin Patch\n|*** Add File: a\n+x\n", "add_file"),
    (
        "*** Begin Patch\n*** Add File: a\n+x\n|*** Add File: b\n",
        "add_file",
    ),
    ("*** Begin Patch\n*** Add File: a\n|+x", "line"),
    ("*** Begin Patch\n*** Add File: a\n+x\n|+", "line"),
    ("*** Begin Patch\n|*** Delete File: a", "delete_file"),
    ("*** Begin Patch\n*** Delete File: a\n|*** Delete File: b", "delete_file"),
    ("*** Begin Patch\n*** Update File: a\n-y\n|*** Update File: b\n", "update_file"),
    (
        "*** Begin Patch\n*** Update File: a\n*** Move to: b\n-y\n*** Update File: c\n|*** Move to: d",
        "move_to",
    ),
    ("|*** Begin Patch\n*** Delete File: a\n", "patch"),
    ("*** Begin Patch\n|*** Update File: a\n", "update_file"),
    (
        "*** Begin Patch\n*** Update File: a\n|*** Move to: b",
        "move_to",
    ),
    ("*** Begin Patch\n*** Update File: a\n|@@ x", "chunk"),
    ("*** Begin Patch\n*** Update File: a\n|@@ x\n", "chunk"),
    ("*** Begin Patch\n*** Update File: a\n|@@\n", "chunk"),
    (
        "*** Begin Patch\n*** Update File: a\n@@ x\n y\n|@@ z\n-w\n",
        "chunk",
    ),
    ("*** Begin Patch\n*** Update File: a\n|-y\n", "chunk"),
    ("*** Begin Patch\n*** Update File: a\n@@ x\n|-y", "line"),
    ("*** Begin Patch\n*** Update File: a\n|@@", "marker"),
    (
        "*** Begin Patch\n|*** Update File: a\n@@ x\n-y\n*** End of File\n",
        "update_file",
    ),
    (
        "*** Begin Patch\n*** Update File: a\n@@ x\n-y\n|*** End P",
        "marker",
    ),
    ("*** Begin Patch\n*** Add File: a\n+x\n|*** ", "marker"),
];

#[test]
fn apply_patch_strict_names_the_open_unit_or_line() {
    let strict = StrictParser::default();
    for &(case, construct) in PATCH_TABLE {
        if case.ends_with("*** End of File\n") {
            // Strict mode ends an Update at the LF of its `*** End of File` (codex mode
            // keeps it open for more chunks): what is left open is the patch.
            let closed = format!("|{}", case.replace('|', ""));
            expect(&strict, &closed, "patch", None);
            continue;
        }
        expect(&strict, case, construct, None);
    }
    let environment = StrictParser::new(StrictOptions { environment: true });
    expect(
        &environment,
        "*** Begin Patch\n|*** Environment ID: e",
        "environment",
        None,
    );
}

#[test]
fn apply_patch_codex_names_the_open_unit_or_line() {
    let codex = CodexParser::new();
    for &(case, construct) in PATCH_TABLE {
        expect(&codex, case, construct, None);
    }
    let table: &[(&str, &str)] = &[
        ("|  ", "marker"),
        ("\n|  *** Beg", "marker"),
        ("|<<EO", "marker"),
        ("*** Begin Patch\n|*** Environment ID: e", "environment"),
        (
            "*** Begin Patch\n*** Update File: a\n|@@ x\n -y\r\n",
            "chunk",
        ),
        // The indented closing line is held (it may be a context line): the line after it
        // began past the frontier.
        (
            "*** Begin Patch\n*** Update File: a\n@@ x\n *** End Patch\n|+y",
            "line",
        ),
        (
            "<<EOF\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n|EO",
            "heredoc_end",
        ),
    ];
    for &(case, construct) in table {
        expect(&codex, case, construct, None);
    }
}

#[test]
fn udiff_names_the_open_header_hunk_line_or_block() {
    let (strict, git, recount) = (
        UdiffParser::strict(),
        UdiffParser::git(),
        UdiffParser::recount(),
    );
    let table: &[(&UdiffParser, &str, &str, Option<Owed>)] = &[
        (&strict, "|--- a/f", "file_header", None),
        (&strict, "|--- a/f\n+++", "file_header", None),
        (&git, "|diff --git a/f b/f\nindex 12", "file_header", None),
        (
            &git,
            "diff --git a/f b/f\nindex 1..2 100644\n|diff --git a/g b/g\nindex 3",
            "file_header",
            None,
        ),
        (&strict, "|--- a/f\n+++ b/f\n", "file_patch", None),
        (
            &git,
            "|diff --git a/f b/f\n--- a/f\n+++ b/f\n",
            "file_patch",
            None,
        ),
        (
            &git,
            "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n|diff --git a/g b/g\n--- a/g\n+++ b/g\n",
            "file_patch",
            None,
        ),
        (
            &git,
            "|diff --git a/f b/f\nGIT binary patch\n",
            "file_patch",
            None,
        ),
        (
            &strict,
            "--- a/f\n+++ b/f\n|@@ -1,3 +1",
            "hunk_header",
            None,
        ),
        (
            &recount,
            "--- a/f\n+++ b/f\n|@@ -1,3 +1",
            "hunk_header",
            None,
        ),
        (
            &git,
            "junk\n--- a/f\n+++ b/f\n|@@ -1 +1 @@\n",
            "hunk",
            lines(1, 1),
        ),
        (
            &strict,
            "--- a/f\n+++ b/f\n|@@ -1,3 +1,3 @@\n a\n-b\n",
            "hunk",
            lines(1, 2),
        ),
        (
            &strict,
            "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n|@@ -5,2 +5,2 @@\n a\n",
            "hunk",
            lines(1, 1),
        ),
        (
            &strict,
            "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n|+c",
            "line",
            None,
        ),
        (&git, "--- a/f\n+++ b/f\n@@ -1 +1 @@\n|-a", "line", None),
        (
            &recount,
            "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n|+b",
            "line",
            None,
        ),
        (
            &git,
            "diff --git a/f b/f\nGIT binary patch\n|lit",
            "binary_block",
            None,
        ),
        (
            &git,
            "diff --git a/f b/f\nGIT binary patch\n|literal 5\nEc",
            "binary_block",
            None,
        ),
        (
            &git,
            "diff --git a/f b/f\nGIT binary patch\nliteral 10\nRcmZQzWJ=1+ODwAV4*(1}1Bd_s\n\n\
             |literal 10\nRcmZQz",
            "binary_block",
            None,
        ),
        (
            &recount,
            "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n|@@ -3",
            "hunk_header",
            None,
        ),
    ];
    for &(parser, case, construct, owed) in table {
        expect(parser, case, construct, owed);
    }
}

/// The three languages' corpora cut at every byte: whatever is incomplete names a construct
/// its page documents (the table under `## Unclosed constructs`).
#[test]
fn every_construct_named_is_documented() {
    let documented = |page: &str| -> Vec<String> {
        let text = std::fs::read_to_string(format!("docs/{page}")).unwrap();
        let section = text
            .split("## Unclosed constructs")
            .nth(1)
            .unwrap_or_else(|| panic!("docs/{page}: no `## Unclosed constructs`"));
        section
            .lines()
            .take_while(|l| !l.starts_with("## "))
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| l.split('`').next())
            .map(str::to_owned)
            .collect()
    };
    let names = |dir: &str, each: &mut dyn FnMut(&[u8]) -> Vec<&'static str>| {
        let mut seen = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                seen.extend(each(&std::fs::read(path).unwrap()));
            }
        }
        seen
    };
    fn cuts<P: PushParser>(parser: &P, bytes: &[u8]) -> Vec<&'static str> {
        let mut parser = parser.clone();
        let mut seen = Vec::new();
        for at in 0..=bytes.len() {
            let verdict = parser.clone().finish(&mut |_| {}).verdict;
            seen.extend(verdict.unclosed().map(|u| u.construct));
            if at == bytes.len() || parser.push(&bytes[at..at + 1], &mut |_| {}).is_err() {
                break;
            }
        }
        seen
    }
    let ctl = documented("ctl.md");
    for name in names("corpora/ctl/valid", &mut |b| cuts(&CtlParser::default(), b)) {
        assert!(ctl.iter().any(|d| d == name), "ctl: {name}");
    }
    let extended = CtlParser::with_mode(
        frontier::ctl::Limits::default(),
        frontier::ctl::CtlMode::Extended,
    );
    for dir in ["valid", "truncated", "invalid"] {
        let dir = format!("corpora/ctl/extended/{dir}");
        for name in names(&dir, &mut |b| cuts(&extended, b)) {
            assert!(ctl.iter().any(|d| d == name), "extended ctl: {name}");
        }
    }
    let patch = documented("apply_patch.md");
    for name in names("corpora/apply_patch", &mut |b| {
        let mut all = cuts(&StrictParser::default(), b);
        all.extend(cuts(&CodexParser::new(), b));
        all
    }) {
        assert!(patch.iter().any(|d| d == name), "apply_patch: {name}");
    }
    let udiff = documented("udiff.md");
    for name in names("corpora/udiff", &mut |b| {
        let mut all = cuts(&UdiffParser::strict(), b);
        all.extend(cuts(&UdiffParser::git(), b));
        all
    }) {
        assert!(udiff.iter().any(|d| d == name), "udiff: {name}");
    }
}

/// Runs the binary on `stdin`; returns the exit status, stdout and stderr.
fn frontier(args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    cli_support::run(args, stdin)
}

#[test]
fn the_cli_says_what_was_left_open() {
    let cut = b"call c1 x\narg p 5\nab";
    let (code, out, _) = frontier(&["check", "--lang", "ctl", "-"], cut);
    assert_eq!(code, 1);
    assert_eq!(
        out,
        "-: incomplete: unclosed arg_body begun at byte 18 (3 bytes owed); \
         after 20 bytes, 20 confirmed; 0 calls\n"
    );
    let (_, out, _) = frontier(&["events", "--lang", "ctl", "-"], cut);
    assert_eq!(
        out.lines().last(),
        Some(
            r#"{"event":"end","verdict":"incomplete","consumed":20,"confirmed":20,"unclosed":{"construct":"arg_body","began_at":18,"owed":{"bytes":3}},"error":null}"#
        )
    );
    let (code, _, err) = frontier(&["calls", "-"], cut);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        "frontier: -: stream cut off after 20 bytes inside call c1 (x), not executed: \
         unclosed arg_body begun at byte 18 (3 bytes owed)\n"
    );
    let (_, out, _) = frontier(&["check", "--lang", "ctl", "-"], b"call c1 x\narg p 3\nab");
    assert!(out.contains("(1 byte owed)"), "{out}");
    let hunk = b"--- a/f\n+++ b/f\n@@ -1,2 +1 @@\n a\n";
    let (_, out, _) = frontier(
        &["events", "--lang", "udiff", "--mode", "strict", "-"],
        hunk,
    );
    assert!(
        out.lines()
            .last()
            .unwrap()
            .contains(r#""unclosed":{"construct":"hunk","began_at":16,"owed":{"old":1,"new":0}}"#),
        "{out}"
    );
    // A complete stream's `end` has no `unclosed`, and `check --json` never has one.
    let (_, out, _) = frontier(&["events", "--lang", "ctl", "-"], b"call c1 x\nend\n");
    assert!(!out.contains("unclosed"), "{out}");
    let (_, out, _) = frontier(&["check", "--json", "--lang", "ctl", "-"], cut);
    assert!(!out.contains("unclosed"), "{out}");
}
