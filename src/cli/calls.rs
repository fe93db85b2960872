//! `frontier calls`: the confirmed tool calls of a CTL stream, one JSON line each.
//!
//! A call is printed the moment its `end` line arrives (output is flushed after each read). A
//! call over the assembler's bounds (`--max-call-args`, `--max-call-bytes`) is not printed but
//! reported on standard error, and makes the exit status 1.

use std::ffi::OsString;
use std::io::{BufWriter, Write};

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use frontier::contract::{PushParser, Verdict};
use frontier::ctl::{CallAssembler, CallBounds, CtlMode, CtlParser, Limits, ToolCall};
use frontier::event::BytesJson;

use super::input::{self, Input};
use super::{bounds, display};

/// Flags of `calls`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The language: only `ctl`, the one language with tool calls (accepted so that every
    /// command takes the common `--lang`).
    #[arg(long, value_parser = ["ctl"])]
    lang: Option<String>,
    /// The CTL mode: strict (the default) or extended (inline and heredoc arguments too).
    #[arg(long)]
    mode: Option<String>,
    /// Feed the parser at most N bytes at a time, 1 to 1073741824 (default: each read whole).
    #[arg(long, value_parser = bounds::CHUNK.parser::<usize>())]
    chunk: Option<usize>,
    /// Bytes in one header line, LF included, 1 to 65536.
    #[arg(long, default_value_t = Limits::DEFAULT_MAX_LINE, value_parser = bounds::MAX_LINE.parser::<u32>())]
    max_line: u32,
    /// The largest argument, in bytes, 0 to 1073741824.
    #[arg(long, default_value_t = Limits::DEFAULT_MAX_ARG, value_parser = bounds::MAX_ARG.parser::<u64>())]
    max_arg: u64,
    /// Arguments in one call, 1 to 65536 (the default); a call with more is reported, not
    /// printed.
    #[arg(long, default_value_t = bounds::MAX_CALL_ARGS.max as usize, value_parser = bounds::MAX_CALL_ARGS.parser::<usize>())]
    max_call_args: usize,
    /// Argument bytes of one call, all arguments together, 0 to 1073741824; a call with more
    /// is reported, not printed.
    #[arg(long, default_value_t = CallBounds::DEFAULT_MAX_BYTES, value_parser = bounds::MAX_CALL_BYTES.parser::<u64>())]
    max_call_bytes: u64,
    /// The CTL stream; `-` is standard input.
    file: OsString,
}

/// A call as `calls` prints it: `{"id":..,"name":..,"args":{key: value, ...}}`.
pub struct CallJson<'a>(pub &'a ToolCall);

impl Serialize for CallJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(3))?;
        map.serialize_entry("id", &self.0.id)?;
        map.serialize_entry("name", &self.0.name)?;
        map.serialize_entry("args", &ArgsJson(self.0))?;
        map.end()
    }
}

struct ArgsJson<'a>(&'a ToolCall);

impl Serialize for ArgsJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.args.len()))?;
        for (key, value) in &self.0.args {
            map.serialize_entry(key, &BytesJson(value))?;
        }
        map.end()
    }
}

pub fn run(args: Args) -> Result<i32, String> {
    let name = display::path(&args.file);
    let mode = match &args.mode {
        Some(name) => CtlMode::from_name(name).map_err(|e| e.to_string())?,
        None => CtlMode::default(),
    };
    let limits = Limits {
        max_line: args.max_line,
        max_arg: args.max_arg,
    };
    let mut parser = CtlParser::with_mode(limits, mode);
    let mut assembler = CallAssembler::new(CallBounds {
        max_args: args.max_call_args,
        max_bytes: args.max_call_bytes,
    });
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut refused = 0u64;
    let mut input = Input::open(&args.file).map_err(|e| format!("{name}: {e}"))?;
    'read: while let Some(read) = input.next_read().map_err(|e| format!("{name}: {e}"))? {
        for piece in input::pieces(read, args.chunk) {
            let mut write_error = None;
            let pushed = parser.push(piece, &mut |e| match assembler.on_event(&e) {
                Ok(Some(call)) => {
                    if let Err(e) = serde_json::to_writer(&mut out, &CallJson(&call))
                        .map_err(std::io::Error::from)
                        .and_then(|_| writeln!(out))
                    {
                        write_error.get_or_insert(e);
                    }
                }
                Ok(None) => {}
                Err(too_large) => {
                    refused += 1;
                    eprintln!(
                        "frontier: {name}: {}",
                        display::escaped(&too_large.to_string())
                    );
                }
            });
            if let Some(e) = write_error {
                return Err(e.to_string());
            }
            if pushed.is_err() {
                break 'read;
            }
        }
        // The calls a read confirmed are printed before the next read waits for more input.
        out.flush().map_err(|e| e.to_string())?;
    }
    out.flush().map_err(|e| e.to_string())?;
    let outcome = parser.finish(&mut |_| {});
    let status = match outcome.verdict {
        Verdict::Complete => 0,
        Verdict::Incomplete(unclosed) => {
            eprintln!(
                "frontier: {name}: stream cut off after {}{}: {unclosed}",
                display::count(outcome.consumed, "bytes"),
                match assembler.in_progress() {
                    Some(call) => format!(" inside call {} ({}), not executed", call.id, call.name),
                    None => String::new(),
                }
            );
            1
        }
        Verdict::Error(e) => {
            eprintln!("frontier: {name}: {e}");
            1
        }
    };
    Ok(if refused > 0 { 1 } else { status })
}
