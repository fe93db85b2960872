//! Context governance in the loop: the conversation lives in the context engine
//! ([`crate::context`]), and what the model receives is the engine's view.
//!
//! With [`Settings`] in the loop's configuration (`frontier run --run-dir DIR`), every message
//! that enters the loop is ingested as a block, journaled in the run directory before it is
//! used: the system prompt and the task, each turn's output with the calls it made, each
//! call's result, the runtime's nudges and reports (as runtime reminders, never the current
//! question). Before every model call the runtime runs the ladder ([`ladder`]), then renders
//! the view into the request (CTL `result` frames for tool messages, in the stream's mode).
//! The model can edit that view itself with `context_update` and read back what was put aside
//! with `artifact_get` ([`ContextLoop::run_tool`]).
//!
//! | module | what |
//! |---|---|
//! How much of that runs is the run's [`Arm`] (CPAT's three arms): `cpat` all of it, plus
//! the boundary-maintenance pass before each follow-up question ([`boundary`]); `threshold`
//! the runtime's measures without the two tools; `react` none of it, the conversation only
//! journaled, and the hard window ([`Settings::hard_window`]) as its one limit.
//!
//! | module | what |
//! |---|---|
//! | [`ladder`] | the seed's four steps before each call, CPAT's reports and critical fallback |
//! | [`compaction`] | the compaction call: the seed's prompt, `<analysis>` stripped |
//! | [`boundary`] | the boundary-maintenance pass before a follow-up question |
//! | [`vocab`] | token counts in the model's own vocabulary |

pub mod boundary;
pub mod compaction;
pub mod ladder;
pub mod vocab;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use crate::context::block::{FunctionCall, Origin, ToolCall as BlockCall};
use crate::context::durable::Durability;
use crate::context::tokens::{CpatEstimator, TokenCounter};
use crate::context::{Actor, Engine, EngineError, Message as Incoming};
use crate::language::CtlMode;

use super::model::{Message, ModelSource, Role};
use super::tools::{ContextCall, ToolOutput};
use super::transcript::Transcript;

pub use ladder::Ladder;

/// What the system prompt gains when the context tools are offered (the `cpat` arm).
pub const CONTEXT_TOOLS_PROMPT: &str = include_str!("../../../prompts/context_tools.md");

/// What the system prompt gains when they are not (`threshold`, `react`): the tags and the
/// manifest, no tool.
pub const CONTEXT_VIEW_PROMPT: &str = include_str!("../../../prompts/context_view.md");

/// How much governance a run gets: CPAT's three arms (`cpat_reference.md` §9, §11). A run
/// with none of them (`frontier run --context off`) has no engine at all
/// ([`super::Config::context`] is `None`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Arm {
    /// The ladder, CPAT's reports and critical fallback, `context_update` and
    /// `artifact_get`, and the boundary-maintenance pass before each follow-up.
    #[default]
    Cpat,
    /// The runtime's safety net only (the ladder, the reports, the critical fallback): the
    /// model is offered neither context tool.
    Threshold,
    /// No budget check, no ladder, no context tool: the conversation is only kept (and
    /// journaled) in the engine, and the hard window ends the run.
    React,
}

impl Arm {
    /// The arm called `name` (`cpat`, `threshold`, `react`).
    pub fn from_name(name: &str) -> Option<Arm> {
        match name {
            "cpat" => Some(Arm::Cpat),
            "threshold" => Some(Arm::Threshold),
            "react" => Some(Arm::React),
            _ => None,
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Arm::Cpat => "cpat",
            Arm::Threshold => "threshold",
            Arm::React => "react",
        }
    }

    /// Whether the model is offered `context_update` and `artifact_get`.
    pub fn offers_context_tools(self) -> bool {
        self == Arm::Cpat
    }

    /// Whether the runtime checks the budget before each call (the ladder, the reports, the
    /// critical fallback).
    pub fn governs(self) -> bool {
        self != Arm::React
    }
}

