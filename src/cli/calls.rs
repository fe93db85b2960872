//! `frontier calls`: the confirmed tool calls of a CTL stream, one JSON line each.

use std::io::{BufWriter, Write};

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use frontier::contract::{PushParser, Verdict};
use frontier::ctl::{CallAssembler, CtlParser, Limits, ToolCall};
use frontier::event::BytesJson;

use super::input;

/// Flags of `calls`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Feed the parser N bytes at a time (default: as read, 64 KiB).
    #[arg(long)]
    chunk: Option<usize>,
    /// Bytes in one header line, LF included.
    #[arg(long, default_value_t = Limits::DEFAULT_MAX_LINE)]
    max_line: u32,
    /// The largest argument, in bytes.
    #[arg(long, default_value_t = Limits::DEFAULT_MAX_ARG)]
    max_arg: u64,
    /// The CTL stream; `-` is standard input.
    file: String,
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
    let mut parser = CtlParser::new(Limits {
        max_line: args.max_line,
        max_arg: args.max_arg,
    });
    let mut assembler = CallAssembler::default();
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut write_error = None;
    let mut emit = |call: ToolCall, out: &mut BufWriter<_>| {
        let line = serde_json::to_string(&CallJson(&call)).expect("calls serialise");
        // A call is printed (and flushed) the moment it is confirmed.
        if let Err(e) = writeln!(out, "{line}").and_then(|_| out.flush()) {
            write_error.get_or_insert(e);
        }
    };
    input::for_each_chunk(&args.file, args.chunk, |piece| {
        parser
            .push(piece, &mut |e| {
                if let Some(call) = assembler.on_event(&e) {
                    emit(call, &mut out);
                }
            })
            .is_ok()
    })
    .map_err(|e| format!("{}: {e}", args.file))?;
    let outcome = parser.finish(&mut |_| {});
    if let Some(e) = write_error {
        return Err(e.to_string());
    }
    match outcome.verdict {
        Verdict::Complete => Ok(0),
        Verdict::Incomplete(unclosed) => {
            eprintln!(
                "frontier: {}: stream cut off after {} bytes{}: {unclosed}",
                args.file,
                outcome.consumed,
                match assembler.in_progress() {
                    Some(call) => format!(" inside call {} ({}), not executed", call.id, call.name),
                    None => String::new(),
                }
            );
            Ok(1)
        }
        Verdict::Error(e) => {
            eprintln!("frontier: {}: {e}", args.file);
            Ok(1)
        }
    }
}
