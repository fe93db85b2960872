//! The transcript: append-only JSON lines, one per record, flushed as written.
//!
//! | type | fields | when |
//! |---|---|---|
//! | `task` | `text`, `model`, `toolset` | first |
//! | `tool_call` | `turn`, `id`, `name`, `args` | a call's `end` line was confirmed, before it runs |
//! | `tool_result` | `turn`, `id`, `ok`, `output` | the call ran |
//! | `refused` | `turn`, `id`, `reason` (`kind: detail`) | the call was judged and refused |
//! | `assistant` | `turn`, `output`, `finish` | a turn ended: the bytes of it the parser accepted |
//! | `patch_problem` | `turn`, `id`, `kind`, `detail` | an `apply_patch` call's patch is malformed, does not apply or touches a protected path, known while it streams (before its `end`) |
//! | `stream_error` | `turn`, `offset`, `byte`, `kind`, `call` | a byte outside CTL; `call`: the call it cut (never run) |
//! | `stream_incomplete` | `turn`, `consumed`, `call` | the stream ended inside a frame |
//! | `malformed_call` | `turn`, `id`, `name`, `arguments`, `reason` | native tools: a call finished with arguments that are not whole (never run) |
//! | `incomplete_call` | `turn`, `id`, `name`, `arguments` | native tools: a call the stream left unfinished (never run) |
//! | `model_error` | `turn`, `kind`, `error` | the model source failed |
//! | `transition` | `turn`, `reason`, `max_tokens` | the loop goes on to request `turn` (`reason`: a [`Transition`](super::recovery::Transition) name) |
//! | `question` | `turn`, `text` | a follow-up question is asked before request `turn` |
//! | `end` | `status`, `exit` (+ `peak_tokens` with a context engine) | last |
//!
//! Byte strings (arguments, outputs) are JSON strings when UTF-8, else `{"base64": …}`. The
//! `tool_call`, `tool_result` and `refused` shapes are the interface of the CLI spec. No
//! record carries a time, so two runs of the same session give identical transcripts.

use std::io::{self, Write};

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use crate::ctl::ToolCall;
use crate::event::BytesJson;

/// One record being built: fields are written in the order given (`type` first), so the
/// lines read the way the spec shows them.
#[derive(Clone, Debug)]
pub struct Rec {
    line: String,
}

impl Rec {
    /// A record of the given `type`.
    pub fn new(kind: &str) -> Rec {
        let mut rec = Rec {
            line: String::from("{"),
        };
        rec.push("type", &kind);
        rec
    }

    fn push(&mut self, key: &str, value: &dyn ErasedValue) {
        if self.line.len() > 1 {
            self.line.push(',');
        }
        self.line
            .push_str(&serde_json::to_string(key).unwrap_or_default());
        self.line.push(':');
        self.line.push_str(&value.json());
    }

    /// Adds a field.
    pub fn field(mut self, key: &str, value: impl Serialize) -> Rec {
        self.push(key, &value);
        self
    }

    /// Adds a byte-string field: a JSON string when UTF-8, else `{"base64": …}`.
    pub fn bytes(self, key: &str, value: &[u8]) -> Rec {
        self.field(key, BytesJson(value))
    }
}

/// A value already able to render itself as JSON (lets [`Rec::push`] take any `Serialize`).
trait ErasedValue {
    fn json(&self) -> String;
}

impl<T: Serialize> ErasedValue for T {
    fn json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "null".to_owned())
    }
}

/// Writes records; keeps the first write error and ignores what follows it.
pub struct Transcript<'w> {
    out: &'w mut dyn Write,
    error: Option<io::Error>,
}

impl<'w> Transcript<'w> {
    /// A transcript written to `out`.
    pub fn new(out: &'w mut dyn Write) -> Transcript<'w> {
        Transcript { out, error: None }
    }

    /// Appends one record and flushes it.
    pub fn record(&mut self, rec: Rec) {
        if self.error.is_some() {
            return;
        }
        let mut line = rec.line;
        line.push_str("}\n");
        if let Err(e) = self
            .out
            .write_all(line.as_bytes())
            .and_then(|_| self.out.flush())
        {
            self.error = Some(e);
        }
    }

    /// The first write error, if any.
    pub fn into_error(self) -> Option<io::Error> {
        self.error
    }

    /// The `tool_call` record.
    pub fn tool_call(&mut self, turn: u32, call: &ToolCall) {
        self.record(
            Rec::new("tool_call")
                .field("turn", turn)
                .field("id", &call.id)
                .field("name", &call.name)
                .field("args", ArgsJson(call)),
        );
    }

    /// The `tool_call` record of a call whose arguments were not held (over the assembler's
    /// bounds): `"args":null`. A `refused` record follows it.
    pub fn unheld_call(&mut self, turn: u32, id: &str, name: &str) {
        self.record(
            Rec::new("tool_call")
                .field("turn", turn)
                .field("id", id)
                .field("name", name)
                .field("args", ()),
        );
    }

    /// The `tool_result` record.
    pub fn tool_result(&mut self, turn: u32, id: &str, ok: bool, output: &[u8]) {
        self.record(
            Rec::new("tool_result")
                .field("turn", turn)
                .field("id", id)
                .field("ok", ok)
                .bytes("output", output),
        );
    }

    /// The `refused` record.
    pub fn refused(&mut self, turn: u32, id: &str, reason: &str) {
        self.record(
            Rec::new("refused")
                .field("turn", turn)
                .field("id", id)
                .field("reason", reason),
        );
    }
}

/// A call's arguments as a JSON object, in the order written (a repeated key appears once, with
/// its first value; the refusal says it was repeated).
struct ArgsJson<'a>(&'a ToolCall);

impl Serialize for ArgsJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        for (i, (key, value)) in self.0.args.iter().enumerate() {
            if self.0.args[..i].iter().any(|(k, _)| k == key) {
                continue;
            }
            map.serialize_entry(key, &BytesJson(value))?;
        }
        map.end()
    }
}
