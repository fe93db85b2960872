//! `--lang`, `--mode` and the limits, turned into a parser.
//!
//! Commands are generic over [`PushParser`]; they implement [`WithParser`] and [`dispatch`]
//! calls them with the parser the flags name. Adding a language or a mode is one arm here.

use clap::{Args, ValueEnum};

use frontier::apply_patch::{CodexParser, StrictParser};
use frontier::contract::PushParser;
use frontier::ctl::{CtlParser, Limits};
use frontier::udiff::UdiffParser;

/// The languages of `--lang`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Lang {
    /// CTL, the line-framed tool-call language.
    Ctl,
    /// Unified diff (modes: strict, git (default), recount).
    Udiff,
    /// Codex's apply_patch language (modes: strict, the default; codex).
    #[value(name = "apply_patch")]
    ApplyPatch,
}

/// The flags that choose and configure a parser.
#[derive(Args, Debug, Clone)]
pub struct LangArgs {
    /// The language of the input.
    #[arg(long, value_enum)]
    pub lang: Lang,
    /// A mode of that language (ctl: strict; apply_patch: strict (default), codex; udiff:
    /// strict, git (default), recount).
    #[arg(long)]
    pub mode: Option<String>,
    /// CTL: bytes in one header line, LF included, 9 to 65536.
    #[arg(long, default_value_t = Limits::DEFAULT_MAX_LINE, value_parser = super::bounds::MAX_LINE.parser::<u32>())]
    pub max_line: u32,
    /// CTL: the largest argument, in bytes, 0 to 1073741824.
    #[arg(long, default_value_t = Limits::DEFAULT_MAX_ARG, value_parser = super::bounds::MAX_ARG.parser::<u64>())]
    pub max_arg: u64,
}

/// A command that runs with whichever parser the flags name.
pub trait WithParser {
    /// What the command returns.
    type Output;
    /// Runs the command with `parser`.
    fn run<P: PushParser>(self, parser: P) -> Self::Output;
}

/// Builds the parser the flags name and runs `command` with it.
pub fn dispatch<C: WithParser>(args: &LangArgs, command: C) -> Result<C::Output, String> {
    let mode = args.mode.as_deref();
    match (args.lang, mode) {
        (Lang::Ctl, None | Some("strict")) => Ok(command.run(CtlParser::new(Limits {
            max_line: args.max_line,
            max_arg: args.max_arg,
        }))),
        (Lang::Udiff, None | Some("git")) => Ok(command.run(UdiffParser::git())),
        (Lang::Udiff, Some("strict")) => Ok(command.run(UdiffParser::strict())),
        (Lang::Udiff, Some("recount")) => Ok(command.run(UdiffParser::recount())),
        (Lang::ApplyPatch, None | Some("strict")) => Ok(command.run(StrictParser::default())),
        (Lang::ApplyPatch, Some("codex")) => Ok(command.run(CodexParser::new())),
        (lang, Some(mode)) => Err(format!(
            "unknown mode {mode:?} for --lang {}",
            lang.to_possible_value()
                .map(|v| v.get_name().to_owned())
                .unwrap_or_default()
        )),
    }
}
