//! The journal's records (`cpat_reference.md` §8), one JSON object per line: `ingest`,
//! `patch`, `llm_call`, each `{type, seq, ts, …}`.
//!
//! frontier's records hold CPAT's fields and what a replay needs besides, so that the store
//! can be rebuilt from the journal and the content store alone: an `ingest` carries the whole
//! block but its text (which is in the content store under `content_key`) and the SHA-256 of
//! that text; a `patch` carries the options it ran under and the SHA-256 of every payload it
//! stored, and a committed patch of the generational fallback the `generation` it gave its
//! offloaded blocks ([`super::generational`]). A change that takes several records (a patch's summaries and the patch; a reply
//! and its reasoning trace) marks all but its last with `"continued":true`: the last record
//! is the commit point, and a replay applies nothing of a change whose last record is missing.

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::args::{item_json, Item};
use super::block::Block;
use super::ops::Options;
use super::patch::PatchResult;

/// The hex SHA-256 of a payload.
pub fn sha256_hex(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn head(kind: &str, seq: u64, ts: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("type".into(), kind.into());
    m.insert("seq".into(), seq.into());
    m.insert("ts".into(), ts.into());
    m
}

/// An `ingest` record; `ts` is the block's `created_at`.
pub fn ingest(seq: u64, block: &Block, sha256: &str, continued: bool) -> Value {
    let mut m = head("ingest", seq, &block.created_at);
    m.insert("block_id".into(), block.id.clone().into());
    m.insert("role".into(), json!(block.role));
    m.insert("kind".into(), block.kind.as_str().into());
    m.insert("content_key".into(), block.content_key().into());
    m.insert("token_count".into(), block.token_count.into());
    m.insert("description".into(), block.description.clone().into());
    m.insert("content_sha256".into(), sha256.into());
    m.insert("source_ids".into(), json!(block.source_ids));
    m.insert("visibility".into(), json!(block.visibility));
    m.insert("retention".into(), json!(block.retention));
    if let Some(p) = block.protected {
        m.insert("protected".into(), p.into());
    }
    if let Some(api) = &block.api {
        m.insert("api".into(), json!(api));
    }
    if let Some(origin) = block.origin {
        m.insert("origin".into(), json!(origin));
    }
    if continued {
        m.insert("continued".into(), true.into());
    }
    Value::Object(m)
}

/// What a `patch` record holds besides its header.
pub struct PatchFields<'a> {
    /// `agent` or `runtime`.
    pub actor: &'a str,
    /// The update's reason.
    pub reason: &'a str,
    /// The normalised ops.
    pub operations: &'a [Item],
    /// The options it ran under.
    pub options: Options,
    /// The result the agent received.
    pub result: &'a PatchResult,
    /// Key and SHA-256 of each payload it stored.
    pub content_puts: &'a [(String, String)],
    /// The generation a committed retiring patch gives its offloaded blocks (see
    /// [`super::generational`]); the record has the field only then.
    pub generation: Option<u64>,
}

/// A `patch` record.
pub fn patch(seq: u64, ts: &str, f: &PatchFields<'_>) -> Value {
    let mut m = head("patch", seq, ts);
    m.insert("actor".into(), f.actor.into());
    m.insert("reason".into(), f.reason.into());
    m.insert(
        "operations".into(),
        Value::Array(f.operations.iter().map(item_json).collect()),
    );
    m.insert("result".into(), json!(f.result));
    m.insert("options".into(), json!(f.options));
    let puts: Map<String, Value> = f
        .content_puts
        .iter()
        .map(|(k, h)| (k.clone(), Value::from(h.as_str())))
        .collect();
    m.insert("content_puts".into(), Value::Object(puts));
    if let Some(g) = f.generation {
        m.insert("generation".into(), g.into());
    }
    Value::Object(m)
}

/// An `llm_call` record.
pub fn llm_call(seq: u64, ts: &str, model: &str, usage: &Value, visible: u64, est: u64) -> Value {
    let mut m = head("llm_call", seq, ts);
    m.insert("model".into(), model.into());
    m.insert("usage".into(), usage.clone());
    m.insert("visible_blocks".into(), visible.into());
    m.insert("est_view_tokens".into(), est.into());
    Value::Object(m)
}

/// The record without `ts` (the form `frontier context apply` prints).
pub fn without_ts(record: &Value) -> Value {
    let mut r = record.clone();
    if let Some(o) = r.as_object_mut() {
        o.shift_remove("ts");
    }
    r
}
