//! `frontier stream`: a recorded provider stream read as it arrives, one JSON line per call the
//! moment it is confirmed, then one `end` line (`streams.md` in the shared specification;
//! `docs/streams.md`).
//!
//! With `--apply --root DIR`, `apply_patch` calls are applied under the safe policy: a custom
//! `apply_patch` call's patch (and a Responses `apply_patch_call` operation) is checked
//! against the workspace unit by unit while it streams, and committed when the call is
//! confirmed; a function call named `apply_patch` whose arguments hold a `patch` (or `input`)
//! string is applied when confirmed. What was applied, and why a patch could not be, goes to
//! standard error, so that standard output stays the call lines.
//!
//! Exit status: 0 when the stream ended cleanly (its terminal marker, no error) and every patch
//! applied; 1 otherwise; 2 when the command could not run.

use std::ffi::OsString;
use std::io::{BufWriter, Write};

use clap::ValueEnum;
use serde_json::{json, Map, Value};

use frontier::apply::{PatchStream, Policy, Workspace};
use frontier::apply_patch::{PatchErrorKind, PatchEvent};
use frontier::contract::Verdict;
use frontier::event::BytesJson;
use frontier::language::CtlMode;
use frontier::streams::patch::PatchInput;
use frontier::streams::{
    Api, Arguments, Call, CallKind, Event, Format, Limits, PartialCall, StreamError, StreamReader,
    Summary,
};

use super::check::ErrorReport;
use super::{bounds, display, input};

/// `--api`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ApiArg {
    /// OpenAI Chat Completions and compatible servers.
    #[value(name = "openai-chat")]
    OpenAiChat,
    /// OpenAI Responses.
    #[value(name = "openai-responses")]
    OpenAiResponses,
    /// Anthropic Messages.
    #[value(name = "anthropic-messages")]
    AnthropicMessages,
}

/// `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// The HTTP response body as sent (`text/event-stream`).
    Sse,
    /// One event or chunk object per line.
    Jsonl,
}

/// Flags of `stream`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The wire format.
    #[arg(long, value_enum)]
    api: ApiArg,
    /// How the file is framed.
    #[arg(long, value_enum, default_value = "sse")]
    format: FormatArg,
    /// Feed the reader at most N bytes at a time, 1 to 1073741824 (default: each read whole).
    #[arg(long, value_parser = bounds::CHUNK.parser::<usize>())]
    chunk: Option<usize>,
    /// The text deltas are a CTL stream: print its calls (kind "ctl").
    #[arg(long)]
    ctl: bool,
    /// With --ctl, the CTL mode: strict (the default) or extended (inline and heredoc
    /// arguments too, as `frontier run` teaches a real model).
    #[arg(long, requires = "ctl")]
    mode: Option<String>,
    /// Apply confirmed apply_patch calls under --root with the safe policy.
    #[arg(long, requires = "root")]
    apply: bool,
    /// The workspace root for --apply.
    #[arg(long, requires = "apply")]
    root: Option<OsString>,
    /// The recorded stream; `-` is standard input.
    file: OsString,
}

