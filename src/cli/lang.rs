//! `--lang`, `--mode` and the limits, turned into a parser.
//!
//! Commands are generic over [`PushParser`]; they implement [`WithParser`] and [`dispatch`]
//! calls them with the parser the flags name. The flags become a
//! [`ParserSpec`](frontier::language::ParserSpec), the library's one description of a parser:
//! languages and modes are added there, not here.

use clap::{Args, ValueEnum};

use frontier::contract::PushParser;
use frontier::ctl::Limits;
use frontier::language::{Language, ParserSpec, ParserVisitor};

/// The languages of `--lang`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Lang {
    /// CTL, the line-framed tool-call language.
    Ctl,
    /// Unified diff (modes: strict, git (default), recount).
    Udiff,
    /// Codex's apply_patch language (modes: strict, the default; codex; environment).
    #[value(name = "apply_patch")]
    ApplyPatch,
}

/// The flags that choose and configure a parser.
#[derive(Args, Debug, Clone)]
pub struct LangArgs {
    /// The language of the input.
    #[arg(long, value_enum)]
    pub lang: Lang,
    /// A mode of that language (ctl: strict (default), extended; apply_patch: strict
    /// (default), codex, environment; udiff: strict, git (default), recount).
    #[arg(long)]
    pub mode: Option<String>,
    /// CTL: bytes in one header line, LF included, 1 to 65536.
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

impl From<Lang> for Language {
    fn from(lang: Lang) -> Language {
        match lang {
            Lang::Ctl => Language::Ctl,
            Lang::Udiff => Language::Udiff,
            Lang::ApplyPatch => Language::ApplyPatch,
        }
    }
}

impl LangArgs {
    /// The parser the flags name, or why there is none.
    pub fn spec(&self) -> Result<ParserSpec, String> {
        let spec =
            ParserSpec::new(self.lang.into(), self.mode.as_deref()).map_err(|e| e.to_string())?;
        Ok(spec.with_ctl_limits(Limits {
            max_line: self.max_line,
            max_arg: self.max_arg,
        }))
    }
}

/// A [`WithParser`] command as the library's visitor.
struct Command<C>(C);

impl<C: WithParser> ParserVisitor for Command<C> {
    type Output = C::Output;
    fn visit<P: PushParser>(self, parser: P) -> C::Output {
        self.0.run(parser)
    }
}

/// Builds the parser the flags name and runs `command` with it.
pub fn dispatch<C: WithParser>(args: &LangArgs, command: C) -> Result<C::Output, String> {
    Ok(args.spec()?.run(Command(command)))
}