/// Largest argument text (`reason` plus `operations`) a `context_update` call may carry, in
/// bytes; the CTL argument limit bounds it first.
pub const MAX_UPDATE_ARGS: usize = 1024 * 1024;

/// How the loop governs its context.
#[derive(Clone)]
pub struct Settings {
    /// The run directory: `run.json`, `journal.jsonl`, `content/` (it must not hold a run).
    pub run_dir: PathBuf,
    /// The window and CPAT's ratios (16,000 tokens; 0.7, 0.8, 0.95).
    pub budget: crate::context::Config,
    /// The ladder's thresholds and limits.
    pub ladder: Ladder,
    /// How tokens are counted (CPAT's estimator, or a vocabulary's: [`vocab::VocabCounter`]).
    pub tokens: Arc<dyn TokenCounter>,
    /// Whether each change is fsynced ([`Durability::Fsync`], the default) or only flushed.
    pub durability: Durability,
    /// The arm ([`Arm::Cpat`] by default).
    pub arm: Arm,
    /// The hard window, in tokens (none by default): in the [`Arm::React`] arm, a request
    /// estimated over it is replaced by one final call with the tools closed, and the run
    /// ends `terminated_early`. The other arms are never ended by it.
    pub hard_window: Option<u64>,
}

impl Settings {
    /// The defaults, journaled in `run_dir`.
    pub fn new(run_dir: impl Into<PathBuf>) -> Settings {
        Settings {
            run_dir: run_dir.into(),
            budget: crate::context::Config::default(),
            ladder: Ladder::default(),
            tokens: Arc::new(CpatEstimator),
            durability: Durability::Fsync,
            arm: Arm::Cpat,
            hard_window: None,
        }
    }
}

/// One call's result as the loop hands it over: `(id, tool, status, output)`.
pub type CallResult = (String, String, &'static str, Vec<u8>);

/// The loop's side of the engine.
pub struct ContextLoop {
    engine: Engine,
    arm: Arm,
    hard_window: Option<u64>,
    /// The largest estimate of a request sent so far, in tokens.
    peak: u64,
    ladder: Ladder,
    mode: CtlMode,
    /// The engine's call id (`t<turn>.<id>`, unique in the run) → the CTL id and the status.
    calls: HashMap<String, (String, &'static str)>,
    /// When the last model call ended (the cache's age).
    last_call: Option<Instant>,
    /// The pressure of the last budget report still standing.
    reported: Option<crate::context::Pressure>,
}

impl std::fmt::Debug for ContextLoop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContextLoop")
            .field("engine", &self.engine)
            .finish()
    }
}

impl ContextLoop {
    /// A new run: the engine in `settings.run_dir`, the system prompt and the task ingested.
    pub fn start(
        settings: &Settings,
        system: &str,
        task: Option<&str>,
        mode: CtlMode,
    ) -> Result<ContextLoop, String> {
        let dir = &settings.run_dir;
        let mut engine = Engine::create(
            dir,
            settings.budget,
            settings.tokens.clone(),
            settings.durability,
        )
        .map_err(|e| format!("run directory {}: {e}", dir.display()))?;
        let mut text = system.to_owned();
        text.push_str(if settings.arm.offers_context_tools() {
            CONTEXT_TOOLS_PROMPT
        } else {
            CONTEXT_VIEW_PROMPT
        });
        engine
            .ingest(Incoming::System { text })
            .map_err(|e| e.to_string())?;
        if let Some(task) = task {
            engine
                .ingest(Incoming::User {
                    text: task.to_owned(),
                    origin: None,
                })
                .map_err(|e| e.to_string())?;
        }
        Ok(ContextLoop {
            engine,
            arm: settings.arm,
            hard_window: settings.hard_window,
            peak: 0,
            ladder: settings.ladder,
            mode,
            calls: HashMap::new(),
            last_call: None,
            reported: None,
        })
    }

