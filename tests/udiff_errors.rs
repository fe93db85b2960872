//! Exact verdicts, offsets and kinds: miscounted hunks, overruns, misplaced `\` lines, empty
//! context lines, CRLF, orphans, limits, non-UTF-8 content, and when hunks are confirmed; and
//! the cases found by checking the implementation against `unified_diff.md` sentence by
//! sentence (base85 groups that must overflow, `---`/`+++` lines without a name).

use frontier::byteset::ByteSet;
use frontier::contract::{ErrorKind, PushParser, Verdict};
use frontier::event::{OwnedValue, Recorder};
use frontier::harness::{check_byte_at_a_time, check_chunking, run};
use frontier::udiff::units::LineKind;
use frontier::udiff::{parse_all, Limits, Mode, UdiffParser};

fn parser(mode: Mode) -> UdiffParser {
    UdiffParser::new(mode, Limits::default())
}

/// `(verdict, error offset, error kind)`, after checking the contract on the input.
fn outcome(mode: Mode, input: &[u8]) -> (&'static str, Option<(u64, &'static str)>) {
    check_byte_at_a_time(parser(mode), input, true).unwrap();
    check_chunking(&parser(mode), input, 1).unwrap();
    let t = run(parser(mode), input, None);
    let error = t
        .outcome
        .verdict
        .error()
        .map(|e| (e.offset, e.kind.as_str()));
    (t.outcome.verdict.as_str(), error)
}

fn at(input: &[u8], needle: &[u8]) -> u64 {
    input
        .windows(needle.len())
        .position(|w| w == needle)
        .unwrap() as u64
}

const HEAD: &[u8] = b"--- a/f\n+++ b/f\n";

fn diff(body: &[u8]) -> Vec<u8> {
    [HEAD, body].concat()
}

#[test]
fn one_line_too_many_is_an_overrun_at_its_first_byte() {
    let input = diff(b"@@ -1,2 +1,2 @@\n-a\n+A\n b\n+extra\n");
    for mode in [Mode::Strict, Mode::Git] {
        assert_eq!(
            outcome(mode, &input),
            ("error", Some((at(&input, b"+extra"), "hunk_overrun")))
        );
    }
    // Recount mode takes the line into the hunk and reports the real counts.
    let (files, o) = parse_all(parser(Mode::Recount), &input);
    assert_eq!(o.verdict, Verdict::Complete);
    assert_eq!(
        (files[0].hunks[0].old_count, files[0].hunks[0].new_count),
        (2, 3)
    );
}

#[test]
fn a_side_beyond_its_count_is_an_overrun() {
    // Old side met (1 line), a second `-` line arrives while a `+` line is owed.
    let input = diff(b"@@ -1 +1 @@\n-a\n-b\n+c\n");
    assert_eq!(
        outcome(Mode::Git, &input),
        ("error", Some((at(&input, b"-b"), "hunk_overrun")))
    );
}

#[test]
fn one_line_too_few_is_an_underrun_or_a_truncation() {
    let input = diff(b"@@ -1,3 +1,3 @@\n-a\n+A\n b\n@@ -9 +9 @@\n-x\n+y\n");
    let second = at(&input, b"@@ -9");
    for mode in [Mode::Strict, Mode::Git] {
        assert_eq!(
            outcome(mode, &input),
            ("error", Some((second, "hunk_underrun")))
        );
    }
    assert_eq!(outcome(Mode::Recount, &input), ("complete", None));
    // Cut where the missing line would be: a truncation, not an error.
    assert_eq!(
        outcome(Mode::Git, &input[..second as usize]),
        ("incomplete", None)
    );
}

#[test]
fn an_empty_line_after_a_hunk_is_garbage_in_git_mode_and_an_overrun_in_strict() {
    let input = diff(b"@@ -1 +1 @@\n-a\n+b\n\ncommit 123\n");
    assert_eq!(outcome(Mode::Git, &input), ("complete", None));
    let blank = at(&input, b"\n\n") + 1;
    assert_eq!(
        outcome(Mode::Strict, &input),
        ("error", Some((blank, "hunk_overrun")))
    );
}