/// Runs `stream`.
pub fn run(args: Args) -> Result<i32, String> {
    let name = display::path(&args.file);
    let api = match args.api {
        ApiArg::OpenAiChat => Api::OpenAiChat,
        ApiArg::OpenAiResponses => Api::OpenAiResponses,
        ApiArg::AnthropicMessages => Api::AnthropicMessages,
    };
    let format = match args.format {
        FormatArg::Sse => Format::Sse,
        FormatArg::Jsonl => Format::Jsonl,
    };
    let applier = match &args.root {
        Some(root) => Some(Applier {
            ws: Workspace::new(root)
                .map_err(|e| format!("cannot open root {}: {e}", display::path(root)))?,
            streams: Vec::new(),
            failed: false,
        }),
        None => None,
    };
    let ctl = match (args.ctl, &args.mode) {
        (false, _) => None,
        (true, Some(name)) => Some(CtlMode::from_name(name).map_err(|e| e.to_string())?),
        (true, None) => Some(CtlMode::default()),
    };
    let mut reader = StreamReader::with_options(api, format, Limits::default(), ctl);
    let stdout = std::io::stdout();
    let mut printer = Printer {
        out: BufWriter::new(stdout.lock()),
        write_error: None,
        applier,
    };
    let mut input = input::Input::open(&args.file).map_err(|e| format!("{name}: {e}"))?;
    'read: while let Some(read) = input.next_read().map_err(|e| format!("{name}: {e}"))? {
        for piece in input::pieces(read, args.chunk) {
            if reader.push(piece, &mut |e| printer.on_event(e)).is_err() {
                break 'read;
            }
        }
        // The calls a read confirmed are printed before the next read waits for more input.
        printer.flush()?;
    }
    let summary = reader.finish(&mut |e| printer.on_event(e));
    printer.flush()?;
    let mut out = printer.out;
    writeln!(out, "{}", end_json(&summary)).map_err(|e| e.to_string())?;
    out.flush().map_err(|e| e.to_string())?;
    if summary.skipped_events > 0 {
        eprintln!(
            "frontier: {name}: skipped {} of a type this reader does not know",
            display::count(summary.skipped_events, "events")
        );
    }
    let applied = printer.applier.is_none_or(|a| !a.failed);
    Ok(if summary.ended_cleanly && applied {
        0
    } else {
        1
    })
}

/// Where the reader's events go: call lines to standard output, patches to the applier.
struct Printer<W: Write> {
    out: W,
    write_error: Option<std::io::Error>,
    applier: Option<Applier>,
}

impl<W: Write> Printer<W> {
    fn on_event(&mut self, event: Event<'_>) {
        if let Event::Call(call) = event {
            if let Err(e) = writeln!(self.out, "{}", call_json(call)) {
                self.write_error.get_or_insert(e);
            }
        }
        if let Some(applier) = &mut self.applier {
            applier.on_event(&event);
        }
    }

    fn flush(&mut self) -> Result<(), String> {
        match self.write_error.take() {
            Some(e) => Err(e.to_string()),
            None => self.out.flush().map_err(|e| e.to_string()),
        }
    }
}

/// A confirmed call's line.
fn call_json(call: &Call) -> Value {
    let mut line = Map::new();
    line.insert("type".into(), json!("tool_call"));
    line.insert("id".into(), json!(call.id));
    line.insert("name".into(), json!(call.name));
    line.insert("kind".into(), json!(call.kind.name()));
    let (key, value) = match &call.arguments {
        Arguments::Json { text, .. } => ("arguments", json!(text)),
        Arguments::Raw(input) => ("input", json!(input)),
        Arguments::Ctl(args) => {
            let mut object = Map::new();
            for (key, value) in args {
                // A repeated key keeps its first value here; judging repeats is the runtime's.
                if !object.contains_key(key) {
                    let value = serde_json::to_value(BytesJson(value)).unwrap_or(Value::Null);
                    object.insert(key.clone(), value);
                }
            }
            ("arguments", Value::Object(object))
        }
    };
    line.insert(key.into(), value);
    Value::Object(line)
}

/// An incomplete or malformed call in the end line.
fn partial_json(call: &PartialCall) -> Value {
    let mut entry = Map::new();
    entry.insert("id".into(), json!(call.id));
    entry.insert("name".into(), json!(call.name));
    entry.insert("kind".into(), json!(call.kind.name()));
    let key = if call.kind.is_raw() {
        "input"
    } else {
        "arguments"
    };
    entry.insert(key.into(), json!(call.text));
    if let Some(reason) = &call.reason {
        entry.insert("reason".into(), json!(reason));
    }
    Value::Object(entry)
}

/// The error of the last line; with `--ctl`, a parser's error in the text also as `check`
/// prints it (its offset in the text, the byte, the CTL kind).
fn error_json(error: &StreamError) -> Value {
    let mut entry =
        json!({"kind": error.kind.name(), "offset": error.offset, "message": error.message});
    if let Some(ctl) = &error.ctl {
        entry["ctl"] = json!(ErrorReport::of(ctl));
    }
    entry
}

