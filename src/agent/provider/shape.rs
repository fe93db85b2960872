//! The conversation in each API's own shape, and the tools as each API declares them.
//!
//! The conversation is kept as the JSON items the API takes, appended turn by turn, so every
//! request is one the API accepts:
//!
//! | | assistant calls | tool results |
//! |---|---|---|
//! | Chat | an `assistant` message with `tool_calls` (`id`, `function.name`, `function.arguments`) | one `role: tool` message per call, `tool_call_id` |
//! | Responses | `function_call` / `custom_tool_call` items with `call_id` | `function_call_output` / `custom_tool_call_output` items, `call_id` |
//! | Anthropic | `tool_use` blocks (`id`, `name`, `input`) in the assistant message | `tool_result` blocks (`tool_use_id`, `is_error`) first in the next user message |
//!
//! Only calls that got a result are put in the assistant message (a call the stream left
//! incomplete never ran and is not shown as made), so each call id is paired with exactly one
//! result. A malformed call is shown as made, with the arguments it streamed (Anthropic: `{}`,
//! since its `input` must be an object), and its result is the refusal.

use serde_json::{json, Map, Value};

use crate::streams::{Api, Arguments, Call, PartialCall};

use super::super::tools::Tool;

/// The apply_patch grammar Codex constrains its freeform tool with.
pub const APPLY_PATCH_GRAMMAR: &str = include_str!("../../../grammars/apply_patch.lark");

/// A call as the assistant made it, for the conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SentCall {
    /// The call's id (`call_id` on Responses).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// A freeform (custom) tool call: `arguments` is its raw input.
    pub custom: bool,
    /// The arguments as streamed (JSON text, or the raw input).
    pub arguments: String,
}

impl SentCall {
    /// A confirmed call as it was made.
    pub fn confirmed(call: &Call) -> SentCall {
        SentCall {
            id: call.id.clone(),
            name: call.name.clone(),
            custom: call.kind.is_raw(),
            arguments: match &call.arguments {
                Arguments::Json { text, .. } | Arguments::Raw(text) => text.clone(),
                Arguments::Ctl(_) => String::new(),
            },
        }
    }

    /// A malformed call as it was made (the arguments it streamed).
    pub fn malformed(call: &PartialCall) -> SentCall {
        SentCall {
            id: call.id.clone(),
            name: call.name.clone(),
            custom: call.kind.is_raw(),
            arguments: call.text.clone(),
        }
    }
}

/// One call's result, for the conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolReply {
    /// The call's id.
    pub id: String,
    /// Whether the tool ran and succeeded (a refusal or a failure is an error).
    pub ok: bool,
    /// What the model reads.
    pub output: String,
}

/// How tools are offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolMode {
    /// The tools as the API's own tools (JSON-schema functions; Responses' `apply_patch` as
    /// the freeform tool with its grammar).
    Native,
    /// No API tools: the model writes CTL in its text.
    Ctl,
}

/// Whether the model may call the tools declared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ToolChoice {
    /// As it sees fit (no `tool_choice` sent).
    #[default]
    Auto,
    /// Not at all: the tools are declared and closed.
    None,
}

/// One message of a conversation the loop composes itself (a governed run renders the
/// context engine's view into these, [`Conversation::compose`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Composed {
    /// A system message (Chat: a `system` message; Responses: `instructions`; Anthropic:
    /// `system`). Several are joined with a blank line.
    System(String),
    /// A user message.
    User(String),
    /// An assistant message with the calls it made.
    Assistant {
        /// Its text.
        text: String,
        /// Its calls.
        calls: Vec<SentCall>,
        /// The reasoning the view replays with it (the engine's `api.reasoning_content`: a
        /// reply that called tools, while its chain is open). Chat sends it as the message's
        /// `reasoning_content`; Responses and Anthropic do not replay it (see
        /// [`Conversation::assistant_with_reasoning`]).
        reasoning: Option<String>,
    },
    /// One call's result, paired by id with a call of an assistant message before it.
    Result(ToolReply),
}

/// The conversation of one session, in the shape of `api`.
#[derive(Clone, Debug)]
pub struct Conversation {
    api: Api,
    system: String,
    items: Vec<Value>,
    /// Where the latest results begin in `items` (the ones compaction keeps).
    latest_results: usize,
}