#[test]
fn a_backslash_line_may_follow_any_body_line_but_not_another() {
    // In the middle of a hunk, with both sides still owed: read as `git apply --numstat`
    // reads it (the line before it flagged), and the hunk goes on.
    let input = diff(b"@@ -1,2 +1,2 @@\n-a\n\\ No newline at end of file\n-b\n+a\n+b\n");
    for mode in [Mode::Strict, Mode::Git, Mode::Recount] {
        assert_eq!(outcome(mode, &input), ("complete", None), "{mode:?}");
        let (files, _) = parse_all(parser(mode), &input);
        let flags: Vec<_> = files[0].hunks[0]
            .lines
            .iter()
            .map(|l| l.no_newline)
            .collect();
        assert_eq!(flags, [true, false, false, false], "{mode:?}");
    }
    // After the last line of each side, and flags that line.
    let input =
        diff(b"@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n");
    let (files, o) = parse_all(parser(Mode::Strict), &input);
    assert_eq!(o.verdict, Verdict::Complete);
    let flags: Vec<_> = files[0].hunks[0]
        .lines
        .iter()
        .map(|l| l.no_newline)
        .collect();
    assert_eq!(flags, [true, true]);
    // A second `\` line in a row is not, and neither is one before the first body line.
    // After a complete hunk it is garbage where garbage may stand (`git apply` skips it), an
    // error in strict mode.
    let input = diff(b"@@ -1 +1 @@\n-a\n+b\n\\ x\n\\ y\n");
    assert_eq!(
        outcome(Mode::Strict, &input),
        ("error", Some((at(&input, b"\\ y"), "misplaced_no_newline")))
    );
    for mode in [Mode::Git, Mode::Recount] {
        assert_eq!(outcome(mode, &input), ("complete", None), "{mode:?}");
        let (files, _) = parse_all(parser(mode), &input);
        assert_eq!(files[0].hunks.len(), 1, "{mode:?}");
        let flags: Vec<_> = files[0].hunks[0]
            .lines
            .iter()
            .map(|l| l.no_newline)
            .collect();
        assert_eq!(flags, [false, true], "{mode:?}");
    }
    let input = diff(b"@@ -1,2 +1,2 @@\n-a\n\\ x\n\\ y\n");
    assert_eq!(
        outcome(Mode::Strict, &input),
        ("error", Some((at(&input, b"\\ y"), "misplaced_no_newline")))
    );
    let input = diff(b"@@ -1 +1 @@\n\\ x\n-a\n+b\n");
    for mode in [Mode::Strict, Mode::Git] {
        assert_eq!(
            outcome(mode, &input),
            ("error", Some((at(&input, b"\\"), "misplaced_no_newline")))
        );
    }
}

#[test]
fn empty_context_lines_count_for_both_sides() {
    let input = diff(b"@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n");
    assert_eq!(outcome(Mode::Strict, &input), ("complete", None));
    let (files, _) = parse_all(parser(Mode::Strict), &input);
    let lines = &files[0].hunks[0].lines;
    assert_eq!(lines[1].kind, LineKind::Context);
    assert!(lines[1].content.is_empty());
}

#[test]
fn crlf_stays_in_content_and_leaves_names() {
    let input = b"--- a/f\r\n+++ b/f\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n";
    assert_eq!(outcome(Mode::Strict, input), ("complete", None));
    let (files, _) = parse_all(parser(Mode::Strict), input);
    assert_eq!(files[0].header.old_path.as_deref(), Some(&b"a/f"[..]));
    assert_eq!(files[0].hunks[0].lines[0].content, b"a\r");
    assert_eq!(files[0].hunks[0].section, b"\r");
    // git's extended header lines end with a CR too: read without it.
    let input = b"diff --git a/f b/f\r\nold mode 100644\r\nnew mode 100755\r\n\
diff --git a/g b/g\r\nsimilarity index 90%\r\nrename from g\r\nrename to h\r\n\
index 1234567..89abcde 100644\r\n--- a/g\r\n+++ b/h\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n";
    for mode in [Mode::Strict, Mode::Git, Mode::Recount] {
        assert_eq!(outcome(mode, input), ("complete", None), "{mode:?}");
        let (files, _) = parse_all(parser(mode), input);
        assert_eq!(files[0].header.new_mode, Some(0o100755));
        assert_eq!(files[1].header.similarity, Some(90));
        assert_eq!(
            files[1].header.index,
            Some((b"1234567".to_vec(), b"89abcde".to_vec(), Some(0o100644)))
        );
    }
    // Only the LF may follow that CR.
    let input = b"diff --git a/f b/f\r\nold mode 100644\r\r\n";
    assert_eq!(
        outcome(Mode::Git, input),
        ("error", Some((at(input, b"\r\r") + 1, "unexpected_byte")))
    );
}

