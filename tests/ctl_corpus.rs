//! The contract on every CTL corpus file: chunking invariance, every prefix, exact allowed
//! sets, and snapshots of the event streams.

mod ctl_support;

use ctl_support::{corpus as corpus_in, expected_verdict, snapshot, snapshot_name};
use frontier::contract::PushParser;
use frontier::ctl::CtlParser;
use frontier::harness;

fn corpus() -> Vec<std::path::PathBuf> {
    corpus_in("corpora/ctl")
}

#[test]
fn every_chunking_gives_the_same_transcript() {
    ctl_support::every_chunking_gives_the_same_transcript(&CtlParser::default(), &corpus());
}

#[test]
fn every_prefix_is_a_stream_of_its_own() {
    ctl_support::every_prefix_is_a_stream_of_its_own(&CtlParser::default(), &corpus());
}

#[test]
fn allowed_is_exact_for_every_next_byte() {
    ctl_support::allowed_is_exact_for_every_next_byte(&CtlParser::default(), &corpus());
}

#[test]
fn event_streams_match_their_snapshots() {
    for path in corpus() {
        let input = std::fs::read(&path).unwrap();
        let transcript = harness::run(CtlParser::default(), &input, Some(5));
        insta::assert_json_snapshot!(snapshot_name(&path), snapshot(&transcript));
    }
}

#[test]
fn confirmed_calls_are_those_ended_before_the_cut() {
    // The truncated files are a complete four-call turn plus a cut fifth call.
    for path in corpus()
        .iter()
        .filter(|p| expected_verdict(p) == "incomplete")
    {
        let input = std::fs::read(path).unwrap();
        let mut assembler = frontier::ctl::CallAssembler::default();
        let mut calls = Vec::new();
        let mut parser = CtlParser::default();
        let _ = parser.push(&input, &mut |e| {
            calls.extend(assembler.on_event(&e).unwrap())
        });
        let expected = if path.ends_with("06_cut_after_digits.ctl") {
            0
        } else {
            4
        };
        assert_eq!(calls.len(), expected, "{}", path.display());
        assert!(calls.iter().all(|c| c.id != "c5"));
    }
}
