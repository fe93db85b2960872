//! The five tools, their argument schemas, and how a judged call runs.
//!
//! A confirmed [`ToolCall`](crate::ctl::ToolCall) becomes an [`Action`] only through
//! [`judge`](super::policy::judge): the tool is known, allowed by the toolset, every argument
//! of its schema present exactly once and no other, paths confined to the workspace, the shell
//! command past the guard. An `Action` holds the already-resolved paths, so running it does no
//! further checking.

use std::io::Read;
use std::path::PathBuf;

use bytes::Bytes;

use crate::apply::workspace::{open_dir, open_file, OpenError};
use crate::apply::Workspace;

use super::patch::PatchSession;
use super::shell::{self, ShellLimits};

/// The tools the loop knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tool {
    /// `read_file(path)`: a file's bytes.
    ReadFile,
    /// `list_dir(path)`: a directory's entries, sorted, directories with a trailing `/`.
    ListDir,
    /// `write_file(path, content)`: creates or replaces a file (parents created).
    WriteFile,
    /// `apply_patch(patch)`: a patch in the apply_patch language.
    ApplyPatch,
    /// `shell(command)`: `sh -c command` in the root.
    Shell,
    /// `context_update(reason, operations)`: a patch of the conversation's context, checked by
    /// the context engine (`operations` is a JSON array of op items).
    ContextUpdate,
    /// `artifact_get(uri[, max_chars])`: an offloaded payload back from the content store.
    ArtifactGet,
}

impl Tool {
    /// Every tool, in the order the documentation lists them.
    pub const ALL: [Tool; 5] = [
        Tool::ReadFile,
        Tool::ListDir,
        Tool::WriteFile,
        Tool::ApplyPatch,
        Tool::Shell,
    ];

    /// The two tools of context governance, offered only when the loop keeps its
    /// conversation in the context engine (see [`super::context`]).
    pub const CONTEXT: [Tool; 2] = [Tool::ContextUpdate, Tool::ArtifactGet];

    /// The tool called `name`.
    pub fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL
            .into_iter()
            .chain(Tool::CONTEXT)
            .find(|t| t.name() == name)
    }

    /// The name a model writes.
    pub fn name(self) -> &'static str {
        match self {
            Tool::ReadFile => "read_file",
            Tool::ListDir => "list_dir",
            Tool::WriteFile => "write_file",
            Tool::ApplyPatch => "apply_patch",
            Tool::Shell => "shell",
            Tool::ContextUpdate => "context_update",
            Tool::ArtifactGet => "artifact_get",
        }
    }

    /// The argument keys, each at most once; all are required but [`Tool::optional_keys`].
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            Tool::ReadFile | Tool::ListDir => &["path"],
            Tool::WriteFile => &["path", "content"],
            Tool::ApplyPatch => &["patch"],
            Tool::Shell => &["command"],
            Tool::ContextUpdate => &["reason", "operations"],
            Tool::ArtifactGet => &["uri", "max_chars"],
        }
    }

    /// The keys that may be left out.
    pub fn optional_keys(self) -> &'static [&'static str] {
        match self {
            Tool::ArtifactGet => &["max_chars"],
            _ => &[],
        }
    }
}

/// Largest file `read_file` returns whole.
pub const MAX_READ: u64 = 1024 * 1024;

/// A judged call, ready to run.
pub enum Action {
    /// Read this file.
    ReadFile(PathBuf),
    /// List this directory.
    ListDir(PathBuf),
    /// Write these bytes to this file.
    WriteFile(PathBuf, Bytes),
    /// Apply this streamed patch.
    ApplyPatch(Box<dyn PatchSession>),
    /// Run this command.
    Shell(String),
    /// A context tool's call, run by the loop's context engine.
    Context(ContextCall),
}

/// A judged call of a context tool (its arguments as text, checked by the engine).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ContextCall {
    /// `context_update`.
    Update {
        /// Why.
        reason: String,
        /// The JSON array of op items, as the model wrote it.
        operations: String,
    },
    /// `artifact_get`.
    ArtifactGet {
        /// The `artifact://` URI.
        uri: String,
        /// The most UTF-16 units returned (the engine's default when absent).
        max_chars: Option<usize>,
    },
}

impl Action {
    /// Whether the action may run alongside other concurrency-safe actions: only the
    /// read-only ones.
    pub fn concurrency_safe(&self) -> bool {
        matches!(self, Action::ReadFile(_) | Action::ListDir(_))
    }
}

