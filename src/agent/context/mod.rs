//! Context governance in the loop: the conversation lives in the context engine
//! ([`crate::context`]), and what the model receives is the engine's view.
//!
//! With [`Settings`] in the loop's configuration (`frontier run --run-dir DIR`), every message
//! that enters the loop is ingested as a block, journaled in the run directory before it is
//! used: the system prompt and the task, each turn's output with the calls it made, each
//! call's result, the runtime's nudges and reports (as runtime reminders, never the current
//! question), and a reply's reasoning (CPAT's `reasoning_trace` while its calls are open).
//! Before every model call the runtime runs the ladder ([`ladder`]), then renders the view
//! into the request, in one of two renderings of the same view: for the CTL loop
//! ([`ContextLoop::request`]: CTL `result` frames for tool messages, in the stream's mode),
//! for the native loop ([`ContextLoop::composed`]: calls and results under the model's ids,
//! put in the API's shape by the provider). What the governance calls itself (the
//! compaction call, the boundary pass) goes through the loop's model ([`Caller`]).
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
//! | [`caller`] | the loop's model as the compaction call reaches it, in either rendering |
//! | [`boundary`] | the boundary-maintenance pass before a follow-up question |
//! | [`vocab`] | token counts in the model's own vocabulary |

pub mod boundary;
pub mod caller;
pub mod compaction;
pub mod ladder;
pub mod vocab;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use crate::context::block::{FunctionCall, Origin, ToolCall as BlockCall};
use crate::context::durable::Durability;
use crate::context::tokens::{CpatEstimator, TokenCounter};
use crate::context::{Actor, Engine, EngineError, Message as Incoming};
use crate::language::CtlMode;
use crate::streams::usage::{usage_json, Usage};

use super::model::{Message, Role};
use super::provider::{Composed, SentCall, ToolReply};
use super::tools::{ContextCall, ToolOutput};
use super::transcript::Transcript;

pub use caller::Caller;
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

/// A call the loop made, as the engine keeps it: the call in its turn's reply, its result
/// after it.
struct Made<'a> {
    id: &'a str,
    name: &'a str,
    /// The arguments as the model sent them (JSON text, a freeform input), `{}` for CTL.
    arguments: &'a str,
    /// A freeform (custom) tool call (Responses' `apply_patch`).
    custom: bool,
    status: &'static str,
    output: std::borrow::Cow<'a, str>,
}

/// What the loop knows of a call besides the engine: its id as the model wrote it, its
/// status, whether it was a freeform call.
#[derive(Clone, Debug)]
struct Known {
    id: String,
    status: &'static str,
    custom: bool,
}

/// The loop's side of the engine.
pub struct ContextLoop {
    engine: Engine,
    arm: Arm,
    hard_window: Option<u64>,
    /// The largest estimate of a request sent so far, in tokens.
    peak: u64,
    ladder: Ladder,
    mode: CtlMode,
    /// The engine's call id (`t<turn>.<id>`, unique in the run) → the call as the model knows
    /// it.
    calls: HashMap<String, Known>,
    /// The loop's `--max-turns` (the generational fallback's horizon).
    max_turns: u32,
    /// Model calls so far (turns, compactions, boundary passes).
    llm_calls: u64,
    /// The usage the last call reported, as journaled (`{}` when its source reported none).
    last_usage: Value,
    /// When the last model call ended (the cache's age).
    last_call: Option<Instant>,
    /// The pressure this turn's budget report said (`None` below the soft limit).
    reported: Option<crate::context::Pressure>,
}

/// The phrase with which the model declines a must-act report's request.
pub const NO_UPDATE_NEEDED: &str = "no_context_update_needed";

/// The reminder after a must-act turn that ran task tools and neither updated the context nor
/// declined to.
pub const MUST_ACT_REMINDER: &str = "The context budget is at must-act pressure (see the latest \
budget_report): call context_update (payload_offload, compact, fold) before more work, or say \
no_context_update_needed.";

/// Whether a turn ignored a must-act (or critical) report: it ran task tools (`names`, the
/// tools it called) without a `context_update`, and its text does not decline one.
fn ignored_report<'a>(
    reported: Option<crate::context::Pressure>,
    text: &str,
    names: impl Iterator<Item = &'a str>,
) -> bool {
    use crate::context::Pressure;
    let pressing = matches!(reported, Some(Pressure::MustAct | Pressure::Critical));
    let (mut task_tools, mut updated) = (false, false);
    for name in names {
        updated |= name == "context_update";
        task_tools |= !matches!(name, "context_update" | "artifact_get");
    }
    pressing && task_tools && !updated && !text.contains(NO_UPDATE_NEEDED)
}

impl std::fmt::Debug for ContextLoop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContextLoop")
            .field("engine", &self.engine)
            .finish()
    }
}

