//! The agent loop: a thin consumer that executes only confirmed frames.
//!
//! `frontier run` drives a model (a recorded session or an OpenAI-compatible endpoint) whose
//! output is CTL. The loop ([`runner`]) pushes the streamed bytes into the CTL parser and
//! acts on a tool call only when the call's `end` line is confirmed, never before; once
//! recorded, a call is executed or explicitly refused. The transcript is append-only JSON
//! lines ([`transcript`]).
//!
//! | module | what |
//! |---|---|
//! | [`model`] | the one interface both model sources implement |
//! | [`replay`] | recorded turns (`--model replay:FILE`) |
//! | [`openai`], [`sse`] | streaming chat completions over server-sent events (`--model openai`) |
//! | [`runner`] | the loop, the streamed concurrency partitioning |
//! | [`recovery`] | the recovery state machine: named transitions, one lock or counter per path |
//! | [`policy`] | judging a call: toolsets by trust boundary, schemas, paths, the guard |
//! | [`guard`] | the hard-line rules for `shell` |
//! | [`tools`], [`shell`] | what the five tools do |
//! | [`patch`] | the seam to the apply_patch parser and application engine |
//!
//! `docs/agent.md` records the decisions the specification leaves open.

pub mod guard;
pub mod model;
pub mod openai;
pub mod patch;
pub mod policy;
pub mod recovery;
pub mod replay;
pub mod runner;
pub mod shell;
pub mod sse;
pub mod tools;
pub mod transcript;

pub use model::{Finish, Flow, Message, ModelError, ModelSource, Request, Role};
pub use policy::Toolset;
pub use runner::{run, Config, EndStatus};