/// The last line.
fn end_json(summary: &Summary) -> Value {
    json!({
        "type": "end",
        "finish_reason": summary.finish_reason,
        "ended_cleanly": summary.ended_cleanly,
        "truncated": summary.truncated,
        "incomplete_tool_calls": summary.incomplete.iter().map(partial_json).collect::<Vec<_>>(),
        "malformed_tool_calls": summary.malformed.iter().map(partial_json).collect::<Vec<_>>(),
        "text": summary.text,
        "reasoning_text": summary.reasoning,
        "error": summary.error.as_ref().map(error_json),
    })
}

/// `--apply`: each `apply_patch` call's patch checked as it streams, committed when the call
/// is confirmed.
struct Applier {
    ws: Workspace,
    /// The patches streaming, by call id.
    streams: Vec<(String, PatchStream)>,
    failed: bool,
}

impl Applier {
    fn on_event(&mut self, event: &Event<'_>) {
        match event {
            Event::Patch { id, event } => self.take(id, event),
            Event::Call(call) => self.on_call(call),
            Event::Malformed(call) => {
                if let Some(at) = self.streams.iter().position(|(id, _)| *id == call.id) {
                    // Only staged: dropping it writes nothing.
                    self.streams.remove(at);
                    eprintln!("frontier: call {:?} not applied: it is malformed", call.id);
                }
            }
            Event::PatchRefused { id, message } => {
                eprintln!("frontier: call {id:?}: {message} (known while it streams)");
            }
            Event::Text(_) | Event::Reasoning(_) => {}
        }
    }

    fn take(&mut self, id: &str, event: &PatchEvent<'_>) {
        let at = match self.streams.iter().position(|(i, _)| i == id) {
            Some(at) => at,
            None => {
                let stream = PatchStream::new(self.ws.clone(), Policy::Safe);
                self.streams.push((id.to_owned(), stream));
                self.streams.len() - 1
            }
        };
        let stream = &mut self.streams[at].1;
        let known = stream.failure().is_some();
        if let (Err(e), false) = (stream.on_event(event), known) {
            eprintln!("frontier: call {id:?} cannot apply (known while it streams): {e}");
        }
    }

    fn on_call(&mut self, call: &Call) {
        let stream = match (&call.kind, &call.arguments) {
            (CallKind::ApplyPatch, _) => self
                .streams
                .iter()
                .position(|(id, _)| *id == call.id)
                .map(|at| self.streams.remove(at).1),
            (CallKind::Function | CallKind::ToolUse, Arguments::Json { object, .. })
                if call.name == "apply_patch" =>
            {
                match ["patch", "input"]
                    .iter()
                    .find_map(|k| object.get(*k)?.as_str())
                {
                    Some(patch) => self.parse_whole(&call.id, patch),
                    None => {
                        eprintln!(
                            "frontier: call {:?} not applied: no patch argument",
                            call.id
                        );
                        self.failed = true;
                        None
                    }
                }
            }
            _ => return,
        };
        let Some(stream) = stream else {
            return;
        };
        match stream.finish(&Verdict::<PatchErrorKind>::Complete) {
            Ok(changes) => {
                for c in changes {
                    eprintln!(
                        "frontier: call {:?} applied: {} {}",
                        call.id,
                        c.kind.letter(),
                        display::escaped(&c.path)
                    );
                }
            }
            Err(failure) => {
                self.failed = true;
                eprintln!(
                    "frontier: call {:?} not applied: {}",
                    call.id, failure.error
                );
                eprintln!("frontier: nothing was changed by it");
            }
        }
    }

    /// A patch that arrived whole, in a JSON argument: parsed in codex mode into a stream;
    /// `None` (and a failure said) when it is not a whole patch.
    fn parse_whole(&mut self, id: &str, patch: &str) -> Option<PatchStream> {
        let mut stream = PatchStream::new(self.ws.clone(), Policy::Safe);
        let mut input = PatchInput::default();
        let mut take = |e: Event<'_>| {
            if let Event::Patch { event, .. } = e {
                let _ = stream.on_event(&event);
            }
        };
        input.push(id, patch.as_bytes(), &mut take);
        match input.finish(id, &mut take) {
            Ok(()) => Some(stream),
            Err(reason) => {
                self.failed = true;
                eprintln!("frontier: call {id:?} not applied: {reason}");
                None
            }
        }
    }
}