impl Conversation {
    /// An empty conversation under the system prompt `system`.
    pub fn new(api: Api, system: impl Into<String>) -> Conversation {
        Conversation {
            api,
            system: system.into(),
            items: Vec::new(),
            latest_results: 0,
        }
    }

    /// The items so far (messages, input items or Anthropic messages).
    pub fn items(&self) -> &[Value] {
        &self.items
    }

    /// A whole conversation of `api` from `messages`, in order: system messages apart (the
    /// API's system field), consecutive results joined (Anthropic: `tool_result` blocks in
    /// one user message), each result in the shape of its call (Responses: the freeform
    /// `apply_patch` call's output is a `custom_tool_call_output`), consecutive messages of
    /// one role merged where the API requires it (Anthropic).
    pub fn compose(api: Api, messages: &[Composed]) -> Conversation {
        let system: Vec<&str> = messages
            .iter()
            .filter_map(|m| match m {
                Composed::System(text) => Some(text.as_str()),
                _ => None,
            })
            .collect();
        let mut conversation = Conversation::new(api, system.join("\n\n"));
        let mut calls: Vec<SentCall> = Vec::new();
        let mut replies: Vec<ToolReply> = Vec::new();
        for m in messages {
            if !matches!(m, Composed::Result(_)) && !replies.is_empty() {
                conversation.results(&calls, &std::mem::take(&mut replies));
            }
            match m {
                Composed::System(_) => {}
                Composed::User(text) => conversation.user(text),
                Composed::Assistant {
                    text,
                    calls: made,
                    reasoning,
                } => {
                    conversation.assistant_with_reasoning(text, made, reasoning.as_deref());
                    calls.clone_from(made);
                }
                Composed::Result(reply) => replies.push(reply.clone()),
            }
        }
        if !replies.is_empty() {
            conversation.results(&calls, &replies);
        }
        conversation
    }

    /// A user message; on Anthropic, merged into a user message that ends the conversation
    /// (its turns must alternate).
    pub fn user(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        match self.api {
            Api::AnthropicMessages => {
                self.anthropic_user(vec![json!({"type": "text", "text": text})])
            }
            Api::OpenAiChat | Api::OpenAiResponses => {
                self.items.push(json!({"role": "user", "content": text}))
            }
        }
    }

    /// The assistant's turn: its text and the calls it made; nothing when both are empty.
    pub fn assistant(&mut self, text: &str, calls: &[SentCall]) {
        self.assistant_with_reasoning(text, calls, None);
    }

