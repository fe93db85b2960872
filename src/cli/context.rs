//! `frontier context`: the context engine offline.
//!
//! - `apply [--max-tokens N] CASE...`: applies each case's `context_update` to its stored
//!   state and prints one JSON line per case (the format is in `docs/context.md`). Exit
//!   status 0 when every patch was committed, 1 when one was rejected or its arguments were
//!   not an update, 2 when a case could not be read (its message on standard error; the other
//!   cases still run).
//! - `replay RUN_DIR`: rebuilds a run's store from its journal and content store and prints
//!   it with the view the model would see next, as one JSON line. A journal cut off inside a
//!   record or a change replays up to the last whole change and says so on standard error
//!   (exit 0); a missing or altered payload, or a record that does not replay, is an error
//!   naming it (exit 1). A run of `frontier run --vocab VOCAB` is counted with that
//!   vocabulary again (`run.json` names it); one that cannot be loaded is exit 1.

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Subcommand;
use serde_json::{json, Value};

use frontier::context::block::Block;
use frontier::context::case;
use frontier::context::durable;
use frontier::context::engine::RunConfig;
use frontier::context::replay::{self, ReplayError};
use frontier::context::tokens::{CpatEstimator, TokenCounter};

use super::bounds::Bound;
use super::{display, input, EXIT_USAGE};

/// `--max-tokens`: the window, 1 token to 1,000,000,000.
const MAX_TOKENS: Bound = Bound::between(1, 1_000_000_000);

/// The largest case file read, 64 MiB.
pub const MAX_CASE_BYTES: u64 = 64 << 20;

/// `frontier context`'s commands.
#[derive(Subcommand, Debug)]
pub enum Args {
    /// Apply each case's context_update to its stored state; one JSON line per case.
    Apply {
        /// The window in tokens, 1 to 1000000000.
        #[arg(long, default_value_t = frontier::context::engine::DEFAULT_MAX_TOKENS,
              value_parser = MAX_TOKENS.parser::<u64>())]
        max_tokens: u64,
        /// The case files (JSON); `-` is standard input.
        #[arg(required = true)]
        cases: Vec<OsString>,
    },
    /// Rebuild a run's store from its journal and content store; print it and its view.
    Replay {
        /// The run directory (journal.jsonl, content/, run.json).
        run_dir: PathBuf,
    },
}

/// Runs `context`.
pub fn run(args: Args) -> Result<i32, String> {
    match args {
        Args::Apply { max_tokens, cases } => apply(max_tokens, &cases),
        Args::Replay { run_dir } => replay_run(&run_dir),
    }
}

/// A case file, or standard input for `-`.
fn read_case(path: &Path) -> Result<String, String> {
    let bytes = input::read_at_most(path, MAX_CASE_BYTES)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("larger than {MAX_CASE_BYTES} bytes"))?;
    String::from_utf8(bytes).map_err(|_| "stream did not contain valid UTF-8".to_owned())
}

fn apply(max_tokens: u64, cases: &[OsString]) -> Result<i32, String> {
    let mut out = io::stdout().lock();
    let mut status = 0;
    for path in cases {
        let path = Path::new(path);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        let name = name.strip_suffix(".json").unwrap_or(&name).to_owned();
        let line = read_case(path)
            .and_then(|text| case::run(&name, &text, max_tokens).map_err(|e| e.to_string()));
        match line {
            Ok(line) => {
                if line["ok"] != Value::Bool(true) {
                    status = status.max(1);
                }
                writeln!(out, "{line}").map_err(|e| e.to_string())?;
            }
            Err(e) => {
                eprintln!(
                    "frontier: {}: {}",
                    display::path(path.as_os_str()),
                    display::escaped(&e)
                );
                status = EXIT_USAGE;
            }
        }
    }
    out.flush().map_err(|e| e.to_string())?;
    Ok(status)
}

/// The token counter a run directory's `run.json` names: CPAT's estimator, or the vocabulary
/// of a `frontier run --vocab VOCAB` (recorded as `vocab:VOCAB`), loaded again. A `run.json`
/// that cannot be read is left to the replay, which names what is wrong with it.
fn run_counter(dir: &Path) -> Result<Arc<dyn TokenCounter>, String> {
    let recorded = std::fs::read(dir.join(durable::CONFIG_FILE))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<RunConfig>(&bytes).ok())
        .map(|run| run.token_counter);
    let Some(name) = recorded.as_deref().and_then(|n| n.strip_prefix("vocab:")) else {
        return Ok(Arc::new(CpatEstimator));
    };
    super::mask::vocab_counter(&OsString::from(name))
}

fn replay_run(dir: &Path) -> Result<i32, String> {
    let counter = match run_counter(dir) {
        Ok(counter) => counter,
        Err(e) => {
            eprintln!(
                "frontier: {}: run.json: the run counts tokens with a vocabulary that cannot be loaded: {}",
                dir.display(),
                display::escaped(&e)
            );
            return Ok(1);
        }
    };
    let replayed = match replay::replay(dir, counter) {
        Ok(r) => r,
        Err(e @ ReplayError::Io { .. }) => return Err(e.to_string()),
        Err(e) => {
            eprintln!(
                "frontier: {}: {}",
                dir.display(),
                display::escaped(&e.to_string())
            );
            return Ok(1);
        }
    };
    let engine = &replayed.engine;
    let stopped = replayed
        .stopped
        .as_ref()
        .map(|s| json!({"offset": s.offset, "line": s.line, "reason": s.reason.as_str()}));
    if let Some(s) = &replayed.stopped {
        eprintln!(
            "frontier: {}: the journal ends inside a {} at line {} (offset {}); replayed up to the last whole change",
            dir.display(),
            match s.reason {
                replay::StopReason::TornRecord => "record",
                replay::StopReason::UnfinishedChange => "change",
            },
            s.line,
            s.offset
        );
    }
    let line = json!({
        "records": replayed.records,
        "seq": engine.seq(),
        "stopped": stopped,
        "blocks": engine.store().iter().collect::<Vec<&Block>>(),
        "view": engine.view(),
        "budget": engine.budget(),
    });
    let mut out = io::stdout().lock();
    writeln!(out, "{line}")
        .and_then(|_| out.flush())
        .map_err(|e| e.to_string())?;
    Ok(0)
}
