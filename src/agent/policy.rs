//! Judging a confirmed call: toolsets by trust boundary, argument schemas, path confinement,
//! the hard-line guard. Every refusal has a stable kind.
//!
//! # Toolsets (seed 004, 11.4)
//!
//! What a session may do is fixed by where its task came from, not by what its prompt asks:
//! a tool outside the set is refused when called, whatever the model was told.
//!
//! | toolset | tools | for |
//! |---|---|---|
//! | `interactive` | all five | a person is present and watching |
//! | `background` | `read_file`, `list_dir` | no one can be asked: read-only |
//! | `webhook` | `read_file` | the task text comes from an untrusted third party |

use bytes::Bytes;

use crate::apply::Workspace;
use crate::ctl::ToolCall;

use super::guard;
use super::patch::{PatchProblem, PatchSession};
use super::tools::{Action, ContextCall, Tool};

/// A toolset: the tools a session may call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Toolset {
    /// Every tool.
    #[default]
    Interactive,
    /// Read-only tools.
    Background,
    /// `read_file` only.
    Webhook,
}

impl Toolset {
    /// The toolset called `name`.
    pub fn from_name(name: &str) -> Option<Toolset> {
        match name {
            "interactive" => Some(Toolset::Interactive),
            "background" => Some(Toolset::Background),
            "webhook" => Some(Toolset::Webhook),
            _ => None,
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Toolset::Interactive => "interactive",
            Toolset::Background => "background",
            Toolset::Webhook => "webhook",
        }
    }

    /// Whether the set holds `tool`. The context tools change only what the model sees
    /// next, never the workspace, so every set holds them.
    pub fn allows(self, tool: Tool) -> bool {
        if Tool::CONTEXT.contains(&tool) {
            return true;
        }
        match self {
            Toolset::Interactive => true,
            Toolset::Background => matches!(tool, Tool::ReadFile | Tool::ListDir),
            Toolset::Webhook => tool == Tool::ReadFile,
        }
    }

    /// The workspace tools of the set, in documentation order.
    pub fn tools(self) -> impl Iterator<Item = Tool> {
        Tool::ALL.into_iter().filter(move |&t| self.allows(t))
    }
}

/// Why a call was refused: a stable kind and the details.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// `unknown_tool`, `forbidden_by_toolset`, `missing_argument`, `repeated_argument`,
    /// `unknown_argument`, `invalid_argument`, a path kind (`absolute_path`,
    /// `path_escapes_root`, `symlink_outside_root`, `invalid_path`, `io_error`,
    /// `protected_path`), `hard_line`, `protected_path` (a shell command naming a protected
    /// file), `malformed_patch`.
    pub kind: &'static str,
    /// The details, for people.
    pub detail: String,
}

impl Refusal {
    fn new(kind: &'static str, detail: impl Into<String>) -> Refusal {
        Refusal {
            kind,
            detail: detail.into(),
        }
    }

    /// `kind: detail`, the `reason` of a `refused` record.
    pub fn reason(&self) -> String {
        format!("{}: {}", self.kind, self.detail)
    }
}

/// Whether a call may run alongside other concurrency-safe calls, judged from the call alone
/// (before any other check). Fail-closed: only a known read-only tool whose arguments are
/// exactly its schema qualifies; anything that cannot be judged runs alone.
pub fn concurrency_safe(call: &ToolCall) -> bool {
    match Tool::from_name(&call.name) {
        Some(tool @ (Tool::ReadFile | Tool::ListDir)) => schema(tool, call).is_ok(),
        _ => false,
    }
}

/// Checks the arguments against the tool's schema: each key at most once, no other, every
/// key but the optional ones present.
fn schema(tool: Tool, call: &ToolCall) -> Result<(), Refusal> {
    let keys = tool.keys();
    for (i, (key, _)) in call.args.iter().enumerate() {
        if !keys.contains(&key.as_str()) {
            return Err(Refusal::new(
                "unknown_argument",
                format!(
                    "{} takes no argument {key:?} (its arguments: {})",
                    tool.name(),
                    keys.join(", ")
                ),
            ));
        }
        if call.args[..i].iter().any(|(k, _)| k == key) {
            return Err(Refusal::new(
                "repeated_argument",
                format!("argument {key:?} given more than once"),
            ));
        }
    }
    for key in keys {
        if call.arg(key).is_none() && !tool.optional_keys().contains(key) {
            return Err(Refusal::new(
                "missing_argument",
                format!("{} needs argument {key:?}", tool.name()),
            ));
        }
    }
    Ok(())
}

