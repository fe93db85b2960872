//! Extreme limits and every chunking, in both modes: no panic, and the same verdict, frontier
//! and events whether the bytes come whole or one at a time.

use frontier::contract::{PushParser, Verdict};
use frontier::ctl::{CtlEvent, CtlMode, CtlParser, Limits};

/// Appends an event, merging adjacent data.
fn record(events: &mut Vec<(String, Vec<u8>)>, event: &CtlEvent) {
    if let CtlEvent::ArgData(data) = event {
        if let Some((_, bytes)) = events.last_mut().filter(|(name, _)| name == "data") {
            bytes.extend_from_slice(data);
            return;
        }
        events.push(("data".into(), data.to_vec()));
    } else {
        events.push((format!("{event:?}"), Vec::new()));
    }
}

const INPUTS: &[&[u8]] = &[
    b"",
    b"call c1 x\nend\n",
    b"call c1 x\narg k 18446744073709551615\n",
    b"call c1 x\narg k 18446744073709551616\n",
    b"call c1 x\narg k 4294967296\nab",
    b"call c1 x\narg k = value\nend\n",
    b"call c1 x\narg k <<EOF\nEOFX\nEO\nEOF\nend\n",
    b"call c1 x\narg k <<EOF\n\xff\xfe\n",
    b"call c1 x\narg k <<",
    b"call c1 x\narg k 0\narg j 1\n\x00end\ncall",
];

/// The verdict, offsets and the events (data merged) of `input` fed in pieces of `chunk`.
fn run(input: &[u8], limits: Limits, mode: CtlMode, chunk: usize) -> String {
    let mut parser = CtlParser::with_mode(limits, mode);
    let mut events = Vec::new();
    for piece in input.chunks(chunk) {
        let pushed = parser.push(piece, &mut |e| record(&mut events, &e));
        if pushed.is_err() {
            break;
        }
    }
    let outcome = parser.finish(&mut |e| record(&mut events, &e));
    let verdict = match outcome.verdict {
        Verdict::Error(e) => format!("error {} {} {:?}", e.offset, e.byte, e.kind),
        v => v.as_str().to_string(),
    };
    format!(
        "{verdict} {} {} {events:?}",
        outcome.consumed, outcome.confirmed
    )
}

#[test]
fn extreme_limits_never_panic_and_every_chunking_agrees() {
    for max_line in [0u32, 1, 8, 9, 10, 255, 65_536, u32::MAX] {
        for max_arg in [0u64, 1, 2, u32::MAX as u64, u64::MAX - 1, u64::MAX] {
            let limits = Limits { max_line, max_arg };
            for mode in [CtlMode::Strict, CtlMode::Extended] {
                for input in INPUTS {
                    let whole = run(input, limits, mode, input.len().max(1));
                    for chunk in [1, 2, 3] {
                        assert_eq!(
                            run(input, limits, mode, chunk),
                            whole,
                            "{limits:?} {mode:?} chunk {chunk} {:?}",
                            String::from_utf8_lossy(input)
                        );
                    }
                }
            }
        }
    }
}

/// Zero-byte pushes change nothing; after an error every push (empty or not) returns the same
/// error and emits nothing; `allowed()` is exact at every prefix (a byte inside is taken, a
/// byte outside is refused with the offset of the prefix); `pending()` stays within its bound.
#[test]
fn empty_pushes_sticky_errors_and_exact_allowed_at_every_prefix() {
    let limits = Limits {
        max_line: 24,
        max_arg: 8,
    };
    for mode in [CtlMode::Strict, CtlMode::Extended] {
        for input in INPUTS {
            let mut parser = CtlParser::with_mode(limits, mode);
            for (at, &byte) in input.iter().enumerate() {
                let mut emitted = 0;
                assert!(parser.push(b"", &mut |_| emitted += 1).is_ok());
                assert_eq!(emitted, 0, "an empty push emits nothing");
                assert!(parser.pending() <= parser.pending_bound());
                let allowed = parser.allowed();
                for b in 0..=255u8 {
                    let mut probe = parser.clone();
                    let taken = probe.push(&[b], &mut |_| {});
                    assert_eq!(
                        taken.is_ok(),
                        allowed.contains(b),
                        "{mode:?} at {at} byte {b}"
                    );
                    if let Err(e) = taken {
                        assert_eq!((e.offset, e.byte), (at as u64, b));
                        assert_eq!(probe.error(), Some(e));
                        let mut after = 0;
                        assert_eq!(probe.push(b"", &mut |_| after += 1), Err(e));
                        assert_eq!(probe.push(b"end\n", &mut |_| after += 1), Err(e));
                        assert_eq!(after, 0, "nothing is emitted after an error");
                        assert_eq!(probe.consumed(), at as u64);
                    }
                }
                if parser.push(&[byte], &mut |_| {}).is_err() {
                    break;
                }
            }
        }
    }
}
