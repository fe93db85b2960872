//! The shipped sessions of `corpora/sessions/`, replayed: every cut point, every chunking,
//! and a snapshot of each transcript.

mod agent_support;

use std::collections::BTreeMap;

use agent_support::{replay_session, run_with, sessions, RunResult};
use frontier::agent::replay::{Session, Turn};
use frontier::agent::{EndStatus, Finish, Flow, ModelError, ModelSource, Request};
use frontier::contract::PushParser;
use frontier::ctl::{CtlEvent, CtlParser, Limits};
use frontier::language::CtlMode;

/// Replays `turns` but cuts the stream after `cut` bytes of output: the turn that would need
/// byte `cut` delivers what comes before it and then the connection drops.
struct CutSource {
    turns: std::collections::VecDeque<Turn>,
    at: usize,
    cut: usize,
}

impl ModelSource for CutSource {
    fn turn(
        &mut self,
        _request: &Request<'_>,
        sink: &mut dyn FnMut(&[u8]) -> Flow,
    ) -> Result<Option<Finish>, ModelError> {
        match self.turns.pop_front() {
            None => Ok(None),
            Some(Turn::ContextOverflow) => Err(ModelError::ContextOverflow("replayed".into())),
            Some(Turn::Output { bytes, finish }) => {
                let start = self.at;
                self.at += bytes.len();
                if self.cut < start + bytes.len() {
                    let keep = self.cut.saturating_sub(start);
                    for b in bytes[..keep].chunks(7) {
                        if sink(b) == Flow::Stop {
                            break;
                        }
                    }
                    return Err(ModelError::Disconnected("cut".into()));
                }
                for b in bytes.chunks(7) {
                    if sink(b) == Flow::Stop {
                        break;
                    }
                }
                Ok(Some(finish))
            }
        }
    }

    fn describe(&self) -> String {
        "cut".into()
    }
}

fn total_bytes(turns: &[Turn]) -> usize {
    turns
        .iter()
        .map(|t| match t {
            Turn::Output { bytes, .. } => bytes.len(),
            Turn::ContextOverflow => 0,
        })
        .sum()
}

/// The oracle: each call's id and the offset (in the concatenated output) just after its `end`
/// line. Restates the stream rule independently of the loop: a fresh parser per stream, the
/// same parser across a `length` finish, nothing after an error in the turn it broke, a fresh
/// parser for the turn after it, in the session's mode.
fn call_ends(turns: &[Turn], mode: CtlMode) -> Vec<(String, usize)> {
    let fresh = || CtlParser::with_mode(Limits::default(), mode);
    let mut ends = Vec::new();
    let mut parser = fresh();
    let mut start = 0;
    let mut id = String::new();
    for turn in turns {
        let Turn::Output { bytes, finish } = turn else {
            continue;
        };
        let mut broken = false;
        for (i, &b) in bytes.iter().enumerate() {
            let mut ended = false;
            let pushed = parser.push(&[b], &mut |e| match e {
                CtlEvent::CallStart { id: i, .. } => id = i.as_str().to_owned(),
                CtlEvent::CallEnd => ended = true,
                _ => {}
            });
            if pushed.is_err() {
                broken = true;
                break;
            }
            if ended {
                ends.push((id.clone(), start + i + 1));
            }
        }
        start += bytes.len();
        if broken || *finish != Finish::Length {
            parser = fresh();
        }
    }
    ends
}

fn run_cut(session: &Session, cut: usize) -> RunResult {
    let mut source = CutSource {
        turns: session.turns.iter().cloned().collect(),
        at: 0,
        cut,
    };
    run_with(&mut source, |c| c.ctl_mode = session.ctl_mode)
}

