//! The loop: a thin, synchronous consumer of confirmed CTL frames.
//!
//! Per turn, the model source streams chunks; each chunk goes straight into the CTL parser;
//! every call the assembler completes (its `end` line confirmed) is judged, recorded and run or
//! refused from inside the parser's event callback, before the parser reads the byte after
//! that `end` line, so the effect of a call is visible to everything after it in the stream
//! whatever the chunking. Nothing acts on a call before its `end` line, and
//! nothing after a byte the parser refuses runs. Around that sits the recovery state machine
//! ([`super::recovery`]) that decides what the next request is.
//!
//! # Concurrency partitioning (seed 004, 11.3), streamed
//!
//! A call that is concurrency-safe (`read_file`, `list_dir` with a well-formed argument list,
//! judged by [`policy::concurrency_safe`], fail-closed) starts on a thread of its own the moment
//! it is confirmed, so consecutive safe calls overlap. Any other call first waits for every
//! call in flight, then runs alone. Results are written in call order when the batch is
//! drained (at the next unsafe call or the end of the turn), so the transcript does not depend
//! on thread timing or on how the stream was chunked.

use std::io::{self, Write};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::apply::Workspace;
use crate::contract::PushParser;
use crate::ctl::{pick_tag, CallAssembler, CtlEvent, CtlParser, Limits, ToolCall};
use crate::language::CtlMode;

use super::context::{boundary, Arm, Caller, ContextLoop, Settings as ContextSettings};
use super::model::{Finish, Flow, Message, ModelError, ModelSource, Request, Role};
use super::patch::{PatchSession, PatchTool};
use super::policy::{self, Toolset};
use super::recovery::{
    Recovery, Transition, CONTINUE_NUDGE, EXTENDED_STREAM_ERROR_NUDGE, RESUME_NUDGE,
    STREAM_ERROR_NUDGE,
};
use super::shell::ShellLimits;
use super::tools::{self, Action, ToolOutput};
use super::transcript::{Rec, Transcript};

/// The system prompt that teaches a model strict CTL (every argument counted) and the tools.
pub const SYSTEM_PROMPT: &str = include_str!("../../prompts/ctl_system.md");

/// The system prompt that teaches a model extended CTL (inline and heredoc arguments first,
/// the counted form for what they cannot carry) and the tools.
pub const EXTENDED_SYSTEM_PROMPT: &str = include_str!("../../prompts/ctl_extended_system.md");

/// The system prompt for a CTL mode.
pub fn system_prompt(mode: CtlMode) -> &'static str {
    match mode {
        CtlMode::Strict => SYSTEM_PROMPT,
        CtlMode::Extended => EXTENDED_SYSTEM_PROMPT,
    }
}

/// What the model is told before the final call of a run over the hard window (the
/// `react` arm): the tools are closed, and any call it still makes is refused.
pub const TOOLS_CLOSED_NOTE: &str = "The context window is full: the tools are closed, and no \
call you make from now on runs. Answer now with what you have; this is your last turn.";

/// Most concurrency-safe calls in flight at once; one more first drains the batch (a count,
/// not a timing, so the transcript stays deterministic).
pub const MAX_PARALLEL: usize = 8;

/// Largest tool output put back into the conversation (the transcript keeps it whole); the
/// seed's first rung of context governance.
pub const MAX_RESULT_IN_CONTEXT: usize = 32 * 1024;

/// Everything a run needs besides its model and its transcript.
#[derive(Clone)]
pub struct Config {
    /// The workspace every path is confined to and every command runs in; it also holds the
    /// protected paths (the runtime's own files, see [`Config::protect`]).
    pub workspace: Workspace,
    /// The tools allowed.
    pub toolset: Toolset,
    /// The user's request.
    pub task: Option<String>,
    /// Follow-up questions, asked in order: each one once the model has answered the one
    /// before it (a turn that ends with no calls), as the new current question.
    pub followups: Vec<String>,
    /// CTL limits.
    pub limits: Limits,
    /// The CTL mode the model writes, taught by the system prompt ([`system_prompt`]) and
    /// used for the results written back.
    pub ctl_mode: CtlMode,
    /// `shell` limits.
    pub shell: ShellLimits,
    /// Most model requests before giving up.
    pub max_turns: u32,
    /// The output limit asked for.
    pub max_tokens: u32,
    /// The output limit after escalation.
    pub escalated_max_tokens: u32,
    /// The `apply_patch` machinery.
    pub patch_tool: Arc<dyn PatchTool>,
    /// Context governance: the conversation in the context engine, the ladder before every
    /// call, the tools `context_update` and `artifact_get` (none: the plain conversation).
    pub context: Option<ContextSettings>,
}

