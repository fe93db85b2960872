//! `frontier apply`: applies an apply_patch or a unified diff under a root directory, checking
//! each unit as the parser confirms it and committing at the end; prints what changed.
//!
//! Output: one line per changed path, `A path`, `M path` or `D path`, on standard output; the
//! reason for a failure on standard error (with the operation, the path, the lines that could
//! not be placed and, for an ambiguous chunk, the candidate line numbers). Exit status 0 on
//! success, 1 on failure, 2 when the command could not run.

use std::ffi::OsString;
use std::io::{self, Write};

use clap::ValueEnum;

use frontier::apply::{Change, CheckedStream, DiffOptions, Policy, UnitCheck, Workspace};
use frontier::apply_patch::PatchEvent;
use frontier::contract::PushParser;
use frontier::language::{ApplyPatchMode, DiffVisitor, Language, ParserSpec, PatchVisitor};
use frontier::udiff::UdiffEvent;

use super::{display, input};

/// The languages `apply` takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ApplyLang {
    /// Codex's apply_patch language.
    #[value(name = "apply_patch")]
    ApplyPatch,
    /// Unified diff (`git diff`, `diff -u`).
    Udiff,
}

/// `--policy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PolicyArg {
    /// All or nothing; ambiguity refused; line endings kept.
    Safe,
    /// Codex's own behaviour.
    Codex,
}

/// Flags of `apply`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The language of the patch.
    #[arg(long, value_enum)]
    lang: ApplyLang,
    /// The parser's mode (apply_patch: codex (the default: patches as Codex reads them),
    /// strict (the grammar's own language) or environment; udiff: strict, git (default) or recount).
    #[arg(long)]
    mode: Option<String>,
    /// apply_patch: how to apply.
    #[arg(long, value_enum, default_value = "safe")]
    policy: PolicyArg,
    /// The workspace root.
    #[arg(long, default_value = ".")]
    root: OsString,
    /// udiff: leading path components to strip from names, 0 to 4096 (default: 1, or 0 when
    /// the first traditional file patch names no directory, as `git apply` guesses).
    #[arg(short = 'p', value_parser = super::bounds::STRIP.parser::<usize>())]
    strip: Option<usize>,
    /// udiff: outer context lines a hunk may lose to match (as GNU patch's fuzz), 0 to 100.
    #[arg(long, default_value_t = 0, value_parser = super::bounds::FUZZ.parser::<usize>())]
    fuzz: usize,
    /// Feed the parser at most N bytes at a time, 1 to 1073741824 (default: each read whole).
    #[arg(long, value_parser = super::bounds::CHUNK.parser::<usize>())]
    chunk: Option<usize>,
    /// The patch; `-` is standard input.
    file: OsString,
}

/// Runs `apply`.
pub fn run(args: Args) -> Result<i32, String> {
    let policy = match args.policy {
        PolicyArg::Safe => Policy::Safe,
        PolicyArg::Codex => Policy::Codex,
    };
    // The parser first: a bad flag is a usage error whatever the root.
    let spec = match args.lang {
        ApplyLang::ApplyPatch => {
            // Patches as Codex reads them, under either policy: what models trained on Codex
            // write, and what the conformance scenarios are written in (`--mode strict` for
            // the grammar's own language).
            let default = ApplyPatchMode::Codex;
            ParserSpec::new(
                Language::ApplyPatch,
                Some(args.mode.as_deref().unwrap_or(default.as_str())),
            )
        }
        ApplyLang::Udiff => ParserSpec::new(Language::Udiff, args.mode.as_deref()),
    }
    .map_err(|e| e.to_string())?;
    let ws = Workspace::new(&args.root)
        .map_err(|e| format!("cannot open root {}: {e}", display::path(&args.root)))?;
    match spec {
        ParserSpec::ApplyPatch(mode) => mode.run(PatchCommand {
            args: &args,
            ws,
            policy,
        }),
        ParserSpec::Udiff(udiff) => udiff.run(DiffCommand { args: &args, ws }),
        ParserSpec::Ctl { .. } => Err("apply takes apply_patch or udiff".to_owned()),
    }
}

