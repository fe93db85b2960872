//! Arbitrary bytes through the CTL parser, whole, byte at a time and split at points derived
//! from the input, with the default limits and with small ones. The input is the stream
//! itself, so the corpora seed this target directly (`fuzz/seed.sh`).
#![no_main]

use frontier::ctl::{CtlParser, Limits};
use frontier::harness::check_contract;
use libfuzzer_sys::fuzz_target;

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
        if let Err(violation) = check_contract(&CtlParser::new(limits), bytes, &cuts) {
            panic!("{violation}");
        }
    }
});
