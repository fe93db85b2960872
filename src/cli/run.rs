//! `frontier run`: the agent loop, driven by a replayed session, an OpenAI-compatible
//! endpoint, OpenAI Responses or Anthropic Messages, with tools in CTL or native. The loop
//! itself is [`frontier::agent`]; this module reads flags and files.

use std::ffi::{OsStr, OsString};
use std::fs::OpenOptions;
use std::io::{self, BufWriter, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::time::Duration;

use frontier::agent::context::{Arm, Ladder, Settings};
use frontier::agent::openai::{OpenAi, OpenAiConfig};
use frontier::agent::provider::{Provider, ProviderConfig, ToolMode};
use frontier::agent::replay::{self, Replay};
use frontier::agent::shell::ShellLimits;
use frontier::agent::{Config, ModelSource, NativeSource, Toolset};
use frontier::apply::Workspace;
use frontier::ctl::Limits;
use frontier::language::CtlMode;
use frontier::streams::Api;

use super::{display, input};

/// Flags of `run`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// `replay:FILE` (recorded turns, one JSON object per line), `openai` (Chat Completions at
    /// OPENAI_BASE_URL, with OPENAI_API_KEY, OPENAI_MODEL), `openai-responses` (Responses,
    /// the same variables) or `anthropic` (Messages at ANTHROPIC_BASE_URL, with
    /// ANTHROPIC_API_KEY, ANTHROPIC_MODEL).
    #[arg(long)]
    model: OsString,
    /// How a live model calls tools: `ctl` (CTL in its text, the default) or `native` (the
    /// API's own tool calls, each run when the stream reader confirms it).
    #[arg(long, default_value = "ctl")]
    tools: String,
    /// The workspace: every path is confined to it, every command runs in it.
    #[arg(long)]
    root: OsString,
    /// The user's request, the conversation's first user message (required with a live
    /// model). Repeated: follow-up questions, each asked once the model has answered the one
    /// before (a reply with no calls).
    #[arg(long)]
    task: Vec<String>,
    /// Where to write the transcript (JSON lines), appended to the file if it exists; default
    /// standard output. No tool can reach it, even inside the root.
    #[arg(long)]
    transcript: Option<OsString>,
    /// Stream a replayed turn N bytes at a time, 1 to 1073741824.
    #[arg(long, default_value_t = 1, value_parser = super::bounds::CHUNK.parser::<usize>())]
    chunk: usize,
    /// The tools allowed, by trust boundary: interactive (all), background (read-only),
    /// webhook (read_file only).
    #[arg(long, default_value = "interactive")]
    toolset: String,
    /// Most model requests before giving up, 1 to 10000.
    #[arg(long, default_value_t = 50, value_parser = super::bounds::MAX_TURNS.parser::<u32>())]
    max_turns: u32,
    /// The output limit asked of the model, in tokens, 1 to 1000000.
    #[arg(long, default_value_t = 4096, value_parser = super::bounds::MAX_TOKENS.parser::<u32>())]
    max_tokens: u32,
    /// The output limit after one `length` finish, 1 to 1000000.
    #[arg(long, default_value_t = 16384, value_parser = super::bounds::MAX_TOKENS.parser::<u32>())]
    escalated_max_tokens: u32,
    /// Seconds a `shell` call may run, 1 to 86400.
    #[arg(long, default_value_t = 30, value_parser = super::bounds::SHELL_TIMEOUT.parser::<u64>())]
    shell_timeout: u64,
    /// Bytes of a `shell` call's output kept (standard output and error each), 0 to
    /// 67108864.
    #[arg(long, default_value_t = 64 * 1024, value_parser = super::bounds::SHELL_MAX_OUTPUT.parser::<usize>())]
    shell_max_output: usize,
    /// Bytes in one CTL header line, LF included, 1 to 65536.
    #[arg(long, default_value_t = Limits::DEFAULT_MAX_LINE, value_parser = super::bounds::MAX_LINE.parser::<u32>())]
    max_line: u32,
    /// The largest CTL argument, in bytes, 0 to 1073741824.
    #[arg(long, default_value_t = Limits::DEFAULT_MAX_ARG, value_parser = super::bounds::MAX_ARG.parser::<u64>())]
    max_arg: u64,
    /// The CTL the model writes: strict (every argument counted) or extended (inline and
    /// heredoc arguments). Default: extended for `openai`; for a replay, the mode its file
    /// declares (strict if none).
    #[arg(long, value_parser = super::frame::parse_ctl_mode)]
    ctl_mode: Option<CtlMode>,
    #[command(flatten)]
    context: ContextArgs,
}