impl Config {
    /// Defaults for a workspace: interactive toolset, strict CTL with default limits (as the
    /// parser's default; `frontier run` asks a real model for extended CTL), default shell
    /// limits, 50 turns, 4096 output tokens escalated to 16384, the crate's patch engine
    /// (safe policy).
    pub fn new(workspace: Workspace) -> Config {
        Config {
            workspace,
            toolset: Toolset::Interactive,
            task: None,
            followups: Vec::new(),
            limits: Limits::default(),
            ctl_mode: CtlMode::Strict,
            shell: ShellLimits::default(),
            max_turns: 50,
            max_tokens: 4096,
            escalated_max_tokens: 16384,
            patch_tool: Arc::new(super::patch::Engine),
            context: None,
        }
    }

    /// Puts one of the runtime's own files (the transcript; later a journal or a content
    /// store, file or directory) out of every tool's reach, wherever it lies: the file tools
    /// refuse any path that resolves to it (`protected_path`, through
    /// [`Workspace::protect`]), and a `shell` command that names it is refused as best effort
    /// (see `docs/agent.md` for what that does and does not guarantee).
    pub fn protect(&mut self, path: impl AsRef<std::path::Path>) -> io::Result<()> {
        self.workspace.protect(path)
    }

    /// The output limit of the next request: escalated once `recovery` has raised it.
    pub(super) fn output_limit(&self, recovery: &Recovery) -> u32 {
        if recovery.output_limit_escalated {
            self.escalated_max_tokens
        } else {
            self.max_tokens
        }
    }
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndStatus {
    /// The model ended a turn without calls: the task is done.
    Done,
    /// The replay ran out of turns at a frame boundary, after a turn that ended normally.
    SourceEnded,
    /// The replay ran out of turns right after a turn that the output limit cut (`length`),
    /// at a frame boundary: the output was cut off and nothing continued it.
    OutputCutOff,
    /// A byte outside CTL broke the stream, and either the stream-error recovery was spent or
    /// the source ended without answering its nudge.
    StreamError,
    /// The stream ended inside a frame.
    StreamIncomplete,
    /// The model source failed.
    ModelError,
    /// A recovery path was needed and its lock or counter was spent.
    RecoveryExhausted,
    /// `max_turns` requests were made.
    TurnBudgetExhausted,
    /// The context engine could not write its run directory (or could not start).
    ContextError,
    /// The `react` arm's request went over the hard window: one final call was made with
    /// the tools closed, and the run ended there.
    TerminatedEarly,
}

impl EndStatus {
    /// The name recorded in the `end` record.
    pub fn name(self) -> &'static str {
        match self {
            EndStatus::Done => "done",
            EndStatus::SourceEnded => "source_ended",
            EndStatus::OutputCutOff => "output_cut_off",
            EndStatus::StreamError => "stream_error",
            EndStatus::StreamIncomplete => "stream_incomplete",
            EndStatus::ModelError => "model_error",
            EndStatus::RecoveryExhausted => "recovery_exhausted",
            EndStatus::TurnBudgetExhausted => "turn_budget_exhausted",
            EndStatus::ContextError => "context_error",
            EndStatus::TerminatedEarly => "terminated_early",
        }
    }

    /// 0 for a clean end, 1 otherwise.
    pub fn exit_code(self) -> i32 {
        match self {
            EndStatus::Done | EndStatus::SourceEnded => 0,
            _ => 1,
        }
    }
}

/// One CTL stream: what persists across a `length` finish.
struct Stream {
    parser: CtlParser,
    assembler: CallAssembler,
    /// The patch session of the `apply_patch` call being assembled.
    patch: Option<Box<dyn PatchSession>>,
    /// Whether body bytes now go to `patch` (the call's first `patch` argument).
    routing: bool,
    /// Whether that argument has been seen (a repeated one is not fed).
    patch_seen: bool,
    /// Whether the session's problem has been recorded.
    patch_reported: bool,
}

impl Stream {
    fn new(limits: Limits, mode: CtlMode) -> Stream {
        Stream {
            parser: CtlParser::with_mode(limits, mode),
            assembler: CallAssembler::default(),
            patch: None,
            routing: false,
            patch_seen: false,
            patch_reported: false,
        }
    }
}

/// A call in flight on its own thread.
struct InFlight {
    turn: u32,
    id: String,
    name: String,
    handle: JoinHandle<ToolOutput>,
}

