//! The engine the agent loop calls: [`Engine::ingest`] a message, [`Engine::apply`] a patch
//! from the agent or the runtime, [`Engine::view`] what the model sees next,
//! [`Engine::budget`] how full the window is. Every change is journaled before it is made
//! (see [`super::durable`]); after a write fails the engine refuses further changes, and a
//! run is picked up again with [`Engine::open`], which replays it.

use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::args::{self, ArgsError, ContextUpdate};
use super::block::{Api, Block, Content, Kind, Origin, Retention, Role, ToolCall, Visibility};
use super::content::{self, ContentStore};
use super::durable::{self, Durability, Memory, RunDir, Storage};
use super::generational::{self, Generations};
use super::journal::{self, PatchFields};
use super::ops::Options;
use super::patch::{self, Budget, Commit, PatchResult};
use super::store::{Anchor, BlockStore, Slot};
use super::text::describe_text;
use super::tokens::{CpatEstimator, TokenCounter};
use super::view::{self, View};

/// The budget's configuration and the gated ops.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// The window, in tokens (CPAT's CLI: 16,000).
    pub max_tokens: u64,
    /// Soft pressure from this fraction (0.7).
    pub soft_ratio: f64,
    /// Must-act pressure from this fraction (0.8).
    pub must_act_ratio: f64,
    /// Critical pressure from this fraction (0.95).
    pub critical_ratio: f64,
    /// `replace` and `redact` (both off).
    pub options: Options,
    /// CPAT's generational layout of the view and its fallback (off, as in CPAT); see
    /// [`super::generational`]. Written to `run.json` only when on.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub generational: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_tokens: DEFAULT_MAX_TOKENS,
            soft_ratio: 0.7,
            must_act_ratio: 0.8,
            critical_ratio: 0.95,
            options: Options::default(),
            generational: false,
        }
    }
}

/// The default window.
pub const DEFAULT_MAX_TOKENS: u64 = 16_000;

/// How full the window is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pressure {
    /// Below the soft limit.
    Ok,
    /// From the soft ratio.
    Soft,
    /// From the must-act ratio.
    MustAct,
    /// From the critical ratio.
    Critical,
}

impl Pressure {
    /// The level's name, as journaled and reported (`must_act`).
    pub fn as_str(self) -> &'static str {
        match self {
            Pressure::Ok => "ok",
            Pressure::Soft => "soft",
            Pressure::MustAct => "must_act",
            Pressure::Critical => "critical",
        }
    }
}

/// The budget now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BudgetState {
    /// The window.
    pub max: u64,
    /// `floor(max × soft ratio)`.
    pub soft_limit: u64,
    /// The calibrated estimate of the view.
    pub used: u64,
    /// Its level.
    pub pressure: Pressure,
}

/// Who sends a patch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Actor {
    /// The model, through `context_update`.
    Agent,
    /// The runtime's own measures.
    Runtime,
}

impl Actor {
    /// Its name in the journal.
    pub fn as_str(self) -> &'static str {
        match self {
            Actor::Agent => "agent",
            Actor::Runtime => "runtime",
        }
    }
}

/// A message entering the store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// The system prompt.
    System {
        /// Its text.
        text: String,
    },
    /// A user message; `origin: Some(Runtime)` for a reminder the runtime injects.
    User {
        /// Its text.
        text: String,
        /// Who wrote it.
        origin: Option<Origin>,
    },
    /// A model reply.
    Assistant {
        /// Its text.
        text: String,
        /// Its tool calls.
        tool_calls: Vec<ToolCall>,
        /// Its reasoning, kept as a trace while its calls are open (an empty one makes no
        /// trace: CPAT tests `reasoning_content` for truth).
        reasoning: Option<String>,
    },
    /// A tool's result.
    ToolResult {
        /// The call it answers.
        tool_call_id: String,
        /// The tool.
        name: String,
        /// The result.
        text: String,
    },
    /// A budget report (runtime-owned).
    BudgetReport {
        /// The report's JSON text.
        text: String,
        /// `soft`, `must_act` or `critical`.
        pressure: String,
    },
}

