//! `frontier check`: verdict, offsets, error and unit counts, one JSON object per file.

use std::ffi::{OsStr, OsString};

use std::io::Write;

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use frontier::contract::{ErrorKind, Outcome, PushParser, Verdict};
use frontier::event::Event;

use super::lang::{dispatch, LangArgs, WithParser};
use super::{bounds, display, input};

/// Flags of `check`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    lang: LangArgs,
    /// Feed the parser at most N bytes at a time, 1 to 1073741824 (default: each read whole).
    #[arg(long, value_parser = bounds::CHUNK.parser::<usize>())]
    chunk: Option<usize>,
    /// Print one JSON object per file (the stable format).
    #[arg(long)]
    json: bool,
    /// The files to check; `-` is standard input.
    #[arg(required = true)]
    files: Vec<OsString>,
}

/// The report on one file, in the key order of the stable format.
#[derive(Serialize)]
struct Report<'a> {
    file: &'a str,
    verdict: &'static str,
    consumed: u64,
    confirmed: u64,
    error: Option<ErrorReport>,
    units: Units,
}

/// An error as `check --json` and `trace` print it.
#[derive(Serialize, Clone, Copy)]
pub struct ErrorReport {
    pub offset: u64,
    pub byte: u8,
    pub kind: &'static str,
}

impl ErrorReport {
    pub fn of<K: ErrorKind>(e: &frontier::ParseError<K>) -> ErrorReport {
        ErrorReport {
            offset: e.offset,
            byte: e.byte,
            kind: e.kind.as_str(),
        }
    }
}

struct Units(Vec<(&'static str, u64)>);

impl Serialize for Units {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (kind, n) in &self.0 {
            map.serialize_entry(kind, n)?;
        }
        map.end()
    }
}

struct CheckFile<'a> {
    path: &'a OsStr,
    chunk: Option<usize>,
}

impl WithParser for CheckFile<'_> {
    type Output = std::io::Result<(Outcome<&'static str>, Vec<(&'static str, u64)>)>;

    fn run<P: PushParser>(self, mut parser: P) -> Self::Output {
        let mut counts: Vec<(&'static str, u64)> = P::UNITS.iter().map(|u| (*u, 0)).collect();
        let mut count = |unit: Option<&'static str>| {
            if let Some(unit) = unit {
                if let Some(entry) = counts.iter_mut().find(|(k, _)| *k == unit) {
                    entry.1 += 1;
                }
            }
        };
        input::for_each_piece(self.path, self.chunk, |piece| {
            parser.push(piece, &mut |e| count(e.unit())).is_ok()
        })?;
        let outcome = parser.finish(&mut |e| count(e.unit()));
        Ok((erase_kind(outcome), counts))
    }
}

/// Replaces the language's error kind by its name, so commands can share one report type.
pub fn erase_kind<K: ErrorKind>(outcome: Outcome<K>) -> Outcome<&'static str> {
    let verdict = match outcome.verdict {
        Verdict::Complete => Verdict::Complete,
        Verdict::Incomplete(unclosed) => Verdict::Incomplete(unclosed),
        Verdict::Error(e) => Verdict::Error(frontier::ParseError {
            offset: e.offset,
            byte: e.byte,
            kind: e.kind.as_str(),
        }),
    };
    Outcome {
        verdict,
        consumed: outcome.consumed,
        confirmed: outcome.confirmed,
    }
}

pub fn run(args: Args) -> Result<i32, String> {
    let mut out = std::io::stdout().lock();
    let mut all_complete = true;
    let mut unreadable = false;
    for path in &args.files {
        let name = display::path(path);
        let checked = dispatch(
            &args.lang,
            CheckFile {
                path,
                chunk: args.chunk,
            },
        )?;
        let (outcome, units) = match checked {
            Ok(checked) => checked,
            // Reported, and the other files still checked: the status says one was not.
            Err(e) => {
                out.flush().map_err(|e| e.to_string())?;
                eprintln!("frontier: {name}: {}", display::escaped(&e.to_string()));
                unreadable = true;
                continue;
            }
        };
        all_complete &= matches!(outcome.verdict, Verdict::Complete);
        let error = outcome.verdict.error().map(|e| ErrorReport {
            offset: e.offset,
            byte: e.byte,
            kind: e.kind,
        });
        if args.json {
            let report = Report {
                file: &path.to_string_lossy(),
                verdict: outcome.verdict.as_str(),
                consumed: outcome.consumed,
                confirmed: outcome.confirmed,
                error,
                units: Units(units),
            };
            let line = serde_json::to_string(&report).map_err(|e| e.to_string())?;
            writeln!(out, "{line}").map_err(|e| e.to_string())?;
        } else {
            let units: Vec<String> = units.iter().map(|(k, n)| display::count(*n, k)).collect();
            match error {
                Some(e) => writeln!(
                    out,
                    "{name}: error: {} at byte {} (0x{:02x}); {} confirmed; {}",
                    e.kind,
                    e.offset,
                    e.byte,
                    display::count(outcome.confirmed, "bytes"),
                    units.join(", ")
                ),
                None => writeln!(
                    out,
                    "{name}: {}{} after {}, {} confirmed; {}",
                    outcome.verdict.as_str(),
                    match outcome.verdict.unclosed() {
                        Some(unclosed) => format!(": {unclosed};"),
                        None => String::new(),
                    },
                    display::count(outcome.consumed, "bytes"),
                    outcome.confirmed,
                    units.join(", ")
                ),
            }
            .map_err(|e| e.to_string())?;
        }
    }
    Ok(match (unreadable, all_complete) {
        (true, _) => super::EXIT_USAGE,
        (false, true) => 0,
        (false, false) => 1,
    })
}
