//! # frontier: streaming parsers for what language models write while they write it
//!
//! A model's output arrives a few bytes at a time. frontier's parsers take it as it comes and
//! emit only **confirmed** events, final and never revoked, so that a runtime can run a tool
//! call or apply a hunk the moment it is complete and never a moment before. After every byte
//! they also report the exact set of bytes that may come next, which is what a constrained
//! decoder needs.
//!
//! Every language implements one contract, [`contract::PushParser`]:
//!
//! - [`ctl`]: CTL, a line-framed tool-call language with length-prefixed raw arguments;
//! - [`apply_patch`]: the patch language of OpenAI Codex (strict and codex modes);
//! - [`udiff`]: unified diff (`git diff`, `diff -u`) in `strict`, `git` and `recount` modes;
//! - [`json_baseline`]: the JSON-buffer framing CTL is measured against.
//!
//! [`event`] gives every language's events one printable, comparable form, and [`harness`]
//! holds the drivers and contract checks that the tests and the fuzz targets share.
//! [`apply`] applies the patches the parsers confirm to a workspace: unit by unit as they are
//! confirmed, all or nothing at the end. [`agent`] is the loop that executes only confirmed
//! tool calls, and [`truncation`] the experiment that compares it with JSON framings cut off
//! at every byte.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod agent;
pub mod apply;
pub mod apply_patch;
pub mod byteset;
pub mod contract;
pub mod ctl;
pub mod event;
pub mod harness;
pub mod json_baseline;
pub mod mask;
pub mod recognizer;
pub mod truncation;
pub mod udiff;

pub use byteset::ByteSet;
pub use contract::{ErrorKind, Outcome, ParseError, PushParser, Verdict};

/// The Rust examples of the README and of `docs/`, run by `cargo test --doc`; their command
/// examples run in `tests/doc_examples.rs`.
#[cfg(doctest)]
mod doc_examples {
    #[doc = include_str!("../README.md")]
    struct Readme;
    #[doc = include_str!("../docs/masks.md")]
    struct Masks;
}