#[test]
fn a_hunk_header_outside_a_file_patch_is_refused() {
    let input = b"some text\n@@ -1 +1 @@\n-a\n+b\n";
    let dash = at(input, b"@@ -") + 3;
    // `git`: refused, as git refuses it, at the `@` that makes it a whole hunk header.
    let closing = at(input, b" @@\n") + 2;
    assert_eq!(
        outcome(Mode::Git, input),
        ("error", Some((closing, "hunk_without_header")))
    );
    // Until then it may be garbage (a mail's text): anything else makes it so.
    for garbage in [
        &b"some text\n@@ -foo is a word\n"[..],
        b"some text\n@@ -1 +1 @x\n",
        b"some text\n@@ -1\n",
        b"some text\n@@ -1 +1 @",
    ] {
        assert_eq!(
            outcome(Mode::Git, garbage),
            ("complete", None),
            "{garbage:?}"
        );
        let (files, o) = parse_all(parser(Mode::Git), garbage);
        assert!(files.is_empty() && o.confirmed == garbage.len() as u64);
    }
    let mut p = parser(Mode::Git);
    p.push(b"x\n@@ -1 +1 @", &mut |_| {}).unwrap();
    assert_eq!(p.allowed(), frontier::ByteSet::FULL.without(b'@'));
    assert!(p.accepting());
    let mail = b"From x\n@@ -1\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n";
    let (files, o) = parse_all(parser(Mode::Git), mail);
    assert_eq!((files.len(), o.verdict), (1, Verdict::Complete));
    assert_eq!(
        outcome(Mode::Recount, input),
        ("error", Some((dash, "hunk_without_header")))
    );
    assert_eq!(
        outcome(Mode::Strict, input),
        ("error", Some((0, "unexpected_byte")))
    );
}

#[test]
fn non_utf8_content_is_ordinary() {
    let input = diff(b"@@ -1 +1 @@\n-\xff\xfe\x00\n+\x80\n");
    assert_eq!(outcome(Mode::Strict, &input), ("complete", None));
}

#[test]
fn limits_are_exact() {
    let long = vec![b'x'; 300];
    let input = [
        b"--- a/".as_slice(),
        &long,
        b"\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n",
    ]
    .concat();
    let small = UdiffParser::new(Mode::Strict, Limits { max_line: 256 });
    let t = run(small, &input, None);
    let e = t.outcome.verdict.error().unwrap();
    assert_eq!((e.offset, e.kind.as_str()), (255, "line_too_long"));
    // In git mode the long `---` line cannot be a header: it is garbage, and so is `+++`.
    let git = UdiffParser::new(Mode::Git, Limits { max_line: 256 });
    let t = run(git, &input, None);
    let e = t.outcome.verdict.error().unwrap();
    assert_eq!(e.kind.as_str(), "hunk_without_header");
    // Hunk ranges: at most 12 digits.
    let input = diff(b"@@ -1234567890123 +1 @@\n");
    let e = run(parser(Mode::Git), &input, None)
        .outcome
        .verdict
        .error()
        .copied()
        .unwrap();
    assert_eq!(
        (e.offset, e.kind.as_str()),
        (at(&input, b"3 +"), "number_too_large")
    );
}

#[test]
fn a_hunk_is_confirmed_one_byte_after_its_counts() {
    let input = diff(b"@@ -1 +1 @@\n-a\n+b\n");
    let mut p = parser(Mode::Strict);
    let mut rec = Recorder::default();
    p.push(&input, &mut |e| rec.record(&e)).unwrap();
    assert_eq!(rec.units("hunks"), 0, "a `\\` line may still follow");
    assert!(p.accepting());
    // The next byte that is not `\` confirms it.
    p.push(b"d", &mut |e| rec.record(&e)).unwrap();
    assert_eq!(rec.units("hunks"), 1);
    assert_eq!(rec.units("files"), 1);
    // And the end of the stream does too.
    let mut p = parser(Mode::Strict);
    let mut rec = Recorder::default();
    p.push(&input, &mut |e| rec.record(&e)).unwrap();
    p.finish(&mut |e| rec.record(&e));
    assert_eq!(rec.units("hunks"), 1);
}

