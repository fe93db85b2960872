//! Token counts in the model's own vocabulary: a [`TokenCounter`] over
//! [`Vocabulary::encode`], for `frontier run --vocab`.

use std::sync::Arc;

use frontier_core::mask::Vocabulary;

use crate::context::tokens::{CpatEstimator, Measure, TokenCounter};

/// Counts with a vocabulary's tokenizer. A piece it cannot encode is counted with CPAT's
/// estimator instead (the measure is a token count either way).
pub struct VocabCounter {
    vocab: Arc<Vocabulary>,
    name: String,
}

impl VocabCounter {
    /// A counter over `vocab`, recorded in `run.json` as `vocab:<name>`.
    pub fn new(vocab: Arc<Vocabulary>, name: &str) -> VocabCounter {
        VocabCounter {
            vocab,
            name: format!("vocab:{name}"),
        }
    }
}

impl TokenCounter for VocabCounter {
    fn name(&self) -> &str {
        &self.name
    }

    fn measure(&self, text: &str) -> Measure {
        let a = match self.vocab.encode(text) {
            Ok(ids) => ids.len() as u64,
            Err(_) => CpatEstimator.count(text),
        };
        Measure { a, b: 0 }
    }

    fn tokens(&self, measure: Measure) -> u64 {
        measure.a.max(1)
    }
}