    /// [`Conversation::assistant`] with the reasoning to replay with it, if any. Chat sends it
    /// as the assistant message's `reasoning_content` (the field DeepSeek-style servers read
    /// back during a tool-call chain, and Qwen-style chat templates render). Responses and
    /// Anthropic leave it out: a Responses reasoning item is replayed only as the encrypted
    /// item the server returned, which the stream reader does not keep (the requests send
    /// `store: false`), and an Anthropic thinking block only with its `signature`, which the
    /// reader does not keep either (and frontier's requests do not enable extended thinking,
    /// so the API does not ask for it back).
    pub fn assistant_with_reasoning(
        &mut self,
        text: &str,
        calls: &[SentCall],
        reasoning: Option<&str>,
    ) {
        if text.is_empty() && calls.is_empty() {
            return;
        }
        match self.api {
            Api::OpenAiChat => {
                let mut message = Map::new();
                message.insert("role".into(), json!("assistant"));
                message.insert(
                    "content".into(),
                    if text.is_empty() {
                        Value::Null
                    } else {
                        json!(text)
                    },
                );
                if let Some(reasoning) = reasoning.filter(|r| !r.is_empty()) {
                    message.insert("reasoning_content".into(), json!(reasoning));
                }
                if !calls.is_empty() {
                    let calls: Vec<Value> = calls
                        .iter()
                        .map(|c| {
                            json!({"id": c.id, "type": "function",
                                   "function": {"name": c.name, "arguments": c.arguments}})
                        })
                        .collect();
                    message.insert("tool_calls".into(), Value::Array(calls));
                }
                self.items.push(Value::Object(message));
            }
            Api::OpenAiResponses => {
                if !text.is_empty() {
                    self.items
                        .push(json!({"role": "assistant", "content": text}));
                }
                for c in calls {
                    self.items.push(if c.custom {
                        json!({"type": "custom_tool_call", "call_id": c.id, "name": c.name,
                               "input": c.arguments})
                    } else {
                        json!({"type": "function_call", "call_id": c.id, "name": c.name,
                               "arguments": c.arguments})
                    });
                }
            }
            Api::AnthropicMessages => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for c in calls {
                    let input = match serde_json::from_str::<Value>(&c.arguments) {
                        Ok(Value::Object(object)) => Value::Object(object),
                        _ => json!({}),
                    };
                    blocks.push(json!({"type": "tool_use", "id": c.id, "name": c.name,
                                       "input": input}));
                }
                // Its turns must alternate: an assistant message after an assistant message
                // (a governed view's summary before a reply) joins it.
                let last = self.items.last_mut().filter(|m| m["role"] == "assistant");
                match last.and_then(|m| m["content"].as_array_mut()) {
                    Some(content) => content.extend(blocks),
                    None => self
                        .items
                        .push(json!({"role": "assistant", "content": blocks})),
                }
            }
        }
    }

    /// The results of `calls` (in the order given), each paired with its call by id.
    pub fn results(&mut self, calls: &[SentCall], replies: &[ToolReply]) {
        if replies.is_empty() {
            return;
        }
        let custom = |id: &str| calls.iter().any(|c| c.id == id && c.custom);
        // On Anthropic the results may join the user message that ends the conversation.
        self.latest_results = match self.items.last() {
            Some(last) if self.api == Api::AnthropicMessages && last["role"] == "user" => {
                self.items.len() - 1
            }
            _ => self.items.len(),
        };
        match self.api {
            Api::OpenAiChat => {
                for r in replies {
                    self.items
                        .push(json!({"role": "tool", "tool_call_id": r.id, "content": r.output}));
                }
            }
            Api::OpenAiResponses => {
                for r in replies {
                    let kind = if custom(&r.id) {
                        "custom_tool_call_output"
                    } else {
                        "function_call_output"
                    };
                    self.items
                        .push(json!({"type": kind, "call_id": r.id, "output": r.output}));
                }
            }
            Api::AnthropicMessages => {
                let blocks = replies
                    .iter()
                    .map(|r| {
                        json!({"type": "tool_result", "tool_use_id": r.id,
                               "content": r.output, "is_error": !r.ok})
                    })
                    .collect();
                self.anthropic_user(blocks);
            }
        }
    }

    /// Compaction, the one-shot answer to a context overflow: the output of every tool result
    /// before the latest results is replaced by `note` (the pairing of ids stays). Returns how
    /// many were cleared.
    pub fn clear_old_results(&mut self, note: &str) -> usize {
        let mut cleared = 0;
        let mut clear = |slot: &mut Value| {
            if slot.as_str() != Some(note) {
                *slot = json!(note);
                cleared += 1;
            }
        };
        for item in &mut self.items[..self.latest_results] {
            match self.api {
                Api::OpenAiChat if item["role"] == "tool" => clear(&mut item["content"]),
                Api::OpenAiResponses
                    if item["type"] == "function_call_output"
                        || item["type"] == "custom_tool_call_output" =>
                {
                    clear(&mut item["output"])
                }
                Api::AnthropicMessages if item["role"] == "user" => {
                    for block in item["content"].as_array_mut().into_iter().flatten() {
                        if block["type"] == "tool_result" {
                            clear(&mut block["content"]);
                        }
                    }
                }
                _ => {}
            }
        }
        cleared
    }

    /// The tools the conversation's `tool_use` blocks name, in order of first use.
    fn tools_used(&self) -> Vec<Tool> {
        let mut used = Vec::new();
        let blocks = self
            .items
            .iter()
            .filter_map(|m| m["content"].as_array())
            .flatten();
        for block in blocks.filter(|b| b["type"] == "tool_use") {
            let tool = block["name"].as_str().and_then(Tool::from_name);
            if let Some(tool) = tool.filter(|t| !used.contains(t)) {
                used.push(tool);
            }
        }
        used
    }

    fn anthropic_user(&mut self, blocks: Vec<Value>) {
        if let Some(last) = self.items.last_mut().filter(|m| m["role"] == "user") {
            if let Some(content) = last["content"].as_array_mut() {
                content.extend(blocks);
                return;
            }
        }
        self.items.push(json!({"role": "user", "content": blocks}));
    }

    /// The request body: the conversation, the tools of `tools` (native mode), streaming on,
    /// the output limit `max_tokens` in `token_field` (Chat; the others have one field each).
    pub fn body(
        &self,
        model: &str,
        max_tokens: u32,
        token_field: &str,
        tools: &[Tool],
        mode: ToolMode,
    ) -> Value {
        self.body_with_choice(
            model,
            max_tokens,
            token_field,
            tools,
            mode,
            ToolChoice::Auto,
        )
    }

    /// [`Conversation::body`] with a tool choice: [`ToolChoice::None`] declares the tools and
    /// forbids calling them (`"tool_choice":"none"`; Anthropic `{"type":"none"}`).
    pub fn body_with_choice(
        &self,
        model: &str,
        max_tokens: u32,
        token_field: &str,
        tools: &[Tool],
        mode: ToolMode,
        choice: ToolChoice,
    ) -> Value {
        // Anthropic refuses `tool_use` blocks in a request that defines no tools: a call
        // offered none (a compaction) declares the tools its history used, closed.
        let used;
        let (tools, choice) = if self.api == Api::AnthropicMessages && tools.is_empty() {
            used = self.tools_used();
            (used.as_slice(), ToolChoice::None)
        } else {
            (tools, choice)
        };
        let mut body = Map::new();
        body.insert("model".into(), json!(model));
        match self.api {
            Api::OpenAiChat => {
                let mut messages = vec![json!({"role": "system", "content": self.system})];
                messages.extend(self.items.iter().cloned());
                body.insert("messages".into(), Value::Array(messages));
                body.insert(token_field.into(), json!(max_tokens));
            }
            Api::OpenAiResponses => {
                body.insert("instructions".into(), json!(self.system));
                body.insert("input".into(), Value::Array(self.items.clone()));
                body.insert("max_output_tokens".into(), json!(max_tokens));
                body.insert("store".into(), json!(false));
            }
            Api::AnthropicMessages => {
                body.insert("system".into(), json!(self.system));
                body.insert("messages".into(), Value::Array(self.items.clone()));
                body.insert("max_tokens".into(), json!(max_tokens));
            }
        }
        body.insert("stream".into(), json!(true));
        if self.api == Api::OpenAiChat {
            // Chat reports the turn's usage only when asked (the other two always do).
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        if mode == ToolMode::Native && !tools.is_empty() {
            let declared = tools.iter().map(|&t| declare(self.api, t)).collect();
            body.insert("tools".into(), Value::Array(declared));
            if choice == ToolChoice::None {
                let none = match self.api {
                    Api::AnthropicMessages => json!({"type": "none"}),
                    Api::OpenAiChat | Api::OpenAiResponses => json!("none"),
                };
                body.insert("tool_choice".into(), none);
            }
        }
        Value::Object(body)
    }
}

