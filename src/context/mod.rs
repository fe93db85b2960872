//! Context governance: the agent edits its own future context, under checks.
//!
//! Every message that enters the agent loop becomes a block of a [`store`]; the model can
//! change what it will see next through one tool, `context_update`, whose arguments
//! ([`args`]) are checked op by op against a staged copy ([`stage`], [`ops`], [`chain`]) and
//! committed all or nothing ([`patch`]); every change is journaled before it is made
//! ([`journal`], [`durable`]), so that a run can be rebuilt from its journal and its content
//! store alone ([`replay`]). The behaviour is CPAT's (`cpat_reference.md`), field for field,
//! except for eight deliberate fixes, each marked in the code with a `// divergence N:`
//! comment and listed in `docs/context.md`.
//!
//! | module | what |
//! |---|---|
//! | [`engine`] | the API the loop calls: `ingest`, `apply`, `view`, `budget`, `open` |
//! | [`fallback`] | CPAT's critical and generational fallbacks: the runtime offloads tool results |
//! | [`generational`] | CPAT's generational layout of the view, and the generations |
//! | [`f1`] | LongBench's QA F1, which scores answers of governed runs against references |
//! | [`block`] | the data model in CPAT's JSON shapes |
//! | [`case`] | one offline case of `frontier context apply` |
//! | [`store`] | blocks in order, with positions, chains and the view's totals kept up to date |
//! | [`content`] | payloads written once under `<id>@v<version>`; `artifact_get` |
//! | [`args`] | `context_update` arguments normalised into typed ops |
//! | [`rules`] | every rule's name and message |
//! | [`stage`] | the staged transaction: copies of the touched blocks, one layer per op |
//! | [`ops`] | the eight ops, one module each |
//! | [`chain`] | `chain_atomicity`: tool-call chains stay whole in the view |
//! | [`patch`] | validation of a whole patch, the commit, its result |
//! | [`view`] | the messages the model receives, the manifest, the estimate |
//! | [`tokens`] | CPAT's estimator and the hook for a model's own vocabulary |
//! | [`text`] | JavaScript's whitespace, UTF-16 lengths, cuts at character boundaries |
//! | [`json_object`] | `redact`'s member removal on the JSON text |
//! | [`journal`] | the journal's records |
//! | [`durable`] | the run directory, the order of writes, fsync |
//! | [`replay`] | rebuilding a run from its journal and content store |

pub mod args;
pub mod block;
pub mod case;
pub mod chain;
pub mod content;
pub mod durable;
pub mod engine;
pub mod f1;
pub mod fallback;
pub mod generational;
pub mod journal;
pub mod json_object;
pub mod ops;
pub mod patch;
pub mod replay;
pub mod rules;
pub mod stage;
pub mod store;
pub mod text;
pub mod tokens;
pub mod view;

pub use engine::{Actor, BudgetState, Config, Engine, EngineError, Message, Pressure};
pub use patch::PatchResult;
