//! frontier's C ABI: the header is `include/frontier.h`, the guide `docs/c.md`.
//!
//! Three opaque handles wrap the Rust API an engine embeds: [`FrontierVocab`] (a shared,
//! read-only [`Vocabulary`](frontier_core::mask::Vocabulary)), [`FrontierMatcher`] (one
//! sequence's token-mask matcher) and [`FrontierParser`] (a push parser emitting events as
//! JSON). Every entry point runs inside [`boundary::guard`], so no panic crosses into C; errors
//! go to the caller's buffer (constructors) or to the handle's sticky message (`*_last_error`).
//! There is no global state: everything lives in the handles.
//!
//! This is the only crate of the workspace with `unsafe` code: dereferencing the pointers C
//! hands in. Each block says why it holds.

#![deny(unsafe_op_in_unsafe_fn)]

pub mod boundary;
pub mod matcher;
pub mod parser;
pub mod vocab;

pub use matcher::FrontierMatcher;
pub use parser::{FrontierEventCallback, FrontierParser};
pub use vocab::{FrontierVocab, FrontierVocabInit};
