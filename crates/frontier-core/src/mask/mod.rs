//! Token masks: which tokens of a model's vocabulary may come next.
//!
//! A constrained decoder samples tokens, not bytes. This module lifts a language's
//! [`Recognizer`](crate::recognizer::Recognizer) to a vocabulary (`masks.md`): a normal token
//! is allowed when the text so far followed by its bytes is viable, an EOS token when the text
//! is a sentence, any other special token and any hole never. The mask is `ceil(V/32)` `u32`
//! words, bit `t % 32` of word `t / 32` for token `t` (llguidance's, xgrammar's and vLLM's
//! layout).
//!
//! - [`vocab`]: the vocabularies (tiktoken, `tokenizer.json`, raw bytes) and their checks;
//! - [`trie`]: every token as a byte path, walked once per mask with pruning;
//! - [`cache`]: masks kept by recogniser key, so a state that recurs costs a copy;
//! - [`line_text`]: the masks of states inside free text, from tables instead of walks;
//! - [`dynamic`]: grammars and matchers for a language named at run time ([`ParserSpec`](crate::language::ParserSpec)), behind `dyn` interfaces;
//! - [`matcher`]: the [`CompiledGrammar`] shared by a vocabulary's matchers and the
//!   [`Matcher`] of one sequence (`fill_mask`, `consume`, `rollback`, …).
//!
//! The loop a caller runs:
//!
//! ```
//! use std::sync::Arc;
//! use frontier_core::ctl::CtlMachine;
//! use frontier_core::mask::{CompiledGrammar, Vocabulary};
//!
//! let tokens: Vec<Vec<u8>> = [&b"call"[..], b" ", b"c1", b" read", b"\n", b"end\n", b"</s>"]
//!     .iter()
//!     .map(|t| t.to_vec())
//!     .collect();
//! let vocab = Arc::new(Vocabulary::from_raw(&tokens, &[], &[6]).unwrap());
//! let grammar = CompiledGrammar::new(vocab, CtlMachine::default());
//! let mut matcher = grammar.matcher();
//! let mut mask = vec![0u32; grammar.vocab().mask_words()];
//! for token in [0, 1, 2, 3, 4, 5, 6] {
//!     matcher.fill_mask(&mut mask).unwrap();
//!     assert!(mask[0] & (1 << token) != 0, "token {token} is allowed");
//!     matcher.consume(token).unwrap();
//! }
//! assert!(matcher.is_terminated());
//! ```

use std::fmt;

pub mod cache;
pub mod dynamic;
pub mod line_text;
pub mod matcher;
pub mod trie;
pub mod vocab;

pub use matcher::{CompiledGrammar, Matcher, DEFAULT_CACHE_BYTES, DEFAULT_HISTORY};
pub use trie::TokenTrie;
pub use vocab::{TokenKind, VocabError, VocabErrorKind, Vocabulary};

/// Why a matcher refused an operation. The matcher is unchanged after every one of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MaskErrorKind {
    /// A token id at or past the vocabulary's size.
    TokenOutOfRange,
    /// A normal token whose bytes the language does not allow here.
    TokenRefused,
    /// A special token that is not EOS, or a hole: never allowed.
    SpecialToken,
    /// EOS before the text is a sentence.
    EosTooEarly,
    /// A token other than EOS after EOS ended the sequence.
    Terminated,
    /// `rollback` of more tokens than the history keeps.
    RollbackPastHistory,
    /// A mask buffer whose length is not `ceil(V/32)`.
    MaskLength,
}

impl crate::contract::ErrorKind for MaskErrorKind {
    fn as_str(self) -> &'static str {
        match self {
            MaskErrorKind::TokenOutOfRange => "token_out_of_range",
            MaskErrorKind::TokenRefused => "token_refused",
            MaskErrorKind::SpecialToken => "special_token",
            MaskErrorKind::EosTooEarly => "eos_too_early",
            MaskErrorKind::Terminated => "terminated",
            MaskErrorKind::RollbackPastHistory => "rollback_past_history",
            MaskErrorKind::MaskLength => "mask_length",
        }
    }
}

