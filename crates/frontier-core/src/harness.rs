//! Drivers and contract checks shared by the tests, the property tests and the fuzz targets.
//!
//! [`run`] feeds a whole input to a parser in chunks of a given size and returns what a
//! consumer saw. The `check_*` functions state the contract's obligations as executable
//! checks: they return a description of the first violation instead of panicking, so that a
//! fuzz target, a property test and a corpus test can all use them.

use std::convert::Infallible;

use crate::byteset::ByteSet;
use crate::contract::{Outcome, PushParser, Unclosed};
use crate::event::{Record, Recorder};
use crate::recognizer::{InText, KeptRun, Recognizer};

/// Everything a consumer observes when a stream is parsed to its end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transcript<K> {
    /// The events, with adjacent data events merged.
    pub records: Vec<Record>,
    /// Verdict, consumed and confirmed offsets.
    pub outcome: Outcome<K>,
}

/// Feeds `input` to `parser` in chunks of `chunk` bytes (all at once when `None`), then
/// finishes it.
pub fn run<P: PushParser>(
    mut parser: P,
    input: &[u8],
    chunk: Option<usize>,
) -> Transcript<P::ErrorKind> {
    let mut recorder = Recorder::default();
    let size = chunk.unwrap_or(input.len()).max(1);
    for piece in input.chunks(size) {
        if parser.push(piece, &mut |e| recorder.record(&e)).is_err() {
            break;
        }
    }
    let outcome = parser.finish(&mut |e| recorder.record(&e));
    Transcript {
        records: recorder.records,
        outcome,
    }
}

/// Feeds `input` split at the given increasing offsets.
pub fn run_split<P: PushParser>(
    parser: P,
    input: &[u8],
    cuts: &[usize],
) -> Transcript<P::ErrorKind> {
    match feed_in_parts(parser, input, cuts, |_, _| Ok::<(), Infallible>(())) {
        Ok(transcript) => transcript,
        Err(never) => match never {},
    }
}

/// Feeds `input` split at the given increasing offsets, calling `after_part` with the parser
/// and the offset reached after every part it took; stops at its first complaint.
fn feed_in_parts<P: PushParser, E>(
    mut parser: P,
    input: &[u8],
    cuts: &[usize],
    mut after_part: impl FnMut(&P, usize) -> Result<(), E>,
) -> Result<Transcript<P::ErrorKind>, E> {
    let mut recorder = Recorder::default();
    let mut start = 0;
    for &end in cuts.iter().chain(std::iter::once(&input.len())) {
        let end = end.clamp(start, input.len());
        if parser
            .push(&input[start..end], &mut |e| recorder.record(&e))
            .is_err()
        {
            break;
        }
        after_part(&parser, end)?;
        start = end;
    }
    let outcome = parser.finish(&mut |e| recorder.record(&e));
    Ok(Transcript {
        records: recorder.records,
        outcome,
    })
}

/// Byte-at-a-time feeding, checking at every prefix what the contract promises:
/// `allowed()` predicts exactly which next bytes are refused; `accepting()` agrees with
/// `finish()`; pending stays within the parser's bound; the frontier never moves back; after an
/// error the allowed set is empty and the error is sticky; an incomplete verdict names a
/// construct that began where it can (see [`check_unclosed`]). With `exhaustive`, every one of the
/// 256 possible next bytes is tried on a clone at every prefix, not only the actual one.
pub fn check_byte_at_a_time<P: PushParser>(
    parser: P,
    input: &[u8],
    exhaustive: bool,
) -> Result<Transcript<P::ErrorKind>, String> {
    byte_at_a_time(parser, input, exhaustive).map(|(transcript, _)| transcript)
}

