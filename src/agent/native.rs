//! The loop with native tool calling (`--tools native`): the tools are the API's own, the
//! calls arrive in the provider's wire format, and each runs only when the stream reader
//! ([`crate::streams`]) confirms it.
//!
//! The same machinery as the CTL loop ([`super::runner`]) judges, runs and records the calls
//! (its executor: the policy, the toolsets, the concurrency partitioning, the transcript), and
//! the same recovery state machine ([`super::recovery`]) decides the next request. What
//! differs is where a call comes from and where its result goes:
//!
//! - a confirmed call ([`Event::Call`]) runs from inside the reader's callback, before the
//!   reader reads further; its JSON arguments must all be strings (the five tools take
//!   strings only), else it is refused;
//! - a malformed call ([`Event::Malformed`]: its protocol finished it but its arguments are
//!   not whole, the relabelled `length` of some servers) is recorded and refused back to the
//!   model, never run;
//! - a call the stream left incomplete (a token limit, a dropped connection) is recorded and
//!   never run, and is not put in the conversation as made;
//! - results go back in the API's shape ([`super::provider::shape`]) through
//!   [`NativeSource::answer`].
//!
//! # Continuations
//!
//! None of the three APIs can continue a tool call from inside its arguments (a prefilled
//! assistant turn can hold text, not half a call), so a turn cut by a token limit
//! (`length`, `max_tokens`, `incomplete:max_output_tokens`) is continued by asking again:
//! the calls confirmed before the cut ran and their results are sent, and a note names the
//! calls that were cut and did not run, to be sent again whole. The first such request
//! raises the output limit (`escalate_output_limit`), the next ones nudge (`resume_nudge`),
//! within the budgets of [`super::recovery`].
//!
//! A stream that breaks off (the connection dropped, silent past the read timeout, or an
//! error event such as Anthropic's `overloaded_error`) keeps what was confirmed (it ran) and
//! drops the rest; the turn is asked again (`retry_turn`) at most
//! [`MAX_TURN_RETRIES`](super::recovery::MAX_TURN_RETRIES) times in a row: with the results
//! and a note when calls had run, else the very same request. A stream the reader cannot read
//! (not an event stream, bad JSON) ends the run with a `model_error`.
//!
//! A request the server refuses as too long for the context window is answered as in the CTL
//! loop, once (`compact_retry`): governed, through the context engine (the stale results
//! cleared, one compaction call); else every tool result but the latest is cleared to a note.
//! Then the request is sent again.
//!
//! # Governance
//!
//! With [`Config::context`] the loop is governed by the CTL loop's own core
//! ([`super::context::ContextLoop`]): each turn is ingested (the calls that got a reply with
//! their arguments as sent, the replies, the notes), the ladder and CPAT's reports run before
//! every call, and the request is the engine's view rendered for the API
//! ([`ContextLoop::composed`], put in the API's shape by [`NativeSource::compose_turn`]). The
//! `cpat` arm declares `context_update` and `artifact_get` beside the task tools; the hard
//! window's last call is sent with the API's tool choice none; follow-up questions get the
//! boundary pass (`context::boundary::pass_native`).

use std::io::{self, Write};

use bytes::Bytes;
use serde_json::Value;

use crate::ctl::ToolCall;
use crate::streams::{Arguments, Call, Event, StreamErrorKind, Summary};

use crate::language::CtlMode;

use super::context::{Caller, ContextLoop};
use super::model::ModelError;
use super::provider::{Composed, SentCall, ToolChoice, ToolReply};
use super::recovery::{Recovery, Transition};
use super::runner::{
    ask, context_failed, end_on_context_error, end_run, govern, record_transition, task_record,
    Config, EndStatus, Executor, MAX_RESULT_IN_CONTEXT,
};
use super::tools::Tool;
use super::transcript::{Rec, Transcript};

/// The system prompt of a native-tools run.
pub const NATIVE_SYSTEM_PROMPT: &str = include_str!("../../prompts/native_system.md");

