//! Rebuilding a run from its journal and its content store alone.
//!
//! Records are read in order and grouped into changes (a change ends at its first record
//! without `"continued":true`). An `ingest` change puts its blocks back, their text read
//! from the content store and checked against the SHA-256 the record holds. A committed
//! `patch` is applied again through the same engine, and what it produces (the result, the
//! summaries' records, the payload hashes) must be what was journaled; a rejected one changed
//! nothing and is skipped. A committed patch with a `"generation"` gives its offloaded blocks
//! that generation again (the generational layout, [`super::generational`]). An `llm_call` restores the estimate's calibration.
//!
//! A journal that ends inside a record (a torn write) or inside a change (its commit record
//! never written) replays up to the last whole change, and [`Replayed::stopped`] says where
//! and why. A record that does not parse before the end, a payload that is missing or whose
//! hash differs, or a patch that replays differently, is a [`ReplayError`] naming the record
//! or the content key.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::args::{Item, Operation};
use super::block::{Api, Block, Content, Kind, Origin, Retention, Role, Visibility};
use super::content::ContentStore;
use super::durable::{self, content_file_name, Memory};
use super::engine::{Engine, RunConfig};
use super::journal;
use super::ops::Options;
use super::patch;
use super::store::BlockStore;
use super::tokens::TokenCounter;

/// A replayed run.
#[derive(Debug)]
pub struct Replayed {
    /// The engine, in the state of the last whole change (its storage is in memory).
    pub engine: Engine,
    /// The records applied.
    pub records: u64,
    /// The length of the journal up to the end of the last whole change.
    pub valid_len: u64,
    /// Where the replay stopped before the end of the file, if it did.
    pub stopped: Option<Stopped>,
}

/// Where and why a replay stopped early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stopped {
    /// The byte offset of the first record not applied.
    pub offset: u64,
    /// Its 1-based line.
    pub line: usize,
    /// Why.
    pub reason: StopReason,
}

/// Why a replay stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The last record was cut off mid-record.
    TornRecord,
    /// The last change's commit record is missing.
    UnfinishedChange,
}

impl StopReason {
    /// A stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::TornRecord => "torn_record",
            StopReason::UnfinishedChange => "unfinished_change",
        }
    }
}

/// Why a run cannot be replayed.
#[derive(Debug)]
pub enum ReplayError {
    /// A file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        error: std::io::Error,
    },
    /// `run.json` is not a configuration, or names another token counter.
    Config(String),
    /// A whole record that is not one.
    BadRecord {
        /// Its 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A payload the journal names is not in the content store.
    ContentMissing {
        /// The content key.
        key: String,
    },
    /// A payload differs from the one journaled.
    ContentAltered {
        /// The content key.
        key: String,
    },
    /// A patch replays differently from its record.
    Diverged {
        /// The record's `seq`.
        seq: u64,
        /// What differs.
        message: String,
    },
}

impl ReplayError {
    pub(crate) fn io(path: &Path, error: std::io::Error) -> ReplayError {
        ReplayError::Io {
            path: path.to_owned(),
            error,
        }
    }

    /// A stable name for the kind of error.
    pub fn kind(&self) -> &'static str {
        match self {
            ReplayError::Io { .. } => "io",
            ReplayError::Config(_) => "config",
            ReplayError::BadRecord { .. } => "bad_record",
            ReplayError::ContentMissing { .. } => "content_missing",
            ReplayError::ContentAltered { .. } => "content_altered",
            ReplayError::Diverged { .. } => "diverged",
        }
    }
}

impl std::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplayError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            ReplayError::Config(m) => write!(f, "run.json: {m}"),
            ReplayError::BadRecord { line, message } => {
                write!(f, "journal line {line}: {message}")
            }
            ReplayError::ContentMissing { key } => {
                write!(f, "content {key}: missing from the content store")
            }
            ReplayError::ContentAltered { key } => {
                write!(
                    f,
                    "content {key}: altered (its SHA-256 differs from the journal's)"
                )
            }
            ReplayError::Diverged { seq, message } => {
                write!(f, "journal record {seq}: replays differently: {message}")
            }
        }
    }
}

impl std::error::Error for ReplayError {}

