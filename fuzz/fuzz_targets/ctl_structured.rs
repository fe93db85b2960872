//! Valid CTL streams built from arbitrary calls, then cut and mutated: the uncut stream is
//! complete with exactly its calls; every cut confirms exactly the calls ended before it.
#![no_main]

use arbitrary::Arbitrary;
use frontier::contract::{PushParser, Verdict};
use frontier::ctl::{CallAssembler, CallBounds, CtlParser};
use frontier::harness::check_contract;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Call {
    id: u16,
    name: u8,
    args: Vec<(u8, Vec<u8>)>,
}

#[derive(Arbitrary, Debug)]
struct Input {
    calls: Vec<Call>,
    cut: u16,
    flip_at: u16,
    flip_to: u8,
}

fuzz_target!(|input: Input| {
    let mut stream = Vec::new();
    let mut ends = Vec::new();
    for call in &input.calls {
        stream.extend_from_slice(format!("call c{} tool_{}\n", call.id, call.name).as_bytes());
        for (key, body) in &call.args {
            stream.extend_from_slice(format!("arg k{key} {}\n", body.len()).as_bytes());
            stream.extend_from_slice(body);
        }
        stream.extend_from_slice(b"end\n");
        ends.push(stream.len());
    }
    let parser = CtlParser::default();
    let whole = check_contract(&parser, &stream, &[stream.len() / 2]).unwrap();
    assert_eq!(whole.outcome.verdict, Verdict::Complete);
    assert_eq!(
        whole
            .records
            .iter()
            .filter(|r| r.unit == Some("calls"))
            .count(),
        input.calls.len()
    );

    let cut = input.cut as usize % (stream.len() + 1);
    // Unbounded: every generated call must assemble.
    let mut assembler = CallAssembler::new(CallBounds {
        max_args: usize::MAX,
        max_bytes: u64::MAX,
    });
    let mut confirmed = Vec::new();
    let mut cut_parser = parser.clone();
    cut_parser
        .push(&stream[..cut], &mut |e| {
            confirmed.extend(assembler.on_event(&e).unwrap())
        })
        .unwrap();
    assert_eq!(
        confirmed.len(),
        ends.iter().filter(|&&end| end <= cut).count()
    );
    for (call, spec) in confirmed.iter().zip(&input.calls) {
        assert_eq!(call.id, format!("c{}", spec.id));
        assert_eq!(call.args.len(), spec.args.len());
        for ((key, value), (k, body)) in call.args.iter().zip(&spec.args) {
            assert_eq!(key, &format!("k{k}"));
            assert_eq!(value.as_ref(), body.as_slice());
        }
    }

    if !stream.is_empty() {
        let mut mutated = stream.clone();
        let at = input.flip_at as usize % mutated.len();
        mutated[at] = input.flip_to;
        check_contract(&parser, &mutated, &[at]).unwrap();
    }
});