/// What the model is told after a turn cut by the output limit, when the limit was raised.
pub const NATIVE_CONTINUE_NOTE: &str = "Your output was cut by the output limit, which is now \
raised. The calls above ran; continue from there, and send again, whole, any call that did not \
run. Repeat nothing else.";

/// What the model is told after a turn cut by the output limit again.
pub const NATIVE_RESUME_NOTE: &str = "Output token limit hit. Resume directly: no apology, no \
recap. The calls above ran; send again, whole, any call that did not run, and break the \
remaining work into smaller calls.";

/// What the model is told when a turn broke off after some of its calls had run.
pub const NATIVE_RETRY_NOTE: &str = "The connection broke off during your reply. The calls \
above ran; any other call did not. Continue from there.";

/// What the model is told when its calls were all malformed.
pub const NATIVE_MALFORMED_NOTE: &str = "None of your calls ran: their arguments were not \
whole JSON objects of strings. Send them again, whole.";

/// One turn as read: the reader's summary, and why the stream broke off, if it did (the
/// connection dropped or went silent before the turn's finish).
#[derive(Debug)]
pub struct NativeTurn {
    /// What the stream reader saw.
    pub summary: Summary,
    /// Why the stream ended before its finish, when it did.
    pub dropped: Option<String>,
}

/// A request whose conversation the loop composed (a governed run: the context engine's
/// view, [`super::context::ContextLoop::composed`]).
#[derive(Clone, Copy, Debug)]
pub struct ComposedRequest<'a> {
    /// The whole conversation.
    pub messages: &'a [Composed],
    /// The tools declared (none: no tool is offered).
    pub tools: &'a [Tool],
    /// Whether they may be called.
    pub choice: ToolChoice,
    /// The output limit.
    pub max_tokens: u32,
}

