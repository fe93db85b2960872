//! A call while it streams, and what it becomes: a confirmed [`Call`] or a [`PartialCall`]
//! (incomplete or malformed).
//!
//! Every assembler holds its open calls as [`Pending`]: fragments appended as they arrive,
//! within [`Limits::max_call_bytes`]. When the protocol says a call is finished,
//! [`Pending::confirm`] checks it: function arguments must parse, strictly, with `serde_json`,
//! as a JSON object (`""` reads as `{}`); an `apply_patch` input must be a whole patch for the
//! codex-mode parser it streamed into ([`super::patch`]). Nothing is healed: a call that fails
//! the check is a malformed [`PartialCall`], never a [`Call`].

use serde_json::{Map, Value};

use super::patch::PatchInput;
use super::turn::{Event, Limits};
use super::StreamErrorKind;

/// What sort of call, as printed in `"kind"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallKind {
    /// A JSON-schema function tool (Chat `tool_calls`, Responses `function_call`).
    Function,
    /// A Responses custom (freeform) tool: raw text input.
    Custom,
    /// The custom tool named `apply_patch`: its input is a patch, parsed as it streams.
    ApplyPatch,
    /// An Anthropic `tool_use` block.
    ToolUse,
    /// An Anthropic `server_tool_use` block.
    ServerToolUse,
    /// A call written in CTL in the text (`--ctl`).
    Ctl,
}

impl CallKind {
    /// The stable name: `function`, `custom`, `apply_patch`, `tool_use`, `server_tool_use`,
    /// `ctl`.
    pub fn name(self) -> &'static str {
        match self {
            CallKind::Function => "function",
            CallKind::Custom => "custom",
            CallKind::ApplyPatch => "apply_patch",
            CallKind::ToolUse => "tool_use",
            CallKind::ServerToolUse => "server_tool_use",
            CallKind::Ctl => "ctl",
        }
    }

    /// Whether the call's value is raw text (`"input"`) rather than JSON (`"arguments"`).
    pub fn is_raw(self) -> bool {
        matches!(self, CallKind::Custom | CallKind::ApplyPatch)
    }
}

/// A confirmed call's arguments.
#[derive(Clone, Debug, PartialEq)]
pub enum Arguments {
    /// JSON arguments: the exact text streamed and the object it parses to.
    Json {
        /// The concatenated fragments.
        text: String,
        /// Their parse.
        object: Map<String, Value>,
    },
    /// A custom tool's input (or an `apply_patch` patch), exactly as streamed.
    Raw(String),
    /// A CTL call's arguments, in the order written (keys may repeat).
    Ctl(Vec<(String, bytes::Bytes)>),
}

/// A confirmed call: finished by its protocol, its arguments whole.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The call's id (`call_id` on Responses; empty if the server sent none).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// What sort of call.
    pub kind: CallKind,
    /// Its arguments.
    pub arguments: Arguments,
}

/// A call that is not confirmed: cut before its end (incomplete) or finished but unusable
/// (malformed, with the reason).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartialCall {
    /// The id, as far as it arrived.
    pub id: String,
    /// The name, as far as it arrived.
    pub name: String,
    /// What sort of call.
    pub kind: CallKind,
    /// What arrived of the arguments or input.
    pub text: String,
    /// Why a finished call is malformed (`None` for an incomplete call).
    pub reason: Option<String>,
}

/// A call being streamed.
#[derive(Debug)]
pub struct Pending {
    /// Id as first given (later `""`/`null` fragments do not overwrite it).
    pub id: String,
    /// Name as first given.
    pub name: String,
    /// What sort of call.
    pub kind: CallKind,
    /// The fragments so far.
    pub text: String,
    /// Whether any fragment arrived (a `.done` value is then checked against them).
    pub streamed: bool,
    /// A `.done` value that differed from the fragments.
    pub conflict: bool,
    /// The patch parser an `apply_patch` input streams into.
    pub patch: Option<Box<PatchInput>>,
}

impl Pending {
    /// A call whose first fragment gave `id` and `name`.
    pub fn new(id: &str, name: &str, kind: CallKind) -> Pending {
        Pending {
            id: id.to_owned(),
            name: name.to_owned(),
            kind,
            text: String::new(),
            streamed: false,
            conflict: false,
            patch: (kind == CallKind::ApplyPatch).then(Box::default),
        }
    }

    /// Fills the id and the name from a later fragment, only where they are still empty.
    pub fn fill(&mut self, id: Option<&str>, name: Option<&str>) {
        if let Some(id) = id.filter(|id| !id.is_empty() && self.id.is_empty()) {
            self.id = id.to_owned();
        }
        if let Some(name) = name.filter(|n| !n.is_empty() && self.name.is_empty()) {
            self.name = name.to_owned();
        }
    }

    /// Appends a fragment; an `apply_patch` input also goes into its parser, whose events go
    /// to `on_event`. Over [`Limits::max_call_bytes`] is an error.
    pub fn append(
        &mut self,
        fragment: &str,
        limits: &Limits,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), StreamErrorKind> {
        if self.text.len() + fragment.len() > limits.max_call_bytes {
            return Err(StreamErrorKind::CallTooLong);
        }
        self.text.push_str(fragment);
        self.streamed = true;
        if let Some(patch) = &mut self.patch {
            patch.push(&self.id, fragment.as_bytes(), on_event);
        }
        Ok(())
    }

