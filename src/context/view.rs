//! What the model sees (`cpat_reference.md` §10): the visible blocks in store order (or in
//! the generational layout, [`super::generational`]), each rendered as an OpenAI-style
//! message, then one user message holding the manifest; and the estimate of its size,
//! `Σ tokens(message content) + 4 × messages`, which does not depend on the order.
//!
//! Rendering walks the store once. The estimate does not render at all: each block's share of
//! it is a [`BlockCost`] computed when the block enters the store or changes, from the same
//! pieces the renderer joins, and the store keeps their sums.

use std::borrow::Cow;

use serde::Serialize;

use super::block::{Block, Kind, ToolCall, Visibility};
use super::store::{BlockStore, Slot, Totals};
use super::tokens::{Measure, TokenCounter};

/// One message of the view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Message {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: &'static str,
    /// A tool message's call id (before the content, as CPAT's `renderBlock` builds it: the
    /// fields serialise in this order).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The text.
    pub content: String,
    /// An assistant message's calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    /// The reasoning replayed with an open chain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
}

/// The view and its estimate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct View {
    /// The messages, the manifest last.
    pub messages: Vec<Message>,
    /// `Σ tokens(content) + 4 × messages`.
    pub estimated_tokens: u64,
}

/// A block's share of the view's estimate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockCost {
    /// Whether it is rendered.
    pub visible: bool,
    /// The tokens of its message's content (0 when not visible).
    pub message_tokens: u64,
    /// Its manifest entry, with the newline before it (when visible).
    pub manifest: Measure,
    /// Whether it is listed under "archived".
    pub archived: bool,
    /// Its archived line, with the newline before it (when listed).
    pub archived_line: Measure,
    /// Its `token_count` when visible.
    pub visible_token_count: u64,
}

const MANIFEST_OPEN: &str = "<context_manifest>";
const MANIFEST_CLOSE: &str = "</context_manifest>";
const ARCHIVED_HEADER: &str = "archived (recoverable via set_visibility=model):";

/// The role and the three pieces (prefix, text, suffix) of a block's message content.
fn message_pieces(b: &Block) -> (&'static str, String, Cow<'_, str>, &'static str) {
    let text = b.content.rendered();
    let tagged = |role| (role, format!("[block:{}]\n", b.id), text.clone(), "");
    match b.kind {
        Kind::SystemPrompt => ("system", String::new(), text, ""),
        Kind::UserMessage => tagged("user"),
        Kind::BudgetReport => (
            "user",
            format!("[block:{}]\n<budget_report>\n", b.id),
            text,
            "\n</budget_report>",
        ),
        Kind::ToolResult | Kind::ArtifactRef => {
            let role = if tool_call_id(b).is_some() {
                "tool"
            } else {
                "user"
            };
            tagged(role)
        }
        Kind::AssistantMessage => ("assistant", String::new(), text, ""),
        Kind::Summary | Kind::TaskState => {
            let sources = if b.source_ids.is_empty() {
                "earlier turns".to_owned()
            } else {
                b.source_ids.join(", ")
            };
            (
                "assistant",
                format!(
                    "[block:{}] [compacted context \u{2014} summary of {sources}]\n",
                    b.id
                ),
                text,
                "",
            )
        }
        Kind::ReasoningTrace => (
            "assistant",
            format!("[block:{}] [reasoning trace]\n", b.id),
            text,
            "",
        ),
    }
}

fn tool_call_id(b: &Block) -> Option<&String> {
    b.api.as_ref().and_then(|a| a.tool_call_id.as_ref())
}

/// A block's message.
pub fn render_block(b: &Block) -> Message {
    let (role, prefix, text, suffix) = message_pieces(b);
    let mut content = String::with_capacity(prefix.len() + text.len() + suffix.len());
    content.push_str(&prefix);
    content.push_str(&text);
    content.push_str(suffix);
    let api = b.api.as_ref();
    let (tool_call_id, tool_calls, reasoning_content) = match b.kind {
        Kind::ToolResult | Kind::ArtifactRef if role == "tool" => {
            (tool_call_id(b).cloned(), None, None)
        }
        Kind::AssistantMessage => (
            None,
            api.and_then(|a| a.tool_calls.clone()),
            api.and_then(|a| a.reasoning_content.clone()),
        ),
        _ => (None, None, None),
    };
    Message {
        role,
        content,
        tool_call_id,
        tool_calls,
        reasoning_content,
    }
}

/// The manifest entry of a visible block, lines joined with `\n`.
fn manifest_entry(b: &Block) -> String {
    let mut s = format!(
        "- block_id: {}\n  kind: {}\n  tokens: {}",
        b.id,
        b.kind.as_str(),
        b.token_count
    );
    if b.is_protected() {
        s.push_str("\n  protected: true");
    }
    if let super::block::Content::Ref(r) = &b.content {
        s.push_str(&format!(
            "\n  offloaded: true (payload at artifact://{})",
            r.artifact_id
        ));
    }
    if b.kind == Kind::BudgetReport {
        s.push_str(
            "\n  runtime_owned: true (rotated automatically \u{2014} never include in patches)",
        );
    }
    s.push_str("\n  description: ");
    s.push_str(&b.description);
    s
}