fn text_arg<'a>(call: &'a ToolCall, key: &str) -> Result<&'a str, Refusal> {
    let bytes = call.arg(key).map(|b| &b[..]).unwrap_or_default();
    std::str::from_utf8(bytes)
        .map_err(|_| Refusal::new("invalid_argument", format!("argument {key:?} is not UTF-8")))
}

fn resolve(workspace: &Workspace, path: &str, dir: bool) -> Result<std::path::PathBuf, Refusal> {
    // The root itself, for `list_dir`.
    if dir
        && std::path::Path::new(path)
            .components()
            .all(|c| c == std::path::Component::CurDir)
        && !path.is_empty()
    {
        return Ok(workspace.root().to_path_buf());
    }
    workspace
        .resolve(path)
        .map_err(|e| Refusal::new(e.kind(), e.to_string()))
}

/// Refuses a command that names one of the workspace's protected files (best effort: see
/// [`guard::mentions`]; the file tools' refusal, in [`Workspace::resolve`], is the exact one).
fn protected_in_command(command: &str, workspace: &Workspace) -> Result<(), Refusal> {
    use std::os::unix::ffi::OsStrExt;
    for path in workspace.protected() {
        let Some(name) = path.file_name() else {
            continue;
        };
        if guard::mentions(command, name.as_bytes()) {
            return Err(Refusal::new(
                "protected_path",
                format!(
                    "the command names {:?}, one of the runtime's own files (such as the \
                     transcript), which no tool may read or change",
                    name.to_string_lossy()
                ),
            ));
        }
    }
    Ok(())
}

/// Judges a confirmed call: returns the action to run, or why it is refused. `patch` is the
/// session that received the call's `patch` argument while it streamed, if any.
pub fn judge(
    call: &ToolCall,
    toolset: Toolset,
    workspace: &Workspace,
    patch: Option<Box<dyn PatchSession>>,
) -> Result<Action, Refusal> {
    let Some(tool) = Tool::from_name(&call.name) else {
        return Err(Refusal::new(
            "unknown_tool",
            format!("no tool named {:?} (the tools: read_file, list_dir, write_file, apply_patch, shell)", call.name),
        ));
    };
    if !toolset.allows(tool) {
        return Err(Refusal::new(
            "forbidden_by_toolset",
            format!("{} is not in the {} toolset", tool.name(), toolset.name()),
        ));
    }
    schema(tool, call)?;
    match tool {
        Tool::ReadFile => Ok(Action::ReadFile(resolve(
            workspace,
            text_arg(call, "path")?,
            false,
        )?)),
        Tool::ListDir => Ok(Action::ListDir(resolve(
            workspace,
            text_arg(call, "path")?,
            true,
        )?)),
        Tool::WriteFile => {
            let path = resolve(workspace, text_arg(call, "path")?, false)?;
            let content: Bytes = call.arg("content").cloned().unwrap_or_default();
            Ok(Action::WriteFile(path, content))
        }
        Tool::Shell => {
            let command = text_arg(call, "command")?;
            guard::check(command).map_err(|v| Refusal::new("hard_line", v.to_string()))?;
            protected_in_command(command, workspace)?;
            Ok(Action::Shell(command.to_owned()))
        }
        Tool::ApplyPatch => {
            let session = patch
                .ok_or_else(|| Refusal::new("malformed_patch", "no patch argument streamed"))?;
            match session.problem() {
                Some(PatchProblem::Malformed(detail)) => {
                    return Err(Refusal::new("malformed_patch", detail))
                }
                Some(PatchProblem::Protected(detail)) => {
                    return Err(Refusal::new("protected_path", detail))
                }
                _ => {}
            }
            Ok(Action::ApplyPatch(session))
        }
        Tool::ContextUpdate => Ok(Action::Context(ContextCall::Update {
            reason: text_arg(call, "reason")?.to_owned(),
            operations: text_arg(call, "operations")?.to_owned(),
        })),
        Tool::ArtifactGet => {
            let max_chars = match call.arg("max_chars") {
                None => None,
                Some(_) => Some(max_chars(text_arg(call, "max_chars")?)?),
            };
            Ok(Action::Context(ContextCall::ArtifactGet {
                uri: text_arg(call, "uri")?.to_owned(),
                max_chars,
            }))
        }
    }
}