/// Runs calls, partitioned, and records them (shared with the native-tools loop,
/// [`super::native`]).
pub(super) struct Executor<'c> {
    pub(super) config: &'c Config,
    in_flight: Vec<InFlight>,
    /// The results of this turn, for the next request: `(id, tool, status, output)`.
    pub(super) results: Vec<(String, String, &'static str, Vec<u8>)>,
    /// The context engine, when the loop governs its context.
    pub(super) context: Option<ContextLoop>,
    /// Why the context engine failed while running a call (the run ends after the turn).
    pub(super) context_failed: Option<String>,
    /// Whether the tools are closed (the final call over the hard window): every call is
    /// refused.
    pub(super) tools_closed: bool,
    /// The reasoning the CTL source streamed for this turn apart from its output
    /// ([`ModelSource::take_reasoning`]), for the engine.
    reasoning: Option<String>,
}

impl<'c> Executor<'c> {
    /// No call in flight, no result.
    pub(super) fn new(config: &'c Config) -> Executor<'c> {
        Executor {
            config,
            in_flight: Vec::new(),
            results: Vec::new(),
            context: None,
            context_failed: None,
            tools_closed: false,
            reasoning: None,
        }
    }

    /// A confirmed call the assembler did not hold (over its bounds): recorded with its id and
    /// name (its arguments as `null`), then refused, in call order like every other call.
    fn refuse_unheld(
        &mut self,
        turn: u32,
        too_large: crate::ctl::CallTooLarge,
        transcript: &mut Transcript<'_>,
    ) {
        self.drain(transcript);
        transcript.unheld_call(turn, &too_large.id, &too_large.name);
        let reason = too_large.to_string();
        transcript.refused(turn, &too_large.id, &reason);
        self.results
            .push((too_large.id, too_large.name, "refused", reason.into_bytes()));
    }

    pub(super) fn handle(
        &mut self,
        turn: u32,
        call: ToolCall,
        patch: Option<Box<dyn PatchSession>>,
        transcript: &mut Transcript<'_>,
    ) {
        let safe = policy::concurrency_safe(&call);
        // Judged before anything is recorded, so that a refusal, like a result, is written
        // after the results of the calls in flight: the transcript and the next message list
        // them in call order.
        let verdict = if self.tools_closed {
            Err("tools_closed: the context is over the hard window; no call runs".to_owned())
        } else {
            policy::judge(&call, self.config.toolset, &self.config.workspace, patch)
                .map_err(|refusal| refusal.reason())
        };
        if !safe || verdict.is_err() || self.in_flight.len() >= MAX_PARALLEL {
            self.drain(transcript);
        }
        transcript.tool_call(turn, &call);
        let action = match verdict {
            Ok(action) => action,
            Err(reason) => {
                transcript.refused(turn, &call.id, &reason);
                self.results
                    .push((call.id, call.name, "refused", reason.into_bytes()));
                return;
            }
        };
        if let Action::Context(context_call) = action {
            self.run_context(turn, call, context_call, transcript);
            return;
        }
        let workspace = self.config.workspace.clone();
        let limits = self.config.shell;
        if safe && action.concurrency_safe() {
            let handle = std::thread::spawn(move || tools::execute(action, &workspace, limits));
            self.in_flight.push(InFlight {
                turn,
                id: call.id,
                name: call.name,
                handle,
            });
        } else {
            let out = tools::execute(action, &workspace, limits);
            self.finish(turn, call.id, call.name, out, transcript);
        }
    }

    /// A context tool's call, run against the engine (refused when the loop has none).
    fn run_context(
        &mut self,
        turn: u32,
        call: ToolCall,
        context_call: tools::ContextCall,
        transcript: &mut Transcript<'_>,
    ) {
        let offered = self.context.as_ref().map(|c| c.arm());
        let Some(context) = self
            .context
            .as_mut()
            .filter(|_| offered.is_some_and(Arm::offers_context_tools))
        else {
            let reason = match offered {
                Some(arm) => format!(
                    "unknown_tool: {} is not offered in the {} arm (--context cpat offers it)",
                    call.name,
                    arm.name()
                ),
                None => format!(
                    "unknown_tool: {} needs context governance (frontier run --context cpat)",
                    call.name
                ),
            };
            transcript.refused(turn, &call.id, &reason);
            self.results
                .push((call.id, call.name, "refused", reason.into_bytes()));
            return;
        };
        let out = match context.run_tool(context_call) {
            Ok(out) => out,
            Err(e) => {
                self.context_failed = Some(e.to_string());
                ToolOutput::failed(format!("error: {e}"))
            }
        };
        self.finish(turn, call.id, call.name, out, transcript);
    }

    fn finish(
        &mut self,
        turn: u32,
        id: String,
        name: String,
        out: ToolOutput,
        transcript: &mut Transcript<'_>,
    ) {
        transcript.tool_result(turn, &id, out.ok, &out.output);
        let status = if out.ok { "ok" } else { "error" };
        self.results.push((id, name, status, out.output));
    }

    /// Hands the turn to the context engine, when there is one: the output with its calls
    /// and the turn's reasoning, their results, then `note`. The results stay for
    /// [`Executor::take_results`].
    fn ingest_turn(&mut self, turn: u32, output: &[u8], note: Option<&str>) -> Result<(), String> {
        if let Some(failed) = self.context_failed.take() {
            return Err(failed);
        }
        match self.context.as_mut() {
            Some(context) => context
                .ingest_turn(turn, output, self.reasoning.as_deref(), &self.results, note)
                .map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }

    /// Waits for every call in flight and records their results, in call order.
    pub(super) fn drain(&mut self, transcript: &mut Transcript<'_>) {
        for call in std::mem::take(&mut self.in_flight) {
            let out = call.handle.join().unwrap_or_else(|_| ToolOutput {
                ok: false,
                output: b"the tool panicked".to_vec(),
            });
            self.finish(call.turn, call.id, call.name, out, transcript);
        }
    }

    /// The results as the next user message, one block per call, each output capped at
    /// [`MAX_RESULT_IN_CONTEXT`] (see [`write_result`] for the forms).
    fn take_results(&mut self) -> Option<String> {
        if self.results.is_empty() {
            return None;
        }
        let mut text = String::new();
        for (id, _, status, output) in self.results.drain(..) {
            let shown = &output[..output.len().min(MAX_RESULT_IN_CONTEXT)];
            let mut body = String::from_utf8_lossy(shown).into_owned();
            if shown.len() < output.len() {
                body.push_str(&format!(
                    "\n[{} more bytes not shown]",
                    output.len() - shown.len()
                ));
            }
            write_result(&mut text, &id, status, &body, self.config.ctl_mode);
        }
        Some(text)
    }
}

/// One call's result for the model, in the forms of the stream's CTL mode so that reading it
/// needs no more counting than writing calls does.
///
/// - strict: `result <id> <status> <nbytes>` LF, the output, LF;
/// - extended: `result <id> <status> = <output>` LF for an output without LF, else
///   `result <id> <status> <<TAG` LF, the output, `TAG` LF, with the writer's tag
///   ([`pick_tag`]: `EOF`, `EOF1` … not a line of the output). An output that does not end
///   with LF gets one before the tag line, and its header says `(no newline at end)` before
///   the `<<`. An output in which all 64 tags are lines falls back to the strict form.
pub(crate) fn write_result(text: &mut String, id: &str, status: &str, body: &str, mode: CtlMode) {
    use std::fmt::Write as _;
    let tag = match mode {
        CtlMode::Extended if !body.contains('\n') => {
            let _ = writeln!(text, "result {id} {status} = {body}");
            return;
        }
        CtlMode::Extended => pick_tag(body.as_bytes()),
        CtlMode::Strict => None,
    };
    match tag {
        Some(tag) if body.ends_with('\n') => {
            let _ = write!(text, "result {id} {status} <<{tag}\n{body}{tag}\n");
        }
        Some(tag) => {
            let _ = write!(
                text,
                "result {id} {status} (no newline at end) <<{tag}\n{body}\n{tag}\n"
            );
        }
        None => {
            let _ = write!(text, "result {id} {status} {}\n{body}\n", body.len());
        }
    }
}

/// What happened to one turn's stream.
enum TurnEnd {
    Finished(Finish),
    SourceEnded,
    Failed(ModelError),
    /// The parser refused a byte.
    Broken(StreamBreak),
}

/// Where and why a stream stopped being CTL.
struct StreamBreak {
    /// The refused byte's offset in the stream.
    offset: u64,
    byte: u8,
    kind: &'static str,
    /// The call it cut, if it fell inside one.
    call: Option<String>,
}

/// Bytes of the accepted output quoted before the refused byte in the note to the model.
const BREAK_CONTEXT: usize = 32;

impl StreamBreak {
    /// What the model is told: where its output stopped being CTL, what ran, what a valid
    /// frame looks like. `accepted` is the turn's output up to the refused byte.
    fn note(&self, accepted: &[u8], mode: CtlMode) -> String {
        let tail = &accepted[accepted.len().saturating_sub(BREAK_CONTEXT)..];
        let place = if tail.is_empty() {
            "at the start of your reply".to_owned()
        } else {
            format!("after \"{}\"", tail.escape_ascii())
        };
        let cut = match &self.call {
            Some(id) => format!(" It fell inside call {id}, which was not run."),
            None => String::new(),
        };
        format!(
            "Your output stopped being CTL at byte {offset} of the stream ({kind}): {place} \
             came the byte \"{byte}\" (0x{raw:02x}).{cut} Nothing after that byte was read or \
             run; the calls confirmed before it ran. {nudge}",
            nudge = match mode {
                CtlMode::Strict => STREAM_ERROR_NUDGE,
                CtlMode::Extended => EXTENDED_STREAM_ERROR_NUDGE,
            },
            offset = self.offset,
            kind = self.kind,
            byte = [self.byte].escape_ascii(),
            raw = self.byte,
        )
    }
}

/// Runs the loop until the task is done, the source ends, or something fails; writes the
/// transcript to `out`. Returns how the run ended (its exit code is
/// [`EndStatus::exit_code`]); an error only when the transcript could not be written.
pub fn run(
    config: &Config,
    model: &mut dyn ModelSource,
    out: &mut dyn Write,
) -> io::Result<EndStatus> {
    let mut transcript = Transcript::new(out);
    transcript.record(task_record(config, &model.describe()));
    let mut messages = vec![Message::new(Role::System, system_prompt(config.ctl_mode))];
    if let Some(task) = &config.task {
        messages.push(Message::new(Role::User, task.clone()));
    }
    let mut result_messages: Vec<usize> = Vec::new();
    let context = match &config.context {
        Some(settings) => {
            let started = ContextLoop::start(
                settings,
                system_prompt(config.ctl_mode),
                config.task.as_deref(),
                config.ctl_mode,
                config.max_turns,
            );
            match started {
                Ok(context) => Some(context),
                Err(e) => return end_on_context_error(transcript, 0, &e),
            }
        }
        None => None,
    };
    let mut executor = Executor::new(config);
    executor.context = context;
    let mut stream = Stream::new(config.limits, config.ctl_mode);
    let mut recovery = Recovery::default();
    // How the run ends if the source ends now: after a turn cut by the output limit or broken
    // by a byte outside CTL, the loop has asked for a continuation or a new frame, and a
    // source with nothing more leaves the output cut off or broken, not cleanly ended.
    let mut unanswered: Option<EndStatus> = None;
    let mut followups = config.followups.iter();
    let mut turn: u32 = 0;
    let status = loop {
        if turn >= config.max_turns {
            break EndStatus::TurnBudgetExhausted;
        }
        turn += 1;
        let max_tokens = config.output_limit(&recovery);
        // Context governance: the ladder, then the engine's view is what the model receives
        // (over the hard window, the view with the tools closed, for a last call).
        let governed = match executor.context.as_mut() {
            Some(context) => {
                let mut caller = Caller::Ctl(&mut *model);
                match govern(context, &mut caller, &mut transcript, turn, max_tokens) {
                    Ok(closed) => {
                        executor.tools_closed = closed;
                        Some(context.request())
                    }
                    Err(e) => break context_failed(&mut transcript, turn, &e.to_string()),
                }
            }
            None => None,
        };
        let request = Request {
            messages: governed.as_deref().unwrap_or(&messages),
            max_tokens,
        };
        let mut output = Vec::new();
        let mut broken: Option<StreamBreak> = None;
        // Calls confirmed in this turn (a stream continued after `length` carries earlier
        // turns' calls; they do not make this turn one with calls).
        let mut turn_calls = 0usize;
        let result = {
            let Stream {
                parser,
                assembler,
                patch,
                routing,
                patch_seen,
                patch_reported,
            } = &mut stream;
            let mut sink = |chunk: &[u8]| -> Flow {
                let before = parser.consumed();
                let pushed = parser.push(chunk, &mut |event| {
                    let mut fed = false;
                    match event {
                        CtlEvent::CallStart { name, .. } => {
                            *patch = (name == "apply_patch")
                                .then(|| config.patch_tool.begin(&config.workspace));
                            *patch_seen = false;
                            *patch_reported = false;
                        }
                        CtlEvent::ArgStart { key, .. } => {
                            *routing = key == "patch" && patch.is_some() && !*patch_seen;
                        }
                        CtlEvent::ArgData(data) if *routing => {
                            if let Some(session) = patch.as_mut() {
                                session.push(data);
                                fed = true;
                            }
                        }
                        CtlEvent::ArgEnd if *routing => {
                            if let Some(session) = patch.as_mut() {
                                session.finish();
                                fed = true;
                            }
                            *routing = false;
                            *patch_seen = true;
                        }
                        _ => {}
                    }
                    // A patch problem is recorded the moment it is known.
                    if fed && !*patch_reported {
                        if let (Some(problem), Some(call)) = (
                            patch.as_ref().and_then(|s| s.problem()),
                            assembler.in_progress(),
                        ) {
                            *patch_reported = true;
                            transcript.record(
                                Rec::new("patch_problem")
                                    .field("turn", turn)
                                    .field("id", &call.id)
                                    .field("kind", problem.kind())
                                    .field("detail", problem.detail()),
                            );
                        }
                    }
                    // A confirmed call runs here, before the parser reads one more byte: what
                    // follows it in the stream (a patch checked against the files) sees its
                    // effect, however the stream was chunked.
                    match assembler.on_event(&event) {
                        Ok(Some(call)) => {
                            turn_calls += 1;
                            executor.handle(turn, call, patch.take(), &mut transcript);
                        }
                        Ok(None) => {}
                        // A confirmed call too large to hold is refused, never dropped.
                        Err(too_large) => {
                            executor.refuse_unheld(turn, too_large, &mut transcript);
                            patch.take();
                            turn_calls += 1;
                        }
                    }
                });
                let accepted = (parser.consumed() - before) as usize;
                output.extend_from_slice(&chunk[..accepted.min(chunk.len())]);
                match pushed {
                    Ok(()) => Flow::Continue,
                    Err(error) => {
                        let cut = StreamBreak {
                            offset: error.offset,
                            byte: error.byte,
                            kind: crate::contract::ErrorKind::as_str(error.kind),
                            call: assembler.in_progress().map(|c| c.id.clone()),
                        };
                        transcript.record(
                            Rec::new("stream_error")
                                .field("turn", turn)
                                .field("offset", cut.offset)
                                .field("byte", cut.byte)
                                .field("kind", cut.kind)
                                .field("call", &cut.call),
                        );
                        broken = Some(cut);
                        Flow::Stop
                    }
                }
            };
            let ended = model.turn(&request, &mut sink);
            match (broken.take(), ended) {
                (Some(cut), _) => TurnEnd::Broken(cut),
                (None, Ok(Some(finish))) => TurnEnd::Finished(finish),
                (None, Ok(None)) => TurnEnd::SourceEnded,
                (None, Err(e)) => TurnEnd::Failed(e),
            }
        };
        executor.drain(&mut transcript);
        let usage = model.take_usage();
        executor.reasoning = model.take_reasoning();
        if let Some(context) = executor.context.as_mut() {
            if let Err(e) = context.after_call(&model.describe(), usage.as_ref()) {
                break context_failed(&mut transcript, turn, &e.to_string());
            }
        }
        if executor.tools_closed {
            // The last call over the hard window: what it said is kept, and the run ends.
            if !matches!(result, TurnEnd::SourceEnded) {
                transcript.record(
                    Rec::new("assistant")
                        .field("turn", turn)
                        .bytes("output", &output)
                        .field("finish", finish_of(&result)),
                );
            }
            if let Err(e) = executor.ingest_turn(turn, &output, None) {
                break context_failed(&mut transcript, turn, &e);
            }
            break EndStatus::TerminatedEarly;
        }
        let finish_name = finish_of(&result);
        if !matches!(result, TurnEnd::SourceEnded)
            && !matches!(result, TurnEnd::Failed(ModelError::ContextOverflow(_)))
        {
            transcript.record(
                Rec::new("assistant")
                    .field("turn", turn)
                    .bytes("output", &output)
                    .field("finish", finish_name),
            );
        }
        let in_frame = !stream.parser.accepting();
        let incomplete = |transcript: &mut Transcript<'_>, stream: &Stream| {
            transcript.record(
                Rec::new("stream_incomplete")
                    .field("turn", turn)
                    .field("consumed", stream.parser.consumed())
                    .field("call", stream.assembler.in_progress().map(|c| c.id.clone())),
            );
        };
        let transition = match result {
            TurnEnd::Broken(cut) => {
                let Some(t) = recovery.on_stream_error() else {
                    break EndStatus::StreamError;
                };
                let note = cut.note(&output, config.ctl_mode);
                if let Err(e) = executor.ingest_turn(turn, &output, Some(&note)) {
                    break context_failed(&mut transcript, turn, &e);
                }
                push_assistant(&mut messages, &output);
                let results = executor.take_results();
                if results.is_some() {
                    result_messages.push(messages.len());
                }
                let mut text = results.unwrap_or_default();
                text.push_str(&note);
                messages.push(Message::new(Role::User, text));
                // A new frame in a fresh stream: nothing of the broken one carries over.
                stream = Stream::new(config.limits, config.ctl_mode);
                unanswered = Some(EndStatus::StreamError);
                t
            }
            TurnEnd::SourceEnded => {
                if in_frame {
                    incomplete(&mut transcript, &stream);
                    break EndStatus::StreamIncomplete;
                }
                break unanswered.unwrap_or(EndStatus::SourceEnded);
            }
            TurnEnd::Failed(ModelError::ContextOverflow(detail)) => {
                transcript.record(
                    Rec::new("model_error")
                        .field("turn", turn)
                        .field("kind", "context_overflow")
                        .field("error", &detail),
                );
                match recovery.on_context_overflow() {
                    Some(t) => {
                        match executor.context.as_mut() {
                            // Once, through the same engine as the ladder's last rung.
                            Some(context) => {
                                let compacted = context.compact_for_overflow(
                                    &mut Caller::Ctl(&mut *model),
                                    &mut transcript,
                                    turn,
                                    max_tokens,
                                );
                                if let Err(e) = compacted {
                                    break context_failed(&mut transcript, turn, &e.to_string());
                                }
                            }
                            None => {
                                compact(&mut messages, &result_messages);
                            }
                        }
                        t
                    }
                    None => break EndStatus::RecoveryExhausted,
                }
            }
            TurnEnd::Failed(error) => {
                transcript.record(
                    Rec::new("model_error")
                        .field("turn", turn)
                        .field("kind", error.kind())
                        .field("error", error.to_string())
                        .field("call", stream.assembler.in_progress().map(|c| c.id.clone())),
                );
                break EndStatus::ModelError;
            }
            TurnEnd::Finished(Finish::Length) => {
                let next = recovery.on_truncated();
                let Some(t) = next else {
                    if in_frame {
                        incomplete(&mut transcript, &stream);
                    }
                    break EndStatus::RecoveryExhausted;
                };
                let nudge = if t == Transition::EscalateOutputLimit {
                    CONTINUE_NUDGE
                } else {
                    RESUME_NUDGE
                };
                if let Err(e) = executor.ingest_turn(turn, &output, Some(nudge)) {
                    break context_failed(&mut transcript, turn, &e);
                }
                push_assistant(&mut messages, &output);
                unanswered = Some(EndStatus::OutputCutOff);
                let mut text = executor.take_results().unwrap_or_default();
                text.push_str(nudge);
                messages.push(Message::new(Role::User, text));
                t
            }
            TurnEnd::Finished(finish) => {
                if in_frame {
                    incomplete(&mut transcript, &stream);
                    break EndStatus::StreamIncomplete;
                }
                if turn_calls == 0 && finish == Finish::Stop {
                    // The final answer is journaled too.
                    if let Err(e) = executor.ingest_turn(turn, &output, None) {
                        break context_failed(&mut transcript, turn, &e);
                    }
                    let Some(question) = followups.next() else {
                        break EndStatus::Done;
                    };
                    // The question is answered: the next one is asked.
                    transcript.record(
                        Rec::new("question")
                            .field("turn", turn + 1)
                            .field("text", question),
                    );
                    push_assistant(&mut messages, &output);
                    messages.push(Message::new(Role::User, question.clone()));
                    if let Some(context) = executor.context.as_mut() {
                        let mut caller = Caller::Ctl(&mut *model);
                        let asked = ask(
                            context,
                            config,
                            &mut caller,
                            &mut transcript,
                            turn + 1,
                            question,
                            config.max_tokens,
                        );
                        if let Err(e) = asked {
                            break context_failed(&mut transcript, turn, &e.to_string());
                        }
                    }
                    stream = Stream::new(config.limits, config.ctl_mode);
                    unanswered = None;
                    let t = recovery.on_progress();
                    record_transition(&mut transcript, config, &recovery, turn, t);
                    continue;
                }
                if let Err(e) = executor.ingest_turn(turn, &output, None) {
                    break context_failed(&mut transcript, turn, &e);
                }
                push_assistant(&mut messages, &output);
                if let Some(text) = executor.take_results() {
                    result_messages.push(messages.len());
                    messages.push(Message::new(Role::User, text));
                }
                stream = Stream::new(config.limits, config.ctl_mode);
                unanswered = None;
                recovery.on_progress()
            }
        };
        record_transition(&mut transcript, config, &recovery, turn, transition);
    };
    executor.drain(&mut transcript);
    let peak = executor.context.as_ref().map(ContextLoop::peak);
    end_run(transcript, status, peak)
}

/// The `task` record, first in every run's transcript: the task, the model as `describe`d
/// and the toolset, then the follow-up questions (when there are any) and the arm (when the
/// loop has an engine).
pub(super) fn task_record(config: &Config, model: &str) -> Rec {
    let mut rec = Rec::new("task")
        .field("text", &config.task)
        .field("model", model)
        .field("toolset", config.toolset.name());
    if !config.followups.is_empty() {
        rec = rec.field("followups", &config.followups);
    }
    if let Some(settings) = &config.context {
        rec = rec
            .field("context", settings.arm.name())
            .field("hard_window", settings.hard_window);
    }
    rec
}

/// The loops' side of governance before request `turn` (both loops): the ladder, and whether
/// it is the last call over the hard window (the tools closed, recorded as a `context`
/// record with step `hard_window`). The request is then the view in the loop's rendering.
pub(super) fn govern(
    context: &mut ContextLoop,
    model: &mut Caller<'_>,
    transcript: &mut Transcript<'_>,
    turn: u32,
    max_tokens: u32,
) -> Result<bool, crate::context::EngineError> {
    context.govern(model, transcript, turn, max_tokens)?;
    let Some(estimate) = context.over_hard_window() else {
        return Ok(false);
    };
    context.close_tools(TOOLS_CLOSED_NOTE)?;
    transcript.record(
        Rec::new("context")
            .field("turn", turn)
            .field("step", "hard_window")
            .field("estimate", estimate)
            .field("hard_window", context.hard_window())
            .field("peak", context.peak()),
    );
    Ok(true)
}

/// A follow-up question into the engine, then, in the `cpat` arm, the boundary pass before
/// its first request (`turn`), in the loop's rendering (both loops). The question goes in
/// first, as in CPAT's loop: the pass tidies for it, and the answered question is no longer
/// the current one (see [`boundary`]).
pub(super) fn ask(
    context: &mut ContextLoop,
    config: &Config,
    model: &mut Caller<'_>,
    transcript: &mut Transcript<'_>,
    turn: u32,
    question: &str,
    max_tokens: u32,
) -> Result<(), crate::context::EngineError> {
    context.question(question)?;
    if context.arm() == Arm::Cpat {
        match model {
            Caller::Ctl(model) => {
                boundary::pass(context, config, *model, transcript, turn, max_tokens)?
            }
            Caller::Native(model) => {
                boundary::pass_native(context, config, *model, transcript, turn, max_tokens)?
            }
        }
    }
    Ok(())
}

/// The finish of a turn that finished, for its `assistant` record.
fn finish_of(end: &TurnEnd) -> Option<&'static str> {
    match end {
        TurnEnd::Finished(f) => Some(f.name()),
        _ => None,
    }
}