/// A matcher's refusal, with what it refused. `Copy`: refusing allocates nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MaskError {
    /// `token` is not below `vocab_size`.
    TokenOutOfRange {
        /// The id.
        token: u32,
        /// The vocabulary's size.
        vocab_size: u32,
    },
    /// Byte `offset` of `token` (`byte`) is not allowed after the bytes before it.
    TokenRefused {
        /// The id.
        token: u32,
        /// The refused byte's index in the token.
        offset: u32,
        /// The refused byte.
        byte: u8,
    },
    /// `token` is a special token that is not EOS, or a hole.
    SpecialToken {
        /// The id.
        token: u32,
    },
    /// EOS `token` before the text is a sentence.
    EosTooEarly {
        /// The id.
        token: u32,
    },
    /// `token`, not an EOS token, after EOS ended the sequence.
    Terminated {
        /// The id.
        token: u32,
    },
    /// `rollback(requested)` with only `kept` tokens of history.
    RollbackPastHistory {
        /// Tokens asked to undo.
        requested: usize,
        /// Tokens the history holds.
        kept: usize,
    },
    /// A mask buffer of `got` words where the vocabulary needs `expected`.
    MaskLength {
        /// `ceil(V/32)`.
        expected: usize,
        /// The buffer's length.
        got: usize,
    },
}

impl MaskError {
    /// The error's kind.
    pub fn kind(&self) -> MaskErrorKind {
        match self {
            MaskError::TokenOutOfRange { .. } => MaskErrorKind::TokenOutOfRange,
            MaskError::TokenRefused { .. } => MaskErrorKind::TokenRefused,
            MaskError::SpecialToken { .. } => MaskErrorKind::SpecialToken,
            MaskError::EosTooEarly { .. } => MaskErrorKind::EosTooEarly,
            MaskError::Terminated { .. } => MaskErrorKind::Terminated,
            MaskError::RollbackPastHistory { .. } => MaskErrorKind::RollbackPastHistory,
            MaskError::MaskLength { .. } => MaskErrorKind::MaskLength,
        }
    }

    /// The refused token, if the error is about one.
    pub fn token(&self) -> Option<u32> {
        match *self {
            MaskError::TokenOutOfRange { token, .. }
            | MaskError::TokenRefused { token, .. }
            | MaskError::SpecialToken { token }
            | MaskError::EosTooEarly { token }
            | MaskError::Terminated { token } => Some(token),
            MaskError::RollbackPastHistory { .. } | MaskError::MaskLength { .. } => None,
        }
    }
}

impl fmt::Display for MaskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::contract::ErrorKind;
        write!(f, "{}: ", self.kind().as_str())?;
        match *self {
            MaskError::TokenOutOfRange { token, vocab_size } => {
                write!(f, "token {token} is past the vocabulary's {vocab_size} ids")
            }
            MaskError::TokenRefused {
                token,
                offset,
                byte,
            } => write!(
                f,
                "token {token}: its byte {offset} (0x{byte:02x}) is not allowed there"
            ),
            MaskError::SpecialToken { token } => {
                write!(
                    f,
                    "token {token} is a special token or a hole, never allowed"
                )
            }
            MaskError::EosTooEarly { token } => {
                write!(f, "EOS token {token} before the text is a sentence")
            }
            MaskError::Terminated { token } => {
                write!(f, "token {token} after EOS ended the sequence")
            }
            MaskError::RollbackPastHistory { requested, kept } => {
                write!(f, "rollback of {requested} tokens, {kept} kept")
            }
            MaskError::MaskLength { expected, got } => {
                write!(f, "a mask buffer of {got} words, {expected} needed")
            }
        }
    }
}

impl std::error::Error for MaskError {}
