//! The tokenizer behind `frontier mask --text` for a Hugging Face `tokenizer.json`.
//!
//! The vocabulary loader reads only the token table (`frontier::mask::vocab::hf`); encoding
//! text needs the file's normalizer, pre-tokenizer and model, which is what the `tokenizers`
//! crate implements. It lives here, behind the library's `Encoder` seam, so that the library
//! an engine embeds does not depend on it. Special tokens written in the text are matched as
//! the tokenizer matches them (`add_special_tokens` is off: no BOS is prepended).
//!
//! Nor is the dummy prefix space: a SentencePiece file's `Prepend` of `▁` (Llama-2, Mistral),
//! its `Metaspace` prepend scheme, a byte-level `add_prefix_space` (RoBERTa) make the first
//! token stand for a space the file does not have (`▁call` is ` call`), and every mask after
//! it would be the mask of a text one space longer (CTL and apply_patch refuse it at step 0).
//! `--text` masks the file, as a model writes it: the text is encoded by the same tokenizer
//! with that prefix turned off, so the tokens' bytes are the file's bytes.

use std::path::Path;
use std::sync::Arc;

use frontier::mask::vocab::{Encoder, VocabError, VocabErrorKind};
use frontier::mask::Vocabulary;
use serde_json::Value;
use tokenizers::Tokenizer;

/// A `tokenizer.json` as an encoder, or why the file could not be read as one.
struct HfEncoder(Result<Tokenizer, String>);

impl Encoder for HfEncoder {
    fn encode(&self, text: &str) -> Result<Vec<u32>, VocabError> {
        let tokenizer = self
            .0
            .as_ref()
            .map_err(|why| VocabError::new(VocabErrorKind::NoEncoder, why.clone()))?;
        tokenizer
            .encode(text, false)
            .map(|encoding| encoding.get_ids().to_vec())
            .map_err(|e| VocabError::new(VocabErrorKind::NoEncoder, format!("encoding: {e}")))
    }
}

/// Turns off every part of a tokenizer's JSON that adds a space before the text: `Prepend`
/// normalizers (dropped), `Metaspace`'s prepend scheme (`never`), `add_prefix_space`.
fn without_prefix_space(value: &mut Value) {
    match value {
        Value::Object(map) => {
            match map.get("type").and_then(Value::as_str) {
                Some("Metaspace") => {
                    map.insert("prepend_scheme".into(), "never".into());
                    if map.contains_key("add_prefix_space") {
                        map.insert("add_prefix_space".into(), false.into());
                    }
                }
                Some("ByteLevel") if map.contains_key("add_prefix_space") => {
                    map.insert("add_prefix_space".into(), false.into());
                }
                _ => {}
            }
            for (key, child) in map.iter_mut() {
                if key == "decoder" {
                    continue; // decoding is not used here
                }
                without_prefix_space(child);
            }
        }
        Value::Array(items) => {
            items.retain(|item| item.get("type").and_then(Value::as_str) != Some("Prepend"));
            items.iter_mut().for_each(without_prefix_space);
        }
        _ => {}
    }
    // A lone `Prepend` normalizer.
    if let Some(normalizer) = value.get_mut("normalizer") {
        if normalizer.get("type").and_then(Value::as_str) == Some("Prepend") {
            *normalizer = Value::Null;
        }
    }
}

/// The tokenizer of the file at `path`, its prefix space turned off.
fn load(path: &Path) -> Result<Tokenizer, String> {
    let why =
        |e: &dyn std::fmt::Display| format!("the tokenizers crate cannot load this file: {e}");
    let text = std::fs::read_to_string(path).map_err(|e| why(&e))?;
    let mut json: Value = serde_json::from_str(&text).map_err(|e| why(&e))?;
    without_prefix_space(&mut json);
    serde_json::from_value(json).map_err(|e| why(&e))
}

/// Attaches the file's tokenizer to the vocabulary loaded from it.
pub fn attach(path: &Path) -> impl FnOnce(Vocabulary) -> Vocabulary + '_ {
    move |vocab| vocab.with_encoder(Arc::new(HfEncoder(load(path))))
}