/// A model that calls tools natively. The source keeps the conversation in its API's shape,
/// unless the loop composes it ([`NativeSource::compose_turn`]).
pub trait NativeSource {
    /// Starts the conversation: the system prompt, the task, the tools to declare.
    fn start(&mut self, system: &str, task: Option<&str>, tools: &[Tool]);
    /// Streams the next turn, handing the reader's events to `on_event` as they are
    /// confirmed. An error: the request failed (an error status after its retries, no
    /// connection).
    fn turn(
        &mut self,
        max_tokens: u32,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<NativeTurn, ModelError>;
    /// Puts the last turn into the conversation (its text, the calls that got a result) with
    /// the results, then `note` as user text.
    fn answer(&mut self, replies: &[ToolReply], note: Option<&str>);
    /// Forgets the last turn: the next request is the same as its.
    fn discard(&mut self);
    /// Replaces the output of every tool result but the latest with a note (the answer to a
    /// context overflow); returns how many were cleared.
    fn compact(&mut self) -> usize;
    /// Streams a turn of a conversation the loop composed, in the API's shape, as
    /// [`NativeSource::turn`] does; the source's own conversation is left as it is.
    fn compose_turn(
        &mut self,
        request: &ComposedRequest<'_>,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<NativeTurn, ModelError>;
    /// A short description for the transcript (`anthropic-messages:MODEL`).
    fn describe(&self) -> String;
}

/// A confirmed call as the executor takes it: the JSON object's members in order (each must
/// be a string, but for the context tools, whose `operations` is a JSON array and
/// `max_chars` a number: their JSON text), or a custom tool's raw input as its one argument
/// (`patch` for `apply_patch`, else `input`).
pub(crate) fn tool_call(call: &Call) -> Result<ToolCall, String> {
    let context_tool = Tool::from_name(&call.name).is_some_and(|t| Tool::CONTEXT.contains(&t));
    let args = match &call.arguments {
        Arguments::Json { object, .. } => object
            .iter()
            .map(|(key, value)| match value {
                Value::String(text) => Ok((key.clone(), Bytes::from(text.clone()))),
                other if context_tool => Ok((key.clone(), Bytes::from(other.to_string()))),
                other => Err(format!(
                    "invalid_argument: argument {key:?} is {other}, not a string"
                )),
            })
            .collect::<Result<Vec<_>, _>>()?,
        Arguments::Raw(input) => {
            let key = if call.name == "apply_patch" {
                "patch"
            } else {
                "input"
            };
            vec![(key.to_owned(), Bytes::from(input.clone()))]
        }
        Arguments::Ctl(args) => args.clone(),
    };
    Ok(ToolCall {
        id: call.id.clone(),
        name: call.name.clone(),
        args,
    })
}

/// The reasoning a turn streamed apart from its text ([`Summary::reasoning_apart`]), for the
/// engine; `None` when there was none.
pub(super) fn apart(summary: &Summary) -> Option<String> {
    Some(&summary.reasoning_apart)
        .filter(|r| !r.is_empty())
        .cloned()
}

/// Runs a native-tools session until the task is done, a budget is spent or the model
/// fails; writes the transcript to `out` (the records of [`super::transcript`], plus
/// `malformed_call` and `incomplete_call`). Returns how the run ended.
///
/// With [`Config::context`], the run is governed as the CTL loop is (one governed core,
/// [`super::context`]): every turn is ingested into the context engine, the ladder runs
/// before every call, and the request is the engine's view in the API's shape
/// ([`ContextLoop::composed`], [`NativeSource::compose_turn`]); in the `cpat` arm the context
/// tools are declared beside the task tools.
pub fn run_native(
    config: &Config,
    model: &mut dyn NativeSource,
    out: &mut dyn Write,
) -> io::Result<EndStatus> {
    let mut transcript = Transcript::new(out);
    transcript.record(task_record(config, &model.describe()).field("tools", "native"));
    let mut tools: Vec<Tool> = config.toolset.tools().collect();
    let mut executor = Executor::new(config);
    if let Some(settings) = &config.context {
        let task = config.task.as_deref().or(Some(super::openai::DEFAULT_TASK));
        let started = ContextLoop::start(
            settings,
            NATIVE_SYSTEM_PROMPT,
            task,
            CtlMode::Extended,
            config.max_turns,
        );
        match started {
            Ok(context) => {
                if context.arm().offers_context_tools() {
                    tools.extend(Tool::CONTEXT);
                }
                executor.context = Some(context);
            }
            Err(e) => return end_on_context_error(transcript, 0, &e),
        }
    }
    model.start(NATIVE_SYSTEM_PROMPT, config.task.as_deref(), &tools);
    let mut recovery = Recovery::default();
    let mut followups = config.followups.iter();
    let mut turn: u32 = 0;
    let status = loop {
        if turn >= config.max_turns {
            break EndStatus::TurnBudgetExhausted;
        }
        turn += 1;
        let max_tokens = config.output_limit(&recovery);
        // Governed: the ladder, then the view is the conversation sent (over the hard window,
        // with the tools closed, for a last call).
        let composed = match executor.context.as_mut() {
            Some(context) => {
                let mut caller = Caller::Native(&mut *model);
                match govern(context, &mut caller, &mut transcript, turn, max_tokens) {
                    Ok(closed) => {
                        executor.tools_closed = closed;
                        Some(context.composed())
                    }
                    Err(e) => break context_failed(&mut transcript, turn, &e.to_string()),
                }
            }
            None => None,
        };
        let closed = executor.tools_closed;
        let (mut confirmed, mut malformed) = (0usize, 0usize);
        let mut sent: Vec<SentCall> = Vec::new();
        let mut on_event = |event: Event<'_>| match event {
            Event::Call(call) => {
                confirmed += 1;
                sent.push(SentCall::confirmed(call));
                run_call(&mut executor, turn, call, &mut transcript);
            }
            Event::Malformed(call) => {
                malformed += 1;
                sent.push(SentCall::malformed(call));
                let why = call
                    .reason
                    .as_deref()
                    .unwrap_or("the arguments are not whole");
                transcript.record(
                    Rec::new("malformed_call")
                        .field("turn", turn)
                        .field("id", &call.id)
                        .field("name", &call.name)
                        .field("arguments", &call.text)
                        .field("reason", why),
                );
                refuse(
                    &mut executor,
                    turn,
                    (&call.id, &call.name),
                    format!("malformed_call: {why}; the call was not run"),
                    &mut transcript,
                );
            }
            Event::PatchRefused { id, message } => transcript.record(
                Rec::new("patch_problem")
                    .field("turn", turn)
                    .field("id", id)
                    .field("kind", "malformed_patch")
                    .field("detail", message),
            ),
            _ => {}
        };
        let read = match &composed {
            Some(messages) => {
                let request = ComposedRequest {
                    messages,
                    tools: &tools,
                    choice: if closed {
                        ToolChoice::None
                    } else {
                        ToolChoice::Auto
                    },
                    max_tokens,
                };
                model.compose_turn(&request, &mut on_event)
            }
            None => model.turn(max_tokens, &mut on_event),
        };
        executor.drain(&mut transcript);
        if let Some(context) = executor.context.as_mut() {
            let usage = read.as_ref().ok().and_then(|r| r.summary.usage.as_ref());
            if let Err(e) = context.after_call(&model.describe(), usage) {
                break context_failed(&mut transcript, turn, &e.to_string());
            }
        }
        if closed {
            // The last call over the hard window: what it said is kept, and the run ends.
            let (text, reasoning) = match &read {
                Ok(read) => {
                    transcript.record(
                        Rec::new("assistant")
                            .field("turn", turn)
                            .field("output", &read.summary.text)
                            .field("finish", &read.summary.finish_reason),
                    );
                    (read.summary.text.clone(), apart(&read.summary))
                }
                Err(_) => (String::new(), None),
            };
            let replies = take_replies(&mut executor);
            let mut answer = Answer::new(&mut executor, &mut *model, turn);
            answer.reasoning = reasoning;
            if let Err(e) = answer.give(&text, &sent, &replies, None) {
                break context_failed(&mut transcript, turn, &e);
            }
            break EndStatus::TerminatedEarly;
        }
        let read = match read {
            Ok(read) => read,
            Err(ModelError::ContextOverflow(detail)) => {
                transcript.record(
                    Rec::new("model_error")
                        .field("turn", turn)
                        .field("kind", "context_overflow")
                        .field("error", &detail),
                );
                let Some(t) = recovery.on_context_overflow() else {
                    break EndStatus::RecoveryExhausted;
                };
                model.discard();
                match executor.context.as_mut() {
                    // Once, through the same engine as the ladder's last rung.
                    Some(context) => {
                        let mut caller = Caller::Native(&mut *model);
                        let compacted = context.compact_for_overflow(
                            &mut caller,
                            &mut transcript,
                            turn,
                            max_tokens,
                        );
                        if let Err(e) = compacted {
                            break context_failed(&mut transcript, turn, &e.to_string());
                        }
                    }
                    None => {
                        model.compact();
                    }
                }
                record_transition(&mut transcript, config, &recovery, turn, t);
                continue;
            }
            Err(error) => {
                transcript.record(
                    Rec::new("model_error")
                        .field("turn", turn)
                        .field("kind", error.kind())
                        .field("error", error.to_string()),
                );
                break EndStatus::ModelError;
            }
        };
        let summary = &read.summary;
        transcript.record(
            Rec::new("assistant")
                .field("turn", turn)
                .field("output", &summary.text)
                .field("finish", &summary.finish_reason),
        );
        for call in &summary.incomplete {
            transcript.record(
                Rec::new("incomplete_call")
                    .field("turn", turn)
                    .field("id", &call.id)
                    .field("name", &call.name)
                    .field("arguments", &call.text),
            );
        }
        let replies = take_replies(&mut executor);
        let provider_error = summary
            .error
            .as_ref()
            .filter(|e| e.kind == StreamErrorKind::ProviderError);
        let broken = match (&read.dropped, provider_error) {
            (Some(dropped), _) => Some(ModelError::Disconnected(dropped.clone())),
            (None, Some(e)) => Some(ModelError::Server(e.to_string())),
            (None, None) => None,
        };
        let mut answer = Answer::new(&mut executor, &mut *model, turn);
        answer.reasoning = apart(summary);
        let text = summary.text.as_str();
        let (transition, answered) = if let Some(error) = broken {
            transcript.record(
                Rec::new("model_error")
                    .field("turn", turn)
                    .field("kind", error.kind())
                    .field("error", error.to_string()),
            );
            let Some(t) = recovery.on_broken_off() else {
                break EndStatus::ModelError;
            };
            if replies.is_empty() {
                answer.discard();
                (t, Ok(()))
            } else {
                (
                    t,
                    answer.give(text, &sent, &replies, Some(NATIVE_RETRY_NOTE)),
                )
            }
        } else if let Some(error) = &summary.error {
            transcript.record(
                Rec::new("model_error")
                    .field("turn", turn)
                    .field("kind", "malformed_event")
                    .field("error", error.to_string())
                    .field("offset", error.offset),
            );
            break EndStatus::ModelError;
        } else if summary.truncated {
            let Some(t) = recovery.on_truncated() else {
                break EndStatus::RecoveryExhausted;
            };
            let mut note = String::from(if t == Transition::EscalateOutputLimit {
                NATIVE_CONTINUE_NOTE
            } else {
                NATIVE_RESUME_NOTE
            });
            for call in &summary.incomplete {
                note.push_str(&format!(
                    " The call {} ({}) was cut and did not run.",
                    call.id, call.name
                ));
            }
            (t, answer.give(text, &sent, &replies, Some(&note)))
        } else if confirmed == 0 && malformed == 0 {
            // The final answer; the next question, if there is one.
            let Some(question) = followups.next() else {
                if let Err(e) = answer.give(text, &[], &[], None) {
                    break context_failed(&mut transcript, turn, &e);
                }
                break EndStatus::Done;
            };
            transcript.record(
                Rec::new("question")
                    .field("turn", turn + 1)
                    .field("text", question),
            );
            let asked = answer.ask(text, question, config, &mut transcript, max_tokens);
            (recovery.on_progress(), asked)
        } else if confirmed == 0 {
            let Some(t) = recovery.on_stream_error() else {
                break EndStatus::StreamError;
            };
            (
                t,
                answer.give(text, &sent, &replies, Some(NATIVE_MALFORMED_NOTE)),
            )
        } else {
            (
                recovery.on_progress(),
                answer.give(text, &sent, &replies, None),
            )
        };
        if let Err(e) = answered {
            break context_failed(&mut transcript, turn, &e);
        }
        record_transition(&mut transcript, config, &recovery, turn, transition);
    };
    executor.drain(&mut transcript);
    let peak = executor.context.as_ref().map(ContextLoop::peak);
    end_run(transcript, status, peak)
}

/// Where a turn's answer goes: into the context engine (a governed run: the view is the
/// next request) or into the source's own conversation.
struct Answer<'e, 'c, 'm> {
    executor: &'e mut Executor<'c>,
    model: &'m mut dyn NativeSource,
    turn: u32,
    /// The turn's reasoning, streamed apart from its text ([`apart`]), for the engine.
    reasoning: Option<String>,
}

