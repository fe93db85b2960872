//! Helpers shared by the `agent_*` tests: running a session into a fresh workspace,
//! snapshotting the workspace, reading the transcript back, a replay that records its
//! requests, the shipped sessions' paths and the check that a `frontier` command succeeded.
#![allow(dead_code)]

pub mod native;
pub mod server;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use frontier::agent::replay::{self, Replay, Session, Turn};
use frontier::agent::{
    self, Config, EndStatus, Finish, Flow, Message, ModelError, ModelSource, NativeSource, Request,
    Toolset,
};
use frontier::apply::Workspace;
use serde_json::Value;

/// The folder of the shipped sessions.
fn sessions_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/sessions")
}

/// The path of the shipped session `name` (a file name in `corpora/sessions/`).
pub fn session_path(name: &str) -> String {
    sessions_dir().join(name).to_string_lossy().into_owned()
}

/// The shipped sessions, by file stem, each with the CTL mode its file declares.
pub fn sessions() -> Vec<(String, Session)> {
    let dir = sessions_dir();
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    entries.sort();
    for path in entries {
        let text = std::fs::read_to_string(&path).unwrap();
        let session =
            replay::parse_session(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        out.push((stem, session));
    }
    assert!(out.len() >= 4, "the shipped sessions are missing");
    out
}

/// What a run left behind.
pub struct RunResult {
    pub status: EndStatus,
    pub transcript: String,
    pub records: Vec<Value>,
    pub files: BTreeMap<String, Vec<u8>>,
}

impl RunResult {
    /// The records of one type.
    pub fn of_type(&self, kind: &str) -> Vec<&Value> {
        self.records.iter().filter(|r| r["type"] == kind).collect()
    }

    /// The ids of the records of one type, in order.
    pub fn ids(&self, kind: &str) -> Vec<String> {
        self.of_type(kind)
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_owned())
            .collect()
    }
}

/// Asserts that a `frontier` command exited 0, showing its standard error when it did not.
pub fn assert_success(out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A replay that keeps every request it was sent.
pub struct Recording {
    pub replay: Replay,
    pub requests: Vec<Vec<Message>>,
}

impl Recording {
    /// Replays `turns` `chunk` bytes at a time.
    pub fn new(turns: Vec<Turn>, chunk: usize) -> Recording {
        Recording {
            replay: Replay::new("recording", turns, chunk),
            requests: Vec::new(),
        }
    }
}

impl ModelSource for Recording {
    fn turn(
        &mut self,
        request: &Request<'_>,
        sink: &mut dyn FnMut(&[u8]) -> Flow,
    ) -> Result<Option<Finish>, ModelError> {
        self.requests.push(request.messages.to_vec());
        self.replay.turn(request, sink)
    }

    fn describe(&self) -> String {
        self.replay.describe()
    }
}

/// Runs `model` in a fresh temporary workspace with `configure` applied to the config.
pub fn run_with(model: &mut dyn ModelSource, configure: impl FnOnce(&mut Config)) -> RunResult {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::new(Workspace::new(dir.path()).unwrap());
    config.task = Some("test".into());
    configure(&mut config);
    let mut out = Vec::new();
    let status = agent::run(&config, model, &mut out).unwrap();
    finish(status, out, dir.path())
}

/// Runs a native-tools `model` in a fresh temporary workspace with `configure` applied.
pub fn run_native_with(
    model: &mut dyn NativeSource,
    configure: impl FnOnce(&mut Config),
) -> RunResult {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::new(Workspace::new(dir.path()).unwrap());
    config.task = Some("test".into());
    configure(&mut config);
    let mut out = Vec::new();
    let status = agent::run_native(&config, model, &mut out).unwrap();
    finish(status, out, dir.path())
}

fn finish(status: EndStatus, out: Vec<u8>, root: &Path) -> RunResult {
    let transcript = String::from_utf8(out).unwrap();
    let records = transcript
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad record {l}: {e}")))
        .collect();
    RunResult {
        status,
        transcript,
        records,
        files: snapshot(root),
    }
}

/// Replays `turns` `chunk` bytes at a time under `toolset`.
pub fn replay(name: &str, turns: &[Turn], chunk: usize, toolset: Toolset) -> RunResult {
    let mut model = Replay::new(name, turns.to_vec(), chunk);
    run_with(&mut model, |c| c.toolset = toolset)
}

/// Replays a shipped session `chunk` bytes at a time in the mode its file declares.
pub fn replay_session(name: &str, session: &Session, chunk: usize) -> RunResult {
    let mut model = Replay::new(name, session.turns.clone(), chunk);
    run_with(&mut model, |c| c.ctl_mode = session.ctl_mode)
}

/// Every file under `root`, by relative path, with its bytes.
pub fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if meta.is_dir() {
                files.insert(format!("{rel}/"), Vec::new());
                stack.push(path);
            } else {
                files.insert(rel, std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    files
}
