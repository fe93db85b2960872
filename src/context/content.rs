//! The content store: every payload written once under `<id>@v<version>` and never
//! overwritten; `artifact://<key>` is the only way back to an offloaded payload. This is the
//! in-memory side; [`super::durable`] writes the same puts to disk.

use std::collections::HashMap;

use super::block::ARTIFACT_SCHEME;

/// Payloads by key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContentStore {
    payloads: HashMap<String, String>,
}

impl ContentStore {
    /// An empty store.
    pub fn new() -> ContentStore {
        ContentStore::default()
    }

    /// Stores `payload` under `key` unless the key is taken; whether it was written.
    pub fn put(&mut self, key: &str, payload: &str) -> bool {
        if self.payloads.contains_key(key) {
            return false;
        }
        self.payloads.insert(key.to_owned(), payload.to_owned());
        true
    }

    /// The payload at a key or an `artifact://` URI.
    pub fn get(&self, uri_or_key: &str) -> Option<&str> {
        let key = uri_or_key
            .strip_prefix(ARTIFACT_SCHEME)
            .unwrap_or(uri_or_key);
        self.payloads.get(key).map(String::as_str)
    }

    /// Whether a key is taken.
    pub fn contains(&self, key: &str) -> bool {
        self.payloads.contains_key(key)
    }

    /// The number of payloads.
    pub fn len(&self) -> usize {
        self.payloads.len()
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.payloads.is_empty()
    }

    /// The keys and payloads, sorted by key.
    pub fn sorted(&self) -> Vec<(&str, &str)> {
        let mut all: Vec<(&str, &str)> = self
            .payloads
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        all.sort();
        all
    }
}

/// What `artifact_get` returns for `uri`: the payload cut to `max_chars` characters with
/// CPAT's suffix, or CPAT's error text.
pub fn artifact_get(store: &ContentStore, uri: &str, max_chars: Option<usize>) -> String {
    let Some(payload) = store.get(uri) else {
        return format!("error: no artifact at \"{uri}\"");
    };
    let max = max_chars.unwrap_or(DEFAULT_ARTIFACT_CHARS);
    let units = super::text::utf16_len(payload);
    if units <= max {
        return payload.to_owned();
    }
    format!(
        "{}\n…[truncated, full payload is {units} chars]",
        super::text::head_utf16(payload, max)
    )
}

/// `artifact_get`'s default `max_chars`.
pub const DEFAULT_ARTIFACT_CHARS: usize = 6000;
