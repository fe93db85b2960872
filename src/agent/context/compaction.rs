//! The last rung of the ladder and the answer to a context overflow: one model call with the
//! seed's compaction prompt (004, 11.2), its `<analysis>` scratchpad stripped, committed as a
//! `compact` patch of the runtime.
//!
//! What is compacted: the visible blocks between the protected head and the protected tail.
//! The head is the system prompt and the task (the first user message the runtime did not
//! inject); the tail runs from the most recent reply on, so the chain the model is working on
//! stays whole. The current question is never a target (the engine refuses it anyway), nor
//! are runtime-owned blocks. Tool-call chains before the tail are whole, so the patch keeps
//! every chain paired.

use crate::context::args::{Operation, Output};
use crate::context::block::{Kind, Origin, Visibility};
use crate::context::EngineError;

use super::super::model::Flow;
use super::super::transcript::{Rec, Transcript};
use super::{Caller, ContextLoop};

/// The seed's compaction prompt, word for word.
pub const COMPACT_PROMPT: &str = "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.
- Do NOT use Read, Bash, Grep, Glob, Edit, Write, or ANY other tool.
- You already have all the context you need in the conversation above.
- Tool calls will be REJECTED and will waste your only turn — you will fail.
- Your entire response must be plain text: an <analysis> block followed
  by a <summary> block.

Before the summary, wrap your analysis in <analysis> tags. Chronologically
go through each section of the conversation and identify:
  - the user's explicit requests and intents
  - your approach to addressing them
  - key decisions, technical concepts, and code patterns
  - specific details: file names, full code snippets, function signatures

Then produce <summary>.
";

/// The most bytes of a compaction answer read; the rest is dropped.
pub const MAX_SUMMARY_BYTES: usize = 256 * 1024;

/// What a compaction promises to keep (the prompt's list).
const PRESERVE: [&str; 4] = [
    "the user's explicit requests and intents",
    "the approach taken",
    "key decisions, technical concepts and code patterns",
    "file names, code snippets and function signatures",
];

/// The summary of a compaction answer: `<analysis>…</analysis>` removed (an unclosed one
/// removes everything after it), then the inside of `<summary>…</summary>` if there is one,
/// trimmed. `None` when nothing is left.
pub fn strip_analysis(answer: &str) -> Option<String> {
    let mut text = String::with_capacity(answer.len());
    let mut rest = answer;
    while let Some(start) = rest.find("<analysis>") {
        text.push_str(&rest[..start]);
        match rest[start..].find("</analysis>") {
            Some(end) => rest = &rest[start + end + "</analysis>".len()..],
            None => rest = "",
        }
    }
    text.push_str(rest);
    let summary = match text.find("<summary>") {
        Some(start) => {
            let inner = &text[start + "<summary>".len()..];
            match inner.find("</summary>") {
                Some(end) => &inner[..end],
                None => inner,
            }
        }
        None => text.as_str(),
    };
    let summary = summary.trim();
    (!summary.is_empty()).then(|| summary.to_owned())
}

/// The ids a compaction targets, in store order.
fn targets(ctx: &ContextLoop) -> Vec<String> {
    let store = ctx.engine.store();
    let question = store.current_question();
    let task = store
        .iter()
        .find(|b| b.kind == Kind::UserMessage && b.origin != Some(Origin::Runtime))
        .map(|b| b.id.clone());
    let tail = (0..store.len())
        .rev()
        .find(|&i| store.block(store.at(i)).kind == Kind::AssistantMessage)
        .unwrap_or(store.len());
    (0..tail)
        .map(|i| store.at(i))
        .filter(|&s| Some(s) != question)
        .map(|s| store.block(s))
        .filter(|b| {
            b.visibility == Visibility::Model
                && Some(&b.id) != task.as_ref()
                && !matches!(
                    b.kind,
                    Kind::SystemPrompt
                        | Kind::BudgetReport
                        | Kind::ReasoningTrace
                        | Kind::TaskState
                )
        })
        .map(|b| b.id.clone())
        .collect()
}

/// One compaction: the call, then the patch. Whether a patch was committed; a model that
/// fails or says nothing leaves the store as it was (recorded in the transcript).
pub(super) fn compact(
    ctx: &mut ContextLoop,
    model: &mut Caller<'_>,
    transcript: &mut Transcript<'_>,
    turn: u32,
    max_tokens: u32,
    step: &str,
) -> Result<bool, EngineError> {
    let ids = targets(ctx);
    let skipped = |transcript: &mut Transcript<'_>, why: &str| {
        transcript.record(
            Rec::new("context")
                .field("turn", turn)
                .field("step", step)
                .field("ok", false)
                .field("skipped", why),
        );
    };
    if ids.is_empty() {
        skipped(transcript, "nothing between the protected head and tail");
        return Ok(false);
    }
    let mut answer = Vec::new();
    let mut sink = |chunk: &[u8]| {
        let room = MAX_SUMMARY_BYTES - answer.len();
        answer.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if answer.len() == MAX_SUMMARY_BYTES {
            Flow::Stop
        } else {
            Flow::Continue
        }
    };
    // The view then the prompt, no tool offered (in the loop's rendering).
    let answered = model.text_call(ctx, COMPACT_PROMPT, max_tokens, &mut sink);
    ctx.after_call(&model.describe(), answered.usage.as_ref())?;
    match answered.ended {
        Ok(Some(_)) => {}
        Ok(None) => {
            skipped(transcript, "the model source ended");
            return Ok(false);
        }
        Err(e) => {
            skipped(transcript, &e.to_string());
            return Ok(false);
        }
    }
    let Some(summary) = strip_analysis(&String::from_utf8_lossy(&answer)) else {
        skipped(transcript, "the answer has no summary");
        return Ok(false);
    };
    // A summary no smaller than what it replaces would only lose detail.
    let replaced: u64 = ids
        .iter()
        .filter_map(|id| ctx.engine.store().get(id))
        .map(|b| b.token_count)
        .sum();
    if ctx.engine.store().tokens().count(&summary) >= replaced {
        skipped(
            transcript,
            "the summary is no smaller than what it replaces",
        );
        return Ok(false);
    }
    let op = Operation::Compact {
        ids,
        output: Output {
            description: "Compacted conversation (runtime)".to_owned(),
            content: summary,
        },
        preserve: PRESERVE.iter().map(|s| s.to_string()).collect(),
        drop: vec!["tool output already acted on".to_owned()],
    };
    let reason = format!("{step}: one model call with the compaction prompt");
    super::ladder::apply(ctx, transcript, turn, step, reason, vec![op])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_analysis_is_stripped() {
        let cases = [
            (
                "<analysis>draft</analysis>\n<summary>\nkept\n</summary>",
                Some("kept"),
            ),
            ("<analysis>a</analysis>plain", Some("plain")),
            ("before<analysis>never closed", Some("before")),
            (
                "<analysis>x</analysis><analysis>y</analysis><summary>s",
                Some("s"),
            ),
            ("<analysis>only</analysis>  ", None),
            ("no tags at all", Some("no tags at all")),
        ];
        for (answer, want) in cases {
            assert_eq!(strip_analysis(answer).as_deref(), want, "{answer:?}");
        }
    }

    #[test]
    fn the_prompt_is_the_seeds() {
        assert!(COMPACT_PROMPT.starts_with("CRITICAL: Respond with TEXT ONLY."));
        assert!(COMPACT_PROMPT.ends_with("Then produce <summary>.\n"));
    }
}