/// What a tool does and its string parameters, for the model.
fn describe(tool: Tool) -> (&'static str, &'static [(&'static str, &'static str)]) {
    match tool {
        Tool::ReadFile => (
            "Read a file of the workspace.",
            &[("path", "The file's path, relative to the workspace root.")],
        ),
        Tool::ListDir => (
            "List a directory of the workspace: its entries sorted, directories with a trailing /.",
            &[("path", "The directory's path, relative to the workspace root (. for the root).")],
        ),
        Tool::WriteFile => (
            "Create or replace a file of the workspace (its parent directories are created).",
            &[
                ("path", "The file's path, relative to the workspace root."),
                ("content", "The whole new content of the file."),
            ],
        ),
        Tool::ApplyPatch => (
            "Edit files with a patch in the apply_patch format: *** Begin Patch, then *** Add \
             File: / *** Delete File: / *** Update File: sections with @@ hunks of context, - \
             and + lines, then *** End Patch. All of it applies or nothing does.",
            &[("patch", "The whole patch, from *** Begin Patch to *** End Patch.")],
        ),
        Tool::Shell => (
            "Run a shell command (sh -c) in the workspace root; returns its exit status and output.",
            &[("command", "The command line.")],
        ),
        Tool::ContextUpdate => (
            "Edit what you will see next turn: hide, offload, restore, fold, compact or merge \
             blocks of the conversation, checked and applied all or nothing.",
            &[
                ("reason", "Why the context changes."),
                (
                    "operations",
                    "The operations, each an object with an op (payload_offload, compact, fold, \
                     merge, set_visibility, restore) and its fields.",
                ),
            ],
        ),
        Tool::ArtifactGet => (
            "Read back a payload that was offloaded from the context, by its artifact:// URI.",
            &[
                ("uri", "The artifact:// URI."),
                ("max_chars", "At most this many characters."),
            ],
        ),
    }
}