/// Why the engine could not do what it was asked.
#[derive(Debug)]
pub enum EngineError {
    /// The arguments are not an update (nothing was journaled).
    Args(ArgsError),
    /// A write failed: nothing of the change is visible, and the engine refuses further
    /// changes (reopen the run to go on).
    Storage(std::io::Error),
    /// An earlier write failed.
    Poisoned,
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EngineError::Args(e) => e.fmt(f),
            EngineError::Storage(e) => write!(f, "cannot write the run: {e}"),
            EngineError::Poisoned => {
                f.write_str("an earlier write of the run failed; reopen the run to continue")
            }
        }
    }
}

impl std::error::Error for EngineError {}

/// The context engine of one run.
pub struct Engine {
    store: BlockStore,
    content: ContentStore,
    config: Config,
    storage: Box<dyn Storage>,
    seq: u64,
    clock: Box<dyn FnMut() -> String + Send>,
    poisoned: bool,
    /// (prompt tokens the model reported, the estimate at that call).
    calibration: Option<(u64, u64)>,
    /// The retired blocks' generations (the generational layout).
    generations: Generations,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("store", &self.store)
            .field("seq", &self.seq)
            .finish()
    }
}

/// The contents of `run.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunConfig {
    /// The budget and options.
    #[serde(flatten)]
    pub config: Config,
    /// The token counter's name.
    pub token_counter: String,
}

impl Engine {
    /// An engine over a given store, writing through `storage`.
    pub fn with_parts(
        config: Config,
        store: BlockStore,
        content: ContentStore,
        storage: Box<dyn Storage>,
    ) -> Engine {
        Engine {
            store,
            content,
            config,
            storage,
            seq: 0,
            clock: Box::new(durable::iso_now),
            poisoned: false,
            calibration: None,
            generations: Generations::default(),
        }
    }

    /// An empty engine in memory, with CPAT's estimator.
    pub fn in_memory(config: Config) -> Engine {
        Engine::with_parts(
            config,
            BlockStore::new(Arc::new(CpatEstimator)),
            ContentStore::new(),
            Box::new(Memory::default()),
        )
    }