impl ContextLoop {
    /// A new run of at most `max_turns` requests: the engine in `settings.run_dir`, the
    /// system prompt and the task ingested.
    pub fn start(
        settings: &Settings,
        system: &str,
        task: Option<&str>,
        mode: CtlMode,
        max_turns: u32,
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
            max_turns,
            llm_calls: 0,
            last_usage: usage_json(None),
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

    /// Ingests a turn: the model's output with the calls it made and its `reasoning` (what
    /// the source streamed apart from the output, if anything), their results, then `note`
    /// (a nudge of the runtime) if any. An empty output with no calls is left out, as the
    /// plain loop leaves it out.
    pub fn ingest_turn(
        &mut self,
        turn: u32,
        output: &[u8],
        reasoning: Option<&str>,
        results: &[CallResult],
        note: Option<&str>,
    ) -> Result<(), EngineError> {
        let made = results
            .iter()
            .map(|(id, name, status, out)| Made {
                id,
                name,
                arguments: "{}",
                custom: false,
                status,
                output: String::from_utf8_lossy(out),
            })
            .collect();
        let text = String::from_utf8_lossy(output);
        self.ingest_made(turn, &text, reasoning, made, note)
    }

    /// Ingests a native turn: its text and `reasoning` (streamed apart from the text, if any)
    /// with the calls that got a reply (a call the stream left incomplete never ran and is
    /// not shown as made), each with its arguments as sent, their replies, then `note`.
    pub fn ingest_native_turn(
        &mut self,
        turn: u32,
        text: &str,
        reasoning: Option<&str>,
        calls: &[SentCall],
        replies: &[ToolReply],
        note: Option<&str>,
    ) -> Result<(), EngineError> {
        let made = replies
            .iter()
            .filter_map(|r| {
                let call = calls.iter().find(|c| c.id == r.id)?;
                Some(Made {
                    id: &r.id,
                    name: &call.name,
                    arguments: &call.arguments,
                    custom: call.custom,
                    status: if r.ok { "ok" } else { "error" },
                    output: std::borrow::Cow::Borrowed(r.output.as_str()),
                })
            })
            .collect();
        self.ingest_made(turn, text, reasoning, made, note)
    }

    /// The one ingestion of a turn, for both loops. The reply's reasoning goes to the engine
    /// as CPAT's `reasoning_content`: with calls, it becomes an `api_required`
    /// `reasoning_trace` (and the reply's `api.reasoning_content`, which the view replays)
    /// until the next reply is ingested; empty reasoning is none (CPAT tests it for
    /// truthiness).
    fn ingest_made(
        &mut self,
        turn: u32,
        text: &str,
        reasoning: Option<&str>,
        made: Vec<Made<'_>>,
        note: Option<&str>,
    ) -> Result<(), EngineError> {
        let reminder = self.must_act_reminder(text, &made);
        if !text.is_empty() || !made.is_empty() {
            let tool_calls = made
                .iter()
                .map(|m| BlockCall {
                    id: engine_id(turn, m.id),
                    kind: "function".to_owned(),
                    function: FunctionCall {
                        name: m.name.to_owned(),
                        arguments: m.arguments.to_owned(),
                    },
                })
                .collect();
            self.engine.ingest(Incoming::Assistant {
                text: text.to_owned(),
                tool_calls,
                reasoning: reasoning.filter(|r| !r.is_empty()).map(str::to_owned),
            })?;
        }
        for m in made {
            let key = engine_id(turn, m.id);
            let known = Known {
                id: m.id.to_owned(),
                status: m.status,
                custom: m.custom,
            };
            self.calls.insert(key.clone(), known);
            self.engine.ingest(Incoming::ToolResult {
                tool_call_id: key,
                name: m.name.to_owned(),
                text: m.output.into_owned(),
            })?;
        }
        if let Some(reminder) = reminder {
            self.runtime_note(reminder)?;
        }
        if let Some(note) = note.filter(|n| !n.is_empty()) {
            self.runtime_note(note)?;
        }
        Ok(())
    }

    /// CPAT's must-act nudge: under a must-act (or critical) report, a turn that ran task
    /// tools without a `context_update` and without saying `no_context_update_needed` is
    /// answered with a reminder (only where the model is offered the context tools).
    fn must_act_reminder(&self, text: &str, made: &[Made<'_>]) -> Option<&'static str> {
        let names = made.iter().map(|m| m.name);
        (self.arm.offers_context_tools() && ignored_report(self.reported, text, names))
            .then_some(MUST_ACT_REMINDER)
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

    /// Before a model call: the ladder (not in the `react` arm); the request's estimate is
    /// counted in the peak. The request is the view in the loop's rendering
    /// ([`ContextLoop::request`], [`ContextLoop::composed`]).
    pub fn govern(
        &mut self,
        model: &mut Caller<'_>,
        transcript: &mut Transcript<'_>,
        turn: u32,
        max_tokens: u32,
    ) -> Result<(), EngineError> {
        if self.arm.governs() {
            ladder::run(self, model, transcript, turn, max_tokens)?;
        }
        self.peak = self.peak.max(self.engine.budget().used);
        Ok(())
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
    pub fn close_tools(&mut self, note: &str) -> Result<(), EngineError> {
        self.runtime_note(note)?;
        self.peak = self.peak.max(self.engine.budget().used);
        Ok(())
    }

    /// The recovery's `context_overflow` path: the stale results cleared whatever the cache
    /// (the request failed, so there is no cached prefix to keep), so that the compaction
    /// call itself fits, then one compaction, whatever the thresholds.
    pub fn compact_for_overflow(
        &mut self,
        model: &mut Caller<'_>,
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

    /// After a model call: journaled with the view's size and the usage its provider
    /// reported ([`usage_json`]: the normalised counts and the provider's object, `{}` when
    /// it reported none), counted, and the cache's clock restarted. The engine calibrates
    /// its estimate by the reported `prompt_tokens` from then on, and the generational
    /// fallback's gate reads the call's cached fraction.
    pub fn after_call(&mut self, model: &str, usage: Option<&Usage>) -> Result<(), EngineError> {
        let usage = usage_json(usage);
        self.last_call = Some(Instant::now());
        self.llm_calls += 1;
        self.engine.record_llm_call(model, &usage)?;
        self.last_usage = usage;
        Ok(())
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
                        .map_or((key.as_str(), "ok"), |k| (k.id.as_str(), k.status));
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

    /// The view in the native rendering: each call and each result under the id the model
    /// gave it, each call with its arguments as sent; the provider puts it in its API's shape
    /// ([`Composed`]). A model id already shown for an earlier call of the view (a model
    /// that reuses its ids) is replaced by the engine's, unique in the run, for the call and
    /// its result, since the APIs pair by id. Chain atomicity keeps every call with its
    /// result in the view, and this rendering keeps them together. A reply whose reasoning
    /// trace is open carries its reasoning (the view's `reasoning_content`), which the
    /// provider replays where its API takes it ([`Composed::Assistant`]).
    pub fn composed(&self) -> Vec<Composed> {
        let view = self.engine.view();
        let mut used: HashSet<String> = HashSet::new();
        // The engine's id → the id shown.
        let mut shown: HashMap<String, String> = HashMap::new();
        let mut out = Vec::with_capacity(view.messages.len());
        for m in view.messages {
            out.push(match m.role {
                "system" => Composed::System(m.content),
                "assistant" => {
                    let mut calls = Vec::new();
                    for c in m.tool_calls.unwrap_or_default() {
                        let known = self.calls.get(&c.id);
                        let id = match known {
                            Some(k) if !used.contains(&k.id) => k.id.clone(),
                            _ => c.id.clone(),
                        };
                        used.insert(id.clone());
                        shown.insert(c.id, id.clone());
                        calls.push(SentCall {
                            id,
                            name: c.function.name,
                            custom: known.is_some_and(|k| k.custom),
                            arguments: c.function.arguments,
                        });
                    }
                    Composed::Assistant {
                        text: m.content,
                        calls,
                        reasoning: m.reasoning_content,
                    }
                }
                "tool" => {
                    let key = m.tool_call_id.unwrap_or_default();
                    let known = self.calls.get(&key);
                    Composed::Result(ToolReply {
                        ok: known.is_none_or(|k| k.status == "ok"),
                        id: shown.get(&key).cloned().unwrap_or(key),
                        output: m.content,
                    })
                }
                _ => Composed::User(m.content),
            });
        }
        out
    }

    /// The model calls made so far.
    pub fn llm_calls(&self) -> u64 {
        self.llm_calls
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::Pressure;

    #[test]
    fn a_turn_ignores_a_pressing_report_only_with_task_tools_no_update_and_no_decline() {
        let must = Some(Pressure::MustAct);
        let cases: [(Option<Pressure>, &str, &[&str], bool); 9] = [
            (must, "", &["read_file"], true),
            (Some(Pressure::Critical), "", &["shell", "list_dir"], true),
            (must, "", &["read_file", "context_update"], false),
            (
                must,
                "no_context_update_needed: one more read",
                &["read_file"],
                false,
            ),
            (must, "", &["artifact_get"], false),
            (must, "", &[], false),
            (Some(Pressure::Soft), "", &["read_file"], false),
            (None, "", &["read_file"], false),
            (must, "no context update needed", &["read_file"], true),
        ];
        for (reported, text, names, expected) in cases {
            assert_eq!(
                ignored_report(reported, text, names.iter().copied()),
                expected,
                "{reported:?} {text:?} {names:?}"
            );
        }
    }
}
