//! One offline case of `frontier context apply`: a stored state, one `context_update` as the
//! model sent it, and everything the engine did with it, as one JSON object (the format is in
//! `docs/context.md`).

use std::sync::{Arc, Mutex};

use serde_json::{json, Map, Value};

use super::args;
use super::block::Block;
use super::content::ContentStore;
use super::durable::Memory;
use super::engine::{Actor, Config, Engine, EngineError};
use super::journal;
use super::ops::Options;
use super::store::BlockStore;
use super::tokens::{CpatEstimator, TokenCounter};

/// The clock of a case: cases print no times, so one fixed instant.
pub const CASE_TIME: &str = "1970-01-01T00:00:00.000Z";

/// Why a case cannot run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseError(pub String);

impl std::fmt::Display for CaseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn case_error(m: impl Into<String>) -> CaseError {
    CaseError(m.into())
}

/// Reads a case's blocks: CPAT's shape; a missing `token_count` is estimated.
fn blocks(v: Option<&Value>, tokens: &dyn TokenCounter) -> Result<Vec<Block>, CaseError> {
    let Some(v) = v else {
        return Ok(Vec::new());
    };
    let items = v
        .as_array()
        .ok_or_else(|| case_error("\"blocks\" must be an array"))?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let mut b: Block = serde_json::from_value(item.clone())
                .map_err(|e| case_error(format!("block {i}: {e}")))?;
            if item.get("token_count").is_none() {
                b.token_count = tokens.count(&b.content.rendered());
            }
            Ok(b)
        })
        .collect()
}

fn content(v: Option<&Value>) -> Result<ContentStore, CaseError> {
    let mut store = ContentStore::new();
    let Some(v) = v else {
        return Ok(store);
    };
    let map = v
        .as_object()
        .ok_or_else(|| case_error("\"content\" must be an object"))?;
    for (key, payload) in map {
        let text = payload
            .as_str()
            .ok_or_else(|| case_error(format!("content \"{key}\" must be a string")))?;
        store.put(key, text);
    }
    Ok(store)
}

/// Runs one case (its JSON text) under a window of `max_tokens`; the output line's object.
pub fn run(name: &str, text: &str, max_tokens: u64) -> Result<Value, CaseError> {
    let text = super::text::lone_surrogates_replaced(text);
    let case: Value =
        serde_json::from_str(&text).map_err(|e| case_error(format!("not JSON: {e}")))?;
    let case = case
        .as_object()
        .ok_or_else(|| case_error("a case is a JSON object"))?;
    let tokens: Arc<dyn TokenCounter> = Arc::new(CpatEstimator);
    let blocks = blocks(case.get("blocks"), tokens.as_ref())?;
    let counter = match case.get("id_counter") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .ok_or_else(|| case_error("\"id_counter\" must be a non-negative integer"))?,
        ),
    };
    let store = BlockStore::from_blocks(blocks, counter, tokens)
        .map_err(|d| case_error(format!("two blocks have the id \"{}\"", d.0)))?;
    let content = content(case.get("content"))?;
    let options: Options = match case.get("options") {
        None | Some(Value::Null) => Options::default(),
        Some(v) => serde_json::from_value(v.clone())
            .map_err(|e| case_error(format!("\"options\": {e}")))?,
    };
    let config = Config {
        max_tokens,
        options,
        ..Config::default()
    };
    let memory = Arc::new(Mutex::new(Memory::default()));
    let mut engine = Engine::with_parts(config, store, content, Box::new(memory.clone()));
    engine.set_clock(|| CASE_TIME.to_owned());
    let update = match case.get("args") {
        Some(Value::String(raw)) => args::parse(raw),
        Some(v) => args::normalise(v),
        None => args::normalise(&Value::Null),
    };
    let outcome = update
        .map_err(EngineError::Args)
        .and_then(|u| engine.apply(&u, Actor::Agent));
    let journal: Vec<Value> = memory
        .lock()
        .map_err(|_| case_error("the journal's lock is poisoned"))?
        .journal
        .lines()
        .map(|l| journal::without_ts(&serde_json::from_str(l).expect("records are JSON")))
        .collect();
    let mut out = Map::new();
    out.insert("case".into(), name.into());
    let error = match &outcome {
        Ok(result) => {
            let r = json!(result);
            for key in [
                "ok",
                "applied",
                "rejections",
                "freed_tokens",
                "created_block_ids",
                "budget",
            ] {
                out.insert(key.into(), r[key].clone());
            }
            out.insert("error".into(), Value::Null);
            out.insert(
                "tool_result".into(),
                serde_json::to_string(result)
                    .expect("a result serialises")
                    .into(),
            );
            None
        }
        Err(e) => Some(e),
    };
    if let Some(e) = error {
        let stage = match e {
            EngineError::Args(_) => "parse",
            _ => "apply",
        };
        let budget = engine.budget();
        out.insert("ok".into(), false.into());
        out.insert("applied".into(), 0.into());
        out.insert("rejections".into(), json!([]));
        out.insert("freed_tokens".into(), 0.into());
        out.insert("created_block_ids".into(), json!([]));
        out.insert(
            "budget".into(),
            json!({"max": budget.max, "soft_limit": budget.soft_limit, "used": budget.used}),
        );
        out.insert(
            "error".into(),
            json!({"stage": stage, "message": e.to_string()}),
        );
        out.insert("tool_result".into(), format!("error: {e}").into());
    }
    out.insert(
        "blocks".into(),
        Value::Array(
            engine
                .store()
                .iter()
                .map(Block::to_json_without_time)
                .collect(),
        ),
    );
    let mut puts = Map::new();
    for record in &journal {
        if let Some(keys) = record.get("content_puts").and_then(Value::as_object) {
            for key in keys.keys() {
                let payload = engine.content().get(key).unwrap_or_default();
                puts.insert(key.clone(), payload.into());
            }
        }
    }
    out.insert("content_puts".into(), Value::Object(puts));
    out.insert("journal".into(), Value::Array(journal));
    Ok(Value::Object(out))
}