/// Context governance (`docs/agent.md`, "Context governance"): on by default.
#[derive(clap::Args, Debug)]
pub struct ContextArgs {
    /// How the context is governed, with CTL or native tools: `cpat` (the ladder, the
    /// budget reports, `context_update` and `artifact_get`, the boundary pass before each
    /// follow-up; the default), `threshold` (the runtime's measures, no context tool),
    /// `react` (none: the conversation only journaled; the hard window ends the run) or
    /// `off` (no engine: the plain conversation).
    #[arg(long = "context", value_name = "ARM")]
    arm: Option<String>,
    /// Journal the conversation in DIR (created; it must not hold a run yet). Default: a new
    /// directory under `$XDG_STATE_HOME/frontier/runs/` (`~/.local/state` without it), named
    /// on standard error. No tool can reach it.
    #[arg(long)]
    run_dir: Option<OsString>,
    /// The hard window, in tokens, 1 to 1000000000: in the `react` arm a request estimated
    /// over it is replaced by one final call with the tools closed, and the run ends
    /// `terminated_early`. The other arms only record their peak.
    #[arg(long, value_parser = super::bounds::HARD_WINDOW.parser::<u64>())]
    hard_window: Option<u64>,
    /// CPAT's generational layout of the view, and its fallback at critical pressure
    /// (oldest tool results first, gated on the turns left) instead of the largest first.
    #[arg(long)]
    generational: bool,
    /// The context window governed, in tokens, 1 to 1000000000.
    #[arg(long, default_value_t = frontier::context::engine::DEFAULT_MAX_TOKENS, value_parser = super::bounds::CONTEXT_WINDOW.parser::<u64>())]
    context_window: u64,
    /// Budget reports from this fraction of the window (soft), 0 to 1.
    #[arg(long, default_value_t = 0.7, value_parser = parse_ratio)]
    soft_ratio: f64,
    /// Must-act reports from this fraction, 0 to 1.
    #[arg(long, default_value_t = 0.8, value_parser = parse_ratio)]
    must_act_ratio: f64,
    /// Critical: the runtime offloads the largest tool results, from this fraction, 0 to 1.
    #[arg(long, default_value_t = 0.95, value_parser = parse_ratio)]
    critical_ratio: f64,
    /// Spill a tool result over N tokens to the content store, 1 to 1000000000.
    #[arg(long, default_value_t = 2000, value_parser = super::bounds::SPILL_TOKENS.parser::<u64>())]
    spill_tokens: u64,
    /// UTF-16 units of a spilled result kept as its preview, 0 to 1000000.
    #[arg(long, default_value_t = 1000, value_parser = super::bounds::PREVIEW_CHARS.parser::<usize>())]
    preview_chars: usize,
    /// Tool results and subtasks left alone, most recent first, 1 to 10000.
    #[arg(long, default_value_t = 3, value_parser = super::bounds::KEEP_RECENT.parser::<usize>())]
    keep_recent: usize,
    /// Seconds after a call the prompt cache counts as warm; stale results are cleared
    /// only when it is cold (0: always), 0 to 86400.
    #[arg(long, default_value_t = 300, value_parser = super::bounds::CACHE_TTL.parser::<u64>())]
    cache_ttl: u64,
    /// Fold finished subtasks above this fraction of the window, 0 to 1.
    #[arg(long, default_value_t = 0.75, value_parser = parse_ratio)]
    collapse_ratio: f64,
    /// Compact (one model call) above this fraction of the window, 0 to 1.
    #[arg(long, default_value_t = 0.9, value_parser = parse_ratio)]
    compact_ratio: f64,
    /// Count tokens with this vocabulary (`tiktoken:NAME` or a tokenizer.json) instead of
    /// CPAT's estimator.
    #[arg(long)]
    vocab: Option<OsString>,
}

/// A fraction from 0 to 1.
fn parse_ratio(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(r) if (0.0..=1.0).contains(&r) => Ok(r),
        _ => Err(format!("{text:?} is not a number from 0 to 1")),
    }
}

impl ContextArgs {
    /// The arm asked for (`None`: off), `default` when none is named.
    fn arm(&self, default: Option<Arm>) -> Result<Option<Arm>, String> {
        match self.arm.as_deref() {
            None => Ok(default),
            Some("off") => Ok(None),
            Some(name) => Arm::from_name(name).map(Some).ok_or_else(|| {
                format!("--context {name:?}: expected cpat, threshold, react or off")
            }),
        }
    }