#[test]
fn recount_confirms_a_hunk_one_line_late() {
    let input = diff(b"@@ -1,7 +1,9 @@\n-a\n+b\n c\n");
    let mut p = parser(Mode::Recount);
    let mut rec = Recorder::default();
    p.push(&input, &mut |e| rec.record(&e)).unwrap();
    assert_eq!(rec.units("hunks"), 0);
    // `-- ` might be a `--- ` header: pending.
    p.push(b"--", &mut |e| rec.record(&e)).unwrap();
    assert_eq!(rec.units("hunks"), 0);
    assert_eq!(p.pending(), 2);
    p.push(b"x\n@", &mut |e| rec.record(&e)).unwrap();
    assert_eq!(rec.units("hunks"), 1);
    let end = rec.records.iter().find(|r| r.event == "hunk_end").unwrap();
    assert_eq!(
        format!("{:?}", end.fields),
        "[(\"old_count\", U64(3)), (\"new_count\", U64(2))]"
    );
}

#[test]
fn the_allowed_set_follows_the_counts() {
    let mut p = parser(Mode::Strict);
    p.push(&diff(b"@@ -1,2 +1 @@\n"), &mut |_| {}).unwrap();
    let both = p.allowed();
    assert!(
        both.contains(b' ') && both.contains(b'-') && both.contains(b'+') && both.contains(b'\n')
    );
    assert!(!both.contains(b'\\'), "no body line yet");
    p.push(b" a\n", &mut |_| {}).unwrap();
    // Only the old side is owed now; `\` may follow the body line.
    assert_eq!(p.allowed().iter().collect::<Vec<_>>(), b"-\\".to_vec());
    let mut p = parser(Mode::Strict);
    p.push(&diff(b"@@ -1,2 +1,2 @@\n a\n"), &mut |_| {})
        .unwrap();
    // Both still owed, right after a body line: the body starts and `\`.
    assert_eq!(p.allowed().iter().collect::<Vec<_>>(), b"\n +-\\".to_vec());
    p.push(b"\\ No newline at end of file\n", &mut |_| {})
        .unwrap();
    assert_eq!(p.allowed().iter().collect::<Vec<_>>(), b"\n +-".to_vec());
    let mut p = parser(Mode::Strict);
    p.push(&diff(b"@@ -1,2 +1 @@\n a\n"), &mut |_| {}).unwrap();
    p.push(b"-b\n", &mut |_| {}).unwrap();
    // Both met: `\`, a new hunk, a new file patch (strict: no garbage).
    assert_eq!(p.allowed().iter().collect::<Vec<_>>(), b"-@\\d".to_vec());
}

/// The allowed set after `input` (which must be accepted whole).
fn allowed_after(mode: Mode, input: &[u8]) -> ByteSet {
    let mut p = parser(mode);
    p.push(input, &mut |_| {}).unwrap();
    p.allowed()
}

/// git's base85 alphabet, in digit order.
const B85: &[u8; 85] =
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

fn digits_up_to(max: usize) -> ByteSet {
    B85[..=max].iter().fold(ByteSet::EMPTY, |s, &b| s.with(b))
}

const BINARY: &[u8] = b"diff --git a/b b/b\nGIT binary patch\nliteral 4\nD";

/// A base85 group is a 32-bit value, 85^5 > 2^32: a digit that no continuation of its group
/// can keep within 2^32 - 1 leaves no way to finish, so `allowed()` excludes it at once
/// (contract: "a number that would exceed its bound is not allowed"), not at the group's
/// last character.
#[test]
fn a_base85_digit_that_must_overflow_its_group_is_not_allowed() {
    for mode in [Mode::Strict, Mode::Git, Mode::Recount] {
        // First digit: 82 * 85^4 <= u32::MAX < 83 * 85^4.
        assert_eq!(allowed_after(mode, BINARY), digits_up_to(82), "{mode:?}");
        // After `|` (82): 82 * 85^4 + d * 85^3 <= u32::MAX for d <= 23.
        let after = [BINARY, b"|"].concat();
        assert_eq!(allowed_after(mode, &after), digits_up_to(23), "{mode:?}");
        // After `|N` (82, 23): 14_516_045 - 23 * 85^3 = 391_170 = 54 * 85^2 + 975.
        let after = [BINARY, b"|N"].concat();
        assert_eq!(allowed_after(mode, &after), digits_up_to(54), "{mode:?}");
        // Below the top the whole alphabet stays allowed.
        let after = [BINARY, b"{"].concat();
        assert_eq!(allowed_after(mode, &after), digits_up_to(84), "{mode:?}");
        for bad in [b'}', b'~'] {
            let input = [BINARY, &[bad], b"0000\n\n"].concat();
            assert_eq!(
                outcome(mode, &input),
                ("error", Some((BINARY.len() as u64, "unexpected_byte"))),
                "{mode:?} {bad}"
            );
        }
        // The largest group, u32::MAX = `|NsC0`, is accepted.
        let input = [BINARY, b"|NsC0\n\n"].concat();
        assert_eq!(outcome(mode, &input), ("complete", None), "{mode:?}");
        let input = [BINARY, b"|NsC1\n\n"].concat();
        assert_eq!(
            outcome(mode, &input),
            ("error", Some((BINARY.len() as u64 + 4, "unexpected_byte"))),
            "{mode:?}"
        );
    }
}

