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

    /// [`Matcher::fill_next_token_bitmask`].
    fn fill_next_token_bitmask(&self, words: &mut [u32]) -> Result<(), MaskError>;
    /// [`Matcher::accept_token`].
    fn accept_token(&mut self, token: u32) -> bool;
    /// [`Matcher::accept_tokens`].
    fn accept_tokens(&mut self, tokens: &[u32]) -> bool;
    /// [`Matcher::is_accepting`].
    fn is_accepting(&self) -> bool;
}

/// One row of a batch fill ([`fill_batch`]): a matcher, its mask's words, and the row to fill,
/// at least that many words wide (a row as wide as a model's logits).
pub type FillJob<'a> = (&'a dyn DynMatcher, usize, &'a mut [u32]);

/// Why a batch fill stopped.
#[derive(Debug)]
pub enum BatchFillError {
    /// A matcher refused ([`DynMatcher::fill_mask`]'s error).
    Mask(MaskError),
    /// A fill thread panicked.
    Panic,
}

/// Fills `row` with `matcher`'s mask (its first `mask_words` words) and zeros past it.
pub fn fill_row(
    matcher: &dyn DynMatcher,
    mask_words: usize,
    row: &mut [u32],
) -> Result<(), MaskError> {
    let (mask, past) = row.split_at_mut(mask_words);
    matcher.fill_mask(mask)?;
    past.fill(0);
    Ok(())
}

/// Fills every job's row ([`fill_row`]) on this thread and `threads - 1` scoped threads
/// spawned for the call, each taking the next row not yet taken: rows cost from a cached copy
/// to a trie walk, so a fixed split would leave a thread idle while another walks. The first
/// failure stops every thread. What a host's batch call (C's `frontier_matcher_fill_masks`,
/// Python's `fill_next_token_bitmasks`, as llguidance's `llg_par_compute_mask`) runs.
pub fn fill_batch(mut jobs: Vec<FillJob<'_>>, threads: usize) -> Result<(), BatchFillError> {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Mutex, PoisonError};
    let fill = |(matcher, words, row): &mut FillJob<'_>| fill_row(*matcher, *words, row);
    let threads = threads.min(jobs.len()).max(1);
    if threads == 1 {
        return jobs
            .iter_mut()
            .try_for_each(fill)
            .map_err(BatchFillError::Mask);
    }
    let queue = Mutex::new(jobs.iter_mut());
    let failed = AtomicBool::new(false);
    let work = || -> Result<(), MaskError> {
        while !failed.load(Ordering::Relaxed) {
            let next = queue.lock().unwrap_or_else(PoisonError::into_inner).next();
            let Some(job) = next else {
                return Ok(());
            };
            if let Err(e) = fill(job) {
                failed.store(true, Ordering::Relaxed);
                return Err(e);
            }
        }
        Ok(())
    };
    std::thread::scope(|scope| {
        let spawned: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
        let mut result = work().map_err(BatchFillError::Mask);
        for handle in spawned {
            let joined = handle.join().map_err(|_| BatchFillError::Panic);
            if result.is_ok() {
                result = joined.and_then(|r| r.map_err(BatchFillError::Mask));
            }
        }
        result
    })
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
    fn fill_next_token_bitmask(&self, words: &mut [u32]) -> Result<(), MaskError> {
        Matcher::fill_next_token_bitmask(self, words)
    }
    fn accept_token(&mut self, token: u32) -> bool {
        Matcher::accept_token(self, token)
    }
    fn accept_tokens(&mut self, tokens: &[u32]) -> bool {
        Matcher::accept_tokens(self, tokens)
    }
    fn is_accepting(&self) -> bool {
        Matcher::is_accepting(self)
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
