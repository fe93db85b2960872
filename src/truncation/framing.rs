//! One list of tool calls, framed two ways: as CTL and as a JSON array, with the offset at
//! which each call's encoding ends in each framing.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::ctl::ToolCall;
use crate::json_baseline::calls_from_value;

/// A call as the experiment compares them: name and arguments (ids are framing detail).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Intent {
    /// The tool.
    pub name: String,
    /// The arguments in order, as bytes.
    pub args: Vec<(String, Vec<u8>)>,
}

impl From<&ToolCall> for Intent {
    fn from(call: &ToolCall) -> Intent {
        Intent {
            name: call.name.clone(),
            args: call
                .args
                .iter()
                .map(|(k, v)| (k.clone(), v.to_vec()))
                .collect(),
        }
    }
}

/// A stream of calls in both framings.
#[derive(Clone, Debug)]
pub struct Framed {
    /// The calls, in order.
    pub calls: Vec<Intent>,
    /// The CTL framing.
    pub ctl: Vec<u8>,
    /// Where each call's CTL encoding ends (after `end\n`).
    pub ctl_ends: Vec<usize>,
    /// The JSON framing: one array of call objects, written by serde_json.
    pub json: Vec<u8>,
    /// Where each call's JSON object ends (after its `}`).
    pub json_ends: Vec<usize>,
}

/// Frames a JSON array of `{"id", "name", "arguments"}` objects both ways. An argument that
/// is a JSON string is its text in CTL; any other value is its JSON text.
pub fn frame(source: &Value) -> Result<Framed, String> {
    let Value::Array(items) = source else {
        return Err("a stream is a JSON array of calls".into());
    };
    let calls = calls_from_value(source).map_err(|e| e.to_string())?;
    let mut ctl = Vec::new();
    let mut ctl_ends = Vec::new();
    for call in &calls {
        ctl.extend_from_slice(format!("call {} {}\n", call.id, call.name).as_bytes());
        for (key, value) in &call.args {
            ctl.extend_from_slice(format!("arg {key} {}\n", value.len()).as_bytes());
            ctl.extend_from_slice(value);
        }
        ctl.extend_from_slice(b"end\n");
        ctl_ends.push(ctl.len());
    }
    let mut json = b"[".to_vec();
    let mut json_ends = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            json.push(b',');
        }
        json.extend_from_slice(&serde_json::to_vec(item).map_err(|e| e.to_string())?);
        json_ends.push(json.len());
    }
    json.push(b']');
    Ok(Framed {
        calls: calls.iter().map(Intent::from).collect(),
        ctl,
        ctl_ends,
        json,
        json_ends,
    })
}

/// Frames every stream of a directory: each `.json` file, in name order, is a JSON array of
/// `{"id", "name", "arguments"}` calls.
pub fn load_dir(dir: &Path) -> Result<Vec<Framed>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!("{}: no .json streams", dir.display()));
    }
    files
        .iter()
        .map(|path| {
            let text = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let value =
                serde_json::from_slice(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            frame(&value).map_err(|e| format!("{}: {e}", path.display()))
        })
        .collect()
}