/// [`check_byte_at_a_time`], also returning where the parser stood after every prefix it took
/// (up to the first refused byte), for the chunked feedings to be compared with.
fn byte_at_a_time<P: PushParser>(
    parser: P,
    input: &[u8],
    exhaustive: bool,
) -> Result<(Transcript<P::ErrorKind>, Vec<Frontier>), String> {
    let mut parser = parser;
    let mut recorder = Recorder::default();
    let mut last_confirmed = 0;
    let mut frontiers = Vec::with_capacity(input.len() + 1);
    let mut alone = parser.recognizer();
    for (at, &byte) in input.iter().enumerate() {
        check_state(&parser, input, at, &mut last_confirmed)?;
        frontiers.push(Frontier::of(&parser));
        let allowed = parser.allowed();
        check_recognizer(&parser, &mut alone, at, byte, exhaustive)?;
        if exhaustive {
            for b in 0..=255u8 {
                let ok = parser.clone().push(&[b], &mut |_| {}).is_ok();
                if ok != allowed.contains(b) {
                    return Err(format!(
                        "at {at}: byte {b:#04x} is {} by allowed() but push {}",
                        if ok { "refused" } else { "allowed" },
                        if ok { "accepted it" } else { "refused it" }
                    ));
                }
            }
        }
        let pushed = parser.push(&[byte], &mut |e| recorder.record(&e));
        if pushed.is_ok() != allowed.contains(byte) {
            return Err(format!(
                "at {at}: byte {byte:#04x} allowed={} but push ok={}",
                allowed.contains(byte),
                pushed.is_ok()
            ));
        }
        if let Err(e) = pushed {
            if e.offset != at as u64 || e.byte != byte {
                return Err(format!("at {at}: error reports {e:?}"));
            }
            if !parser.allowed().is_empty() || parser.accepting() {
                return Err(format!("at {at}: parser in error still allows bytes"));
            }
            if parser.push(b"x", &mut |_| {}) != Err(e) || parser.error() != Some(e) {
                return Err(format!("at {at}: error is not sticky"));
            }
            if parser.consumed() != at as u64 {
                return Err(format!(
                    "at {at}: consumed {} after error",
                    parser.consumed()
                ));
            }
            break;
        }
    }
    if parser.error().is_none() {
        check_state(&parser, input, input.len(), &mut last_confirmed)?;
        frontiers.push(Frontier::of(&parser));
    }
    let outcome = parser.finish(&mut |e| recorder.record(&e));
    if outcome.confirmed < last_confirmed || outcome.confirmed > outcome.consumed {
        return Err(format!(
            "finish moved the frontier to {}",
            outcome.confirmed
        ));
    }
    let transcript = Transcript {
        records: recorder.records,
        outcome,
    };
    Ok((transcript, frontiers))
}

/// The recogniser obligations at one prefix: the recogniser stepped on its own from the start
/// (`alone`) stands where the parser's own recogniser stands (equal keys at an unbounded
/// horizon) and answers `allowed()` and `accepting()` as the parser does; `try_byte` takes
/// exactly the allowed bytes (all 256 tried with `exhaustive`) and leaves a refused one without
/// a trace. Steps `alone` over `byte` when it is allowed.
fn check_recognizer<P: PushParser>(
    parser: &P,
    alone: &mut P::Recognizer,
    at: usize,
    byte: u8,
    exhaustive: bool,
) -> Result<(), String> {
    let own = parser.recognizer();
    if own.mask_key(u32::MAX) != alone.mask_key(u32::MAX) {
        return Err(format!(
            "at {at}: the recogniser stepped alone is {alone:?}, the parser's is {own:?}"
        ));
    }
    if alone.allowed() != parser.allowed() || alone.accepting() != parser.accepting() {
        return Err(format!(
            "at {at}: the recogniser says allowed {:?} accepting {}, the parser {:?} {}",
            alone.allowed().ranges(),
            alone.accepting(),
            parser.allowed().ranges(),
            parser.accepting()
        ));
    }
    let tried: &[u8] = if exhaustive { &ALL_BYTES } else { &[byte] };
    for &b in tried {
        let mut copy = *alone;
        let taken = copy.try_byte(b);
        if taken != alone.allowed().contains(b) {
            return Err(format!(
                "at {at}: try_byte({b:#04x}) = {taken} against allowed()"
            ));
        }
        if !taken && copy.mask_key(u32::MAX) != alone.mask_key(u32::MAX) {
            return Err(format!(
                "at {at}: a refused {b:#04x} changed the recogniser"
            ));
        }
    }
    check_line_text(alone, at)?;
    check_kept_run(alone, at)?;
    check_byte_blind(alone, at)?;
    alone.try_byte(byte);
    Ok(())
}

/// The horizon the line-text law is checked at: longer than every probe.
const LAW_HORIZON: u32 = 64;

/// Runs a run state is probed with: whole and cut characters, invalid bytes, CTL tokens, a
/// run of 63 bytes (one less than the horizon: the room a claim needs), and exits at the end
/// of some (a probe's run, up to the first byte outside the kind's class, is what the law
/// speaks of).
const LINE_TEXT_PROBES: [&[u8]; 19] = [
    b"",
    b"a",
    b" x\t\r",
    b"*** End Patch",
    b"@@ -1 +1 @@",
    b"\x00\x7f",
    "é€😀".as_bytes(),
    b"\xc3",
    b"\xf0\x9f\x98",
    b"\xc0\xaf",
    b"\xed\xa0\x80",
    b"\xff",
    b"\x80",
    b"ab\ncd",
    b"read_file x",
    b"C1.b:c-d_9\n",
    b"Zz09",
    b"0123456789abcdef..",
    b"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
];

