//! The data model, in CPAT's JSON shapes (`cpat_reference.md` §1): blocks, their content
//! (inline text or an artifact reference) and the API-replay state of tool-call chains.

use serde::{Deserialize, Serialize};

/// Who a block speaks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
    /// A tool's result.
    Tool,
    /// The runtime (system prompt, budget reports).
    Runtime,
}

/// What a block is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The system prompt: runtime-owned, never patchable.
    SystemPrompt,
    /// A user message (protected).
    UserMessage,
    /// A model reply, with `api.tool_calls` when it called tools.
    AssistantMessage,
    /// The reasoning of a reply that called tools, `api_required` until the next reply.
    ReasoningTrace,
    /// A tool's result, with `api.tool_call_id`.
    ToolResult,
    /// What compact, merge and fold leave in place of their sources.
    Summary,
    /// A budget report: runtime-owned, never patchable.
    BudgetReport,
    /// Task state (guarded, never created by CPAT).
    TaskState,
    /// CPAT's legacy artifact block (rendered, never created).
    ArtifactRef,
}

impl Kind {
    /// The name in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::SystemPrompt => "system_prompt",
            Kind::UserMessage => "user_message",
            Kind::AssistantMessage => "assistant_message",
            Kind::ReasoningTrace => "reasoning_trace",
            Kind::ToolResult => "tool_result",
            Kind::Summary => "summary",
            Kind::BudgetReport => "budget_report",
            Kind::TaskState => "task_state",
            Kind::ArtifactRef => "artifact_ref",
        }
    }
}

/// Whether and how a block reaches the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Visibility {
    /// Rendered and listed in the manifest.
    Model,
    /// Not rendered, listed under "archived".
    Archived,
    /// Neither rendered nor listed.
    Hidden,
    /// Runtime-only: an open reasoning trace, unpatchable until released.
    ApiRequired,
}

impl Visibility {
    /// The value `set_visibility` takes, if `name` is one.
    // divergence 2: only these three; CPAT stores any string.
    pub fn settable(name: &str) -> Option<Visibility> {
        match name {
            "model" => Some(Visibility::Model),
            "archived" => Some(Visibility::Archived),
            "hidden" => Some(Visibility::Hidden),
            _ => None,
        }
    }
}

/// How long a block is meant to live (set, never read, as in CPAT).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Retention {
    /// Until the turn ends.
    Ephemeral,
    /// For the session.
    Session,
    /// Always.
    Persistent,
}

/// Where a user message came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Injected by the runtime (a reminder): never the current question.
    Runtime,
}

/// The reference an offloaded block holds instead of its text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactRef {
    /// The content key, `<id>@v<version>`.
    pub artifact_id: String,
    /// `artifact://<key>`.
    pub uri: String,
    /// Always `"file"`.
    pub store: String,
    /// The offload's summary.
    pub summary: String,
    /// How to get the payload back.
    pub retrieval_hint: String,
}

impl ArtifactRef {
    /// The reference to `key`.
    pub fn new(key: &str, summary: &str, retrieval_hint: &str) -> ArtifactRef {
        ArtifactRef {
            artifact_id: key.to_owned(),
            uri: format!("{ARTIFACT_SCHEME}{key}"),
            store: "file".to_owned(),
            summary: summary.to_owned(),
            retrieval_hint: retrieval_hint.to_owned(),
        }
    }
}

/// The prefix of an artifact URI.
pub const ARTIFACT_SCHEME: &str = "artifact://";

/// A block's content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Content {
    /// Inline text.
    Inline(String),
    /// Offloaded: the payload is in the content store.
    Ref(ArtifactRef),
}

impl Content {
    /// The text the model sees: the inline text, or CPAT's rendering of a reference.
    pub fn rendered(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Content::Inline(text) => text.as_str().into(),
            Content::Ref(r) => format!(
                "[offloaded payload] {}\n(full payload recoverable at {} \u{2014} {})",
                r.summary, r.uri, r.retrieval_hint
            )
            .into(),
        }
    }

    /// Whether the content is offloaded.
    pub fn is_ref(&self) -> bool {
        matches!(self, Content::Ref(_))
    }
}

