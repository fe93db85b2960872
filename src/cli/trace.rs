//! `frontier trace`: the allowed set and accepting flag after every prefix.
//!
//! The input is streamed: each read is pushed byte by byte (the state after every prefix is
//! what is printed), so memory stays one read block whatever the input's length. Exit status
//! 0 when the input is complete, 1 otherwise (incomplete or an error), as `check` and
//! `events`.

use std::ffi::{OsStr, OsString};
use std::io::{BufWriter, Write};

use frontier::contract::{PushParser, Verdict};

use super::check::ErrorReport;
use super::display;
use super::input::Input;
use super::lang::{dispatch, LangArgs, WithParser};

/// Flags of `trace`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    lang: LangArgs,
    /// Print only `{"prefixes":N,"allowed_total":S,"accepting":A}`.
    #[arg(long)]
    summary: bool,
    /// The file to trace; `-` is standard input.
    file: OsString,
}

/// The line `trace` prints for the refused byte.
#[derive(serde::Serialize)]
struct TraceError {
    at: u64,
    error: ErrorReport,
}

struct Trace<'a> {
    path: &'a OsStr,
    summary: bool,
}

/// The running digest of `--summary`, and the line of one prefix otherwise.
struct Tracer<W: Write> {
    out: W,
    summary: bool,
    prefixes: u64,
    allowed_total: u64,
    accepting: u64,
    line: String,
}

impl<W: Write> Tracer<W> {
    /// Records the state after `at` bytes, as a decoder would query it.
    fn state<P: PushParser>(&mut self, at: u64, parser: &P) -> std::io::Result<()> {
        let allowed = parser.allowed();
        let accepting = parser.accepting();
        self.prefixes += 1;
        self.allowed_total += allowed.len() as u64;
        self.accepting += accepting as u64;
        if self.summary {
            return Ok(());
        }
        use std::fmt::Write as _;
        self.line.clear();
        let _ = write!(
            self.line,
            "{{\"at\":{at},\"accepting\":{accepting},\"allowed\":["
        );
        for (i, (lo, hi)) in allowed.ranges().into_iter().enumerate() {
            if i > 0 {
                self.line.push(',');
            }
            let _ = write!(self.line, "[{lo},{hi}]");
        }
        self.line.push_str("]}");
        writeln!(self.out, "{}", self.line)
    }
}

impl WithParser for Trace<'_> {
    type Output = std::io::Result<bool>;

    fn run<P: PushParser>(self, mut parser: P) -> Self::Output {
        let stdout = std::io::stdout();
        let mut tracer = Tracer {
            out: BufWriter::new(stdout.lock()),
            summary: self.summary,
            prefixes: 0,
            allowed_total: 0,
            accepting: 0,
            line: String::new(),
        };
        let mut input = Input::open(self.path)?;
        let mut at = 0u64;
        tracer.state(at, &parser)?;
        let mut refused = false;
        'read: while let Some(read) = input.next_read()? {
            for &byte in read {
                if let Err(e) = parser.push(&[byte], &mut |_| {}) {
                    if !self.summary {
                        let report = TraceError {
                            at,
                            error: ErrorReport::of(&e),
                        };
                        writeln!(tracer.out, "{}", serde_json::to_string(&report)?)?;
                    }
                    refused = true;
                    break 'read;
                }
                at += 1;
                tracer.state(at, &parser)?;
            }
            // The states of a read are printed before the next read waits for more input.
            tracer.out.flush()?;
        }
        if self.summary {
            writeln!(
                tracer.out,
                "{{\"prefixes\":{},\"allowed_total\":{},\"accepting\":{}}}",
                tracer.prefixes, tracer.allowed_total, tracer.accepting
            )?;
        }
        tracer.out.flush()?;
        let complete = !refused && matches!(parser.finish(&mut |_| {}).verdict, Verdict::Complete);
        Ok(complete)
    }
}

pub fn run(args: Args) -> Result<i32, String> {
    let complete = dispatch(
        &args.lang,
        Trace {
            path: &args.file,
            summary: args.summary,
        },
    )?
    .map_err(|e| format!("{}: {e}", display::path(&args.file)))?;
    Ok(if complete { 0 } else { 1 })
}
