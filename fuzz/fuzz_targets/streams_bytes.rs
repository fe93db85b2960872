//! Arbitrary bytes through the provider stream readers (each API, SSE and JSON lines), whole
//! and cut at three points: no panic, and the same confirmed calls and summary either way.
//! Seeded from `corpora/streams`.
#![no_main]

use frontier::streams::{Api, Call, Event, Format, StreamReader, Summary};
use libfuzzer_sys::fuzz_target;

/// The calls confirmed and the summary of `bytes` pushed in pieces ending at `cuts`.
fn read(api: Api, format: Format, bytes: &[u8], cuts: &[usize]) -> (Vec<Call>, Summary) {
    let mut reader = StreamReader::new(api, format);
    let mut calls = Vec::new();
    let mut on_event = |e: Event<'_>| {
        if let Event::Call(call) = e {
            calls.push(call.clone());
        }
    };
    let mut at = 0;
    for &cut in cuts.iter().chain([&bytes.len()]) {
        let cut = cut.clamp(at, bytes.len());
        if reader.push(&bytes[at..cut], &mut on_event).is_err() {
            break;
        }
        at = cut;
    }
    let summary = reader.finish(&mut on_event);
    (calls, summary)
}

fuzz_target!(|bytes: &[u8]| {
    let n = bytes.len();
    let cuts = [n / 3, n / 2, n.saturating_sub(1)];
    for api in [
        Api::OpenAiChat,
        Api::OpenAiResponses,
        Api::AnthropicMessages,
    ] {
        for format in [Format::Sse, Format::Jsonl] {
            let whole = read(api, format, bytes, &[]);
            let split = read(api, format, bytes, &cuts);
            assert_eq!(
                whole, split,
                "{api:?} {format:?}: chunking changed the result"
            );
        }
    }
});