/// The largest `max_chars` an `artifact_get` may ask for (UTF-16 units).
pub const MAX_ARTIFACT_CHARS: usize = 1_000_000;

/// `artifact_get`'s `max_chars`: a decimal from 1 to [`MAX_ARTIFACT_CHARS`].
fn max_chars(text: &str) -> Result<usize, Refusal> {
    text.trim()
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=MAX_ARTIFACT_CHARS).contains(n))
        .ok_or_else(|| {
            Refusal::new(
                "invalid_argument",
                format!("max_chars {text:?} is not a number from 1 to {MAX_ARTIFACT_CHARS}"),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, args: &[(&str, &str)]) -> ToolCall {
        ToolCall {
            id: "c1".into(),
            name: name.into(),
            args: args
                .iter()
                .map(|(k, v)| (k.to_string(), Bytes::copy_from_slice(v.as_bytes())))
                .collect(),
        }
    }

    #[test]
    fn only_well_formed_reads_are_concurrency_safe() {
        assert!(concurrency_safe(&call("read_file", &[("path", "a")])));
        assert!(concurrency_safe(&call("list_dir", &[("path", ".")])));
        // Fail-closed: whatever cannot be judged runs alone.
        assert!(!concurrency_safe(&call("read_file", &[])));
        assert!(!concurrency_safe(&call(
            "read_file",
            &[("path", "a"), ("path", "b")]
        )));
        assert!(!concurrency_safe(&call(
            "list_dir",
            &[("path", "."), ("depth", "2")]
        )));
        assert!(!concurrency_safe(&call("read_files", &[("path", "a")])));
        assert!(!concurrency_safe(&call("shell", &[("command", "ls")])));
        assert!(!concurrency_safe(&call(
            "write_file",
            &[("path", "a"), ("content", "")]
        )));
    }

    #[test]
    fn context_tools_are_judged_by_their_schemas() {
        let root = tempfile::tempdir().unwrap();
        let ws = Workspace::new(root.path()).unwrap();
        let judge = |c: &ToolCall| judge(c, Toolset::Webhook, &ws, None);
        let got = judge(&call("artifact_get", &[("uri", "artifact://a@v1")]));
        assert!(matches!(
            got,
            Ok(Action::Context(ContextCall::ArtifactGet {
                max_chars: None,
                ..
            }))
        ));
        let got = judge(&call(
            "artifact_get",
            &[("uri", "u"), ("max_chars", "1000000")],
        ));
        assert!(matches!(
            got,
            Ok(Action::Context(ContextCall::ArtifactGet {
                max_chars: Some(1_000_000),
                ..
            }))
        ));
        for bad in ["0", "1000001", "-1", "ten", ""] {
            let refused = judge(&call("artifact_get", &[("uri", "u"), ("max_chars", bad)]));
            assert_eq!(refused.err().unwrap().kind, "invalid_argument", "{bad:?}");
        }
        let refused = judge(&call("artifact_get", &[("max_chars", "5")]));
        assert_eq!(refused.err().unwrap().kind, "missing_argument");
        let refused = judge(&call("context_update", &[("operations", "[]")]));
        assert_eq!(refused.err().unwrap().kind, "missing_argument");
        let got = judge(&call(
            "context_update",
            &[("reason", "r"), ("operations", "[]")],
        ));
        assert!(matches!(
            got,
            Ok(Action::Context(ContextCall::Update { .. }))
        ));
        // Never concurrency-safe: they run alone, in call order.
        assert!(!concurrency_safe(&call("artifact_get", &[("uri", "u")])));
    }

    #[test]
    fn toolsets_nest() {
        let sets = [Toolset::Webhook, Toolset::Background, Toolset::Interactive];
        for pair in sets.windows(2) {
            for tool in pair[0].tools() {
                assert!(pair[1].allows(tool), "{:?} ⊄ {:?}", pair[0], pair[1]);
            }
        }
        assert_eq!(Toolset::Interactive.tools().count(), 5);
        for set in sets {
            assert_eq!(Toolset::from_name(set.name()), Some(set));
        }
    }
}