/// [`Recognizer::line_text`]'s law, for the probes: the state takes a run of the class
/// exactly when the kind says it is viable, and after a whole nonempty run `x` every byte
/// outside the class leads where it leads after `a` (the same key at the horizon left after
/// `x` and that byte); runs that start with an excepted byte aside, and `a` never excepted.
fn check_line_text<R: Recognizer>(state: &R, at: usize) -> Result<(), String> {
    let Some(InText {
        kind,
        forgets,
        except,
    }) = state.line_text(LAW_HORIZON)
    else {
        return Ok(());
    };
    let mut reference = *state;
    if except.contains(b'a') || !reference.try_byte(b'a') {
        return Err(format!("at {at}: a {kind:?} state refuses the run \"a\""));
    }
    let runs = LINE_TEXT_PROBES
        .map(|probe| &probe[..kind.run_len(probe).unwrap_or(probe.len())])
        .map(|run| match run.first() {
            // The law is silent on runs that start with an excepted byte.
            Some(&first) if except.contains(first) => &[][..],
            _ => run,
        });
    for run in runs {
        let taken = state.clone().try_bytes(run) == run.len();
        if taken != kind.viable(run) {
            return Err(format!(
                "at {at}: a {kind:?} state takes {run:?}: {taken}, the kind says {}",
                kind.viable(run)
            ));
        }
    }
    if !forgets {
        return Ok(());
    }
    // Each exit byte after `a`, once per run length (the horizon left depends on it), and
    // each distinct run once: the probes cut to the class often give the same run.
    let exits = kind.class().complement();
    let mut checked: [&[u8]; LINE_TEXT_PROBES.len()] = [&[]; LINE_TEXT_PROBES.len()];
    for (i, run) in runs.iter().enumerate() {
        if run.is_empty() || !kind.complete(run) || checked[..i].contains(run) {
            continue;
        }
        checked[i] = run;
        let mut s = *state;
        s.try_bytes(run);
        // The exits each side takes, from `allowed()` (which the byte-at-a-time check holds
        // to `try_byte`): they must be the same, and each must lead to the same key.
        let taken = s.allowed().intersection(exits);
        if taken != reference.allowed().intersection(exits) {
            return Err(format!(
                "at {at}: after the {kind:?} run {run:?} the exits taken are not those after \"a\""
            ));
        }
        let horizon = LAW_HORIZON - run.len() as u32 - 1;
        let after = |mut s: R, exit: u8| s.try_byte(exit).then(|| s.mask_key(horizon));
        for exit in taken.iter() {
            if after(s, exit) != after(reference, exit) {
                return Err(format!(
                    "at {at}: {exit:#04x} after the {kind:?} run {run:?} leads elsewhere than \
                     after \"a\""
                ));
            }
        }
    }
    Ok(())
}

/// [`Recognizer::kept_run`]'s law, for the probes and for runs of `a` of the room's length
/// and one more: the state takes a nonempty run of the class exactly when the kind says it is
/// viable and it fits the room, and after every run it takes the bytes outside the class it
/// takes are those after `a`.
fn check_kept_run<R: Recognizer>(state: &R, at: usize) -> Result<(), String> {
    let Some(KeptRun { kind, room }) = state.kept_run() else {
        return Ok(());
    };
    let class = kind.class();
    let mut reference = *state;
    let reference_taken = reference.try_byte(b'a');
    if reference_taken != (room > 0) {
        return Err(format!(
            "at {at}: a kept {kind:?} run with room {room} takes \"a\": {reference_taken}"
        ));
    }
    // Runs of the room's length and one more (bounded: a run's room is a line's).
    let long: Vec<u8> = vec![b'a'; (room as usize).saturating_add(1).min(1 << 16)];
    let probes = LINE_TEXT_PROBES
        .iter()
        .map(|probe| &probe[..kind.run_len(probe).unwrap_or(probe.len())])
        .chain([&long[..long.len() - 1], &long[..]]);
    for run in probes.filter(|run| !run.is_empty()) {
        let mut s = *state;
        let taken = s.try_bytes(run) == run.len();
        let expected = kind.viable(run) && run.len() as u64 <= room as u64;
        if taken != expected {
            return Err(format!(
                "at {at}: a kept {kind:?} run with room {room} takes {} bytes of {run:?}: \
                 {taken}, the law says {expected}",
                run.len()
            ));
        }
        if taken && s.allowed().difference(class) != reference.allowed().difference(class) {
            return Err(format!(
                "at {at}: after the kept {kind:?} run {run:?} the exits are not those after \"a\""
            ));
        }
    }
    Ok(())
}