    /// The settings of `arm` (none: off); the run directory is set once it is made.
    fn settings(&self, arm: Option<Arm>) -> Result<Option<Settings>, String> {
        let Some(arm) = arm else {
            return Ok(None);
        };
        if !(self.soft_ratio <= self.must_act_ratio && self.must_act_ratio <= self.critical_ratio) {
            return Err(format!(
                "--soft-ratio {}, --must-act-ratio {}, --critical-ratio {}: must not decrease",
                self.soft_ratio, self.must_act_ratio, self.critical_ratio
            ));
        }
        let mut settings = Settings::new(PathBuf::new());
        settings.arm = arm;
        settings.hard_window = self.hard_window;
        settings.budget.max_tokens = self.context_window;
        settings.budget.generational = self.generational;
        settings.budget.soft_ratio = self.soft_ratio;
        settings.budget.must_act_ratio = self.must_act_ratio;
        settings.budget.critical_ratio = self.critical_ratio;
        settings.ladder = Ladder {
            spill_tokens: self.spill_tokens,
            preview_chars: self.preview_chars,
            keep_recent: self.keep_recent,
            cache_ttl: Duration::from_secs(self.cache_ttl),
            collapse_ratio: self.collapse_ratio,
            compact_ratio: self.compact_ratio,
        };
        if let Some(name) = &self.vocab {
            settings.tokens = super::mask::vocab_counter(name)?;
        }
        Ok(Some(settings))
    }
}

pub fn run(args: Args) -> Result<i32, String> {
    let toolset = Toolset::from_name(&args.toolset).ok_or_else(|| {
        format!(
            "--toolset {:?}: expected interactive, background or webhook",
            args.toolset
        )
    })?;
    let workspace = Workspace::new(&args.root)
        .map_err(|e| format!("--root {}: {e}", display::path(&args.root)))?;
    let replay_file = args
        .model
        .as_bytes()
        .strip_prefix(b"replay:")
        .map(OsStr::from_bytes);
    let tools = match args.tools.as_str() {
        "ctl" => ToolMode::Ctl,
        "native" => ToolMode::Native,
        other => return Err(format!("--tools {other:?}: expected ctl or native")),
    };
    let model = if let Some(file) = replay_file {
        if tools == ToolMode::Native {
            return Err("--tools native needs a live model (openai, openai-responses, anthropic), not a replay".into());
        }
        let name = display::path(file);
        let bytes = input::read_all(file).map_err(|e| format!("{name}: {e}"))?;
        let text = String::from_utf8(bytes).map_err(|_| format!("{name}: not UTF-8"))?;
        let session = replay::parse_session(&text).map_err(|e| format!("{name}: {e}"))?;
        let replay = Replay::new(file.to_string_lossy(), session.turns, args.chunk);
        Source::Ctl(Box::new(replay), session.ctl_mode)
    } else {
        let api = match args.model.to_str() {
            Some("openai") => Api::OpenAiChat,
            Some("openai-responses") => Api::OpenAiResponses,
            Some("anthropic") => Api::AnthropicMessages,
            _ => {
                return Err(format!(
                    "--model {}: expected replay:FILE, openai, openai-responses or anthropic",
                    display::path(&args.model)
                ))
            }
        };
        let live = if api == Api::OpenAiChat && tools == ToolMode::Ctl {
            Source::Ctl(
                Box::new(OpenAi::new(OpenAiConfig::from_env()?)),
                CtlMode::Extended,
            )
        } else {
            let provider = Provider::new(ProviderConfig::from_env(api)?, tools);
            match tools {
                ToolMode::Native => Source::Native(Box::new(provider)),
                ToolMode::Ctl => Source::Ctl(Box::new(provider), CtlMode::Extended),
            }
        };
        if args.task.first().is_none_or(|t| t.trim().is_empty()) {
            return Err(format!(
                "--model {} needs --task: the request for the model",
                display::path(&args.model)
            ));
        }
        live
    };
    let ctl_mode = match &model {
        Source::Ctl(_, mode) => *mode,
        Source::Native(_) => CtlMode::Extended,
    };
    // Governed by default, with CTL or native tools.
    let arm = args.context.arm(Some(Arm::Cpat))?;
    if arm.is_none() {
        for (given, name) in [
            (args.context.run_dir.is_some(), "--run-dir"),
            (args.context.hard_window.is_some(), "--hard-window"),
            (args.context.generational, "--generational"),
        ] {
            if given {
                return Err(format!(
                    "{name} needs a context engine: --context off has none"
                ));
            }
        }
    }
    let mut tasks = args.task.into_iter();
    let mut config = Config::new(workspace);
    config.toolset = toolset;
    config.task = tasks.next();
    config.followups = tasks.collect();
    if let Some(n) = config.followups.iter().position(|q| q.trim().is_empty()) {
        return Err(format!(
            "--task number {}: a follow-up question is blank",
            n + 2
        ));
    }
    config.limits = Limits {
        max_line: args.max_line,
        max_arg: args.max_arg,
    };
    config.ctl_mode = args.ctl_mode.unwrap_or(ctl_mode);
    config.shell = ShellLimits {
        timeout: Duration::from_secs(args.shell_timeout),
        max_output: args.shell_max_output,
    };
    config.max_turns = args.max_turns;
    config.max_tokens = args.max_tokens;
    config.escalated_max_tokens = args.escalated_max_tokens;
    config.context = args.context.settings(arm)?;
    if let Some(settings) = config.context.as_mut() {
        settings.run_dir = match &args.context.run_dir {
            Some(dir) => {
                let dir = PathBuf::from(dir);
                std::fs::create_dir_all(&dir)
                    .map_err(|e| format!("--run-dir {}: {e}", dir.display()))?;
                dir
            }
            None => {
                let dir = new_run_dir()?;
                eprintln!(
                    "frontier: run directory {} (frontier context replay {0})",
                    dir.display()
                );
                dir
            }
        };
        // The run directory is the runtime's own: out of every tool's reach.
        let dir = settings.run_dir.clone();
        config
            .protect(&dir)
            .map_err(|e| format!("run directory {}: {e}", dir.display()))?;
    }
    // The transcript is opened once, for appending, and written only through this handle; it
    // is protected from the tools wherever it lies (standard output too, when it is a file).
    let mut out: Box<dyn Write> = match &args.transcript {
        Some(path) if path != "-" => {
            let name = display::path(path);
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| format!("{name}: {e}"))?;
            config
                .protect(path)
                .map_err(|e| format!("--transcript {name}: {e}"))?;
            Box::new(BufWriter::new(file))
        }
        _ => {
            if let Some(file) = stdout_file() {
                config
                    .protect(&file)
                    .map_err(|e| format!("standard output {}: {e}", file.display()))?;
            }
            Box::new(io::stdout().lock())
        }
    };
    let status = match model {
        Source::Ctl(mut model, _) => frontier::agent::run(&config, model.as_mut(), &mut out),
        Source::Native(mut model) => frontier::agent::run_native(&config, model.as_mut(), &mut out),
    }
    .map_err(|e| format!("writing the transcript: {e}"))?;
    out.flush()
        .map_err(|e| format!("writing the transcript: {e}"))?;
    if status.exit_code() != 0 {
        eprintln!("frontier: run ended: {}", status.name());
    }
    Ok(status.exit_code())
}

