//! Cases found by checking the implementation against `unified_diff.md` and the contract
//! sentence by sentence: each test pins a divergence that was fixed.

use frontier::byteset::ByteSet;
use frontier::contract::{ErrorKind, PushParser, Verdict};
use frontier::event::OwnedValue;
use frontier::harness::{check_byte_at_a_time, check_chunking, run};
use frontier::udiff::units::LineKind;
use frontier::udiff::{parse_all, Limits, Mode, UdiffParser};

fn parser(mode: Mode) -> UdiffParser {
    UdiffParser::new(mode, Limits::default())
}

/// The allowed set after `input` (which must be accepted whole).
fn allowed_after(mode: Mode, input: &[u8]) -> ByteSet {
    let mut p = parser(mode);
    p.push(input, &mut |_| {}).unwrap();
    p.allowed()
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
