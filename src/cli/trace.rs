//! `frontier trace`: the allowed set and accepting flag after every prefix.
//!
//! The input is streamed: each read is pushed byte by byte (the state after every prefix is
//! what is printed), so memory stays one read block whatever the input's length. With
//! `--chunk N` the parser is pushed N bytes at a time instead, as the other commands do, and
//! the states inside a piece are read from a copy of its recogniser stepped byte by byte (the
//! contract makes them the parser's): the output is the same for every N. Exit status
//! 0 when the input is complete, 1 otherwise (incomplete or an error), as `check` and
//! `events`.

use std::ffi::{OsStr, OsString};
use std::io::{BufWriter, Write};

use frontier::contract::{PushParser, Verdict};
use frontier::recognizer::Recognizer;

use super::bounds;
use super::check::ErrorReport;
use super::display;
use super::input::{self, Input};
use super::lang::{dispatch, LangArgs, WithParser};

/// Flags of `trace`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    lang: LangArgs,
    /// Print only `{"prefixes":N,"allowed_total":S,"accepting":A}`.
    #[arg(long)]
    summary: bool,
    /// Push the parser at most N bytes at a time, 1 to 1073741824 (default: a byte at a
    /// time); the states printed are the same.
    #[arg(long, value_parser = bounds::CHUNK.parser::<usize>())]
    chunk: Option<usize>,
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
    chunk: Option<usize>,
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
        self.record(at, parser.allowed(), parser.accepting())
    }

    fn record(
        &mut self,
        at: u64,
        allowed: frontier::byteset::ByteSet,
        accepting: bool,
    ) -> std::io::Result<()> {
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
        // Opened first: a file that cannot be read prints nothing.
        let mut input = Input::open(self.path)?;
        let mut at = 0u64;
        tracer.state(at, &parser)?;
        let mut refused = false;
        if let Some(chunk) = self.chunk {
            'pieces: while let Some(read) = input.next_read()? {
                for piece in input::pieces(read, Some(chunk)) {
                    let mut copy = parser.recognizer();
                    for &byte in piece {
                        if !copy.try_byte(byte) {
                            break;
                        }
                        at += 1;
                        tracer.record(at, copy.allowed(), copy.accepting())?;
                    }
                    if let Err(e) = parser.push(piece, &mut |_| {}) {
                        if !self.summary {
                            let report = TraceError {
                                at: e.offset,
                                error: ErrorReport::of(&e),
                            };
                            writeln!(tracer.out, "{}", serde_json::to_string(&report)?)?;
                        }
                        refused = true;
                        break 'pieces;
                    }
                }
                tracer.out.flush()?;
            }
            return tracer.end(parser, refused);
        }
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
        tracer.end(parser, refused)
    }
}

impl<W: Write> Tracer<W> {
    /// The summary line if asked for, then whether the input was complete.
    fn end<P: PushParser>(mut self, parser: P, refused: bool) -> std::io::Result<bool> {
        if self.summary {
            writeln!(
                self.out,
                "{{\"prefixes\":{},\"allowed_total\":{},\"accepting\":{}}}",
                self.prefixes, self.allowed_total, self.accepting
            )?;
        }
        self.out.flush()?;
        Ok(!refused && matches!(parser.finish(&mut |_| {}).verdict, Verdict::Complete))
    }
}

pub fn run(args: Args) -> Result<i32, String> {
    let complete = dispatch(
        &args.lang,
        Trace {
            path: &args.file,
            summary: args.summary,
            chunk: args.chunk,
        },
    )?
    .map_err(|e| format!("{}: {e}", display::path(&args.file)))?;
    Ok(if complete { 0 } else { 1 })
}
