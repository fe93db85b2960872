//! Arbitrary bytes through the provider stream readers (each API, SSE and JSON lines; Chat also
//! with its text read as strict and as extended CTL, `<think>` blocks between frames), whole
//! and cut at three points: no panic, and the same confirmed calls and summary either way.
//! Seeded from `corpora/streams`.
#![no_main]

use frontier::language::CtlMode;
use frontier::streams::{Api, Call, Event, Format, Limits, StreamReader, Summary};
use libfuzzer_sys::fuzz_target;

/// The calls confirmed and the summary of `bytes` pushed in pieces ending at `cuts`.
fn read(
    api: Api,
    format: Format,
    ctl: Option<CtlMode>,
    bytes: &[u8],
    cuts: &[usize],
) -> (Vec<Call>, Summary) {
    let mut reader = StreamReader::with_options(api, format, Limits::default(), ctl);
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
            let ctl_modes: &[Option<CtlMode>] = if api == Api::OpenAiChat {
                &[None, Some(CtlMode::Strict), Some(CtlMode::Extended)]
            } else {
                &[None]
            };
            for &ctl in ctl_modes {
                let whole = read(api, format, ctl, bytes, &[]);
                let split = read(api, format, ctl, bytes, &cuts);
                assert_eq!(
                    whole, split,
                    "{api:?} {format:?} {ctl:?}: chunking changed the result"
                );
            }
        }
    }
});