/// [`Recognizer::byte_blind`]'s claim: a state that says it is blind takes every byte, and
/// every successor has the key of the first, at the law's horizon and at the longest.
fn check_byte_blind<R: Recognizer>(state: &R, at: usize) -> Result<(), String> {
    if state.byte_blind() != Some(true) {
        return Ok(());
    }
    let after = |byte: u8| {
        let mut next = *state;
        next.try_byte(byte)
            .then(|| (next.mask_key(LAW_HORIZON), next.mask_key(u32::MAX)))
    };
    let first = after(0);
    for byte in ALL_BYTES {
        if first.is_none() || after(byte) != first {
            return Err(format!(
                "at {at}: a state that says it is byte-blind sees {byte:#04x}"
            ));
        }
    }
    Ok(())
}

/// Every byte value, in order.
const ALL_BYTES: [u8; 256] = {
    let mut all = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        all[i] = i as u8;
        i += 1;
    }
    all
};

fn check_state<P: PushParser>(
    parser: &P,
    input: &[u8],
    at: usize,
    last_confirmed: &mut u64,
) -> Result<(), String> {
    if parser.consumed() != at as u64 {
        return Err(format!("at {at}: consumed() says {}", parser.consumed()));
    }
    let confirmed = parser.confirmed();
    if confirmed < *last_confirmed || confirmed > at as u64 {
        return Err(format!(
            "at {at}: frontier {confirmed} after {last_confirmed}"
        ));
    }
    *last_confirmed = confirmed;
    if parser.pending() > parser.pending_bound() {
        return Err(format!(
            "at {at}: {} pending bytes exceed the bound {}",
            parser.pending(),
            parser.pending_bound()
        ));
    }
    let finished = parser.clone().finish(&mut |_| {});
    let complete = matches!(finished.verdict, crate::contract::Verdict::Complete);
    if complete != parser.accepting() {
        return Err(format!(
            "at {at}: accepting()={} but finish() says {}",
            parser.accepting(),
            finished.verdict.as_str()
        ));
    }
    if let Some(unclosed) = finished.verdict.unclosed() {
        check_unclosed(unclosed, input, at as u64, finished.confirmed)
            .map_err(|e| format!("at {at}: {e}"))?;
    }
    Ok(())
}

/// The obligations on the [`Unclosed`] of an incomplete verdict, checked at every prefix of
/// byte-at-a-time feeding (and so by every fuzz target, through [`check_contract`]):
///
/// 1. `began_at ≤ consumed`: the construct began in the bytes seen.
/// 2. `began_at ≤ confirmed`, or it follows an LF: a construct that began past the
///    confirmation frontier begins a line after lines the parser holds back whole (codex
///    mode), never inside the pending bytes of a line. (Every construct begins a line, but
///    a CTL line may follow a body without an LF.)
///
/// Decision: no nesting rule across prefixes (a construct open at `k` was open at every
/// prefix since it began). It does not hold where the grammar decides late: in a unified
/// diff, `di` after a `diff --git` header may still extend that header (`dissimilarity`), so
/// the header begun at 0 is the innermost open construct, and one byte later `dif` proves a
/// new header begun at the start of that line. Offsets left over from an earlier construct
/// are caught by the tables of `tests/unclosed.rs`, which cut every construct twice.
///
/// `unclosed` is the verdict of the prefix `input[..at]`, whose frontier is `confirmed`.
pub fn check_unclosed(
    unclosed: &Unclosed,
    input: &[u8],
    at: u64,
    confirmed: u64,
) -> Result<(), String> {
    let began = unclosed.began_at;
    if began > at {
        return Err(format!("{unclosed} is after the {at} bytes consumed"));
    }
    if began > confirmed && input.get(began as usize - 1) != Some(&b'\n') {
        return Err(format!(
            "{unclosed} is past the frontier {confirmed} but does not begin a line"
        ));
    }
    Ok(())
}

/// The chunking-invariance obligation on one input: whole-buffer feeding, byte-at-a-time
/// feeding (with the per-prefix checks of [`check_byte_at_a_time`]) and every 2-way split
/// (every `stride`-th one; 1 for all) give the same transcript, and after the first part of a
/// split the parser stands where byte-at-a-time feeding stood after the same bytes: the same
/// `allowed()`, `accepting()`, consumed and confirmed offsets. (A parser's bulk paths, which
/// take runs of bytes at once, must leave the same state as its step.) Returns the
/// whole-buffer transcript.
pub fn check_chunking<P: PushParser>(
    parser: &P,
    input: &[u8],
    stride: usize,
) -> Result<Transcript<P::ErrorKind>, String> {
    let whole = run(parser.clone(), input, None);
    let (bytewise, stepped) = byte_at_a_time(parser.clone(), input, false)?;
    if bytewise != whole {
        return Err(describe_difference("byte at a time", &whole, &bytewise));
    }
    for cut in (0..=input.len()).step_by(stride.max(1)) {
        let split = run_split_checked(parser.clone(), input, &[cut], &stepped)?;
        if split != whole {
            return Err(describe_difference(
                &format!("split at {cut}"),
                &whole,
                &split,
            ));
        }
    }
    Ok(whole)
}

