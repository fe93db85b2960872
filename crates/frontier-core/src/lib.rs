//! # frontier-core: the part of frontier that an inference engine embeds
//!
//! Streaming push parsers that emit only **confirmed** events and report, after every byte,
//! the exact set of bytes that may come next; recognisers that answer the same question as a
//! few bytes to copy; and token masks that lift it to a model's vocabulary. Nothing here
//! needs a command line, HTTP, TLS or the agent loop (the `frontier` crate builds those on
//! top), and nothing does I/O except reading a vocabulary file when asked to.
//!
//! Every language implements one contract, [`contract::PushParser`]:
//!
//! - [`ctl`]: CTL, a line-framed tool-call language with length-prefixed raw arguments;
//! - [`apply_patch`]: the patch language of OpenAI Codex (strict and codex modes);
//! - [`udiff`]: unified diff (`git diff`, `diff -u`) in `strict`, `git` and `recount` modes.
//!
//! [`language`] names a parser (language, mode, limits) from strings and builds it: a fourth
//! language is a module here, a variant of [`language::ParserSpec`], and a
//! [`recognizer::Recognizer`] for its machine. [`recognizer`] is the layer every language's
//! `Copy` state machine implements, and [`mask`] the vocabularies, the token trie and the
//! matchers built on it. [`event`] gives every language's events one printable, comparable
//! form, and [`harness`] holds the drivers and contract checks that the tests and the fuzz
//! targets share.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod apply_patch;
pub mod byteset;
pub mod contract;
pub mod ctl;
pub mod dyn_parser;
pub mod event;
pub mod harness;
pub mod language;
pub mod mask;
pub mod recognizer;
pub mod udiff;

pub use byteset::ByteSet;
pub use contract::{ErrorKind, Outcome, ParseError, PushParser, Verdict};