    /// The engine (read only).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The run's arm.
    pub fn arm(&self) -> Arm {
        self.arm
    }

    /// The largest estimate of a request sent so far, in tokens.
    pub fn peak(&self) -> u64 {
        self.peak
    }

    /// Ingests a follow-up question: a user block of the person's (it becomes the current
    /// question).
    pub fn question(&mut self, text: &str) -> Result<(), EngineError> {
        self.engine
            .ingest(Incoming::User {
                text: text.to_owned(),
                origin: None,
            })
            .map(|_| ())
    }

    /// Ingests a turn: the model's output with the calls it made, their results, then `note`
    /// (a nudge of the runtime) if any. An empty output with no calls is left out, as the
    /// plain loop leaves it out.
    pub fn ingest_turn(
        &mut self,
        turn: u32,
        output: &[u8],
        results: &[CallResult],
        note: Option<&str>,
    ) -> Result<(), EngineError> {
        if !output.is_empty() || !results.is_empty() {
            let tool_calls = results
                .iter()
                .map(|(id, name, _, _)| BlockCall {
                    id: engine_id(turn, id),
                    kind: "function".to_owned(),
                    function: FunctionCall {
                        name: name.clone(),
                        arguments: "{}".to_owned(),
                    },
                })
                .collect();
            self.engine.ingest(Incoming::Assistant {
                text: String::from_utf8_lossy(output).into_owned(),
                tool_calls,
                reasoning: None,
            })?;
        }
        for (id, name, status, out) in results {
            let key = engine_id(turn, id);
            self.calls.insert(key.clone(), (id.clone(), status));
            self.engine.ingest(Incoming::ToolResult {
                tool_call_id: key,
                name: name.clone(),
                text: String::from_utf8_lossy(out).into_owned(),
            })?;
        }
        if let Some(note) = note.filter(|n| !n.is_empty()) {
            self.runtime_note(note)?;
        }
        Ok(())
    }

    /// Ingests a reminder of the runtime (`"origin":"runtime"`: never the current question).
    pub fn runtime_note(&mut self, text: &str) -> Result<(), EngineError> {
        self.engine
            .ingest(Incoming::User {
                text: text.to_owned(),
                origin: Some(Origin::Runtime),
            })
            .map(|_| ())
    }

    /// Before a model call: the ladder (not in the `react` arm), then the request the model
    /// receives (the view), its estimate counted in the peak.
    pub fn govern(
        &mut self,
        model: &mut dyn ModelSource,
        transcript: &mut Transcript<'_>,
        turn: u32,
        max_tokens: u32,
    ) -> Result<Vec<Message>, EngineError> {
        if self.arm.governs() {
            ladder::run(self, model, transcript, turn, max_tokens)?;
        }
        self.peak = self.peak.max(self.engine.budget().used);
        Ok(self.request())
    }

    /// Whether the request about to be sent is over the hard window in the `react` arm (the
    /// only arm the hard window ends): its estimate, when it is.
    pub fn over_hard_window(&self) -> Option<u64> {
        let window = self.hard_window?;
        let used = self.engine.budget().used;
        (self.arm == Arm::React && used > window).then_some(used)
    }

    /// The hard window, if any.
    pub fn hard_window(&self) -> Option<u64> {
        self.hard_window
    }

    /// Closes the tools for the final call of a run over the hard window: the runtime's
    /// note is ingested (journaled), and the request is the view with it; its estimate is
    /// counted in the peak.
    pub fn close_tools(&mut self, note: &str) -> Result<Vec<Message>, EngineError> {
        self.runtime_note(note)?;
        self.peak = self.peak.max(self.engine.budget().used);
        Ok(self.request())
    }