    /// A new run in `dir` (which must not hold a journal yet).
    pub fn create(
        dir: &Path,
        config: Config,
        tokens: Arc<dyn TokenCounter>,
        durability: Durability,
    ) -> std::io::Result<Engine> {
        if dir.join(durable::JOURNAL_FILE).exists() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                format!("{} already holds a run", dir.display()),
            ));
        }
        std::fs::create_dir_all(dir)?;
        let run = RunConfig {
            config,
            token_counter: tokens.name().to_owned(),
        };
        let text = serde_json::to_string(&run).expect("a config serialises") + "\n";
        let tmp = dir.join("run.json.tmp");
        std::fs::write(&tmp, text)?;
        std::fs::File::open(&tmp)?.sync_all()?;
        std::fs::rename(&tmp, dir.join(durable::CONFIG_FILE))?;
        let storage = RunDir::open(dir, durability)?;
        Ok(Engine::with_parts(
            config,
            BlockStore::new(tokens),
            ContentStore::new(),
            Box::new(storage),
        ))
    }

    /// Replaces the clock that stamps blocks and records (for reproducible runs).
    pub fn set_clock(&mut self, clock: impl FnMut() -> String + Send + 'static) {
        self.clock = Box::new(clock);
    }

    /// Replaces the storage (the journal continues at the same `seq`).
    pub fn set_storage(&mut self, storage: Box<dyn Storage>) {
        self.storage = storage;
    }

    /// The block store.
    pub fn store(&self) -> &BlockStore {
        &self.store
    }

    /// The content store.
    pub fn content(&self) -> &ContentStore {
        &self.content
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The last journal `seq` written.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// What the model sees next: the visible blocks in store order, or in the generational
    /// layout when [`Config::generational`] is on.
    pub fn view(&self) -> View {
        if self.config.generational {
            let order = generational::layout(&self.store, &self.generations);
            view::render_in_order(&self.store, &order)
        } else {
            view::render(&self.store)
        }
    }

    /// The retired blocks' generations.
    pub fn generations(&self) -> &Generations {
        &self.generations
    }

    /// CPAT's `setGeneration`: runtime state only, not journaled, so it does not survive a
    /// replay (a run's generations come from [`apply_retiring`](Self::apply_retiring)).
    pub fn set_generation(&mut self, id: &str, generation: u64) {
        self.generations.set(id, generation);
    }

    /// CPAT's `allocGeneration`: a new generation (0, 1, 2, …), not journaled.
    pub fn alloc_generation(&mut self) -> u64 {
        self.generations.alloc()
    }

    /// `artifact_get`: the payload behind an `artifact://` URI, cut to `max_chars`.
    pub fn artifact_get(&self, uri: &str, max_chars: Option<usize>) -> String {
        content::artifact_get(&self.content, uri, max_chars)
    }

    /// The budget now.
    pub fn budget(&self) -> BudgetState {
        let used = self.used(view::estimate(
            &self.store.totals(),
            self.store.tokens().as_ref(),
        ));
        let max = self.config.max_tokens as f64;
        let u = used as f64;
        let pressure = if u >= max * self.config.critical_ratio {
            Pressure::Critical
        } else if u >= max * self.config.must_act_ratio {
            Pressure::MustAct
        } else if u >= max * self.config.soft_ratio {
            Pressure::Soft
        } else {
            Pressure::Ok
        };
        BudgetState {
            max: self.config.max_tokens,
            soft_limit: self.soft_limit(),
            used,
            pressure,
        }
    }

    fn soft_limit(&self) -> u64 {
        (self.config.max_tokens as f64 * self.config.soft_ratio).floor() as u64
    }

    /// CPAT's `estimatedUsed`: the estimate, scaled by the last call's
    /// `clamp(actual / estimate, 0.5, 2)` once a call is recorded.
    fn used(&self, estimate: u64) -> u64 {
        match self.calibration {
            Some((actual, at)) if at > 0 => {
                let ratio = (actual as f64 / at as f64).clamp(0.5, 2.0);
                (estimate as f64 * ratio + 0.5).floor() as u64
            }
            _ => estimate,
        }
    }

    fn check_writable(&self) -> Result<(), EngineError> {
        if self.poisoned {
            Err(EngineError::Poisoned)
        } else {
            Ok(())
        }
    }

    /// Writes a change: its payloads, then its records; poisons the engine on failure.
    fn write(&mut self, puts: &[(String, String)], records: &[Value]) -> Result<(), EngineError> {
        let mut lines = String::new();
        for r in records {
            lines.push_str(&serde_json::to_string(r).expect("a record serialises"));
            lines.push('\n');
        }
        let outcome = (|| {
            for (key, payload) in puts {
                self.storage.put(key, payload)?;
            }
            self.storage.sync_puts()?;
            self.storage.append(&lines)
        })();
        outcome.map_err(|e| {
            self.poisoned = true;
            EngineError::Storage(e)
        })
    }

    /// Takes a message into the store (a reply with reasoning and tool calls brings its
    /// trace with it); the new block ids.
    pub fn ingest(&mut self, message: Message) -> Result<Vec<String>, EngineError> {
        self.check_writable()?;
        let now = (self.clock)();
        let blocks = self.blocks_of(message, &now);
        let puts: Vec<(String, String)> = blocks
            .iter()
            .map(|b| (b.content_key(), inline(b).to_owned()))
            .collect();
        let first_seq = self.seq;
        let records: Vec<Value> = blocks
            .iter()
            .enumerate()
            .map(|(i, b)| {
                journal::ingest(
                    first_seq + 1 + i as u64,
                    b,
                    &journal::sha256_hex(inline(b)),
                    i + 1 < blocks.len(),
                )
            })
            .collect();
        self.write(&puts, &records)?;
        self.seq += records.len() as u64;
        let ids = blocks.iter().map(|b| b.id.clone()).collect();
        for b in blocks {
            self.insert_ingested(b);
        }
        Ok(ids)
    }

    /// CPAT's budget report (`checkBudget`): every budget report the model sees is hidden
    /// and the new one is ingested, one change: the report's `ingest` record names the
    /// reports it hid (`"hides"`), so a replay rotates them too. Returns the new report's id.
    pub fn report_budget(
        &mut self,
        text: String,
        pressure: Pressure,
    ) -> Result<String, EngineError> {
        self.check_writable()?;
        let now = (self.clock)();
        let hides: Vec<String> = self
            .store
            .iter()
            .filter(|b| b.kind == Kind::BudgetReport && b.visibility == Visibility::Model)
            .map(|b| b.id.clone())
            .collect();
        let message = Message::BudgetReport {
            text,
            pressure: pressure.as_str().to_owned(),
        };
        let block = self.blocks_of(message, &now).remove(0);
        let mut record = journal::ingest(
            self.seq + 1,
            &block,
            &journal::sha256_hex(inline(&block)),
            false,
        );
        record["hides"] = serde_json::json!(hides);
        let put = (block.content_key(), inline(&block).to_owned());
        self.write(&[put], &[record])?;
        self.seq += 1;
        self.hide(&hides);
        let id = block.id.clone();
        self.insert_ingested(block);
        Ok(id)
    }

    /// Sets the blocks `ids` hidden (a budget report's rotation, live or replayed).
    pub(crate) fn hide(&mut self, ids: &[String]) {
        for id in ids {
            if let Some(slot) = self.store.slot(id) {
                let mut b = self.store.block(slot).clone();
                b.visibility = Visibility::Hidden;
                self.store.replace(slot, b);
            }
        }
    }

    /// Puts an ingested block into the store and its text into the content store; a reply
    /// first releases the open reasoning traces (CPAT's `releaseReasoning`).
    pub(crate) fn insert_ingested(&mut self, block: Block) {
        if block.kind == Kind::AssistantMessage {
            self.release_reasoning();
        }
        self.content.put(&block.content_key(), inline(&block));
        self.store
            .advance_id_counter(super::store::id_number(&block.id).unwrap_or(0));
        self.store.insert(block, Anchor::End);
    }

    fn release_reasoning(&mut self) {
        let open: Vec<Slot> = (0..self.store.len() as Slot)
            .filter(|&s| self.store.block(s).visibility == Visibility::ApiRequired)
            .collect();
        for s in open {
            let mut trace = self.store.block(s).clone();
            trace.visibility = Visibility::Hidden;
            let parent = trace.source_ids.first().and_then(|id| self.store.slot(id));
            self.store.replace(s, trace);
            if let Some(p) = parent {
                let mut b = self.store.block(p).clone();
                if let Some(api) = b.api.as_mut() {
                    api.reasoning_content = None;
                }
                self.store.replace(p, b);
            }
        }
    }

    fn blocks_of(&mut self, message: Message, now: &str) -> Vec<Block> {
        let mut counter = self.store.id_counter();
        let store = &self.store;
        let mut make = |prefix: &str, role, kind, description: String, text: String| {
            let token_count = store.tokens().count(&text);
            let id = store.free_id(prefix, &mut counter);
            Block::created(id, role, kind, description, text, token_count, now)
        };
        match message {
            Message::System { text } => {
                let d = describe_text("System prompt", &text);
                let mut b = make("system", Role::Runtime, Kind::SystemPrompt, d, text);
                b.retention = Retention::Persistent;
                b.protected = Some(true);
                vec![b]
            }
            Message::User { text, origin } => {
                let d = describe_text("User message", &text);
                let mut b = make("user", Role::User, Kind::UserMessage, d, text);
                b.retention = Retention::Persistent;
                b.protected = Some(true);
                b.origin = origin;
                vec![b]
            }
            Message::Assistant {
                text,
                tool_calls,
                reasoning,
            } => {
                let d = describe_text("Assistant message", &text);
                let mut b = make(
                    "assistant",
                    Role::Assistant,
                    Kind::AssistantMessage,
                    d,
                    text,
                );
                let open = !tool_calls.is_empty();
                if open {
                    b.api = Some(Api {
                        tool_calls: Some(tool_calls),
                        ..Api::default()
                    });
                }
                match reasoning {
                    Some(r) if open && !r.is_empty() => {
                        if let Some(api) = b.api.as_mut() {
                            api.reasoning_content = Some(r.clone());
                        }
                        let d = describe_text("Reasoning trace", &r);
                        let mut t = make("reasoning", Role::Assistant, Kind::ReasoningTrace, d, r);
                        t.visibility = Visibility::ApiRequired;
                        t.retention = Retention::Ephemeral;
                        t.source_ids = vec![b.id.clone()];
                        vec![b, t]
                    }
                    _ => vec![b],
                }
            }
            Message::ToolResult {
                tool_call_id,
                name,
                text,
            } => {
                let d = describe_text(&format!("Tool result ({name})"), &text);
                let mut b = make("tool", Role::Tool, Kind::ToolResult, d, text);
                b.api = Some(Api {
                    tool_call_id: Some(tool_call_id),
                    name: Some(name),
                    ..Api::default()
                });
                vec![b]
            }
            Message::BudgetReport { text, pressure } => {
                let d = format!("Context budget pressure report ({pressure}).");
                let mut b = make("budget", Role::Runtime, Kind::BudgetReport, d, text);
                b.retention = Retention::Ephemeral;
                vec![b]
            }
        }
    }

    /// Applies `context_update` arguments as the model sent them (JSON text). Arguments
    /// that are not an update are an [`EngineError::Args`] and journal nothing.
    pub fn apply_args(&mut self, text: &str, actor: Actor) -> Result<PatchResult, EngineError> {
        let update = args::parse(text).map_err(EngineError::Args)?;
        self.apply(&update, actor)
    }

    /// Applies a normalised update: all of it or, at the first rejection, none of it; the
    /// result either way is journaled.
    pub fn apply(
        &mut self,
        update: &ContextUpdate,
        actor: Actor,
    ) -> Result<PatchResult, EngineError> {
        self.apply_with(update, actor, false)
    }

    /// [`apply`](Self::apply), and if the update commits, its offloaded blocks retire into
    /// a new generation ([`Engine::alloc_generation`]'s next), recorded as `"generation"` in
    /// the patch's journal record so that a replay restores it. A rejected update allocates
    /// nothing.
    pub fn apply_retiring(
        &mut self,
        update: &ContextUpdate,
        actor: Actor,
    ) -> Result<PatchResult, EngineError> {
        self.apply_with(update, actor, true)
    }

    fn apply_with(
        &mut self,
        update: &ContextUpdate,
        actor: Actor,
        retiring: bool,
    ) -> Result<PatchResult, EngineError> {
        self.check_writable()?;
        let now = (self.clock)();
        let options = self.config.options;
        let outcome = patch::validate(
            &self.store,
            &self.content,
            &update.operations,
            options,
            &now,
        );
        let (result, commit) = match outcome {
            Ok(commit) => (
                self.result_of(&commit, update.operations.len()),
                Some(commit),
            ),
            Err(rejections) => (
                PatchResult {
                    ok: false,
                    applied: 0,
                    rejections,
                    freed_tokens: 0,
                    created_block_ids: Vec::new(),
                    budget: self.patch_budget(self.budget().used),
                },
                None,
            ),
        };
        let empty = Vec::new();
        let puts = commit.as_ref().map_or(&empty, |c| &c.puts);
        let hashes: Vec<(String, String)> = puts
            .iter()
            .map(|(k, p)| (k.clone(), journal::sha256_hex(p)))
            .collect();
        let mut records = Vec::new();
        let mut seq = self.seq;
        if let Some(c) = &commit {
            for (_, b, _) in &c.created {
                seq += 1;
                records.push(journal::ingest(
                    seq,
                    b,
                    &journal::sha256_hex(inline(b)),
                    true,
                ));
            }
        }
        let generation = (retiring && commit.is_some()).then(|| self.generations.peek());
        seq += 1;
        records.push(journal::patch(
            seq,
            &now,
            &PatchFields {
                actor: actor.as_str(),
                reason: &update.reason,
                operations: &update.operations,
                options,
                result: &result,
                content_puts: &hashes,
                generation,
            },
        ));
        self.write(puts, &records)?;
        self.seq = seq;
        if let Some(c) = commit {
            patch::apply(&mut self.store, &mut self.content, c);
        }
        if let Some(g) = generation {
            self.retire(&update.operations, g);
        }
        Ok(result)
    }

    fn patch_budget(&self, used: u64) -> Budget {
        Budget {
            max: self.config.max_tokens,
            soft_limit: self.soft_limit(),
            used,
        }
    }

    pub(crate) fn result_of(&self, commit: &Commit, applied: usize) -> PatchResult {
        let estimate = view::estimate(&commit.totals, self.store.tokens().as_ref());
        PatchResult {
            ok: true,
            applied,
            rejections: Vec::new(),
            freed_tokens: commit.freed_tokens,
            created_block_ids: commit.created_ids(),
            budget: self.patch_budget(self.used(estimate)),
        }
    }

    /// Records a model call: its usage (`prompt_tokens` calibrates the estimate from now
    /// on) with the view's size at the call.
    pub fn record_llm_call(&mut self, model: &str, usage: &Value) -> Result<(), EngineError> {
        self.check_writable()?;
        let now = (self.clock)();
        let totals = self.store.totals();
        let est = view::estimate(&totals, self.store.tokens().as_ref());
        let seq = self.seq + 1;
        let record = journal::llm_call(seq, &now, model, usage, totals.visible, est);
        self.write(&[], &[record])?;
        self.seq = seq;
        self.calibrate(usage, est);
        Ok(())
    }

    /// A call's `prompt_tokens` calibrates the estimate from now on; a call that reported
    /// none, or 0 (a prompt is never empty: a count of 0 says nothing), leaves the last one.
    pub(crate) fn calibrate(&mut self, usage: &Value, est: u64) {
        let reported = usage.get("prompt_tokens").and_then(Value::as_u64);
        if let Some(actual) = reported.filter(|&n| n > 0) {
            self.calibration = Some((actual, est));
        }
    }

    /// Gives a committed patch's offloaded blocks their generation.
    pub(crate) fn retire(&mut self, operations: &[args::Item], generation: u64) {
        for id in generational::retired_ids(operations) {
            self.generations.restore(id, generation);
        }
        self.generations.restore_next(generation);
    }

    pub(crate) fn set_seq(&mut self, seq: u64) {
        self.seq = seq;
    }

    pub(crate) fn commit_replayed(&mut self, commit: Commit) {
        patch::apply(&mut self.store, &mut self.content, commit);
    }

    /// Reopens a run: replays it (see [`super::replay`]), cuts a torn or unfinished tail
    /// off the journal, and appends from there.
    pub fn open(
        dir: &Path,
        tokens: Arc<dyn TokenCounter>,
        durability: Durability,
    ) -> Result<Engine, super::replay::ReplayError> {
        let replayed = super::replay::replay(dir, tokens)?;
        let journal = dir.join(durable::JOURNAL_FILE);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&journal)
            .map_err(|e| super::replay::ReplayError::io(&journal, e))?;
        file.set_len(replayed.valid_len)
            .and_then(|_| file.sync_all())
            .map_err(|e| super::replay::ReplayError::io(&journal, e))?;
        let mut engine = replayed.engine;
        let storage =
            RunDir::open(dir, durability).map_err(|e| super::replay::ReplayError::io(dir, e))?;
        engine.set_storage(Box::new(storage));
        Ok(engine)
    }
}

/// An ingested block's text (ingested blocks are inline).
fn inline(b: &Block) -> &str {
    match &b.content {
        Content::Inline(t) => t,
        Content::Ref(_) => "",
    }
}
