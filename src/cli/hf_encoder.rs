//! The tokenizer behind `frontier mask --text` for a Hugging Face `tokenizer.json`.
//!
//! The vocabulary loader reads only the token table (`frontier::mask::vocab::hf`); encoding
//! text needs the file's normalizer, pre-tokenizer and model, which is what the `tokenizers`
//! crate implements. It lives here, behind the library's `Encoder` seam, so that the library
//! an engine embeds does not depend on it. Special tokens written in the text are matched as
//! the tokenizer matches them (`add_special_tokens` is off: no BOS is prepended).

use std::path::Path;
use std::sync::Arc;

use frontier::mask::vocab::{Encoder, VocabError, VocabErrorKind};
use frontier::mask::Vocabulary;
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

/// Attaches the file's tokenizer to the vocabulary loaded from it.
pub fn attach(path: &Path) -> impl FnOnce(Vocabulary) -> Vocabulary + '_ {
    move |vocab| {
        let tokenizer = Tokenizer::from_file(path)
            .map_err(|e| format!("the tokenizers crate cannot load this file: {e}"));
        vocab.with_encoder(Arc::new(HfEncoder(tokenizer)))
    }
}
