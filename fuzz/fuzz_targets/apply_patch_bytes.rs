//! Arbitrary bytes through both apply_patch parsers (strict, with and without the environment
//! line, and codex), whole, byte at a time and split. Seeded from `corpora/apply_patch`.
#![no_main]

use frontier::apply_patch::{CodexParser, StrictOptions, StrictParser};
use frontier::harness::check_contract;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let n = bytes.len();
    let cuts = [n / 3, n / 2, n.saturating_sub(1)];
    for environment in [false, true] {
        let parser = StrictParser::new(StrictOptions { environment });
        if let Err(violation) = check_contract(&parser, bytes, &cuts) {
            panic!("strict: {violation}");
        }
    }
    if let Err(violation) = check_contract(&CodexParser::new(), bytes, &cuts) {
        panic!("codex: {violation}");
    }
});
