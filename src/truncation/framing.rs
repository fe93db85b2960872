//! One list of tool calls, framed three ways: as strict CTL, as extended CTL (both by the
//! library's writer, [`crate::ctl::write_call`]) and as a JSON array, with the offset at which
//! each call's encoding ends in each framing.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::ctl::{write_call, Limits, ToolCall};
use crate::json_baseline::calls_from_value;
use crate::language::CtlMode;

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

/// A stream of calls in every framing.
#[derive(Clone, Debug)]
pub struct Framed {
    /// The calls, in order.
    pub calls: Vec<Intent>,
    /// The strict CTL framing: every argument counted.
    pub ctl: Vec<u8>,
    /// Where each call's CTL encoding ends (after `end\n`).
    pub ctl_ends: Vec<usize>,
    /// The extended CTL framing: inline and heredoc arguments wherever they carry the value.
    pub ctl_extended: Vec<u8>,
    /// Where each call's extended CTL encoding ends (after `end\n`).
    pub ctl_extended_ends: Vec<usize>,
    /// The JSON framing: one array of call objects, written by serde_json.
    pub json: Vec<u8>,
    /// Where each call's JSON object ends (after its `}`).
    pub json_ends: Vec<usize>,
}

/// The calls framed in one CTL mode (default limits), and where each call ends.
fn frame_ctl(calls: &[ToolCall], mode: CtlMode) -> Result<(Vec<u8>, Vec<usize>), String> {
    let mut ctl = Vec::new();
    let mut ends = Vec::new();
    for call in calls {
        write_call(call, mode, Limits::default(), &mut ctl)
            .map_err(|e| format!("call {:?}: {e}", call.id))?;
        ends.push(ctl.len());
    }
    Ok((ctl, ends))
}

/// Frames a JSON array of `{"id", "name", "arguments"}` objects every way. An argument that
/// is a JSON string is its text in CTL; any other value is its JSON text. A call CTL cannot
/// carry (an id that is not a token, a value over `max_arg`) is an error.
pub fn frame(source: &Value) -> Result<Framed, String> {
    let Value::Array(items) = source else {
        return Err("a stream is a JSON array of calls".into());
    };
    // One call an item: where each call's JSON ends is where its item ends.
    for (i, item) in items.iter().enumerate() {
        let n = calls_from_value(item)
            .map_err(|e| format!("item {i}: {e}"))?
            .len();
        if n != 1 {
            return Err(format!(
                "item {i} holds {n} calls: a stream is a JSON array of call objects, one call each"
            ));
        }
    }
    let calls = calls_from_value(source).map_err(|e| e.to_string())?;
    let (ctl, ctl_ends) = frame_ctl(&calls, CtlMode::Strict)?;
    let (ctl_extended, ctl_extended_ends) = frame_ctl(&calls, CtlMode::Extended)?;
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
        ctl_extended,
        ctl_extended_ends,
        json,
        json_ends,
    })
}

impl Framed {
    /// The bytes a runtime reads and where each call ends in them: the CTL runtimes read
    /// their mode's framing, the JSON ones the JSON array.
    pub fn stream_for(&self, runtime: &str) -> (&[u8], &[usize]) {
        match runtime {
            "ctl" => (&self.ctl, &self.ctl_ends),
            "ctl_extended" => (&self.ctl_extended, &self.ctl_extended_ends),
            _ => (&self.json, &self.json_ends),
        }
    }
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