/// [`run_split`], checking after every part but the last that the parser stands where
/// byte-at-a-time feeding stood after the same bytes (`stepped`, from
/// [`byte_at_a_time`]).
fn run_split_checked<P: PushParser>(
    parser: P,
    input: &[u8],
    cuts: &[usize],
    stepped: &[Frontier],
) -> Result<Transcript<P::ErrorKind>, String> {
    feed_in_parts(parser, input, cuts, |parser, end| {
        let here = Frontier::of(parser);
        if stepped.get(end) == Some(&here) {
            return Ok(());
        }
        Err(format!(
            "after the first {end} bytes in chunks the parser stands at {here:?}, \
             byte at a time at {:?}",
            stepped.get(end)
        ))
    })
}

/// Where a parser stands between two pushes, as a consumer or a decoder can see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Frontier {
    allowed: ByteSet,
    accepting: bool,
    consumed: u64,
    confirmed: u64,
}

impl Frontier {
    fn of<P: PushParser>(parser: &P) -> Frontier {
        Frontier {
            allowed: parser.allowed(),
            accepting: parser.accepting(),
            consumed: parser.consumed(),
            confirmed: parser.confirmed(),
        }
    }
}

/// Every prefix, parsed from scratch as a stream of its own (every `stride`-th one), gives the
/// events that incremental parsing had confirmed by then plus what `finish` adds at the cut,
/// and the same outcome; and what incremental parsing confirms is a prefix of the events of the
/// whole input.
pub fn check_prefixes<P: PushParser>(
    parser: &P,
    input: &[u8],
    stride: usize,
) -> Result<(), String> {
    let whole = run(parser.clone(), input, None);
    let mut stepper = parser.clone();
    let mut stepped = Recorder::default();
    let mut end = 0;
    for k in (0..=input.len()).step_by(stride.max(1)) {
        if stepper.error().is_none() {
            let _ = stepper.push(&input[end..k], &mut |e| stepped.record(&e));
        }
        end = k;
        if !records_are_prefix(&stepped.records, &whole.records) {
            let got = Transcript {
                records: stepped.records.clone(),
                outcome: whole.outcome,
            };
            return Err(describe_difference(
                &format!("confirmed by {k}"),
                &whole,
                &got,
            ));
        }
        let mut at_cut = stepped.clone();
        let outcome = stepper.clone().finish(&mut |e| at_cut.record(&e));
        let expected = Transcript {
            records: at_cut.records,
            outcome,
        };
        let prefix = run(parser.clone(), &input[..k], None);
        if prefix != expected {
            return Err(describe_difference(
                &format!("prefix {k}"),
                &expected,
                &prefix,
            ));
        }
    }
    Ok(())
}

/// Whether `prefix` is a prefix of `whole`, allowing the last data record of `prefix` to be a
/// shorter piece of the corresponding record of `whole` (a data value cut by the prefix).
pub fn records_are_prefix(prefix: &[Record], whole: &[Record]) -> bool {
    if prefix.len() > whole.len() {
        return false;
    }
    let Some((last, init)) = prefix.split_last() else {
        return true;
    };
    if init != &whole[..init.len()] {
        return false;
    }
    let theirs = &whole[init.len()];
    if last == theirs {
        return true;
    }
    match (last.fields.last(), theirs.fields.last()) {
        (
            Some(("data", crate::event::OwnedValue::Bytes(a))),
            Some(("data", crate::event::OwnedValue::Bytes(b))),
        ) => {
            last.event == theirs.event
                && last.fields[..last.fields.len() - 1] == theirs.fields[..theirs.fields.len() - 1]
                && b.starts_with(a)
        }
        _ => false,
    }
}

fn describe_difference<K: std::fmt::Debug>(
    what: &str,
    expected: &Transcript<K>,
    got: &Transcript<K>,
) -> String {
    let first = expected
        .records
        .iter()
        .zip(&got.records)
        .position(|(a, b)| a != b)
        .unwrap_or(expected.records.len().min(got.records.len()));
    format!(
        "{what}: transcripts differ at record {first}: expected {:?} ({} records, {:?}), got {:?} ({} records, {:?})",
        expected.records.get(first),
        expected.records.len(),
        expected.outcome,
        got.records.get(first),
        got.records.len(),
        got.outcome
    )
}