/// The schema of one parameter: a string, but for the context tools' `operations` (CPAT's
/// JSON array of op items, `prompts/context_tools.md`) and `max_chars` (a whole number).
fn parameter(tool: Tool, name: &str, text: &str) -> Value {
    match (tool, name) {
        (Tool::ContextUpdate, "operations") => json!({"type": "array", "description": text,
            "items": {"type": "object", "properties": {"op": {"type": "string"}},
                      "required": ["op"]}}),
        (Tool::ArtifactGet, "max_chars") => {
            json!({"type": "integer", "minimum": 1, "description": text})
        }
        _ => json!({"type": "string", "description": text}),
    }
}

/// `tool` declared for `api`.
fn declare(api: Api, tool: Tool) -> Value {
    let (description, params) = describe(tool);
    if api == Api::OpenAiResponses && tool == Tool::ApplyPatch {
        return json!({"type": "custom", "name": tool.name(), "description": description,
                      "format": {"type": "grammar", "syntax": "lark",
                                 "definition": APPLY_PATCH_GRAMMAR}});
    }
    let mut properties = Map::new();
    for (name, text) in params {
        properties.insert((*name).into(), parameter(tool, name, text));
    }
    let names: Vec<&str> = params
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| !tool.optional_keys().contains(n))
        .collect();
    let schema = json!({"type": "object", "properties": properties, "required": names,
                        "additionalProperties": false});
    match api {
        Api::OpenAiChat => json!({"type": "function", "function": {"name": tool.name(),
                                  "description": description, "parameters": schema}}),
        Api::OpenAiResponses => json!({"type": "function", "name": tool.name(),
                                       "description": description, "parameters": schema,
                                       "strict": false}),
        Api::AnthropicMessages => json!({"name": tool.name(), "description": description,
                                         "input_schema": schema}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str, custom: bool) -> SentCall {
        SentCall {
            id: id.into(),
            name: if custom { "apply_patch" } else { "read_file" }.into(),
            custom,
            arguments: if custom {
                "*** Begin Patch\n"
            } else {
                "{\"path\":\"a\"}"
            }
            .into(),
        }
    }

    fn reply(id: &str) -> ToolReply {
        ToolReply {
            id: id.into(),
            ok: true,
            output: "out".into(),
        }
    }

    #[test]
    fn each_api_pairs_results_with_calls_in_its_shape() {
        let calls = [call("c1", false), call("c2", true)];
        let replies = [reply("c1"), reply("c2")];
        let mut chat = Conversation::new(Api::OpenAiChat, "sys");
        chat.user("task");
        chat.assistant("", &calls[..1]);
        chat.results(&calls[..1], &replies[..1]);
        assert_eq!(chat.items()[1]["tool_calls"][0]["id"], "c1");
        assert_eq!(chat.items()[1]["content"], Value::Null);
        assert_eq!(
            chat.items()[2],
            json!({"role": "tool", "tool_call_id": "c1", "content": "out"})
        );

        let mut responses = Conversation::new(Api::OpenAiResponses, "sys");
        responses.assistant("hi", &calls);
        responses.results(&calls, &replies);
        let kinds: Vec<&str> = responses
            .items()
            .iter()
            .map(|i| i["type"].as_str().unwrap_or("message"))
            .collect();
        assert_eq!(
            kinds,
            [
                "message",
                "function_call",
                "custom_tool_call",
                "function_call_output",
                "custom_tool_call_output"
            ]
        );
        assert_eq!(responses.items()[4]["call_id"], "c2");

        let mut anthropic = Conversation::new(Api::AnthropicMessages, "sys");
        anthropic.user("task");
        anthropic.assistant("", &calls[..1]);
        anthropic.results(&calls[..1], &replies[..1]);
        anthropic.user("go on");
        assert_eq!(anthropic.items().len(), 3);
        assert_eq!(
            anthropic.items()[1]["content"][0]["input"],
            json!({"path": "a"})
        );
        let last = &anthropic.items()[2]["content"];
        assert_eq!(last[0]["tool_use_id"], "c1");
        assert_eq!(last[1]["text"], "go on");
    }

    #[test]
    fn a_composed_conversation_pairs_each_result_in_its_apis_shape() {
        let calls = vec![call("c1", false), call("c2", true)];
        let messages = [
            Composed::System("sys".into()),
            Composed::User("task".into()),
            Composed::Assistant {
                text: "summary".into(),
                calls: Vec::new(),
                reasoning: None,
            },
            Composed::Assistant {
                text: String::new(),
                calls: calls.clone(),
                reasoning: Some("think first".into()),
            },
            Composed::Result(reply("c1")),
            Composed::Result(reply("c2")),
            Composed::User("manifest".into()),
        ];
        // Chat: as it stands.
        let chat = Conversation::compose(Api::OpenAiChat, &messages);
        let roles: Vec<&str> = chat
            .items()
            .iter()
            .map(|i| i["role"].as_str().unwrap())
            .collect();
        assert_eq!(
            roles,
            ["user", "assistant", "assistant", "tool", "tool", "user"]
        );
        // The reasoning replayed on its message only, and on Chat only.
        assert_eq!(chat.items()[2]["reasoning_content"], "think first");
        assert!(chat.items()[1].get("reasoning_content").is_none());
        let body = chat.body("m", 10, "max_tokens", &[], ToolMode::Native);
        assert_eq!(
            body["messages"][0],
            json!({"role": "system", "content": "sys"})
        );
        // Responses: the freeform call's output is its own kind.
        let responses = Conversation::compose(Api::OpenAiResponses, &messages);
        let kinds: Vec<&str> = responses
            .items()
            .iter()
            .map(|i| i["type"].as_str().unwrap_or("message"))
            .collect();
        assert_eq!(
            kinds,
            [
                "message",
                "message",
                "function_call",
                "custom_tool_call",
                "function_call_output",
                "custom_tool_call_output",
                "message"
            ]
        );
        // Anthropic: the two assistant messages merged, the results opening the last user
        // message, the manifest last.
        let anthropic = Conversation::compose(Api::AnthropicMessages, &messages);
        let items = anthropic.items();
        assert_eq!(items.len(), 3);
        let types = |i: usize| -> Vec<&str> {
            items[i]["content"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| b["type"].as_str().unwrap())
                .collect()
        };
        assert_eq!(types(1), ["text", "tool_use", "tool_use"]);
        assert_eq!(types(2), ["tool_result", "tool_result", "text"]);
        assert_eq!(items[2]["content"][2]["text"], "manifest");
        for other in [&responses, &anthropic] {
            let text = serde_json::to_string(other.items()).unwrap();
            assert!(!text.contains("think first"), "{text}");
        }
        // Offered no tool, it declares the ones its history used, closed.
        let body = anthropic.body("m", 10, "max_tokens", &[], ToolMode::Native);
        assert_eq!(body["tool_choice"], json!({"type": "none"}));
        let names: Vec<&str> = body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["read_file", "apply_patch"]);
        let body = chat.body_with_choice(
            "m",
            10,
            "max_tokens",
            &[Tool::ReadFile],
            ToolMode::Native,
            ToolChoice::None,
        );
        assert_eq!(body["tool_choice"], "none");
    }

    #[test]
    fn responses_offers_apply_patch_as_the_freeform_tool() {
        let conversation = Conversation::new(Api::OpenAiResponses, "sys");
        let body = conversation.body("m", 10, "max_tokens", &Tool::ALL, ToolMode::Native);
        let patch = &body["tools"][3];
        assert_eq!(patch["type"], "custom");
        assert_eq!(patch["format"]["definition"], APPLY_PATCH_GRAMMAR);
        assert_eq!(body["tools"][0]["parameters"]["required"], json!(["path"]));
        let ctl = conversation.body("m", 10, "max_tokens", &Tool::ALL, ToolMode::Ctl);
        assert!(ctl.get("tools").is_none());
    }
}
