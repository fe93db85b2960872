//! The agent loop: a thin consumer that executes only confirmed frames.
//!
//! `frontier run` drives a model (a recorded session, an OpenAI-compatible endpoint, OpenAI
//! Responses or Anthropic Messages) whose output is CTL, or whose tool calls are the API's own
//! ([`native`], `--tools native`). The loop ([`runner`]) pushes the streamed bytes into the CTL parser and
//! acts on a tool call only when the call's `end` line is confirmed, never before; once
//! recorded, a call is executed or explicitly refused. The transcript is append-only JSON
//! lines ([`transcript`]).
//!
//! | module | what |
//! |---|---|
//! | [`model`] | the one interface both model sources implement |
//! | [`replay`] | recorded turns (`--model replay:FILE`) |
//! | [`openai`], [`sse`] (shared with [`crate::streams`]), [`http`] | streaming chat completions over server-sent events (`--model openai`) |
//! | [`provider`], [`retry`] | OpenAI Chat, OpenAI Responses and Anthropic Messages read by [`crate::streams`], native tools or CTL; which HTTP errors are retried |
//! | [`native`] | the loop with native tool calling: calls confirmed by the stream reader, results in each API's shape |
//! | [`runner`] | the loop, the streamed concurrency partitioning |
//! | [`recovery`] | the recovery state machine: named transitions, one lock or counter per path |
//! | [`policy`] | judging a call: toolsets by trust boundary, schemas, paths, the guard |
//! | [`guard`] | the hard-line rules for `shell` |
//! | [`tools`], [`shell`] | what the five tools do |
//! | [`patch`] | the seam to the apply_patch parser and application engine |
//! | [`context`] | context governance: the conversation in the context engine, the ladder, `context_update` and `artifact_get` |
//!
//! `docs/agent.md` records the decisions the specification leaves open.
//!
//! # Example
//!
//! A recorded turn whose output limit cut a call in two; the continuation completes it and it
//! runs once:
//!
//! ```
//! use frontier::agent::replay::{Replay, Turn};
//! use frontier::agent::{Config, EndStatus, Finish};
//! use frontier::apply::Workspace;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let config = Config::new(Workspace::new(dir.path()).unwrap());
//! let stream = b"call c1 write_file\narg path 5\na.txtarg content 3\nhi\nend\n";
//! let turns = vec![
//!     Turn::Output { bytes: stream[..30].to_vec(), finish: Finish::Length },
//!     Turn::Output { bytes: stream[30..].to_vec(), finish: Finish::ToolCalls },
//! ];
//! let mut model = Replay::new("example", turns, 1);
//! let mut transcript = Vec::new();
//! let status = frontier::agent::run(&config, &mut model, &mut transcript).unwrap();
//! assert_eq!(status, EndStatus::SourceEnded);
//! assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"hi\n");
//! let text = String::from_utf8(transcript).unwrap();
//! assert_eq!(text.matches(r#""type":"tool_result""#).count(), 1);
//! assert!(text.contains(r#""reason":"escalate_output_limit""#));
//! ```

pub mod context;
pub mod guard;
pub mod http;
pub mod model;
pub mod native;
pub mod openai;
pub mod patch;
pub mod policy;
pub mod provider;
pub mod recovery;
pub mod replay;
pub mod retry;
pub mod runner;
pub mod shell;
pub use crate::streams::sse;
pub mod tools;
pub mod transcript;

pub use model::{Finish, Flow, Message, ModelError, ModelSource, Request, Role};
pub use native::{run_native, NativeSource};
pub use policy::Toolset;
pub use runner::{run, Config, EndStatus};