/// Replays the run in `dir`, counting tokens with `tokens` (which must be the run's).
pub fn replay(dir: &Path, tokens: Arc<dyn TokenCounter>) -> Result<Replayed, ReplayError> {
    let config_path = dir.join(durable::CONFIG_FILE);
    let text =
        std::fs::read_to_string(&config_path).map_err(|e| ReplayError::io(&config_path, e))?;
    let run: RunConfig =
        serde_json::from_str(&text).map_err(|e| ReplayError::Config(e.to_string()))?;
    if run.token_counter != tokens.name() {
        return Err(ReplayError::Config(format!(
            "the run counts tokens with \"{}\", not \"{}\"",
            run.token_counter,
            tokens.name()
        )));
    }
    let journal_path = dir.join(durable::JOURNAL_FILE);
    let bytes = std::fs::read(&journal_path).map_err(|e| ReplayError::io(&journal_path, e))?;
    let mut r = Replayer {
        dir,
        engine: Engine::with_parts(
            run.config,
            BlockStore::new(tokens),
            ContentStore::new(),
            Box::new(Memory::default()),
        ),
    };
    let mut group: Vec<(Value, usize)> = Vec::new();
    let mut group_start = (0u64, 1usize);
    let (mut records, mut valid_len, mut stopped) = (0u64, 0u64, None);
    let mut offset = 0usize;
    let mut line_no = 0usize;
    while offset < bytes.len() {
        line_no += 1;
        let Some(len) = bytes[offset..].iter().position(|&b| b == b'\n') else {
            stopped = Some(Stopped {
                offset: if group.is_empty() {
                    offset as u64
                } else {
                    group_start.0
                },
                line: if group.is_empty() {
                    line_no
                } else {
                    group_start.1
                },
                reason: if group.is_empty() {
                    StopReason::TornRecord
                } else {
                    StopReason::UnfinishedChange
                },
            });
            group.clear();
            break;
        };
        let line = &bytes[offset..offset + len];
        let record: Value = serde_json::from_slice(line).map_err(|e| ReplayError::BadRecord {
            line: line_no,
            message: e.to_string(),
        })?;
        if group.is_empty() {
            group_start = (offset as u64, line_no);
        }
        offset += len + 1;
        let continued = record.get("continued") == Some(&Value::Bool(true));
        group.push((record, line_no));
        if !continued {
            records += group.len() as u64;
            r.apply_change(std::mem::take(&mut group))?;
            valid_len = offset as u64;
        }
    }
    if !group.is_empty() {
        stopped = Some(Stopped {
            offset: group_start.0,
            line: group_start.1,
            reason: StopReason::UnfinishedChange,
        });
    }
    Ok(Replayed {
        engine: r.engine,
        records,
        valid_len,
        stopped,
    })
}

struct Replayer<'a> {
    dir: &'a Path,
    engine: Engine,
}

fn bad(line: usize, message: impl Into<String>) -> ReplayError {
    ReplayError::BadRecord {
        line,
        message: message.into(),
    }
}

fn field<'v>(r: &'v Value, name: &str, line: usize) -> Result<&'v Value, ReplayError> {
    r.get(name)
        .ok_or_else(|| bad(line, format!("no \"{name}\"")))
}

fn typed<T: serde::de::DeserializeOwned>(
    r: &Value,
    name: &str,
    line: usize,
) -> Result<T, ReplayError> {
    serde_json::from_value(field(r, name, line)?.clone())
        .map_err(|e| bad(line, format!("\"{name}\": {e}")))
}