#[test]
fn every_cut_point_runs_exactly_the_calls_complete_before_it() {
    for (name, session) in sessions() {
        let total = total_bytes(&session.turns);
        let ends = call_ends(&session.turns, session.ctl_mode);
        let full = run_cut(&session, usize::MAX);
        assert_eq!(
            full.ids("tool_call"),
            ends.iter().map(|(id, _)| id.clone()).collect::<Vec<_>>(),
            "{name}: the oracle and the loop disagree on the calls"
        );
        // The workspace after exactly k complete calls, for every k.
        let mut boundary: Vec<BTreeMap<String, Vec<u8>>> = vec![run_cut(&session, 0).files];
        for (_, end) in &ends {
            boundary.push(run_cut(&session, *end).files);
        }
        for cut in 0..=total {
            let run = run_cut(&session, cut);
            let complete: Vec<String> = ends
                .iter()
                .filter(|(_, end)| *end <= cut)
                .map(|(id, _)| id.clone())
                .collect();
            assert_eq!(
                run.ids("tool_call"),
                complete,
                "{name} cut at {cut}: recorded calls"
            );
            let executed: Vec<String> = full
                .ids("tool_result")
                .into_iter()
                .filter(|id| complete.contains(id))
                .collect();
            assert_eq!(
                run.ids("tool_result"),
                executed,
                "{name} cut at {cut}: executed calls"
            );
            let refused: Vec<String> = full
                .ids("refused")
                .into_iter()
                .filter(|id| complete.contains(id))
                .collect();
            assert_eq!(
                run.ids("refused"),
                refused,
                "{name} cut at {cut}: refused calls"
            );
            assert_eq!(
                run.files,
                boundary[complete.len()],
                "{name} cut at {cut}: a call that did not complete touched the workspace"
            );
            if cut < total {
                assert_eq!(run.status, EndStatus::ModelError, "{name} cut at {cut}");
                assert_eq!(run.status.exit_code(), 1);
            }
        }
    }
}

#[test]
fn chunking_does_not_change_the_transcript() {
    for (name, session) in sessions() {
        let whole = replay_session(&name, &session, usize::MAX);
        for chunk in [1, 3] {
            let run = replay_session(&name, &session, chunk);
            assert_eq!(run.transcript, whole.transcript, "{name}: chunk {chunk}");
            assert_eq!(run.status, whole.status);
            assert_eq!(run.files, whole.files);
        }
    }
}

#[test]
fn session_transcripts() {
    for (name, session) in sessions() {
        let run = replay_session(&name, &session, usize::MAX);
        let mut text = format!(
            "status: {} (exit {})\n",
            run.status.name(),
            run.status.exit_code()
        );
        text.push_str("files:\n");
        for (path, bytes) in &run.files {
            text.push_str(&format!("  {path}: {:?}\n", String::from_utf8_lossy(bytes)));
        }
        text.push_str("transcript:\n");
        text.push_str(&run.transcript);
        insta::assert_snapshot!(format!("session_{name}"), text);
    }
}

#[test]
fn fix_greeting_runs_end_to_end() {
    let (name, session) = shipped("fix_greeting");
    let run = replay_session(&name, &session, 1);
    assert_eq!(run.status, EndStatus::Done);
    assert_eq!(
        run.files["greet.sh"],
        b"name=\"${1:-world}\"\necho \"Hello, $name!\"\n"
    );
    let last = run.of_type("tool_result").last().unwrap()["output"].clone();
    assert_eq!(last, "Hello, world!\nHello, frontier!\n");
    // The write that the output limit cut in two ran once, in the turn that completed it.
    let c7: Vec<_> = run.records.iter().filter(|r| r["id"] == "c7").collect();
    assert_eq!(c7.len(), 2);
    assert_eq!(c7[0]["turn"], 3);
    assert_eq!(
        reasons(&run),
        ["next_turn", "escalate_output_limit", "next_turn"]
    );
}

fn shipped(name: &str) -> (String, Session) {
    sessions().into_iter().find(|(n, _)| n == name).unwrap()
}

