//! Recorded turns, replayed: the model source of `--model replay:FILE`.
//!
//! One JSON object per line, one per turn:
//!
//! ```text
//! {"output":"call c1 read_file\narg path 5\na.txt\nend\n","finish":"tool_calls"}
//! {"output_base64":"...","finish":"length"}
//! {"error":"context_overflow"}
//! ```
//!
//! `finish` is `stop`, `tool_calls` or `length`; `output_base64` carries output that is not
//! UTF-8. The `error` line (this crate's extension) replays a turn the server refused because
//! the request did not fit the context window, so the recovery path can be replayed too.
//! Blank lines are skipped. Each turn is streamed `chunk` bytes at a time.
//!
//! A first line `{"ctl_mode":"extended"}` (or `"strict"`) says which CTL the turns are written
//! in; a file without it is strict, as every session was before extended CTL existed.
//!
//! A replayed turn reports no token usage ([`ModelSource::take_usage`] is `None`): a session
//! file holds what the model wrote, not what a provider counted for a view that may differ
//! from the replayed one, so a governed replay is journaled with `usage: {}` and never
//! calibrated.

use base64::Engine;
use serde::Deserialize;

use super::model::{Finish, Flow, ModelError, ModelSource, Request};
use crate::language::CtlMode;

/// One recorded turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Turn {
    /// The model's output and how it ended.
    Output {
        /// The bytes the model streams.
        bytes: Vec<u8>,
        /// How the turn ended.
        finish: Finish,
    },
    /// The request was refused for not fitting the context window.
    ContextOverflow,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    output: Option<String>,
    output_base64: Option<String>,
    finish: Option<String>,
    error: Option<String>,
    ctl_mode: Option<String>,
}

/// A session file: the CTL mode its turns are written in, and the turns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session {
    /// The mode of the `ctl_mode` line, strict without one.
    pub ctl_mode: CtlMode,
    /// The turns, in order.
    pub turns: Vec<Turn>,
}

/// Parses a session file's turns (its mode: [`parse_session`]).
pub fn parse(text: &str) -> Result<Vec<Turn>, String> {
    parse_session(text).map(|session| session.turns)
}

/// Parses a session file.
pub fn parse_session(text: &str) -> Result<Session, String> {
    let mut turns = Vec::new();
    let mut ctl_mode = None;
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |e: String| format!("line {}: {e}", n + 1);
        let parsed: Line = serde_json::from_str(line).map_err(|e| at(e.to_string()))?;
        if let Some(name) = &parsed.ctl_mode {
            let alone = parsed.output.is_none()
                && parsed.output_base64.is_none()
                && parsed.finish.is_none()
                && parsed.error.is_none();
            if !alone || ctl_mode.is_some() || !turns.is_empty() {
                return Err(at(
                    "ctl_mode goes on a line of its own, before the first turn".into(),
                ));
            }
            ctl_mode = Some(CtlMode::from_name(name).map_err(|e| at(format!("ctl_mode: {e}")))?);
            continue;
        }
        if let Some(error) = parsed.error {
            if error != "context_overflow" {
                return Err(at(format!(
                    "unknown error {error:?} (only context_overflow)"
                )));
            }
            turns.push(Turn::ContextOverflow);
            continue;
        }
        let bytes = match (parsed.output, parsed.output_base64) {
            (Some(text), None) => text.into_bytes(),
            (None, Some(b64)) => base64::engine::general_purpose::STANDARD
                .decode(b64)
                .map_err(|e| at(format!("output_base64: {e}")))?,
            _ => {
                return Err(at(
                    "exactly one of output and output_base64 is needed".into()
                ))
            }
        };
        let finish = parsed
            .finish
            .ok_or_else(|| at("finish is missing".into()))?;
        let finish = Finish::from_name(&finish).ok_or_else(|| {
            at(format!(
                "finish {finish:?} is not stop, tool_calls or length"
            ))
        })?;
        turns.push(Turn::Output { bytes, finish });
    }
    Ok(Session {
        ctl_mode: ctl_mode.unwrap_or_default(),
        turns,
    })
}

/// Serialises turns in the session format (for tests and tools that record sessions).
pub fn to_jsonl(turns: &[Turn]) -> String {
    let mut out = String::new();
    for turn in turns {
        let value = match turn {
            Turn::ContextOverflow => serde_json::json!({"error": "context_overflow"}),
            Turn::Output { bytes, finish } => match std::str::from_utf8(bytes) {
                Ok(text) => serde_json::json!({"output": text, "finish": finish.name()}),
                Err(_) => serde_json::json!({
                    "output_base64": base64::engine::general_purpose::STANDARD.encode(bytes),
                    "finish": finish.name(),
                }),
            },
        };
        out.push_str(&value.to_string());
        out.push('\n');
    }
    out
}

/// Replays recorded turns.
#[derive(Clone, Debug)]
pub struct Replay {
    name: String,
    turns: std::vec::IntoIter<Turn>,
    chunk: usize,
}

impl Replay {
    /// A replay of `turns`, streamed `chunk` bytes at a time (`usize::MAX`: whole turns).
    pub fn new(name: impl Into<String>, turns: Vec<Turn>, chunk: usize) -> Replay {
        Replay {
            name: name.into(),
            turns: turns.into_iter(),
            chunk: chunk.max(1),
        }
    }
}

impl ModelSource for Replay {
    fn turn(
        &mut self,
        _request: &Request<'_>,
        sink: &mut dyn FnMut(&[u8]) -> Flow,
    ) -> Result<Option<Finish>, ModelError> {
        match self.turns.next() {
            None => Ok(None),
            Some(Turn::ContextOverflow) => Err(ModelError::ContextOverflow(
                "replayed: the request does not fit the context window".into(),
            )),
            Some(Turn::Output { bytes, finish }) => {
                for piece in bytes.chunks(self.chunk) {
                    if sink(piece) == Flow::Stop {
                        break;
                    }
                }
                Ok(Some(finish))
            }
        }
    }

    fn describe(&self) -> String {
        format!("replay:{}", self.name)
    }
}