    /// The recovery's `context_overflow` path: the stale results cleared whatever the cache
    /// (the request failed, so there is no cached prefix to keep), so that the compaction
    /// call itself fits, then one compaction, whatever the thresholds.
    pub fn compact_for_overflow(
        &mut self,
        model: &mut dyn ModelSource,
        transcript: &mut Transcript<'_>,
        turn: u32,
        max_tokens: u32,
    ) -> Result<(), EngineError> {
        ladder::clear_stale(self, transcript, turn)?;
        compaction::compact(
            self,
            model,
            transcript,
            turn,
            max_tokens,
            "context_overflow",
        )
        .map(|_| ())
    }

    /// After a model call: journaled with the view's size, and the cache's clock restarted.
    pub fn after_call(&mut self, model: &str) -> Result<(), EngineError> {
        self.last_call = Some(Instant::now());
        self.engine
            .record_llm_call(model, &Value::Object(Default::default()))
    }

    /// Whether the provider's prompt cache has gone cold: no call yet, or the last one ended
    /// at least the ladder's `cache_ttl` ago.
    fn cache_cold(&self) -> bool {
        self.last_call
            .is_none_or(|at| at.elapsed() >= self.ladder.cache_ttl)
    }

    /// The view as the loop's messages: tool messages become CTL `result` frames (status and
    /// id as the model knows them), consecutive ones in one user message.
    pub fn request(&self) -> Vec<Message> {
        let view = self.engine.view();
        let mut out: Vec<Message> = Vec::with_capacity(view.messages.len());
        let mut in_results = false;
        for m in view.messages {
            let role = match m.role {
                "system" => Role::System,
                "assistant" => Role::Assistant,
                "tool" => {
                    let key = m.tool_call_id.unwrap_or_default();
                    let (id, status) = self
                        .calls
                        .get(&key)
                        .map_or((key.as_str(), "ok"), |(id, s)| (id.as_str(), *s));
                    if !in_results {
                        out.push(Message::new(Role::User, String::new()));
                        in_results = true;
                    }
                    if let Some(last) = out.last_mut() {
                        super::runner::write_result(
                            &mut last.content,
                            id,
                            status,
                            &m.content,
                            self.mode,
                        );
                    }
                    continue;
                }
                _ => Role::User,
            };
            in_results = false;
            out.push(Message::new(role, m.content));
        }
        out
    }

    /// Runs a context tool's call against the engine; a malformed `context_update` is an
    /// error result (`error: …`), never a failure of the loop.
    pub fn run_tool(&mut self, call: ContextCall) -> Result<ToolOutput, EngineError> {
        match call {
            ContextCall::ArtifactGet { uri, max_chars } => {
                let text = self.engine.artifact_get(&uri, max_chars);
                Ok(if text.starts_with("error: ") {
                    ToolOutput::failed(text)
                } else {
                    ToolOutput::ok(text)
                })
            }
            ContextCall::Update { reason, operations } => {
                if reason.len() + operations.len() > MAX_UPDATE_ARGS {
                    return Ok(ToolOutput::failed(format!(
                        "error: the arguments are over {MAX_UPDATE_ARGS} bytes"
                    )));
                }
                let ops: Value = match serde_json::from_str(&operations) {
                    Ok(v) => v,
                    Err(e) => {
                        return Ok(ToolOutput::failed(format!(
                            "error: operations is not JSON (line {}, column {}): {e}",
                            e.line(),
                            e.column()
                        )))
                    }
                };
                let args = serde_json::json!({"reason": reason, "operations": ops});
                match self.engine.apply_args(&args.to_string(), Actor::Agent) {
                    Ok(result) => {
                        let text = serde_json::to_string(&result).unwrap_or_default();
                        Ok(if result.ok {
                            ToolOutput::ok(text)
                        } else {
                            ToolOutput::failed(text)
                        })
                    }
                    Err(EngineError::Args(e)) => Ok(ToolOutput::failed(format!("error: {e}"))),
                    Err(e) => Err(e),
                }
            }
        }
    }
}

/// The engine's id of a call: unique in the run even when a model reuses its CTL ids.
fn engine_id(turn: u32, id: &str) -> String {
    format!("t{turn}.{id}")
}
