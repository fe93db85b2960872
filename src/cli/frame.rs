//! `frontier frame`: tool calls given as JSON lines, written out as a CTL stream by the
//! library's writer ([`frontier::ctl::write_call`]), so that nothing producing CTL counts.
//!
//! Input: one call per line, `{"id":..,"name":..,"arguments":{"key":"value",...}}`
//! (`args` is accepted for `arguments`, so the output of `frontier calls` frames back).
//! A value is a JSON string (its UTF-8 bytes) or `{"base64":"..."}` for bytes that are not
//! UTF-8, the shape `calls` and `events` print them in. Keys keep their order; a repeated key
//! is kept too (CTL carries it; judging it is the runtime's job). Blank lines are skipped.
//!
//! Each call is written the moment its line is read. The first line that is not a call the
//! language can carry stops the command: the calls before it are written, whole, and standard
//! error names the line and the reason (`line N: KIND: ...`), exit status 1.

use std::ffi::OsString;
use std::fmt;
use std::io::{BufWriter, Write};

use base64::Engine;
use bytes::Bytes;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use frontier::ctl::{write_call, Limits, ToolCall};
use frontier::language::CtlMode;

use super::{bounds, display, input};

/// The longest input line held (128 MiB): a call whose JSON is longer is refused
/// (`input_line_too_long`) before more of it is read into memory.
pub const MAX_INPUT_LINE: usize = 128 << 20;

/// Flags of `frame`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The CTL mode to write: strict (every argument counted, the default) or extended
    /// (inline and heredoc forms wherever they carry the value).
    #[arg(long, default_value = "strict", value_parser = parse_ctl_mode)]
    mode: CtlMode,
    /// Bytes in one header line, LF included, 1 to 65536.
    #[arg(long, default_value_t = Limits::DEFAULT_MAX_LINE, value_parser = bounds::MAX_LINE.parser::<u32>())]
    max_line: u32,
    /// The largest argument, in bytes, 0 to 1073741824.
    #[arg(long, default_value_t = Limits::DEFAULT_MAX_ARG, value_parser = bounds::MAX_ARG.parser::<u64>())]
    max_arg: u64,
    /// The calls, one JSON object per line; `-` (the default) is standard input.
    #[arg(default_value = "-")]
    file: OsString,
}

/// A CTL mode by name (`strict`, `extended`), for clap (also `run --ctl-mode`).
pub fn parse_ctl_mode(name: &str) -> Result<CtlMode, String> {
    CtlMode::from_name(name).map_err(|e| e.to_string())
}

/// One input line.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallLine {
    id: String,
    name: String,
    #[serde(alias = "args", default)]
    arguments: Arguments,
}

/// The arguments in the order written, repeated keys included.
#[derive(Default)]
struct Arguments(Vec<(String, Bytes)>);

impl<'de> Deserialize<'de> for Arguments {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Arguments, D::Error> {
        d.deserialize_map(ArgumentsVisitor)
    }
}

struct ArgumentsVisitor;

impl<'de> Visitor<'de> for ArgumentsVisitor {
    type Value = Arguments;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of arguments")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Arguments, A::Error> {
        let mut args = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let value: ArgValue = map.next_value()?;
            args.push((key, value.0));
        }
        Ok(Arguments(args))
    }
}

/// A value: a string, or `{"base64": "..."}`.
struct ArgValue(Bytes);

impl<'de> Deserialize<'de> for ArgValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ArgValue, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Base64 {
            base64: String,
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Base64(Base64),
        }
        match Raw::deserialize(d).map_err(|_| {
            de::Error::custom("an argument's value is a string or {\"base64\": \"...\"}")
        })? {
            Raw::Text(text) => Ok(ArgValue(Bytes::from(text.into_bytes()))),
            Raw::Base64(Base64 { base64 }) => base64::engine::general_purpose::STANDARD
                .decode(base64)
                .map(|bytes| ArgValue(Bytes::from(bytes)))
                .map_err(|e| de::Error::custom(format!("base64: {e}"))),
        }
    }
}

/// Why a line was not framed: a stable kind and the detail.
struct LineError {
    line: u64,
    kind: &'static str,
    detail: String,
}

/// Frames one complete input line (without its LF) into `out`.
fn frame_line(
    text: &[u8],
    mode: CtlMode,
    limits: Limits,
    out: &mut Vec<u8>,
) -> Result<(), (&'static str, String)> {
    if text.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    let parsed: CallLine =
        serde_json::from_slice(text).map_err(|e| ("invalid_call", e.to_string()))?;
    let call = ToolCall {
        id: parsed.id,
        name: parsed.name,
        args: parsed.arguments.0,
    };
    write_call(&call, mode, limits, out).map_err(|e| {
        let message = e.to_string();
        let detail = message
            .strip_prefix(e.kind())
            .and_then(|m| m.strip_prefix(": "))
            .unwrap_or(&message);
        (e.kind(), format!("call {:?}: {detail}", call.id))
    })
}

/// The command's state: the line being read, and the first reason to stop.
struct Framer<W: Write> {
    mode: CtlMode,
    limits: Limits,
    out: W,
    /// The part of the current line in earlier reads (at most `max_input_line` bytes).
    line: Vec<u8>,
    /// The longest line held: [`MAX_INPUT_LINE`].
    max_input_line: usize,
    /// Lines seen so far (the current one included once its LF or the end arrives).
    number: u64,
    /// The current call's CTL, reused from call to call.
    framed: Vec<u8>,
    stop: Option<Stop>,
}

