//! Matchers for a language named at run time.
//!
//! [`CompiledGrammar`] and [`Matcher`] are generic over the recogniser, which is what keeps a
//! walk's inner loop free of indirection. Front ends that learn the language from a string (the
//! `frontier mask` command, the C ABI, the Python package) compile a [`ParserSpec`] into an
//! `Arc<dyn DynGrammar>` instead, and hand out `Box<dyn DynMatcher>`s from it: one virtual call
//! per operation, none inside a mask.
//!
//! ```
//! use std::sync::Arc;
//! use frontier_core::language::ParserSpec;
//! use frontier_core::mask::{dynamic, Vocabulary};
//!
//! let tokens: Vec<Vec<u8>> = [
//!     &b"*** Begin Patch\n"[..],
//!     b"*** Add File: a\n",
//!     b"+x\n",
//!     b"*** End Patch",
//!     b"<eos>",
//! ]
//! .iter()
//! .map(|t| t.to_vec())
//! .collect();
//! let vocab = Arc::new(Vocabulary::from_raw(&tokens, &[], &[4]).unwrap());
//! let spec = ParserSpec::parse("apply_patch", None).unwrap();
//! let grammar = dynamic::compile(&spec, vocab);
//! let mut matcher = grammar.matcher();
//! let mut mask = vec![0u32; grammar.mask_words()];
//! matcher.fill_mask(&mut mask).unwrap();
//! assert_eq!(mask[0], 0b00001, "only `*** Begin Patch\n` may start a patch");
//! for token in [0, 1, 2, 3] {
//!     matcher.consume(token).unwrap();
//! }
//! assert!(matcher.accepting());
//! matcher.fill_mask(&mut mask).unwrap();
//! assert_eq!(mask[0], 0b10000, "after `*** End Patch`, only EOS (the LF is no token here)");
//! matcher.consume(4).unwrap();
//! assert!(matcher.is_terminated());
//! ```

use std::sync::Arc;

use crate::contract::PushParser;
use crate::language::{ParserSpec, ParserVisitor};
use crate::recognizer::Recognizer;

use super::cache::CacheStats;
use super::{CompiledGrammar, MaskError, Matcher, Vocabulary};

/// A [`CompiledGrammar`] whose recogniser is known only at run time.
pub trait DynGrammar: Send + Sync {
    /// A matcher at the start of a stream, keeping the default rollback depth.
    fn matcher(&self) -> Box<dyn DynMatcher>;
    /// A matcher keeping the last `depth` tokens for `rollback`.
    fn matcher_with_history(&self, depth: usize) -> Box<dyn DynMatcher>;
    /// The vocabulary.
    fn vocab(&self) -> &Arc<Vocabulary>;
    /// Words in one mask: `ceil(V / 32)`.
    fn mask_words(&self) -> usize {
        self.vocab().mask_words()
    }
    /// Computes and keeps the masks of the states `sample` passes through
    /// ([`CompiledGrammar::warm_up`]); returns how many states that was.
    fn warm_up(&self, sample: &[u8]) -> usize;
    /// The mask cache's hits, misses and size ([`CompiledGrammar::cache_stats`]).
    fn cache_stats(&self) -> CacheStats;
}

/// A [`Matcher`] whose recogniser is known only at run time; every method is the generic
/// matcher's.
pub trait DynMatcher: Send + Sync {
    /// [`Matcher::fill_mask`].
    fn fill_mask(&self, words: &mut [u32]) -> Result<(), MaskError>;
    /// [`Matcher::consume`].
    fn consume(&mut self, token: u32) -> Result<(), MaskError>;
    /// [`Matcher::rollback`].
    fn rollback(&mut self, n: usize) -> Result<(), MaskError>;
    /// [`Matcher::validate_tokens`].
    fn validate_tokens(&self, tokens: &[u32]) -> usize;
    /// [`Matcher::forced_bytes`].
    fn forced_bytes(&self, out: &mut Vec<u8>);
    /// [`Matcher::accepting`].
    fn accepting(&self) -> bool;
    /// [`Matcher::is_terminated`].
    fn is_terminated(&self) -> bool;
    /// [`Matcher::is_error`].
    fn is_error(&self) -> bool;
    /// [`Matcher::reset`].
    fn reset(&mut self);
    /// An independent matcher in the same state (a fork of the sequence).
    fn clone_box(&self) -> Box<dyn DynMatcher>;
}

/// A compiled grammar behind the [`DynGrammar`] interface.
struct Shared<R: Recognizer>(Arc<CompiledGrammar<R>>);

impl<R: Recognizer> DynGrammar for Shared<R> {
    fn matcher(&self) -> Box<dyn DynMatcher> {
        Box::new(self.0.matcher())
    }

    fn matcher_with_history(&self, depth: usize) -> Box<dyn DynMatcher> {
        Box::new(self.0.matcher_with_history(depth))
    }

    fn vocab(&self) -> &Arc<Vocabulary> {
        self.0.vocab()
    }

    fn warm_up(&self, sample: &[u8]) -> usize {
        self.0.warm_up(sample)
    }

    fn cache_stats(&self) -> CacheStats {
        self.0.cache_stats()
    }
}

impl<R: Recognizer> DynMatcher for Matcher<R> {
    fn fill_mask(&self, words: &mut [u32]) -> Result<(), MaskError> {
        Matcher::fill_mask(self, words)
    }
    fn consume(&mut self, token: u32) -> Result<(), MaskError> {
        Matcher::consume(self, token)
    }
    fn rollback(&mut self, n: usize) -> Result<(), MaskError> {
        Matcher::rollback(self, n)
    }
    fn validate_tokens(&self, tokens: &[u32]) -> usize {
        Matcher::validate_tokens(self, tokens)
    }
    fn forced_bytes(&self, out: &mut Vec<u8>) {
        Matcher::forced_bytes(self, out)
    }
    fn accepting(&self) -> bool {
        Matcher::accepting(self)
    }
    fn is_terminated(&self) -> bool {
        Matcher::is_terminated(self)
    }
    fn is_error(&self) -> bool {
        Matcher::is_error(self)
    }
    fn reset(&mut self) {
        Matcher::reset(self)
    }
    fn clone_box(&self) -> Box<dyn DynMatcher> {
        Box::new(self.clone())
    }
}

/// The grammar of the language `spec` names over `vocab`.
pub fn compile(spec: &ParserSpec, vocab: Arc<Vocabulary>) -> Arc<dyn DynGrammar> {
    spec.run(Compile(vocab))
}

struct Compile(Arc<Vocabulary>);

impl ParserVisitor for Compile {
    type Output = Arc<dyn DynGrammar>;
    fn visit<P: PushParser>(self, parser: P) -> Arc<dyn DynGrammar> {
        Arc::new(Shared(CompiledGrammar::new(self.0, parser.recognizer())))
    }
}
