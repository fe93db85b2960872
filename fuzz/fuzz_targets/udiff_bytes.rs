//! Arbitrary bytes through the unified-diff parser in each mode, whole, byte at a time and
//! split. Seeded from `corpora/udiff`.
#![no_main]

use frontier::harness::check_contract;
use frontier::udiff::{Limits, Mode, UdiffParser};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let n = bytes.len();
    let cuts = [n / 3, n / 2, n.saturating_sub(1)];
    for mode in [Mode::Strict, Mode::Git, Mode::Recount] {
        let parser = UdiffParser::new(
            mode,
            Limits {
                max_line: Limits::MIN_MAX_LINE,
            },
        );
        if let Err(violation) = check_contract(&parser, bytes, &cuts) {
            panic!("{mode:?}: {violation}");
        }
    }
});