enum Stop {
    Line(LineError),
    Write(std::io::Error),
}

impl<W: Write> Framer<W> {
    /// Takes one read; `false` once the command stops. The calls a read completes are
    /// written before the next read waits for more input.
    fn take(&mut self, mut piece: &[u8]) -> bool {
        while let Some(lf) = memchr::memchr(b'\n', piece) {
            if !self.line_ends(&piece[..lf]) {
                return false;
            }
            piece = &piece[lf + 1..];
        }
        if let Err(e) = self.out.flush() {
            self.stop = Some(Stop::Write(e));
            return false;
        }
        self.hold(piece)
    }

    /// Keeps the start of a line that continues in the next read, within the bound.
    fn hold(&mut self, part: &[u8]) -> bool {
        self.within_bound(part) && {
            self.line.extend_from_slice(part);
            true
        }
    }

    /// Whether the current line with `part` added stays within the bound; if not, the stop.
    fn within_bound(&mut self, part: &[u8]) -> bool {
        if self.line.len() + part.len() > self.max_input_line {
            self.stop = Some(Stop::Line(LineError {
                line: self.number + 1,
                kind: "input_line_too_long",
                detail: format!("a line is longer than {} bytes", self.max_input_line),
            }));
            return false;
        }
        true
    }

    /// A line ends with `last` (what of it is in this read).
    fn line_ends(&mut self, last: &[u8]) -> bool {
        if self.line.is_empty() {
            return self.within_bound(last) && self.frame(last);
        }
        if !self.hold(last) {
            return false;
        }
        let line = std::mem::take(&mut self.line);
        let ok = self.frame(&line);
        self.line = line;
        self.line.clear();
        ok
    }

    fn frame(&mut self, text: &[u8]) -> bool {
        self.number += 1;
        self.framed.clear();
        if let Err((kind, detail)) = frame_line(text, self.mode, self.limits, &mut self.framed) {
            self.stop = Some(Stop::Line(LineError {
                line: self.number,
                kind,
                detail,
            }));
            return false;
        }
        if let Err(e) = self.out.write_all(&self.framed) {
            self.stop = Some(Stop::Write(e));
            return false;
        }
        true
    }

    /// The input ended: a last line without its LF is a line too.
    fn end(&mut self) {
        if self.stop.is_none() && !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.frame(&line);
        }
    }
}

impl<W: Write> Framer<W> {
    fn new(mode: CtlMode, limits: Limits, out: W, max_input_line: usize) -> Framer<W> {
        Framer {
            mode,
            limits,
            out,
            line: Vec::new(),
            max_input_line,
            number: 0,
            framed: Vec::new(),
            stop: None,
        }
    }
}

pub fn run(args: Args) -> Result<i32, String> {
    let name = display::path(&args.file);
    let stdout = std::io::stdout();
    let limits = Limits {
        max_line: args.max_line,
        max_arg: args.max_arg,
    };
    let out = BufWriter::new(stdout.lock());
    let mut framer = Framer::new(args.mode, limits, out, MAX_INPUT_LINE);
    input::for_each_piece(&args.file, None, |piece| framer.take(piece))
        .map_err(|e| format!("{name}: {e}"))?;
    framer.end();
    match framer.stop {
        None => {
            framer.out.flush().map_err(|e| e.to_string())?;
            Ok(0)
        }
        Some(Stop::Write(e)) => Err(e.to_string()),
        Some(Stop::Line(e)) => {
            framer.out.flush().map_err(|e| e.to_string())?;
            eprintln!(
                "frontier: {name}: line {}: {}: {}",
                e.line,
                e.kind,
                display::escaped(&e.detail)
            );
            Ok(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CALL: &[u8] = br#"{"id":"c1","name":"t","args":{"k":"v"}}"#;

    fn framer(max_input_line: usize) -> Framer<Vec<u8>> {
        Framer::new(
            CtlMode::Extended,
            Limits::default(),
            Vec::new(),
            max_input_line,
        )
    }

    #[test]
    fn lines_split_across_reads_frame_as_whole_lines() {
        let mut input = [CALL, b"\n", CALL].concat();
        input.extend_from_slice(b"\n\n");
        for cut in 0..input.len() {
            let mut f = framer(CALL.len());
            assert!(
                f.take(&input[..cut]) && f.take(&input[cut..]),
                "cut at {cut}"
            );
            f.end();
            assert!(f.stop.is_none());
            assert_eq!(
                f.out,
                b"call c1 t\narg k = v\nend\n".repeat(2),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn a_line_over_the_bound_stops_before_more_of_it_is_held() {
        let input = [CALL, b"\n", CALL, b"\n"].concat();
        let mut f = framer(CALL.len() - 1);
        assert!(!f.take(&input));
        match &f.stop {
            Some(Stop::Line(e)) => {
                assert_eq!((e.line, e.kind), (1, "input_line_too_long"));
                assert_eq!(
                    e.detail,
                    format!("a line is longer than {} bytes", CALL.len() - 1)
                );
            }
            _ => panic!("no stop"),
        }
        assert!(f.out.is_empty());
        // Across reads: the bound is checked as the line's pieces arrive.
        let mut f = framer(CALL.len() - 1);
        assert!(f.take(&CALL[..10]));
        assert!(!f.take(&CALL[10..]));
        assert!(f.line.len() < CALL.len(), "no more than the bound is held");
    }
}