/// The checks every fuzz target makes on one input, for any parser: nothing panics; feeding
/// it whole, byte at a time (with the per-prefix checks of [`check_byte_at_a_time`]) and split
/// at the given offsets gives one transcript, and after every part of the split the parser
/// stands where byte-at-a-time feeding stood. `cargo test` runs the same function over the
/// corpora, so CI exercises what the fuzzers check.
pub fn check_contract<P: PushParser>(
    parser: &P,
    input: &[u8],
    cuts: &[usize],
) -> Result<Transcript<P::ErrorKind>, String> {
    let whole = run(parser.clone(), input, None);
    let (bytewise, stepped) = byte_at_a_time(parser.clone(), input, false)?;
    if bytewise != whole {
        return Err(describe_difference("byte at a time", &whole, &bytewise));
    }
    let mut sorted = cuts.to_vec();
    sorted.sort_unstable();
    let split = run_split_checked(parser.clone(), input, &sorted, &stepped)?;
    if split != whole {
        return Err(describe_difference(
            &format!("split at {sorted:?}"),
            &whole,
            &split,
        ));
    }
    Ok(whole)
}

#[cfg(test)]
mod tests {
    use super::{check_line_text, check_unclosed};
    use crate::apply_patch::StrictMachine;
    use crate::byteset::ByteSet;
    use crate::contract::Unclosed;
    use crate::ctl::{CtlMachine, Limits as CtlLimits};
    use crate::language::CtlMode;
    use crate::recognizer::{InText, LineText, Recognizer};
    use crate::udiff::{Limits, Mode, UdiffMachine};

    /// A unified diff recogniser that claims its text is UTF-8: the law check must catch it.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    struct ClaimsUtf8(UdiffMachine);

    impl Recognizer for ClaimsUtf8 {
        type Key = <UdiffMachine as Recognizer>::Key;
        fn allowed(&self) -> ByteSet {
            self.0.allowed()
        }
        fn accepting(&self) -> bool {
            self.0.accepting()
        }
        fn try_byte(&mut self, byte: u8) -> bool {
            self.0.try_byte(byte)
        }
        fn mask_key(&self, horizon: u32) -> Self::Key {
            self.0.mask_key(horizon)
        }
        fn line_text(&self, horizon: u32) -> Option<InText> {
            self.0.line_text(horizon).map(|t| InText {
                kind: LineText::Utf8,
                ..t
            })
        }
    }

    /// A CTL recogniser that claims token text wherever its header is in an id: the law
    /// check must catch it near the line limit.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct ClaimsToken(CtlMachine);

    impl Recognizer for ClaimsToken {
        type Key = <CtlMachine as Recognizer>::Key;
        fn allowed(&self) -> ByteSet {
            self.0.allowed()
        }
        fn accepting(&self) -> bool {
            self.0.accepting()
        }
        fn try_byte(&mut self, byte: u8) -> bool {
            self.0.try_byte(byte)
        }
        fn mask_key(&self, horizon: u32) -> Self::Key {
            self.0.mask_key(horizon)
        }
        fn line_text(&self, _horizon: u32) -> Option<InText> {
            Some(InText::forgetting(LineText::Token))
        }
    }

    /// A unified diff recogniser that forgets the bytes its keyword states except.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    struct ClaimsNoExcept<R>(R);

    impl<R: Recognizer> Recognizer for ClaimsNoExcept<R> {
        type Key = R::Key;
        fn allowed(&self) -> ByteSet {
            self.0.allowed()
        }
        fn accepting(&self) -> bool {
            self.0.accepting()
        }
        fn try_byte(&mut self, byte: u8) -> bool {
            self.0.try_byte(byte)
        }
        fn mask_key(&self, horizon: u32) -> Self::Key {
            self.0.mask_key(horizon)
        }
        fn line_text(&self, horizon: u32) -> Option<InText> {
            self.0.line_text(horizon).map(|t| t.except(ByteSet::EMPTY))
        }
    }

    fn stepped<R: Recognizer>(mut state: R, input: &[u8]) -> R {
        assert_eq!(state.try_bytes(input), input.len());
        state
    }

