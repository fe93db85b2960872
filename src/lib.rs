//! # frontier: streaming parsers for what language models write while they write it
//!
//! A model's output arrives a few bytes at a time. frontier's parsers take it as it comes and
//! emit only **confirmed** events, final and never revoked, so that a runtime can run a tool
//! call or apply a hunk the moment it is complete and never a moment before. After every byte
//! they also report the exact set of bytes that may come next, which is what a constrained
//! decoder needs.
//!
//! The parsers, recognisers and token masks live in the crate `frontier-core`, which an
//! inference engine embeds without this crate's command line, HTTP client or agent; they are
//! re-exported here under the same paths ([`contract`], [`ctl`], [`apply_patch`], [`udiff`],
//! [`language`], [`recognizer`], [`mask`], [`event`], [`harness`]). This crate adds what sits
//! above them: [`apply`] applies the patches the parsers confirm to a workspace, unit by unit
//! as they are confirmed and all or nothing at the end; [`agent`] is the loop that executes
//! only confirmed tool calls; [`streams`] reads the providers' wire formats (OpenAI Chat,
//! OpenAI Responses, Anthropic Messages) and confirms their tool calls one by one;
//! [`json_baseline`] is the JSON-buffer framing CTL is measured against, and [`truncation`] the
//! experiment that compares them cut off at every byte.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod agent;
pub mod apply;
pub mod json_baseline;
pub mod streams;
pub mod truncation;

pub use frontier_core::{
    apply_patch, byteset, contract, ctl, event, harness, language, mask, recognizer, udiff,
};
pub use frontier_core::{ByteSet, ErrorKind, Outcome, ParseError, PushParser, Verdict};

/// The Rust examples of the README and of `docs/`, run by `cargo test --doc`; their command
/// examples run in `tests/doc_examples.rs`.
#[cfg(doctest)]
mod doc_examples {
    #[doc = include_str!("../README.md")]
    struct Readme;
    #[doc = include_str!("../docs/masks.md")]
    struct Masks;
}