impl<'e, 'c, 'm> Answer<'e, 'c, 'm> {
    fn new(
        executor: &'e mut Executor<'c>,
        model: &'m mut dyn NativeSource,
        turn: u32,
    ) -> Answer<'e, 'c, 'm> {
        Answer {
            executor,
            model,
            turn,
            reasoning: None,
        }
    }

    /// The turn (its text and reasoning, the calls that got a reply), the replies, then
    /// `note`. An error: the context engine failed (running a context tool, or writing its
    /// run directory).
    fn give(
        &mut self,
        text: &str,
        sent: &[SentCall],
        replies: &[ToolReply],
        note: Option<&str>,
    ) -> Result<(), String> {
        if let Some(failed) = self.executor.context_failed.take() {
            return Err(failed);
        }
        match self.executor.context.as_mut() {
            Some(context) => context
                .ingest_native_turn(
                    self.turn,
                    text,
                    self.reasoning.as_deref(),
                    sent,
                    replies,
                    note,
                )
                .map_err(|e| e.to_string()),
            None => {
                self.model.answer(replies, note);
                Ok(())
            }
        }
    }

    /// The turn is forgotten: the next request is the same as its.
    fn discard(&mut self) {
        self.model.discard();
    }

    /// The final answer `text`, then the follow-up `question` as the new current question
    /// (governed, in the `cpat` arm, after the boundary pass).
    fn ask(
        &mut self,
        text: &str,
        question: &str,
        config: &Config,
        transcript: &mut Transcript<'_>,
        max_tokens: u32,
    ) -> Result<(), String> {
        if self.executor.context.is_none() {
            self.model.answer(&[], Some(question));
            return Ok(());
        }
        self.give(text, &[], &[], None)?;
        let Some(context) = self.executor.context.as_mut() else {
            return Ok(());
        };
        let mut caller = Caller::Native(&mut *self.model);
        ask(
            context,
            config,
            &mut caller,
            transcript,
            self.turn + 1,
            question,
            max_tokens,
        )
        .map_err(|e| e.to_string())
    }
}

