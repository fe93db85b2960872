//! The boundary-maintenance pass (CPAT's `loop.ts:280-301`, `cpat_reference.md` §11): in the
//! `cpat` arm, before the first model call for a follow-up question, one ephemeral call lets
//! the model tidy the context at the boundary between two questions.
//!
//! The order is CPAT's: the follow-up is ingested first (`runAgent` calls `ingestUser` and
//! then `runBoundaryMaintenance`, whose prompt says "a new user message is now in context.
//! Before answering it, …"), so the pass sees the new question, tidies for it, and can fold
//! the answered question's turns, which are no longer the current question's
//! (`protected_current_question` guards the new one). `prompts/boundary.md` says the same.
//!
//! The request is the view's blocks, then the boundary prompt (`prompts/boundary.md`, a user
//! message, second to last), then the manifest, last. Only `context_update` is offered: the
//! prompt says so (the native loop declares it as the one tool, `pass_native`), and any
//! other call the pass makes is recorded and not run. The first
//! `context_update` is applied with actor `agent` and journaled like any other. Nothing else of
//! the pass is ingested: no block holds the prompt or the pass's output, and the model never
//! sees the patch's result.
//!
//! The pass reads at most [`MAX_PASS_BYTES`] of output (a native pass: the stream reader's
//! bounds) and keeps at most [`MAX_PASS_CALLS`] calls.
//!
//! Divergence 8 (`context.md`): CPAT calls parse and apply here without a catch, so a
//! malformed `context_update` crashes its run. Here every failure of the pass (arguments that
//! are not an update, a rejected patch, output that is not CTL, a model error) is recorded in
//! the pass's `context` record and the run goes on; only a failure to write the run directory
//! ends it, as everywhere else.

use crate::context::EngineError;
use crate::contract::PushParser;
use crate::ctl::{CallAssembler, CtlParser, ToolCall};

use super::super::model::{Flow, Message, ModelSource, Request, Role};
use super::super::native::{self, ComposedRequest, NativeSource};
use super::super::policy;
use super::super::provider::{Composed, ToolChoice};
use super::super::runner::Config;
use super::super::tools::{Action, Tool, ToolOutput};
use super::super::transcript::{Rec, Transcript};
use super::ContextLoop;

/// The boundary prompt, word for word.
pub const BOUNDARY_PROMPT: &str = include_str!("../../../prompts/boundary.md");

/// Bytes of the pass's output read at most; the rest is dropped (the call it cuts never
/// runs).
pub const MAX_PASS_BYTES: usize = 2 * 1024 * 1024;

/// Calls of the pass read at most (one runs; the others are listed as not run); the stream
/// is not read further.
pub const MAX_PASS_CALLS: usize = 16;

/// What the pass's stream gave: its confirmed calls, and why it stopped early, if it did.
struct PassOutput {
    calls: Vec<ToolCall>,
    problem: Option<String>,
}

/// The request of the pass: the view with the boundary prompt before the manifest.
pub fn request(ctx: &ContextLoop) -> Vec<Message> {
    let mut messages = ctx.request();
    let at = messages.len().saturating_sub(1);
    messages.insert(at, Message::new(Role::User, BOUNDARY_PROMPT));
    messages
}

/// Runs the pass before request `turn`, and records it as a `context` record with step
/// `boundary`. An error only when the run directory cannot be written.
pub(crate) fn pass(
    ctx: &mut ContextLoop,
    config: &Config,
    model: &mut dyn ModelSource,
    transcript: &mut Transcript<'_>,
    turn: u32,
    max_tokens: u32,
) -> Result<(), EngineError> {
    let messages = request(ctx);
    let output = stream(ctx, config, model, &messages, max_tokens);
    let usage = model.take_usage();
    ctx.after_call(&model.describe(), usage.as_ref())?;
    settle(ctx, config, transcript, turn, output)
}

/// The request of the pass in the native rendering: the view with the boundary prompt
/// before the manifest.
pub fn composed_request(ctx: &ContextLoop) -> Vec<Composed> {
    let mut messages = ctx.composed();
    let at = messages.len().saturating_sub(1);
    messages.insert(at, Composed::User(BOUNDARY_PROMPT.to_owned()));
    messages
}