impl Replayer<'_> {
    fn read_content(&self, key: &str, sha256: &str) -> Result<String, ReplayError> {
        let path = self
            .dir
            .join(durable::CONTENT_DIR)
            .join(content_file_name(key));
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ReplayError::ContentMissing {
                    key: key.to_owned(),
                })
            }
            Err(e) => return Err(ReplayError::io(&path, e)),
        };
        let text = String::from_utf8(bytes).map_err(|_| ReplayError::ContentAltered {
            key: key.to_owned(),
        })?;
        if journal::sha256_hex(&text) != sha256 {
            return Err(ReplayError::ContentAltered {
                key: key.to_owned(),
            });
        }
        Ok(text)
    }

    fn block_of(&self, r: &Value, line: usize) -> Result<Block, ReplayError> {
        let key: String = typed(r, "content_key", line)?;
        let sha: String = typed(r, "content_sha256", line)?;
        let version = key
            .rsplit_once("@v")
            .and_then(|(_, v)| v.parse().ok())
            .ok_or_else(|| bad(line, "content_key is not <id>@v<n>"))?;
        Ok(Block {
            id: typed(r, "block_id", line)?,
            role: typed::<Role>(r, "role", line)?,
            kind: typed::<Kind>(r, "kind", line)?,
            description: typed(r, "description", line)?,
            content: Content::Inline(self.read_content(&key, &sha)?),
            source_ids: typed(r, "source_ids", line)?,
            token_count: typed(r, "token_count", line)?,
            visibility: typed::<Visibility>(r, "visibility", line)?,
            retention: typed::<Retention>(r, "retention", line)?,
            protected: r.get("protected").and_then(Value::as_bool),
            version,
            created_at: typed(r, "ts", line)?,
            api: match r.get("api") {
                Some(a) => Some(
                    serde_json::from_value::<Api>(a.clone())
                        .map_err(|e| bad(line, e.to_string()))?,
                ),
                None => None,
            },
            origin: match r.get("origin") {
                Some(o) => Some(
                    serde_json::from_value::<Origin>(o.clone())
                        .map_err(|e| bad(line, e.to_string()))?,
                ),
                None => None,
            },
        })
    }

    fn apply_change(&mut self, group: Vec<(Value, usize)>) -> Result<(), ReplayError> {
        let (last, line) = group.last().expect("a change has a record");
        let seq: u64 = typed(last, "seq", *line)?;
        let kind: String = typed(last, "type", *line)?;
        match kind.as_str() {
            "ingest" => {
                for (r, line) in &group {
                    let block = self.block_of(r, *line)?;
                    // A budget report's record names the reports it rotated out.
                    if let Some(hides) = r.get("hides") {
                        let hides: Vec<String> = serde_json::from_value(hides.clone())
                            .map_err(|e| bad(*line, format!("\"hides\": {e}")))?;
                        self.engine.hide(&hides);
                    }
                    self.engine.insert_ingested(block);
                }
            }
            "patch" => self.replay_patch(&group, seq)?,
            "llm_call" => {
                let usage = field(last, "usage", *line)?.clone();
                let est: u64 = typed(last, "est_view_tokens", *line)?;
                self.engine.calibrate(&usage, est);
            }
            other => return Err(bad(*line, format!("unknown record type \"{other}\""))),
        }
        self.engine.set_seq(seq);
        Ok(())
    }

    fn replay_patch(&mut self, group: &[(Value, usize)], seq: u64) -> Result<(), ReplayError> {
        let (record, line) = group.last().expect("a change has a record");
        let line = *line;
        let result = field(record, "result", line)?;
        if result.get("ok") != Some(&Value::Bool(true)) {
            if group.len() > 1 {
                return Err(bad(line, "a rejected patch with ingest records"));
            }
            return Ok(());
        }
        let ops: Vec<Operation> = typed(record, "operations", line)?;
        let items: Vec<Item> = ops.into_iter().map(Ok).collect();
        let options: Options = typed(record, "options", line)?;
        let ts: String = typed(record, "ts", line)?;
        let diverged = |message: String| ReplayError::Diverged { seq, message };
        let store = self.engine.store();
        let commit = patch::validate(store, self.engine.content(), &items, options, &ts)
            .map_err(|r| diverged(format!("rejected now: {:?}", r)))?;
        // The summaries' records, as they would be journaled now.
        let first = seq - (group.len() as u64 - 1);
        for (i, (_, b, _)) in commit.created.iter().enumerate() {
            let (recorded, _) = &group[i];
            let mut expected =
                journal::ingest(first + i as u64, b, &journal::sha256_hex(inline(b)), true);
            // The summaries' timestamps are the records' own.
            expected["ts"] = recorded["ts"].clone();
            if &expected != recorded {
                return Err(diverged(format!("summary record {}", first + i as u64)));
            }
        }
        if commit.created.len() + 1 != group.len() {
            return Err(diverged("a different number of summaries".into()));
        }
        let recorded_puts = field(record, "content_puts", line)?;
        for (key, payload) in &commit.puts {
            let sha = journal::sha256_hex(payload);
            if recorded_puts.get(key).and_then(Value::as_str) != Some(sha.as_str()) {
                return Err(diverged(format!("the payload of {key}")));
            }
            self.read_content(key, &sha)?;
        }
        let recomputed = serde_json::to_value(self.engine.result_of(&commit, items.len()))
            .expect("a result serialises");
        if &recomputed != result {
            return Err(diverged(format!("result {recomputed}, journaled {result}")));
        }
        let mut commit = commit;
        for (i, (_, b, _)) in commit.created.iter_mut().enumerate() {
            b.created_at = group[i].0["ts"].as_str().unwrap_or_default().to_owned();
        }
        self.engine.commit_replayed(commit);
        // A retiring patch's generation (see `super::generational`).
        if let Some(g) = record.get("generation") {
            let g = g
                .as_u64()
                .ok_or_else(|| bad(line, "\"generation\" is not a number"))?;
            self.engine.retire(&items, g);
        }
        Ok(())
    }
}

fn inline(b: &Block) -> &str {
    match &b.content {
        Content::Inline(t) => t,
        Content::Ref(_) => "",
    }
}