/// A confirmed call: judged and run (an `apply_patch` patch fed whole into a session of the
/// loop's patch tool), or refused when its arguments are not all strings.
fn run_call(executor: &mut Executor<'_>, turn: u32, call: &Call, transcript: &mut Transcript<'_>) {
    let call = match tool_call(call) {
        Ok(call) => call,
        Err(reason) => {
            executor.drain(transcript);
            transcript.unheld_call(turn, &call.id, &call.name);
            refuse(executor, turn, (&call.id, &call.name), reason, transcript);
            return;
        }
    };
    let config = executor.config;
    let patch = (call.name == "apply_patch")
        .then(|| call.arg("patch").cloned())
        .flatten()
        .map(|patch| {
            let mut session = config.patch_tool.begin(&config.workspace);
            session.push(&patch);
            session.finish();
            session
        });
    executor.handle(turn, call, patch, transcript);
}

/// Refuses a call without running it, in call order.
fn refuse(
    executor: &mut Executor<'_>,
    turn: u32,
    (id, name): (&str, &str),
    reason: String,
    transcript: &mut Transcript<'_>,
) {
    executor.drain(transcript);
    transcript.refused(turn, id, &reason);
    executor.results.push((
        id.to_owned(),
        name.to_owned(),
        "refused",
        reason.into_bytes(),
    ));
}

/// The turn's results for the conversation, each output capped at [`MAX_RESULT_IN_CONTEXT`].
fn take_replies(executor: &mut Executor<'_>) -> Vec<ToolReply> {
    executor
        .results
        .drain(..)
        .map(|(id, _tool, status, output)| {
            let shown = &output[..output.len().min(MAX_RESULT_IN_CONTEXT)];
            let mut text = String::from_utf8_lossy(shown).into_owned();
            if shown.len() < output.len() {
                text.push_str(&format!(
                    "\n[{} more bytes not shown]",
                    output.len() - shown.len()
                ));
            }
            if status == "refused" {
                text.insert_str(0, "refused: ");
            }
            ToolReply {
                id,
                ok: status == "ok",
                output: text,
            }
        })
        .collect()
}