    /// Takes the whole value from a `.done` event or a done item: the value when nothing was
    /// streamed, else a check that it equals what was.
    pub fn complete_with(
        &mut self,
        value: &str,
        limits: &Limits,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), StreamErrorKind> {
        if !self.streamed {
            if !value.is_empty() {
                self.append(value, limits, on_event)?;
            }
        } else if value != self.text {
            self.conflict = true;
        }
        Ok(())
    }

    /// What arrived, as an incomplete call.
    pub fn incomplete(self) -> PartialCall {
        self.partial(None)
    }

    fn partial(self, reason: Option<String>) -> PartialCall {
        PartialCall {
            id: self.id,
            name: self.name,
            kind: self.kind,
            text: self.text,
            reason,
        }
    }

    /// The protocol finished the call: a [`Call`] when its arguments are whole, else the
    /// malformed call with the reason. An `apply_patch` parser's last events go to `on_event`.
    pub fn confirm(mut self, on_event: &mut dyn FnMut(Event<'_>)) -> Result<Call, PartialCall> {
        if self.conflict {
            return Err(self.partial(Some(
                "the done event's value differs from the streamed fragments".to_owned(),
            )));
        }
        if self.name.is_empty() {
            return Err(self.partial(Some("the call has no name".to_owned())));
        }
        let arguments = if self.kind.is_raw() {
            if let Some(patch) = self.patch.take() {
                if let Err(reason) = patch.finish(&self.id, on_event) {
                    return Err(self.partial(Some(reason)));
                }
            }
            Arguments::Raw(std::mem::take(&mut self.text))
        } else {
            match parse_object(&self.text) {
                // No arguments at all (an Anthropic tool with no input, a Chat call whose
                // fragments held none) are the empty object, and printed as its text.
                Ok(object) if self.text.is_empty() => Arguments::Json {
                    text: "{}".to_owned(),
                    object,
                },
                Ok(object) => Arguments::Json {
                    text: std::mem::take(&mut self.text),
                    object,
                },
                Err(reason) => return Err(self.partial(Some(reason))),
            }
        };
        Ok(Call {
            id: self.id,
            name: self.name,
            kind: self.kind,
            arguments,
        })
    }
}

/// Arguments parsed strictly as one JSON object; `""` is `{}`.
pub fn parse_object(text: &str) -> Result<Map<String, Value>, String> {
    if text.is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(other) => Err(format!(
            "the arguments are JSON but not an object ({})",
            json_type(&other)
        )),
        Err(e) => Err(format!("the arguments are not JSON: {e}")),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_patch(_: Event<'_>) {}

    #[test]
    fn arguments_parse_strictly_as_an_object() {
        assert_eq!(parse_object("").unwrap(), Map::new());
        assert_eq!(parse_object("  {\"a\" : 1 }  ").unwrap()["a"], 1);
        for (text, reason) in [
            ("{\"a\":1", "not JSON"),
            ("{\"a\":1}}", "not JSON"),
            ("[1]", "an array"),
            ("\"x\"", "a string"),
            ("{'a':1}", "not JSON"),
        ] {
            let error = parse_object(text).unwrap_err();
            assert!(error.contains(reason), "{text}: {error}");
        }
    }

    #[test]
    fn later_fragments_do_not_overwrite_the_id_and_name() {
        let mut call = Pending::new("call_1", "", CallKind::Function);
        call.fill(Some(""), Some("read_file"));
        call.fill(Some("call_2"), Some("other"));
        call.fill(None, Some(""));
        assert_eq!(
            (call.id.as_str(), call.name.as_str()),
            ("call_1", "read_file")
        );
    }

    #[test]
    fn a_done_value_fills_an_unstreamed_call_and_is_checked_against_a_streamed_one() {
        let limits = Limits::default();
        let mut quiet = Pending::new("c", "f", CallKind::Function);
        quiet
            .complete_with("{\"a\":2}", &limits, &mut no_patch)
            .unwrap();
        let call = quiet.confirm(&mut no_patch).unwrap();
        assert!(matches!(call.arguments, Arguments::Json { ref text, .. } if text == "{\"a\":2}"));
        let mut streamed = Pending::new("c", "f", CallKind::Function);
        streamed.append("{\"a\":", &limits, &mut no_patch).unwrap();
        streamed.append("1}", &limits, &mut no_patch).unwrap();
        streamed
            .complete_with("{\"a\":1}", &limits, &mut no_patch)
            .unwrap();
        assert!(streamed.confirm(&mut no_patch).is_ok());
        let mut differs = Pending::new("c", "f", CallKind::Function);
        differs.append("{\"a\":1}", &limits, &mut no_patch).unwrap();
        differs
            .complete_with("{\"a\":3}", &limits, &mut no_patch)
            .unwrap();
        let malformed = differs.confirm(&mut no_patch).unwrap_err();
        assert_eq!(malformed.text, "{\"a\":1}");
        assert!(malformed.reason.unwrap().contains("differs"));
    }

    #[test]
    fn a_call_over_the_bound_is_refused_and_a_nameless_call_is_malformed() {
        let limits = Limits {
            max_call_bytes: 4,
            ..Limits::default()
        };
        let mut call = Pending::new("c", "", CallKind::Function);
        call.append("{}", &limits, &mut no_patch).unwrap();
        assert_eq!(
            call.append("{}{", &limits, &mut no_patch),
            Err(StreamErrorKind::CallTooLong)
        );
        let malformed = call.confirm(&mut no_patch).unwrap_err();
        assert_eq!(malformed.reason.as_deref(), Some("the call has no name"));
    }
}
