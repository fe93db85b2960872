//! The five runtimes of the experiment. Each consumes its framing byte by byte and can say,
//! at any point, which calls it would have executed had the stream ended there.

use serde_json::Value;

use crate::contract::PushParser;
use crate::ctl::{CallAssembler, CtlParser, Limits};
use crate::json_baseline::calls_from_value;
use crate::language::CtlMode;

use super::framing::Intent;
use super::heal::heal;

/// A runtime fed one byte at a time.
pub trait Runtime {
    /// Takes the next byte of the stream.
    fn push(&mut self, byte: u8);
    /// The calls executed if the stream ended now.
    fn executed_at_end(&self) -> Vec<Intent>;
}

/// Executes a call when its `end` line is confirmed, in either CTL mode.
#[derive(Default)]
pub struct Ctl {
    parser: CtlParser,
    assembler: CallAssembler,
    executed: Vec<Intent>,
}

impl Ctl {
    /// A runtime reading CTL of `mode` (default limits).
    pub fn new(mode: CtlMode) -> Ctl {
        Ctl {
            parser: CtlParser::with_mode(Limits::default(), mode),
            ..Ctl::default()
        }
    }
}

impl Runtime for Ctl {
    fn push(&mut self, byte: u8) {
        let (assembler, executed) = (&mut self.assembler, &mut self.executed);
        let _ = self.parser.push(&[byte], &mut |e| {
            // The corpus's calls are far within the default bounds; one over them is not run.
            if let Ok(Some(call)) = assembler.on_event(&e) {
                executed.push(Intent::from(&call));
            }
        });
    }

    fn executed_at_end(&self) -> Vec<Intent> {
        self.executed.clone()
    }
}

fn intents(value: &Value) -> Vec<Intent> {
    // Each element on its own: one element a healer mangled does not hide the others.
    let items = match value {
        Value::Array(items) => items.as_slice(),
        other => std::slice::from_ref(other),
    };
    items
        .iter()
        .filter_map(|item| calls_from_value(item).ok())
        .flatten()
        .map(|call| Intent::from(&call))
        .collect()
}

/// The seed's JSON buffer: re-parses everything after every byte, executes once it parses.
#[derive(Default)]
pub struct JsonEof {
    buffer: Vec<u8>,
    parsed: Option<Value>,
}

impl Runtime for JsonEof {
    fn push(&mut self, byte: u8) {
        self.buffer.push(byte);
        self.parsed = serde_json::from_slice(&self.buffer).ok();
    }

    fn executed_at_end(&self) -> Vec<Intent> {
        self.parsed.as_ref().map(intents).unwrap_or_default()
    }
}

/// Executes each call object of the top-level array as soon as it parses on its own.
#[derive(Default)]
pub struct JsonObject {
    buffer: Vec<u8>,
    depth: u32,
    in_string: bool,
    escape: bool,
    object_start: usize,
    executed: Vec<Intent>,
}

impl Runtime for JsonObject {
    fn push(&mut self, byte: u8) {
        self.buffer.push(byte);
        if self.in_string {
            match (self.escape, byte) {
                (true, _) => self.escape = false,
                (false, b'\\') => self.escape = true,
                (false, b'"') => self.in_string = false,
                _ => {}
            }
            return;
        }
        match byte {
            b'"' => self.in_string = true,
            b'{' | b'[' => {
                if self.depth == 1 {
                    self.object_start = self.buffer.len() - 1;
                }
                self.depth += 1;
            }
            b'}' | b']' => {
                self.depth = self.depth.saturating_sub(1);
                if self.depth == 1 {
                    if let Ok(value) = serde_json::from_slice(&self.buffer[self.object_start..]) {
                        self.executed.extend(intents(&value));
                    }
                }
            }
            _ => {}
        }
    }

    fn executed_at_end(&self) -> Vec<Intent> {
        self.executed.clone()
    }
}

/// What streaming servers do with partial JSON: heal the buffer on every chunk (to show
/// partial arguments), and at the cut execute what the healed text yields.
#[derive(Default)]
pub struct JsonHealing {
    buffer: Vec<u8>,
    healed: Option<Value>,
}

impl Runtime for JsonHealing {
    fn push(&mut self, byte: u8) {
        self.buffer.push(byte);
        self.healed = serde_json::from_slice(&heal(&self.buffer)).ok();
    }

    fn executed_at_end(&self) -> Vec<Intent> {
        self.healed.as_ref().map(intents).unwrap_or_default()
    }
}