/// Where the default run directories go: `$XDG_STATE_HOME/frontier/runs` (an absolute
/// `XDG_STATE_HOME`, as the XDG base directory specification asks), else
/// `$HOME/.local/state/frontier/runs`, else the system's temporary directory's
/// `frontier-runs`.
fn runs_home() -> PathBuf {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    if let Some(state) = absolute("XDG_STATE_HOME") {
        return state.join("frontier").join("runs");
    }
    if let Some(home) = absolute("HOME") {
        return home.join(".local/state/frontier/runs");
    }
    std::env::temp_dir().join("frontier-runs")
}

/// Most names tried for a new run directory before giving up.
const RUN_DIR_TRIES: u32 = 100;

/// A new, empty run directory: `<unix-ms>-<pid>` under [`runs_home`] (`-1`, `-2` … after it
/// when that name is taken), created by this process (never one that existed), readable by
/// its owner only (mode 0700: it holds the conversation).
fn new_run_dir() -> Result<PathBuf, String> {
    use std::os::unix::fs::DirBuilderExt;
    let home = runs_home();
    std::fs::create_dir_all(&home).map_err(|e| format!("run directory {}: {e}", home.display()))?;
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let stem = format!("{ms}-{}", std::process::id());
    for n in 0..RUN_DIR_TRIES {
        let name = if n == 0 {
            stem.clone()
        } else {
            format!("{stem}-{n}")
        };
        let dir = home.join(name);
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("run directory {}: {e}", dir.display())),
        }
    }
    Err(format!(
        "run directory: {RUN_DIR_TRIES} names after {stem} in {} are taken",
        home.display()
    ))
}

/// Where the turns come from: a source of CTL bytes (in its CTL mode) or a native caller.
enum Source {
    Ctl(Box<dyn ModelSource>, CtlMode),
    Native(Box<dyn NativeSource>),
}

/// The regular file standard output is redirected to, if it is one (Linux: through
/// `/proc/self/fd/1`; elsewhere none is found, and only `--transcript` is protected).
fn stdout_file() -> Option<std::path::PathBuf> {
    let real = std::fs::canonicalize("/proc/self/fd/1").ok()?;
    real.is_file().then_some(real)
}
