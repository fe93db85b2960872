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
//! loop: once (`compact_retry`), every tool result but the latest is cleared to a note, and
//! the request is sent again.

use std::io::{self, Write};

use bytes::Bytes;
use serde_json::Value;

use crate::ctl::ToolCall;
use crate::streams::{Arguments, Call, Event, StreamErrorKind, Summary};

use super::model::ModelError;
use super::provider::ToolReply;
use super::recovery::{Recovery, Transition};
use super::runner::{
    end_run, record_transition, task_record, Config, EndStatus, Executor, MAX_RESULT_IN_CONTEXT,
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

/// A model that calls tools natively. The source keeps the conversation in its API's shape.
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
    /// A short description for the transcript (`anthropic-messages:MODEL`).
    fn describe(&self) -> String;
}

/// A confirmed call as the executor takes it: the JSON object's members in order (each must
/// be a string), or a custom tool's raw input as its one argument (`patch` for
/// `apply_patch`, else `input`).
fn tool_call(call: &Call) -> Result<ToolCall, String> {
    let args = match &call.arguments {
        Arguments::Json { object, .. } => object
            .iter()
            .map(|(key, value)| match value {
                Value::String(text) => Ok((key.clone(), Bytes::from(text.clone()))),
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

/// Runs a native-tools session until the task is done, a budget is spent or the model
/// fails; writes the transcript to `out` (the records of [`super::transcript`], plus
/// `malformed_call` and `incomplete_call`). Returns how the run ended.
pub fn run_native(
    config: &Config,
    model: &mut dyn NativeSource,
    out: &mut dyn Write,
) -> io::Result<EndStatus> {
    let mut transcript = Transcript::new(out);
    transcript.record(task_record(config, &model.describe()).field("tools", "native"));
    let tools: Vec<Tool> = config.toolset.tools().collect();
    model.start(NATIVE_SYSTEM_PROMPT, config.task.as_deref(), &tools);
    let mut executor = Executor::new(config);
    let mut recovery = Recovery::default();
    let mut turn: u32 = 0;
    let status = loop {
        if turn >= config.max_turns {
            break EndStatus::TurnBudgetExhausted;
        }
        turn += 1;
        let max_tokens = config.output_limit(&recovery);
        let (mut confirmed, mut malformed) = (0usize, 0usize);
        let read = model.turn(max_tokens, &mut |event| match event {
            Event::Call(call) => {
                confirmed += 1;
                run_call(&mut executor, turn, call, &mut transcript);
            }
            Event::Malformed(call) => {
                malformed += 1;
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
        });
        executor.drain(&mut transcript);
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
                model.compact();
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
        let transition = if let Some(error) = broken {
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
                model.discard();
            } else {
                model.answer(&replies, Some(NATIVE_RETRY_NOTE));
            }
            t
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
            model.answer(&replies, Some(&note));
            t
        } else if confirmed == 0 && malformed == 0 {
            break EndStatus::Done;
        } else if confirmed == 0 {
            let Some(t) = recovery.on_stream_error() else {
                break EndStatus::StreamError;
            };
            model.answer(&replies, Some(NATIVE_MALFORMED_NOTE));
            t
        } else {
            model.answer(&replies, None);
            recovery.on_progress()
        };
        record_transition(&mut transcript, config, &recovery, turn, transition);
    };
    executor.drain(&mut transcript);
    end_run(transcript, status, None)
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
