//! Cases found by checking the implementation against `unified_diff.md` and the contract
//! sentence by sentence: each test pins a divergence that was fixed.

use frontier::byteset::ByteSet;
use frontier::contract::{ErrorKind, PushParser};
use frontier::harness::{check_byte_at_a_time, check_chunking, run};
use frontier::udiff::{Limits, Mode, UdiffParser};

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