    #[test]
    fn line_text_states_keep_the_law_and_a_false_claim_is_caught() {
        let diff = b"--- a\n+++ b\n@@ -1,2 +1,2 @@\n x";
        let udiff = stepped(UdiffMachine::new(Mode::Strict, Limits::default()), diff);
        assert_eq!(
            udiff.line_text(64),
            Some(InText::forgetting(LineText::Bytes))
        );
        assert!(check_line_text(&udiff, 0).is_ok());
        let error = check_line_text(&ClaimsUtf8(udiff), 0).unwrap_err();
        assert!(error.contains("takes"), "{error}");

        // A keyword in progress on a line that is garbage if it diverges: text, except after
        // the byte that continues the keyword (`index x` is refused, `index 0` taken).
        let git = UdiffMachine::new(Mode::Git, Limits::default());
        let index = stepped(git, b"diff --git a/x b/x\nindex");
        assert_eq!(
            index.line_text(64),
            Some(InText::forgetting(LineText::Bytes).except(ByteSet::single(b' ')))
        );
        assert!(check_line_text(&index, 0).is_ok());
        let error = check_line_text(&ClaimsNoExcept(index), 0).unwrap_err();
        assert!(error.contains("takes"), "{error}");
        // An `index` line's object names are runs of hex digits, ended by `..`, SP or LF.
        for name in [&b"index "[..], b"index 1a", b"index 1a..", b"index 1a..2b"] {
            let hex = stepped(stepped(git, b"diff --git a/x b/x\n"), name);
            assert_eq!(hex.line_text(64), Some(InText::forgetting(LineText::Hex)));
            assert!(check_line_text(&hex, 0).is_ok());
        }
        let diff = stepped(git, b"diff");
        assert_eq!(
            diff.line_text(64).map(|t| t.except),
            Some(ByteSet::single(b' '))
        );
        assert!(check_line_text(&diff, 0).is_ok());
        // A line start outside a file patch: garbage unless a keyword starts.
        let start = stepped(git, b"diff --git a/x b/x\n");
        let text = start.line_text(64).unwrap();
        assert!(text.except.contains(b'd') && text.except.contains(b'i'));
        assert!(!text.except.contains(b'x'));
        assert!(check_line_text(&start, 0).is_ok());
        assert!(check_line_text(&ClaimsNoExcept(start), 0).is_err());
        // After a finished git hunk: garbage too, but for a line that overruns it or a `\`.
        let done = stepped(git, b"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n");
        let text = done.line_text(64).unwrap();
        assert!(text.except.contains(b' ') && text.except.contains(b'\\'));
        assert!(check_line_text(&done, 0).is_ok());
        assert!(check_line_text(&ClaimsNoExcept(done), 0).is_err());
        // `a` continues `rena`: no claim.
        assert_eq!(stepped(git, b"diff --git a/x b/y\nren").line_text(64), None);
        // Strict mode has no garbage: a keyword that diverges is an error.
        let strict = UdiffMachine::new(Mode::Strict, Limits::default());
        assert_eq!(stepped(strict, b"dif").line_text(64), None);

        let patch = b"*** Begin Patch\n*** Add File: a\n+";
        let strict = stepped(StrictMachine::default(), patch);
        assert_eq!(
            strict.line_text(64),
            Some(InText::forgetting(LineText::Utf8))
        );
        assert!(check_line_text(&strict, 0).is_ok());
        // A path may not be empty: LF is refused before its first byte, and the law holds.
        let path = stepped(StrictMachine::default(), b"*** Begin Patch\n*** Add File: ");
        assert_eq!(path.line_text(64), Some(InText::forgetting(LineText::Utf8)));
        assert!(check_line_text(&path, 0).is_ok());
        // Extended CTL: an inline value, a heredoc content line and a heredoc line start but
        // for the tag's next byte (the line may be the tag line), not strict CTL's counted
        // body (byte-blind instead).
        let ext = CtlMachine::with_mode(CtlLimits::default(), CtlMode::Extended);
        let inline = stepped(ext, b"call c1 f\narg k = v");
        assert_eq!(
            inline.line_text(64),
            Some(InText::forgetting(LineText::Bytes))
        );
        assert!(check_line_text(&inline, 0).is_ok());
        let heredoc = stepped(ext, b"call c1 f\narg k <<EOF\nx");
        assert_eq!(
            heredoc.line_text(64),
            Some(InText::forgetting(LineText::Bytes))
        );
        assert!(check_line_text(&heredoc, 0).is_ok());
        for (held, next) in [(&b""[..], b'E'), (b"E", b'O'), (b"EO", b'F')] {
            let start = stepped(stepped(ext, b"call c1 f\narg k <<EOF\n"), held);
            let except = ByteSet::single(next);
            assert_eq!(
                start.line_text(64),
                Some(InText::forgetting(LineText::Bytes).except(except))
            );
            assert!(check_line_text(&start, 0).is_ok());
        }
        // A claim without the exception is caught when a probe is the tag line (`Zz09`).
        let start = stepped(ext, b"call c1 f\narg k <<Zz09\n");
        assert!(check_line_text(&start, 0).is_ok());
        let error = check_line_text(&ClaimsNoExcept(start), 0).unwrap_err();
        assert!(error.contains("leads elsewhere"), "{error}");
        // The whole tag held: LF closes, every other byte is content; nothing excepted.
        let whole = stepped(ext, b"call c1 f\narg k <<EOF\nEOF");
        assert_eq!(
            whole.line_text(64),
            Some(InText::forgetting(LineText::Bytes))
        );
        assert!(check_line_text(&whole, 0).is_ok());
        // A tag whose next byte is `a`, the tables' stand-in for every run: walked.
        assert_eq!(
            stepped(ext, b"call c1 f\narg k <<abc\n").line_text(64),
            None
        );
        assert_eq!(
            stepped(ext, b"call c1 f\narg k <<Xa\nX").line_text(64),
            None
        );
        let strict = stepped(CtlMachine::default(), b"call c1 f\narg k 9\nx");
        assert_eq!(strict.line_text(64), None);
        // CTL's ids, names and keys are runs of token characters ended by SP or LF, in both
        // modes, while the line has room for a token; `call` and `arg` are not.
        for ctl in [CtlMachine::default(), ext] {
            for header in [
                &b"call "[..],
                b"call c",
                b"call c1 ",
                b"call c1 f",
                b"call c1 f\narg ",
            ] {
                let run = stepped(ctl, header);
                assert_eq!(
                    run.line_text(64),
                    Some(InText::forgetting(LineText::Token)),
                    "{:?}",
                    String::from_utf8_lossy(header)
                );
                assert!(check_line_text(&run, 0).is_ok());
            }
            assert_eq!(stepped(ctl, b"call").line_text(64), None);
            assert_eq!(stepped(ctl, b"call c1 f\narg").line_text(64), None);
        }
        let short = CtlLimits {
            max_line: 75,
            ..CtlLimits::default()
        };
        // 75 − 6 bytes left in the id is not room for 64 bytes, an exit and the fewest bytes
        // that finish the line.
        let near = stepped(CtlMachine::new(short), b"call c");
        assert_eq!(near.line_text(64), None);
        assert!(stepped(CtlMachine::new(short), b"call c")
            .line_text(16)
            .is_some());
        // A claim of token text where the line's room shows is caught: with 72 bytes left the
        // room after an id's SP shows the id's length, and with 52 left 63 bytes do not fit.
        let tight = CtlLimits {
            max_line: 78,
            ..CtlLimits::default()
        };
        let id = ClaimsToken(stepped(CtlMachine::new(tight), b"call c"));
        let error = check_line_text(&id, 0).unwrap_err();
        assert!(error.contains("leads elsewhere"), "{error}");
        let error = check_line_text(&ClaimsToken(stepped(id.0, &[b'x'; 20])), 0).unwrap_err();
        assert!(error.contains("takes"), "{error}");
        // Near max_arg the room left shows in the key: no claim.
        let small = CtlLimits {
            max_arg: 100,
            ..CtlLimits::default()
        };
        let near = CtlMachine::with_mode(small, CtlMode::Extended);
        assert_eq!(
            stepped(near, b"call c1 f\narg k <<EOF\nx").line_text(64),
            None
        );

        // Inside a character: the next byte is not free.
        assert_eq!(
            stepped(strict, "\u{e9}".as_bytes()[..1].as_ref()).line_text(64),
            None
        );
    }