/// `apply` of an apply_patch, with whichever parser the mode names.
struct PatchCommand<'a> {
    args: &'a Args,
    ws: Workspace,
    policy: Policy,
}

impl PatchVisitor for PatchCommand<'_> {
    type Output = Result<i32, String>;
    fn visit<P>(self, parser: P) -> Self::Output
    where
        P: for<'e> PushParser<Event<'e> = PatchEvent<'e>>,
    {
        run_patch(parser, self.args, self.ws, self.policy)
    }
}

/// `apply` of a unified diff, with whichever parser the mode names.
struct DiffCommand<'a> {
    args: &'a Args,
    ws: Workspace,
}

impl DiffVisitor for DiffCommand<'_> {
    type Output = Result<i32, String>;
    fn visit<P>(self, parser: P) -> Self::Output
    where
        P: for<'e> PushParser<Event<'e> = UdiffEvent<'e>>,
    {
        run_diff(parser, self.args, self.ws)
    }
}

/// Reads the patch as it arrives and checks each unit the moment it is confirmed, saying so
/// at once when one fails, while the rest of the patch may still be arriving. Returns the
/// outcome, the checker (to commit) and whether a failure was already said.
fn check_as_it_arrives<P, S>(
    parser: P,
    stream: S,
    args: &Args,
) -> Result<(frontier::contract::Outcome<P::ErrorKind>, S, bool), String>
where
    P: PushParser,
    S: for<'e> UnitCheck<P::Event<'e>>,
{
    let mut checked = CheckedStream::new(parser, stream);
    let mut say = |e: &frontier::apply::ApplyError, at: u64| {
        eprintln!("frontier: cannot apply (known after {at} bytes): {e}");
    };
    input::for_each_piece(&args.file, args.chunk, |piece| {
        checked.push(piece, &mut say)
    })
    .map_err(|e| format!("cannot read {}: {e}", display::path(&args.file)))?;
    let reported = checked.reported();
    let (outcome, stream) = checked.finish();
    Ok((outcome, stream, reported))
}

fn run_patch<P>(parser: P, args: &Args, ws: Workspace, policy: Policy) -> Result<i32, String>
where
    P: for<'e> PushParser<Event<'e> = PatchEvent<'e>>,
{
    let stream = frontier::apply::PatchStream::new(ws, policy);
    let (outcome, stream, reported) = check_as_it_arrives(parser, stream, args)?;
    let result = stream.finish(&outcome.verdict);
    match result {
        Ok(changes) => {
            print_changes(&changes);
            Ok(0)
        }
        Err(failure) => {
            print_changes(&failure.written);
            if !reported || failure.error.kind == frontier::apply::ErrorKind::Parse {
                eprintln!("frontier: {}", failure.error);
            }
            if policy == Policy::Safe {
                say_undone(&failure.error);
            }
            Ok(1)
        }
    }
}

fn run_diff<P>(parser: P, args: &Args, ws: Workspace) -> Result<i32, String>
where
    P: for<'e> PushParser<Event<'e> = UdiffEvent<'e>>,
{
    let options = DiffOptions {
        strip: args.strip,
        fuzz: args.fuzz,
    };
    let stream = frontier::apply::DiffStream::new(ws, options);
    let (outcome, stream, reported) = check_as_it_arrives(parser, stream, args)?;
    match stream.finish(&outcome.verdict) {
        Ok(changes) => {
            print_changes(&changes);
            Ok(0)
        }
        Err(error) => {
            if !reported || error.kind == frontier::apply::ErrorKind::Parse {
                eprintln!("frontier: {error}");
            }
            say_undone(&error);
            Ok(1)
        }
    }
}

/// After an all-or-nothing failure: that nothing was changed, unless an undo failed (the
/// paths it could not restore are in the error, printed above).
fn say_undone(error: &frontier::apply::ApplyError) {
    if error.unrestored().is_empty() {
        eprintln!("frontier: nothing was changed");
    } else {
        eprintln!("frontier: the undo failed: the paths listed above were not restored");
    }
}

fn print_changes(changes: &[Change]) {
    let mut out = io::stdout().lock();
    for c in changes {
        let _ = writeln!(out, "{} {}", c.kind.letter(), display::escaped(&c.path));
    }
}