/// The pass of the native loop: the same request, `context_update` the one tool declared;
/// the calls the stream reader confirms, then as [`pass`].
pub(crate) fn pass_native(
    ctx: &mut ContextLoop,
    config: &Config,
    model: &mut dyn NativeSource,
    transcript: &mut Transcript<'_>,
    turn: u32,
    max_tokens: u32,
) -> Result<(), EngineError> {
    let messages = composed_request(ctx);
    let request = ComposedRequest {
        messages: &messages,
        tools: &[Tool::ContextUpdate],
        choice: ToolChoice::Auto,
        max_tokens,
    };
    let mut calls = Vec::new();
    let mut problem: Option<String> = None;
    let turn_read = model.compose_turn(&request, &mut |event| match event {
        crate::streams::Event::Call(call) if calls.len() < MAX_PASS_CALLS => {
            match native::tool_call(call) {
                Ok(call) => calls.push(call),
                Err(why) => {
                    problem.get_or_insert(why);
                }
            }
        }
        crate::streams::Event::Call(_) => {
            problem.get_or_insert_with(|| {
                format!("over {MAX_PASS_CALLS} calls: the rest was not run")
            });
        }
        crate::streams::Event::Malformed(call) => {
            problem.get_or_insert_with(|| format!("call {} is malformed: not run", call.id));
        }
        _ => {}
    });
    let usage = turn_read
        .as_ref()
        .ok()
        .and_then(|r| r.summary.usage.as_ref());
    ctx.after_call(&model.describe(), usage)?;
    match turn_read {
        Ok(read) => {
            if let Some(error) = read.summary.error {
                problem.get_or_insert_with(|| error.to_string());
            } else if let Some(dropped) = read.dropped {
                problem.get_or_insert(dropped);
            }
        }
        Err(e) => {
            problem.get_or_insert_with(|| e.to_string());
        }
    }
    settle(ctx, config, transcript, turn, PassOutput { calls, problem })
}

/// Runs the pass's first `context_update` (any other call is listed as not run) and records
/// the pass.
fn settle(
    ctx: &mut ContextLoop,
    config: &Config,
    transcript: &mut Transcript<'_>,
    turn: u32,
    output: PassOutput,
) -> Result<(), EngineError> {
    let mut rec = Rec::new("context")
        .field("turn", turn)
        .field("step", "boundary");
    let mut not_run = Vec::new();
    let mut applied = None;
    for call in output.calls {
        if applied.is_some() || call.name != Tool::ContextUpdate.name() {
            let why = if applied.is_some() {
                "one context_update per boundary pass"
            } else {
                "only context_update runs in the boundary pass"
            };
            not_run.push(serde_json::json!({"id": call.id, "name": call.name, "reason": why}));
            continue;
        }
        let id = call.id.clone();
        let judged = policy::judge(&call, config.toolset, &config.workspace, None);
        let out = match judged {
            Ok(Action::Context(context_call)) => ctx.run_tool(context_call)?,
            // `judge` makes a context tool's call a context action, never another one.
            Ok(_) => ToolOutput::failed("error: not a context_update"),
            Err(refusal) => ToolOutput::failed(refusal.reason()),
        };
        applied = Some((id, out));
    }
    match &applied {
        Some((id, out)) => {
            rec = rec
                .field("id", id)
                .field("ok", out.ok)
                .bytes("result", &out.output);
        }
        None => rec = rec.field("ok", false).field("result", "no context_update"),
    }
    rec = rec
        .field("not_run", &not_run)
        .field("problem", &output.problem);
    transcript.record(rec);
    Ok(())
}

/// Streams the pass's answer through a CTL parser of the run's mode; the calls it confirms.
fn stream(
    ctx: &ContextLoop,
    config: &Config,
    model: &mut dyn ModelSource,
    messages: &[Message],
    max_tokens: u32,
) -> PassOutput {
    let mut parser = CtlParser::with_mode(config.limits, ctx.mode);
    let mut assembler = CallAssembler::default();
    let mut calls = Vec::new();
    let mut problem: Option<String> = None;
    let mut read = 0usize;
    let mut over = false;
    let mut sink = |chunk: &[u8]| -> Flow {
        let room = MAX_PASS_BYTES - read;
        let chunk = &chunk[..chunk.len().min(room)];
        read += chunk.len();
        let pushed = parser.push(chunk, &mut |event| match assembler.on_event(&event) {
            Ok(Some(call)) if calls.len() < MAX_PASS_CALLS => calls.push(call),
            Ok(Some(_)) => over = true,
            Ok(None) => {}
            Err(too_large) => {
                problem.get_or_insert_with(|| too_large.to_string());
            }
        });
        if let Err(e) = pushed {
            problem.get_or_insert_with(|| {
                format!(
                    "the output stopped being CTL at byte {} ({})",
                    e.offset,
                    crate::contract::ErrorKind::as_str(e.kind)
                )
            });
            return Flow::Stop;
        }
        if over {
            problem.get_or_insert_with(|| {
                format!("over {MAX_PASS_CALLS} calls: the rest was not read")
            });
            return Flow::Stop;
        }
        if read == MAX_PASS_BYTES {
            problem.get_or_insert_with(|| format!("the output is over {MAX_PASS_BYTES} bytes"));
            return Flow::Stop;
        }
        Flow::Continue
    };
    let request = Request {
        messages,
        max_tokens,
    };
    let ended = model.turn(&request, &mut sink);
    match ended {
        Ok(Some(_)) if problem.is_none() && !parser.accepting() => {
            problem = Some("the output ended inside a frame".to_owned());
        }
        Ok(Some(_)) => {}
        Ok(None) => {
            problem.get_or_insert_with(|| "the model source ended".to_owned());
        }
        Err(e) => {
            problem.get_or_insert_with(|| e.to_string());
        }
    }
    PassOutput { calls, problem }
}