/// The garbage bytes of a run, concatenated.
fn garbage(mode: Mode, input: &[u8]) -> Vec<u8> {
    let t = run(parser(mode), input, Some(1));
    let mut out = vec![];
    for r in t.records.iter().filter(|r| r.event == "garbage") {
        for (name, value) in &r.fields {
            match (name, value) {
                (&"data", OwnedValue::Bytes(b)) => out.extend_from_slice(b),
                (&"data", OwnedValue::Str(s)) => out.extend_from_slice(s.as_bytes()),
                _ => {}
            }
        }
    }
    out
}

/// A hunk's `(old_count, new_count)` and the `(kind, content)` of its body lines.
type Counted = ((u64, u64), Vec<(LineKind, Vec<u8>)>);

/// Every hunk, counted.
fn hunks(mode: Mode, input: &[u8]) -> Vec<Counted> {
    let (files, o) = parse_all(parser(mode), input);
    assert_eq!(o.verdict, Verdict::Complete, "{mode:?}");
    files
        .iter()
        .flat_map(|f| &f.hunks)
        .map(|h| {
            let lines = h
                .lines
                .iter()
                .map(|l| (l.kind, l.content.clone()))
                .collect();
            ((h.old_count, h.new_count), lines)
        })
        .collect()
}

/// A `--- `/`+++ ` line with an empty name cannot be a file header (a header needs a name),
/// so in `git` mode outside a hunk it is garbage ("garbage is recognised as garbage once it
/// cannot start a file patch") and in a `recount` hunk it is a body line, as a tentative line
/// that outgrows `max_line` is. The parser refused its LF instead.
#[test]
fn a_header_line_without_a_name_falls_back_to_garbage_or_a_body_line() {
    for mode in [Mode::Git, Mode::Recount] {
        for input in [
            &b"--- \n"[..],
            b"x\n--- \n",
            b"--- a/f\n+++ \n",
            b"--- a/f\n+++ \nx\n",
            b"--- \n+++ b/f\n",
        ] {
            assert_eq!(
                outcome(mode, input),
                ("complete", None),
                "{mode:?} {input:?}"
            );
            assert_eq!(garbage(mode, input), input, "{mode:?} {input:?}");
        }
        // After a completed hunk a `--- ` line is not an overrun; without a name it is garbage.
        let input = b"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n--- \n+++ \n";
        assert_eq!(outcome(mode, input), ("complete", None), "{mode:?}");
        if mode == Mode::Git {
            assert_eq!(garbage(mode, input), b"--- \n+++ \n");
            assert_eq!(hunks(mode, input).len(), 1);
        }
    }
    // In a recount hunk: a removed line `-- ` and an added line `++ `.
    let input = b"--- a/f\n+++ b/f\n@@\n-a\n--- \n+++ \n z\n--- x\n+++ \n";
    assert_eq!(outcome(Mode::Recount, input), ("complete", None));
    let line = |k, c: &[u8]| (k, c.to_vec());
    assert_eq!(
        hunks(Mode::Recount, input),
        vec![(
            (4, 3),
            vec![
                line(LineKind::Remove, b"a"),
                line(LineKind::Remove, b"-- "),
                line(LineKind::Add, b"++ "),
                line(LineKind::Context, b"z"),
                line(LineKind::Remove, b"-- x"),
                line(LineKind::Add, b"++ "),
            ]
        )]
    );
    // `strict` has no garbage: the LF stays refused.
    let input = b"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n--- \n";
    assert_eq!(
        outcome(Mode::Strict, input),
        ("error", Some((input.len() as u64 - 1, "unexpected_byte")))
    );
}

#[test]
fn index_names_may_be_written_in_uppercase_hex() {
    let input =
        b"diff --git a/x b/x\nindex ABC0..dEf1 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n";
    for mode in [Mode::Strict, Mode::Git, Mode::Recount] {
        assert_eq!(outcome(mode, input), ("complete", None), "{mode:?}");
    }
    let bad = b"diff --git a/x b/x\nindex ABG..def 100644\n";
    assert_eq!(
        outcome(Mode::Strict, bad),
        ("error", Some((at(bad, b"G"), "unexpected_byte")))
    );
}