/// The `transition` record: the loop goes on to request `turn + 1`, with the output limit
/// `recovery` leaves it.
pub(super) fn record_transition(
    transcript: &mut Transcript<'_>,
    config: &Config,
    recovery: &Recovery,
    turn: u32,
    transition: Transition,
) {
    transcript.record(
        Rec::new("transition")
            .field("turn", turn + 1)
            .field("reason", transition.name())
            .field("max_tokens", config.output_limit(recovery)),
    );
}

/// The `end` record, last in every run's transcript, with the largest request estimate when
/// the loop had an engine (`peak_tokens`); `status` back, or the error that kept the
/// transcript from being written.
pub(super) fn end_run(
    mut transcript: Transcript<'_>,
    status: EndStatus,
    peak: Option<u64>,
) -> io::Result<EndStatus> {
    let mut rec = Rec::new("end")
        .field("status", status.name())
        .field("exit", status.exit_code());
    if let Some(peak) = peak {
        rec = rec.field("peak_tokens", peak);
    }
    transcript.record(rec);
    match transcript.into_error() {
        Some(e) => Err(e),
        None => Ok(status),
    }
}

/// Records why the context engine stopped the run; the status to end with.
pub(super) fn context_failed(transcript: &mut Transcript<'_>, turn: u32, error: &str) -> EndStatus {
    transcript.record(
        Rec::new("context_error")
            .field("turn", turn)
            .field("error", error),
    );
    EndStatus::ContextError
}

/// Ends a run whose context engine could not start.
pub(super) fn end_on_context_error(
    mut transcript: Transcript<'_>,
    turn: u32,
    error: &str,
) -> io::Result<EndStatus> {
    let status = context_failed(&mut transcript, turn, error);
    end_run(transcript, status, None)
}

/// Puts the model's own output back into the conversation; an empty one is left out (some
/// servers refuse an empty assistant message, and it tells the model nothing).
fn push_assistant(messages: &mut Vec<Message>, output: &[u8]) {
    if !output.is_empty() {
        messages.push(Message::new(
            Role::Assistant,
            String::from_utf8_lossy(output),
        ));
    }
}

/// Compaction, the one-shot answer to a context overflow: every tool-result message but the
/// latest is replaced by a one-line note (the seed's "clear stale tool results, keep at least
/// one"). Returns how many were cleared.
fn compact(messages: &mut [Message], result_messages: &[usize]) -> usize {
    let mut cleared = 0;
    if let Some((_, older)) = result_messages.split_last() {
        for &i in older {
            if let Some(m) = messages.get_mut(i) {
                m.content = "[earlier tool results cleared to fit the context window]".to_owned();
                cleared += 1;
            }
        }
    }
    cleared
}