    /// A CTL recogniser that says every state is byte-blind.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct ClaimsBlind(CtlMachine);

    impl Recognizer for ClaimsBlind {
        type Key = <CtlMachine as Recognizer>::Key;
        fn allowed(&self) -> ByteSet {
            self.0.allowed()
        }
        fn accepting(&self) -> bool {
            self.0.accepting()
        }
        fn try_byte(&mut self, byte: u8) -> bool {
            self.0.try_byte(byte)
        }
        fn mask_key(&self, horizon: u32) -> Self::Key {
            self.0.mask_key(horizon)
        }
        fn byte_blind(&self) -> Option<bool> {
            Some(true)
        }
    }

    #[test]
    fn byte_blind_claims_are_checked() {
        use super::check_byte_blind;
        let body = stepped(CtlMachine::default(), b"call c1 f\narg k 2\n");
        assert_eq!(body.byte_blind(), Some(true));
        assert!(check_byte_blind(&body, 0).is_ok());
        assert!(check_byte_blind(&stepped(body, b"x"), 0).is_ok());
        let frame = stepped(body, b"xy");
        assert_eq!(frame.byte_blind(), Some(false));
        let error = check_byte_blind(&ClaimsBlind(frame), 0).unwrap_err();
        assert!(error.contains("byte-blind"), "{error}");
    }

    #[test]
    fn an_unclosed_construct_must_begin_where_it_can() {
        let input = b"call c1 x\narg p 5\nab";
        let at = |began_at| Unclosed::at("x", began_at);
        // At the frontier, before it, or past it at a line start: fine.
        assert!(check_unclosed(&at(18), input, 20, 20).is_ok());
        assert!(check_unclosed(&at(0), input, 20, 20).is_ok());
        assert!(check_unclosed(&at(10), input, 20, 5).is_ok());
        // After the bytes consumed, or past the frontier inside a line: refused.
        assert!(check_unclosed(&at(21), input, 20, 20).is_err());
        assert!(check_unclosed(&at(12), input, 20, 10).is_err());
    }
}