/// What a tool returned: `ok` and the output bytes (or the error's text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolOutput {
    /// Whether the tool did what was asked.
    pub ok: bool,
    /// Its output, or why it failed.
    pub output: Vec<u8>,
}

impl ToolOutput {
    /// A success.
    pub fn ok(output: impl Into<Vec<u8>>) -> ToolOutput {
        ToolOutput {
            ok: true,
            output: output.into(),
        }
    }

    /// A failure, with why.
    pub fn failed(output: impl Into<Vec<u8>>) -> ToolOutput {
        ToolOutput {
            ok: false,
            output: output.into(),
        }
    }
}

/// Runs a judged action.
pub fn execute(action: Action, workspace: &Workspace, shell_limits: ShellLimits) -> ToolOutput {
    match action {
        Action::ReadFile(path) => read_file(&path),
        Action::ListDir(path) => list_dir(&path),
        Action::WriteFile(path, content) => write_file(&path, &content),
        Action::ApplyPatch(session) => match session.apply() {
            Ok(summary) => ToolOutput::ok(summary),
            Err(reason) => ToolOutput::failed(reason),
        },
        Action::Shell(command) => match shell::run(workspace.root(), &command, shell_limits) {
            Ok(out) => {
                let mut text = out.output.clone();
                match out.code {
                    Some(0) => {}
                    Some(code) => {
                        text.extend_from_slice(format!("[exit status {code}]\n").as_bytes())
                    }
                    None if !out.timed_out => text.extend_from_slice(b"[ended by a signal]\n"),
                    None => {}
                }
                ToolOutput {
                    ok: out.success(),
                    output: text,
                }
            }
            Err(e) => ToolOutput::failed(format!("cannot run sh: {e}")),
        },
        // The loop runs these against its context engine and never passes them here.
        Action::Context(_) => ToolOutput::failed("context tools run in the loop's context engine"),
    }
}

/// Reads a regular file whole (anything else, a FIFO say, is refused without being opened).
fn read_file(path: &std::path::Path) -> ToolOutput {
    let (file, meta) = match open_file(path) {
        Ok(opened) => opened,
        Err(e) => return ToolOutput::failed(refusal(&e)),
    };
    if meta.len() > MAX_READ {
        return ToolOutput::failed(format!(
            "file too large: {} bytes (read_file returns at most {MAX_READ})",
            meta.len()
        ));
    }
    let mut bytes = Vec::new();
    match file.take(MAX_READ).read_to_end(&mut bytes) {
        Ok(_) => ToolOutput::ok(bytes),
        Err(e) => ToolOutput::failed(e.to_string()),
    }
}

/// Why a path was not opened: the sentence, and for a FIFO, socket or device the stable kind.
fn refusal(e: &OpenError) -> String {
    match e {
        OpenError::Special { .. } => format!("{e} [{}]", e.kind()),
        _ => e.to_string(),
    }
}

fn list_dir(path: &std::path::Path) -> ToolOutput {
    let entries = match open_dir(path) {
        Ok(entries) => entries,
        Err(e) => return ToolOutput::failed(refusal(&e)),
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => return ToolOutput::failed(e.to_string()),
        };
        let mut name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            name.push('/');
        }
        names.push(name);
    }
    names.sort();
    let mut text = String::new();
    for name in names {
        text.push_str(&name);
        text.push('\n');
    }
    ToolOutput::ok(text)
}

/// Writes through a temporary file in the same directory and renames it into place, so a
/// failure never leaves half a file.
fn write_file(path: &std::path::Path, content: &[u8]) -> ToolOutput {
    let Some(parent) = path.parent() else {
        return ToolOutput::failed("no parent directory");
    };
    if path.is_dir() {
        return ToolOutput::failed("is a directory");
    }
    if let Err(e) = std::fs::create_dir_all(parent) {
        return ToolOutput::failed(format!("cannot create {}: {e}", parent.display()));
    }
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let temp = parent.join(format!(".{name}.frontier-{}.tmp", std::process::id()));
    let result = std::fs::write(&temp, content).and_then(|_| std::fs::rename(&temp, path));
    match result {
        Ok(()) => ToolOutput::ok(format!("wrote {} bytes", content.len())),
        Err(e) => {
            let _ = std::fs::remove_file(&temp);
            ToolOutput::failed(e.to_string())
        }
    }
}
