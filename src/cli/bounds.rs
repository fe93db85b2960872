//! The bounds of every numeric option, checked by clap when the command line is parsed.
//!
//! A value outside its range is a usage error (exit status 2, clap's message naming the
//! range), never a panic or an allocation sized by the user later on. The ranges are stated
//! once here; each option's help text repeats its range, and a test checks that they agree.

use clap::builder::RangedU64ValueParser;

/// A range of accepted values, inclusive.
#[derive(Clone, Copy, Debug)]
pub struct Bound {
    /// The smallest accepted value.
    pub min: u64,
    /// The largest accepted value.
    pub max: u64,
}

impl Bound {
    /// The range from `min` to `max`, both accepted.
    pub const fn between(min: u64, max: u64) -> Bound {
        Bound { min, max }
    }

    /// The clap value parser of this range, for an option of type `T`.
    pub fn parser<T>(self) -> RangedU64ValueParser<T>
    where
        T: TryFrom<u64> + Clone + Send + Sync + 'static,
        <T as TryFrom<u64>>::Error: std::error::Error + Send + Sync + 'static,
    {
        RangedU64ValueParser::new().range(self.min..=self.max)
    }
}

/// `--chunk`: bytes per push, at most. The pieces are cut from each read, which returns at
/// most one block (64 KiB), so any N from a block on feeds each read whole: no buffer is sized
/// by N. The bound is 1 GiB, as for `--max-arg`.
pub const CHUNK: Bound = Bound::between(1, 1 << 30);

/// `--max-line`: a CTL header line, LF included. Below 9 bytes no `call` line fits (only the
/// empty stream is a sentence, as `docs/ctl.md` says, and the parser takes it so); above
/// 64 KiB it is no longer a header (the parser holds up to `max_line − 1` bytes of one).
pub const MAX_LINE: Bound = Bound::between(1, 64 * 1024);

/// `--max-arg`: a CTL argument's `nbytes`. 1 GiB, far above any model's output; `calls` and
/// `run` hold arguments in memory, bounded again per call (`--max-call-bytes`).
pub const MAX_ARG: Bound = Bound::between(0, 1 << 30);

/// `calls --max-call-args`: arguments in one call.
pub const MAX_CALL_ARGS: Bound = Bound::between(1, 1 << 16);

/// `calls --max-call-bytes`: the argument bytes of one call, all arguments together.
pub const MAX_CALL_BYTES: Bound = Bound::between(0, 1 << 30);

/// `apply -p`: leading path components to strip. No path has more components than
/// `PATH_MAX` (4096) bytes.
pub const STRIP: Bound = Bound::between(0, 4096);

/// `apply --fuzz`: outer context lines a hunk may lose. Each level is one more search of the
/// file; past a hunk's context the levels repeat each other.
pub const FUZZ: Bound = Bound::between(0, 100);

/// `run --max-turns`: model requests.
pub const MAX_TURNS: Bound = Bound::between(1, 10_000);

/// `run --max-tokens`, `--escalated-max-tokens`: the output limit asked of the model.
pub const MAX_TOKENS: Bound = Bound::between(1, 1_000_000);

/// `run --shell-timeout`: seconds, at most one day.
pub const SHELL_TIMEOUT: Bound = Bound::between(1, 86_400);

/// `run --shell-max-output`: bytes kept of a command's standard output and of its standard
/// error, each (up to 8 calls run at once).
pub const SHELL_MAX_OUTPUT: Bound = Bound::between(0, 64 << 20);

/// `mask --reps`: computations of each mask, the fastest kept.
pub const REPS: Bound = Bound::between(1, 1000);

/// `run --context-window`: the context window the ladder governs, in tokens (as `context
/// apply --max-tokens`).
pub const CONTEXT_WINDOW: Bound = Bound::between(1, 1_000_000_000);

/// `run --spill-tokens`: a tool result over this many tokens is spilled.
pub const SPILL_TOKENS: Bound = Bound::between(1, 1_000_000_000);

/// `run --preview-chars`: UTF-16 units of a spilled result kept in view.
pub const PREVIEW_CHARS: Bound = Bound::between(0, 1_000_000);

/// `run --keep-recent`: tool results and subtasks the ladder leaves alone (never fewer than
/// one).
pub const KEEP_RECENT: Bound = Bound::between(1, 10_000);

/// `run --cache-ttl`: seconds after a call the prompt cache counts as warm (0: always cold).
pub const CACHE_TTL: Bound = Bound::between(0, 86_400);

/// `run --hard-window`: tokens, as `--context-window`.
pub const HARD_WINDOW: Bound = Bound::between(1, 1_000_000_000);
