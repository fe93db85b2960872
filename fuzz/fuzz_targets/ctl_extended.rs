//! Arbitrary bytes through the extended CTL parser, whole, byte at a time, split at points
//! derived from the input and in chunks of a size derived from it, with the default limits and
//! with small ones; then the calls it confirmed, written back in the counted form, must parse
//! in strict mode to the same calls (an assembled call is the same whichever form carried it).
//! The input is the stream itself, so the corpora seed this target directly (`fuzz/seed.sh`).
#![no_main]

use frontier::contract::PushParser;
use frontier::ctl::{CallAssembler, CallBounds, CtlMode, CtlParser, Limits, ToolCall};
use frontier::harness::{check_contract, run};
use libfuzzer_sys::fuzz_target;

/// The calls `parser` confirms in `bytes`, fed whole.
fn calls(mut parser: CtlParser, bytes: &[u8]) -> Vec<ToolCall> {
    let mut assembler = CallAssembler::new(CallBounds {
        max_args: usize::MAX,
        max_bytes: u64::MAX,
    });
    let mut out = Vec::new();
    let _ = parser.push(bytes, &mut |e| {
        out.extend(assembler.on_event(&e).expect("unbounded"))
    });
    out
}

fn counted(calls: &[ToolCall]) -> Vec<u8> {
    let mut out = Vec::new();
    for call in calls {
        out.extend_from_slice(format!("call {} {}\n", call.id, call.name).as_bytes());
        for (key, value) in &call.args {
            out.extend_from_slice(format!("arg {key} {}\n", value.len()).as_bytes());
            out.extend_from_slice(value);
        }
        out.extend_from_slice(b"end\n");
    }
    out
}

fuzz_target!(|bytes: &[u8]| {
    let n = bytes.len();
    let cuts = [n / 3, n / 2, n.saturating_sub(1)];
    for limits in [
        Limits::default(),
        Limits {
            max_line: 24,
            max_arg: 64,
        },
    ] {
        let parser = CtlParser::with_mode(limits, CtlMode::Extended);
        let whole = match check_contract(&parser, bytes, &cuts) {
            Ok(whole) => whole,
            Err(violation) => panic!("{violation}"),
        };
        // In chunks of a size from the input too: a stream's short chunks, each beginning and
        // ending inside a line, take paths of their own.
        let size = 2 + bytes.first().map_or(0, |&b| b as usize % 63);
        assert_eq!(
            run(parser.clone(), bytes, Some(size)),
            whole,
            "chunks of {size}"
        );
        let extended = calls(parser, bytes);
        let unbounded = Limits {
            max_line: u32::MAX,
            max_arg: u64::MAX,
        };
        let strict = calls(CtlParser::new(unbounded), &counted(&extended));
        assert_eq!(extended, strict, "the counted form gives other calls");
    }
});
