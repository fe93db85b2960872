//! The recogniser layer: for every language and mode, the recogniser a parser hands out,
//! stepped on its own, answers as the parser does at every prefix (the harness's per-prefix
//! recogniser checks, with all 256 bytes tried), on inputs generated from each language's line
//! fragments. The corpora and the fuzz targets run the same checks through
//! `frontier::harness`.

use frontier::apply_patch::{CodexParser, StrictParser};
use frontier::contract::PushParser;
use frontier::ctl::{CtlParser, Limits};
use frontier::harness::check_byte_at_a_time;
use frontier::recognizer::Recognizer;
use frontier::udiff::UdiffParser;

/// Every concatenation of at most `depth` fragments, in order of length.
fn sequences(fragments: &[&[u8]], depth: usize) -> Vec<Vec<u8>> {
    let mut all = vec![Vec::new()];
    let mut last = vec![Vec::new()];
    for _ in 0..depth {
        let mut next = Vec::new();
        for prefix in &last {
            for f in fragments {
                let mut s = prefix.clone();
                s.extend_from_slice(f);
                next.push(s);
            }
        }
        all.extend(next.iter().cloned());
        last = next;
    }
    all
}

/// Checks every input, returning how many were checked.
fn check_all<P: PushParser>(parser: P, inputs: &[Vec<u8>]) -> usize {
    for input in inputs {
        if let Err(e) = check_byte_at_a_time(parser.clone(), input, true) {
            panic!("{:?}: {e}", String::from_utf8_lossy(input));
        }
    }
    inputs.len()
}

const UDIFF_FRAGMENTS: &[&[u8]] = &[
    b"--- a\n",
    b"+++ b\n",
    b"@@ -1 +1 @@\n",
    b"@@ -1,2 +0,0 @@\n",
    b"-x\n",
    b"+y\n",
    b" z\n",
    b"\n",
    b"diff --git a/f b/f\n",
    b"index 1..2\n",
    b"\\ No newline at end of file\n",
    b"prose\n",
    b"--- ",
    b"@@",
];

#[test]
fn udiff_recognisers_agree_with_their_parsers_on_generated_inputs() {
    let inputs = sequences(UDIFF_FRAGMENTS, 3);
    let mut checked = 0;
    for parser in [
        UdiffParser::git(),
        UdiffParser::recount(),
        UdiffParser::strict(),
    ] {
        checked += check_all(parser, &inputs);
    }
    assert_eq!(checked, 3 * (1 + 14 + 14 * 14 + 14 * 14 * 14));
}

#[test]
fn apply_patch_recognisers_agree_with_their_parsers_on_generated_inputs() {
    let fragments: &[&[u8]] = &[
        b"*** Begin Patch\n",
        b"*** Add File: a\n",
        b"+x\n",
        b"*** Update File: b\n",
        b"@@ f\n",
        b"-y\n",
        b" z\n",
        b"*** End of File\n",
        b"*** End Patch",
        b"\n",
        b"  ",
        b"*** ",
    ];
    let inputs = sequences(fragments, 3);
    check_all(StrictParser::default(), &inputs);
    check_all(CodexParser::new(), &inputs);
}

#[test]
fn ctl_recogniser_agrees_with_its_parser_on_generated_inputs_and_small_limits() {
    let fragments: &[&[u8]] = &[
        b"call c1 read_file\n",
        b"arg path 3\n",
        b"abc",
        b"arg k 0\n",
        b"end\n",
        b"call",
        b"9",
        b"\n",
    ];
    let inputs = sequences(fragments, 4);
    for limits in [
        Limits::default(),
        Limits {
            max_line: 12,
            max_arg: 5,
        },
    ] {
        check_all(CtlParser::new(limits), &inputs);
    }
}

#[test]
fn forced_bytes_follow_the_only_way_on() {
    let mut patch = StrictParser::default().recognizer();
    assert_eq!(patch.forced_bytes_vec(), b"*** Begin Patch\n*** ");
    assert_eq!(patch.try_bytes(b"*** Begin Patch\n"), 16);
    assert_eq!(patch.forced_bytes_vec(), b"*** ");

    let mut diff = UdiffParser::strict().recognizer();
    assert!(diff.accepting());
    assert_eq!(diff.forced_bytes_vec(), b"", "a sentence forces nothing");
    assert_eq!(diff.try_bytes(b"--- a\n+++ b\n@"), 13);
    assert_eq!(diff.forced_bytes_vec(), b"@ -");
}

#[test]
fn a_refused_byte_leaves_every_recogniser_as_it_was() {
    let mut ctl = CtlParser::default().recognizer();
    let before = ctl;
    assert!(!ctl.try_byte(b'x'));
    assert_eq!(ctl, before);
    assert_eq!(ctl.try_bytes(b"call c1 x\nxyz"), 10);

    let mut patch = CodexParser::new().recognizer();
    assert_eq!(patch.try_bytes(b"*** Begin Patch\n\xff"), 16);
    assert!(patch.try_byte(b'*'));
}

#[test]
fn recognisers_are_a_few_words() {
    use std::mem::size_of;
    let sizes = [
        ("ctl", size_of::<<CtlParser as PushParser>::Recognizer>()),
        (
            "apply_patch strict",
            size_of::<<StrictParser as PushParser>::Recognizer>(),
        ),
        (
            "apply_patch codex",
            size_of::<<CodexParser as PushParser>::Recognizer>(),
        ),
        (
            "udiff",
            size_of::<<UdiffParser as PushParser>::Recognizer>(),
        ),
    ];
    eprintln!("{sizes:?}");
    for (lang, size) in sizes {
        assert!(size <= 128, "{lang}: {size} bytes");
    }
}