/// A tool call of an assistant message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call id its result names.
    pub id: String,
    /// Always `"function"`.
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    /// The function and its arguments.
    pub function: FunctionCall,
}

fn function_type() -> String {
    "function".to_owned()
}

/// The function of a tool call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// The tool's name.
    pub name: String,
    /// The arguments, JSON text.
    pub arguments: String,
}

/// API-replay state; no op changes it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Api {
    /// A tool result's call id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// A tool result's tool name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// An assistant message's calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    /// The reasoning replayed with an open chain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
}

impl Api {
    /// The call ids of a chain head (empty for anything else).
    pub fn call_ids(&self) -> impl Iterator<Item = &str> {
        self.tool_calls.iter().flatten().map(|c| c.id.as_str())
    }

    /// Whether this is a chain head (non-empty `tool_calls`).
    pub fn is_head(&self) -> bool {
        self.tool_calls.as_ref().is_some_and(|c| !c.is_empty())
    }
}

/// One block of the store, in CPAT's JSON shape (plus `origin` for runtime reminders).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Block {
    /// `<prefix>_<NNN>`.
    pub id: String,
    /// Who it speaks for.
    pub role: Role,
    /// What it is.
    pub kind: Kind,
    /// Its manifest line.
    #[serde(default)]
    pub description: String,
    /// Inline text or an artifact reference.
    pub content: Content,
    /// A summary's sources; a reasoning trace's assistant.
    #[serde(default)]
    pub source_ids: Vec<String>,
    /// The estimate of the rendered content.
    #[serde(default)]
    pub token_count: u64,
    /// Whether and how it is seen.
    #[serde(default = "model_visibility")]
    pub visibility: Visibility,
    /// Set, never read.
    #[serde(default = "session_retention")]
    pub retention: Retention,
    /// `true` on system and user blocks, otherwise absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protected: Option<bool>,
    /// 1 at creation; +1 on redact and replace.
    #[serde(default = "first_version")]
    pub version: u64,
    /// When it was created (ISO 8601, UTC).
    #[serde(default)]
    pub created_at: String,
    /// API-replay state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<Api>,
    /// `"runtime"` on a reminder the runtime injected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
}

fn model_visibility() -> Visibility {
    Visibility::Model
}
fn session_retention() -> Retention {
    Retention::Session
}
fn first_version() -> u64 {
    1
}

impl Block {
    /// A block the engine creates: inline `text` at version 1, seen by the model, kept for
    /// the session, unprotected, with no sources, API state nor origin (callers set those
    /// that differ).
    pub fn created(
        id: String,
        role: Role,
        kind: Kind,
        description: String,
        text: String,
        token_count: u64,
        created_at: &str,
    ) -> Block {
        Block {
            id,
            role,
            kind,
            description,
            token_count,
            content: Content::Inline(text),
            source_ids: Vec::new(),
            visibility: Visibility::Model,
            retention: Retention::Session,
            protected: None,
            version: 1,
            created_at: created_at.to_owned(),
            api: None,
            origin: None,
        }
    }

    /// The content-store key of the current version, `<id>@v<version>`.
    pub fn content_key(&self) -> String {
        content_key(&self.id, self.version)
    }

    /// Whether it is protected.
    pub fn is_protected(&self) -> bool {
        self.protected == Some(true)
    }

    /// Whether the model sees it.
    pub fn is_visible(&self) -> bool {
        self.visibility == Visibility::Model
    }

    /// A chain head's call ids, a tool result's call id.
    pub fn api(&self) -> Option<&Api> {
        self.api.as_ref()
    }

    /// The JSON of the block without `created_at` (the form `frontier context apply` prints).
    pub fn to_json_without_time(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).expect("a block serialises");
        if let Some(o) = v.as_object_mut() {
            o.shift_remove("created_at");
        }
        v
    }
}

/// `<id>@v<version>`.
pub fn content_key(id: &str, version: u64) -> String {
    format!("{id}@v{version}")
}