fn reasons(run: &RunResult) -> Vec<String> {
    run.of_type("transition")
        .iter()
        .map(|r| r["reason"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_extended_session_runs_end_to_end_without_a_count_but_one() {
    let (name, session) = shipped("extended");
    assert_eq!(session.ctl_mode, CtlMode::Extended);
    let run = replay_session(&name, &session, 1);
    assert_eq!(run.status, EndStatus::Done);
    assert_eq!(run.files["sum.sh"], b"echo \"$1 + $2 = $(($1 + $2))\"\n");
    // The heredoc tagged EOF1 holds the lines `EOF` and `end` as content.
    let notes = String::from_utf8(run.files["NOTES.md"].clone()).unwrap();
    assert!(notes.ends_with("tag EOF1:\nEOF\nend\n"), "{notes}");
    // The counted argument: two lines, no final newline.
    assert_eq!(run.files["pair.txt"], b"x=1\ny=2");
    let outputs: Vec<_> = run
        .of_type("tool_result")
        .iter()
        .map(|r| (r["id"].as_str().unwrap().to_owned(), r["output"].clone()))
        .collect();
    assert_eq!(outputs[2], ("c3".into(), "2 + 3 = -1\n".into()));
    assert_eq!(outputs[4], ("c5".into(), "2 + 3 = 5\n".into()));
    // The rewrite cut twice (in its body, then inside its tag line) ran once, in turn 4.
    let c4: Vec<_> = run.records.iter().filter(|r| r["id"] == "c4").collect();
    assert_eq!(c4.len(), 2);
    assert_eq!(c4[0]["turn"], 4);
    assert_eq!(
        reasons(&run),
        [
            "next_turn",
            "escalate_output_limit",
            "resume_nudge",
            "next_turn"
        ]
    );
}

#[test]
fn an_unclosed_heredoc_never_runs_nor_does_what_it_swallowed() {
    let (name, session) = shipped("extended_unclosed");
    let run = replay_session(&name, &session, 1);
    assert_eq!(run.status, EndStatus::StreamIncomplete);
    assert_eq!(run.ids("tool_call"), ["c1"]);
    assert_eq!(run.ids("tool_result"), ["c1"]);
    assert_eq!(run.files.keys().collect::<Vec<_>>(), ["kept.txt"]);
    assert_eq!(run.of_type("stream_incomplete")[0]["call"], "c2");
}

#[test]
fn an_extended_session_read_as_strict_ctl_breaks_at_its_first_inline_argument() {
    let (name, mut session) = shipped("extended");
    session.ctl_mode = CtlMode::Strict;
    let run = replay_session(&name, &session, 1);
    let error = &run.of_type("stream_error")[0];
    assert_eq!(error["offset"], "call c1 write_file\narg path ".len());
    assert_eq!(error["byte"], b'=');
    assert!(run.ids("tool_call").is_empty());
}

/// Replays turns split at the given points (taken modulo each turn's length).
struct SplitSource {
    turns: std::collections::VecDeque<Turn>,
    cuts: Vec<usize>,
}

impl ModelSource for SplitSource {
    fn turn(
        &mut self,
        _request: &Request<'_>,
        sink: &mut dyn FnMut(&[u8]) -> Flow,
    ) -> Result<Option<Finish>, ModelError> {
        match self.turns.pop_front() {
            None => Ok(None),
            Some(Turn::ContextOverflow) => Err(ModelError::ContextOverflow("replayed".into())),
            Some(Turn::Output { bytes, finish }) => {
                let mut points: Vec<usize> =
                    self.cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
                points.push(0);
                points.push(bytes.len());
                points.sort_unstable();
                for pair in points.windows(2) {
                    if sink(&bytes[pair[0]..pair[1]]) == Flow::Stop {
                        break;
                    }
                }
                Ok(Some(finish))
            }
        }
    }

    fn describe(&self) -> String {
        "split".into()
    }
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(12))]

        /// Any chunking of any session, empty chunks included, gives the whole-turn transcript.
        #[test]
        fn random_chunkings_give_the_same_transcript(
            session in 0usize..7,
            cuts in prop::collection::vec(0usize..4096, 0..40),
        ) {
            let all = sessions();
            let (name, session) = &all[session % all.len()];
            let turns = &session.turns;
            let mut whole = SplitSource { turns: turns.iter().cloned().collect(), cuts: vec![] };
            let mut split = SplitSource { turns: turns.iter().cloned().collect(), cuts };
            let a = run_with(&mut whole, |c| c.ctl_mode = session.ctl_mode);
            let b = run_with(&mut split, |c| c.ctl_mode = session.ctl_mode);
            prop_assert_eq!(&a.transcript, &b.transcript, "{}", name);
            prop_assert_eq!(a.files, b.files);
        }
    }
}