/// Whether a block is listed under "archived".
fn listed_archived(b: &Block) -> bool {
    b.visibility == Visibility::Archived
        && !matches!(b.kind, Kind::BudgetReport | Kind::ReasoningTrace)
}

fn archived_line(b: &Block) -> String {
    format!(
        "- {} ({}, {} tokens): {}",
        b.id,
        b.kind.as_str(),
        b.token_count,
        b.description
    )
}

/// What a block adds to the view's estimate.
pub fn cost(b: &Block, tokens: &dyn TokenCounter) -> BlockCost {
    let newline = Measure { a: 1, b: 0 };
    let mut c = BlockCost::default();
    if b.is_visible() {
        let (_, prefix, text, suffix) = message_pieces(b);
        let m = tokens.measure(&prefix) + tokens.measure(&text) + tokens.measure(suffix);
        c.visible = true;
        c.message_tokens = tokens.tokens(m);
        c.manifest = newline + tokens.measure(&manifest_entry(b));
        c.visible_token_count = b.token_count;
    } else if listed_archived(b) {
        c.archived = true;
        c.archived_line = newline + tokens.measure(&archived_line(b));
    }
    c
}

/// The manifest message's measure, from the totals.
fn manifest_measure(t: &Totals, tokens: &dyn TokenCounter) -> Measure {
    let newline = Measure { a: 1, b: 0 };
    let mut m =
        tokens.measure(MANIFEST_OPEN) + t.manifest + newline + tokens.measure(MANIFEST_CLOSE);
    if t.archived > 0 {
        m = m + newline + tokens.measure(ARCHIVED_HEADER) + t.archived_lines;
    }
    m
}

/// The estimate of the view from the store's totals, without rendering it.
pub fn estimate(t: &Totals, tokens: &dyn TokenCounter) -> u64 {
    t.message_tokens + tokens.tokens(manifest_measure(t, tokens)) + 4 * (t.visible + 1)
}

/// The manifest text.
pub fn manifest(store: &BlockStore) -> String {
    let mut lines = vec![MANIFEST_OPEN.to_owned()];
    lines.extend(store.iter().filter(|b| b.is_visible()).map(manifest_entry));
    let archived: Vec<String> = store
        .iter()
        .filter(|b| listed_archived(b))
        .map(archived_line)
        .collect();
    if !archived.is_empty() {
        lines.push(ARCHIVED_HEADER.to_owned());
        lines.extend(archived);
    }
    lines.push(MANIFEST_CLOSE.to_owned());
    lines.join("\n")
}

/// Renders the view: one pass over the store. The estimate comes from the store's running
/// totals ([`estimate`]); [`count`] counts the rendered messages instead, and gives the same
/// figure for CPAT's estimator.
pub fn render(store: &BlockStore) -> View {
    with_manifest(store, store.iter().filter(|b| b.is_visible()))
}

/// Renders the view with the visible blocks in another order (the generational layout,
/// [`super::generational::layout`]); the manifest keeps the store order. The estimate is the
/// same as [`render`]'s: it adds up the messages, whatever their order.
pub fn render_in_order(store: &BlockStore, visible: &[Slot]) -> View {
    with_manifest(store, visible.iter().map(|&s| store.block(s)))
}

fn with_manifest<'a>(store: &'a BlockStore, blocks: impl Iterator<Item = &'a Block>) -> View {
    let tokens = store.tokens().as_ref();
    let mut messages: Vec<Message> = blocks.map(render_block).collect();
    messages.push(Message {
        role: "user",
        content: manifest(store),
        tool_call_id: None,
        tool_calls: None,
        reasoning_content: None,
    });
    View {
        messages,
        estimated_tokens: estimate(&store.totals(), tokens),
    }
}

/// CPAT's estimate of rendered messages: `Σ tokens(content) + 4 × messages`.
pub fn count(messages: &[Message], tokens: &dyn TokenCounter) -> u64 {
    messages
        .iter()
        .map(|m| tokens.count(&m.content))
        .sum::<u64>()
        + 4 * messages.len() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_serialise_their_fields_in_cpat_order() {
        // CPAT's renderBlock: `{role:"tool", tool_call_id, content}`, and an assistant's
        // `{role, content, tool_calls, reasoning_content}`; `JSON.stringify` keeps that order.
        let tool = Message {
            role: "tool",
            content: "[block:tool_004]\nR".into(),
            tool_call_id: Some("c1".into()),
            tool_calls: None,
            reasoning_content: None,
        };
        assert_eq!(
            serde_json::to_string(&tool).unwrap(),
            r#"{"role":"tool","tool_call_id":"c1","content":"[block:tool_004]\nR"}"#
        );
        let assistant = Message {
            role: "assistant",
            content: String::new(),
            tool_call_id: None,
            tool_calls: Some(Vec::new()),
            reasoning_content: Some("r".into()),
        };
        assert_eq!(
            serde_json::to_string(&assistant).unwrap(),
            r#"{"role":"assistant","content":"","tool_calls":[],"reasoning_content":"r"}"#
        );
    }
}
