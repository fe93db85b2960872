//! `frontier events`: the confirmed events as JSON lines, schema in `frontier::event`.
//!
//! Adjacent data events are merged before printing, so the output is the same for every
//! chunking. The last line is `{"event":"end","verdict":...,"consumed":...,"confirmed":...,
//! "error":...}`, with `"unclosed":{"construct":...,"began_at":...}` before `error` when the
//! verdict is incomplete.

use std::io::{BufWriter, Write};

use frontier::contract::{Owed, PushParser, Unclosed, Verdict};
use frontier::event::{Record, Recorder};

use super::check::{erase_kind, ErrorReport};
use super::input;
use super::lang::{dispatch, LangArgs, WithParser};

/// Flags of `events`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    lang: LangArgs,
    /// Feed the parser N bytes at a time (default: as read, 64 KiB).
    #[arg(long)]
    chunk: Option<usize>,
    /// The file to parse; `-` is standard input.
    file: String,
}

/// The last line of `events`.
#[derive(serde::Serialize)]
struct EndRecord {
    event: &'static str,
    verdict: &'static str,
    consumed: u64,
    confirmed: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    unclosed: Option<UnclosedReport>,
    error: Option<ErrorReport>,
}

/// What an incomplete stream left open, as the `end` record prints it.
#[derive(serde::Serialize)]
struct UnclosedReport {
    construct: &'static str,
    began_at: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    owed: Option<OwedReport>,
}

/// What a length-prefixed construct still needs: `{"bytes":N}` or `{"old":N,"new":M}`.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum OwedReport {
    Bytes { bytes: u64 },
    Lines { old: u64, new: u64 },
}

impl UnclosedReport {
    fn of(unclosed: &Unclosed) -> UnclosedReport {
        UnclosedReport {
            construct: unclosed.construct,
            began_at: unclosed.began_at,
            owed: unclosed.owed.map(|owed| match owed {
                Owed::Bytes(bytes) => OwedReport::Bytes { bytes },
                Owed::Lines { old, new } => OwedReport::Lines { old, new },
            }),
        }
    }
}

struct Events<'a> {
    path: &'a str,
    chunk: Option<usize>,
}

/// Prints every record but the last, which a later data event may still extend.
fn flush_settled(recorder: &mut Recorder, out: &mut impl Write) -> std::io::Result<()> {
    if recorder.records.len() > 1 {
        let keep = recorder.records.pop();
        for record in recorder.records.drain(..) {
            print_record(&record, out)?;
        }
        recorder.records.extend(keep);
    }
    Ok(())
}

fn print_record(record: &Record, out: &mut impl Write) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, record)?;
    writeln!(out)
}

impl WithParser for Events<'_> {
    type Output = std::io::Result<bool>;

    fn run<P: PushParser>(self, mut parser: P) -> Self::Output {
        let stdout = std::io::stdout();
        let mut out = BufWriter::new(stdout.lock());
        let mut recorder = Recorder::default();
        let mut failure = None;
        input::for_each_chunk(self.path, self.chunk, |piece| {
            let ok = parser.push(piece, &mut |e| recorder.record(&e)).is_ok();
            if let Err(e) = flush_settled(&mut recorder, &mut out) {
                failure = Some(e);
                return false;
            }
            ok
        })?;
        if let Some(e) = failure {
            return Err(e);
        }
        let outcome = erase_kind(parser.finish(&mut |e| recorder.record(&e)));
        for record in &recorder.records {
            print_record(record, &mut out)?;
        }
        let end = EndRecord {
            event: "end",
            verdict: outcome.verdict.as_str(),
            consumed: outcome.consumed,
            confirmed: outcome.confirmed,
            unclosed: outcome.verdict.unclosed().map(UnclosedReport::of),
            error: outcome.verdict.error().map(|e| ErrorReport {
                offset: e.offset,
                byte: e.byte,
                kind: e.kind,
            }),
        };
        let end = serde_json::to_string(&end)?;
        writeln!(out, "{end}")?;
        out.flush()?;
        Ok(matches!(outcome.verdict, Verdict::Complete))
    }
}

pub fn run(args: Args) -> Result<i32, String> {
    let complete = dispatch(
        &args.lang,
        Events {
            path: &args.file,
            chunk: args.chunk,
        },
    )?
    .map_err(|e| format!("{}: {e}", args.file))?;
    Ok(if complete { 0 } else { 1 })
}
