//! Which parser to build: a language, its mode and its limits, named by strings once and then
//! carried as a value.
//!
//! Every front end (the `frontier` commands, and later the C ABI and the Python package) names
//! a parser with two strings, a language (`ctl`, `udiff`, `apply_patch`) and an optional mode.
//! [`ParserSpec::parse`] turns them into a [`ParserSpec`] or a [`SpecError`] that says what was
//! expected; a missing mode is the language's default ([`Language::default_mode`]). Then
//! [`ParserSpec::run`] builds the concrete parser and hands it to a [`ParserVisitor`], a
//! command generic over [`PushParser`]. Code that needs a language's own events (the
//! application engine needs apply_patch or unified-diff events, not any parser's) matches on
//! the spec and calls [`ApplyPatchMode::run`] or [`UdiffSpec::run`] with a visitor typed for
//! those events.
//!
//! Adding a mode is one variant of its mode enum, its name in
//! `as_str`, `ALL` and `NAMES`, and one arm in the dispatch: every front end then accepts it.
//!
//! ```
//! use frontier_core::language::{Language, ParserSpec};
//!
//! let spec = ParserSpec::parse("apply_patch", None).unwrap();
//! assert_eq!((spec.language(), spec.mode_name()), (Language::ApplyPatch, "strict"));
//! let err = ParserSpec::parse("udiff", Some("fuzzy")).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "unknown mode \"fuzzy\" for udiff (modes: strict, git, recount)"
//! );
//! ```

use std::fmt;
use std::str::FromStr;

use crate::apply_patch::{CodexParser, PatchEvent, StrictOptions, StrictParser};
use crate::contract::PushParser;
use crate::ctl::{self, CtlParser};
use crate::udiff::{self, UdiffEvent, UdiffParser};

/// A language frontier parses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Language {
    /// CTL, the line-framed tool-call language.
    Ctl,
    /// Unified diff.
    Udiff,
    /// Codex's apply_patch language.
    ApplyPatch,
}

impl Language {
    /// Every language, in the order messages list them.
    pub const ALL: [Language; 3] = [Language::Ctl, Language::Udiff, Language::ApplyPatch];

    /// The name front ends accept: `ctl`, `udiff`, `apply_patch`.
    pub fn as_str(self) -> &'static str {
        match self {
            Language::Ctl => "ctl",
            Language::Udiff => "udiff",
            Language::ApplyPatch => "apply_patch",
        }
    }

    /// The names of the language's modes.
    pub fn modes(self) -> &'static [&'static str] {
        match self {
            Language::Ctl => CtlMode::NAMES,
            Language::Udiff => UdiffSpec::NAMES,
            Language::ApplyPatch => ApplyPatchMode::NAMES,
        }
    }

    /// The mode used when none is named: `strict` for CTL and apply_patch, `git` for udiff.
    pub fn default_mode(self) -> &'static str {
        match self {
            Language::Ctl => CtlMode::default().as_str(),
            Language::Udiff => UdiffSpec::mode_str(udiff::Mode::default()),
            Language::ApplyPatch => ApplyPatchMode::default().as_str(),
        }
    }
}

impl FromStr for Language {
    type Err = SpecError;

    fn from_str(name: &str) -> Result<Language, SpecError> {
        Language::ALL
            .into_iter()
            .find(|l| l.as_str() == name)
            .ok_or_else(|| SpecError::UnknownLanguage(name.to_owned()))
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A language or mode name that is not one frontier knows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpecError {
    /// No language has this name.
    UnknownLanguage(String),
    /// The language has no mode of this name.
    UnknownMode {
        /// The language.
        language: Language,
        /// The name given.
        mode: String,
    },
}

impl SpecError {
    /// A stable name: `unknown_language` or `unknown_mode`.
    pub fn kind(&self) -> &'static str {
        match self {
            SpecError::UnknownLanguage(_) => "unknown_language",
            SpecError::UnknownMode { .. } => "unknown_mode",
        }
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecError::UnknownLanguage(name) => {
                let names: Vec<&str> = Language::ALL.iter().map(|l| l.as_str()).collect();
                write!(
                    f,
                    "unknown language {name:?} (languages: {})",
                    names.join(", ")
                )
            }
            SpecError::UnknownMode { language, mode } => write!(
                f,
                "unknown mode {mode:?} for {language} (modes: {})",
                language.modes().join(", ")
            ),
        }
    }
}

impl std::error::Error for SpecError {}

/// The mode of `all` whose name (by `as_str`) is `name`.
fn find_mode<T: Copy>(
    language: Language,
    all: &[T],
    as_str: fn(T) -> &'static str,
    name: &str,
) -> Result<T, SpecError> {
    all.iter()
        .copied()
        .find(|m| as_str(*m) == name)
        .ok_or_else(|| SpecError::UnknownMode {
            language,
            mode: name.to_owned(),
        })
}

/// CTL's modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum CtlMode {
    /// The language of `docs/ctl.md`: counted arguments only.
    #[default]
    Strict,
    /// Extended CTL: the counted form, the inline form `arg KEY = VALUE` LF and the heredoc
    /// form `arg KEY <<TAG` LF … `TAG` LF (`docs/ctl.md`).
    Extended,
}

impl CtlMode {
    const ALL: [CtlMode; 2] = [CtlMode::Strict, CtlMode::Extended];
    const NAMES: &'static [&'static str] = &["strict", "extended"];

    /// The mode's name.
    pub fn as_str(self) -> &'static str {
        match self {
            CtlMode::Strict => "strict",
            CtlMode::Extended => "extended",
        }
    }

    /// The mode named `name`.
    pub fn from_name(name: &str) -> Result<CtlMode, SpecError> {
        find_mode(Language::Ctl, &Self::ALL, Self::as_str, name)
    }
}

/// apply_patch's modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ApplyPatchMode {
    /// The grammar of the spec, exactly.
    #[default]
    Strict,
    /// What Codex's own parser accepts (padded markers, heredoc wrapping, …).
    Codex,
    /// The grammar of the spec with the multi-environment variant: one `*** Environment ID:`
    /// line may follow `*** Begin Patch` (`grammars/apply_patch_env.lark`).
    Environment,
}

impl ApplyPatchMode {
    const ALL: [ApplyPatchMode; 3] = [
        ApplyPatchMode::Strict,
        ApplyPatchMode::Codex,
        ApplyPatchMode::Environment,
    ];
    const NAMES: &'static [&'static str] = &["strict", "codex", "environment"];

    /// The mode's name.
    pub fn as_str(self) -> &'static str {
        match self {
            ApplyPatchMode::Strict => "strict",
            ApplyPatchMode::Codex => "codex",
            ApplyPatchMode::Environment => "environment",
        }
    }

    /// The mode named `name`.
    pub fn from_name(name: &str) -> Result<ApplyPatchMode, SpecError> {
        find_mode(Language::ApplyPatch, &Self::ALL, Self::as_str, name)
    }

    /// Builds the parser of this mode and runs `visitor` with it.
    pub fn run<V: PatchVisitor>(self, visitor: V) -> V::Output {
        match self {
            ApplyPatchMode::Strict => visitor.visit(StrictParser::default()),
            ApplyPatchMode::Codex => visitor.visit(CodexParser::new()),
            ApplyPatchMode::Environment => {
                visitor.visit(StrictParser::new(StrictOptions { environment: true }))
            }
        }
    }
}

/// A unified-diff mode and its limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct UdiffSpec {
    /// The mode.
    pub mode: udiff::Mode,
    /// The limits.
    pub limits: udiff::Limits,
}

impl UdiffSpec {
    const ALL: [udiff::Mode; 3] = [udiff::Mode::Strict, udiff::Mode::Git, udiff::Mode::Recount];
    const NAMES: &'static [&'static str] = &["strict", "git", "recount"];

    fn mode_str(mode: udiff::Mode) -> &'static str {
        match mode {
            udiff::Mode::Strict => "strict",
            udiff::Mode::Git => "git",
            udiff::Mode::Recount => "recount",
        }
    }

    /// The mode named `name`, with default limits.
    pub fn from_name(name: &str) -> Result<UdiffSpec, SpecError> {
        let mode = find_mode(Language::Udiff, &Self::ALL, Self::mode_str, name)?;
        Ok(UdiffSpec {
            mode,
            limits: udiff::Limits::default(),
        })
    }

    /// The mode's name.
    pub fn as_str(self) -> &'static str {
        Self::mode_str(self.mode)
    }

    /// Builds the parser and runs `visitor` with it.
    pub fn run<V: DiffVisitor>(self, visitor: V) -> V::Output {
        visitor.visit(UdiffParser::new(self.mode, self.limits))
    }
}

/// A parser, fully specified: language, mode and limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParserSpec {
    /// CTL.
    Ctl {
        /// The mode.
        mode: CtlMode,
        /// The limits.
        limits: ctl::Limits,
    },
    /// apply_patch (no limits: its buffers are bounded by the grammar's own line rules).
    ApplyPatch(ApplyPatchMode),
    /// Unified diff.
    Udiff(UdiffSpec),
}

impl ParserSpec {
    /// The parser `language` and `mode` name (the language's default mode for `None`), with
    /// default limits.
    pub fn parse(language: &str, mode: Option<&str>) -> Result<ParserSpec, SpecError> {
        ParserSpec::new(language.parse()?, mode)
    }

    /// The parser of `language` in `mode` (its default for `None`), with default limits.
    pub fn new(language: Language, mode: Option<&str>) -> Result<ParserSpec, SpecError> {
        let mode = mode.unwrap_or(language.default_mode());
        Ok(match language {
            Language::Ctl => ParserSpec::Ctl {
                mode: CtlMode::from_name(mode)?,
                limits: ctl::Limits::default(),
            },
            Language::Udiff => ParserSpec::Udiff(UdiffSpec::from_name(mode)?),
            Language::ApplyPatch => ParserSpec::ApplyPatch(ApplyPatchMode::from_name(mode)?),
        })
    }

    /// The same spec with CTL limits `limits` (other languages do not use them).
    pub fn with_ctl_limits(self, limits: ctl::Limits) -> ParserSpec {
        match self {
            ParserSpec::Ctl { mode, .. } => ParserSpec::Ctl { mode, limits },
            other => other,
        }
    }

    /// The language.
    pub fn language(&self) -> Language {
        match self {
            ParserSpec::Ctl { .. } => Language::Ctl,
            ParserSpec::ApplyPatch(_) => Language::ApplyPatch,
            ParserSpec::Udiff(_) => Language::Udiff,
        }
    }

    /// The mode's name.
    pub fn mode_name(&self) -> &'static str {
        match self {
            ParserSpec::Ctl { mode, .. } => mode.as_str(),
            ParserSpec::ApplyPatch(mode) => mode.as_str(),
            ParserSpec::Udiff(spec) => spec.as_str(),
        }
    }

    /// Builds the parser and runs `visitor` with it.
    pub fn run<V: ParserVisitor>(&self, visitor: V) -> V::Output {
        match *self {
            ParserSpec::Ctl { mode, limits } => visitor.visit(CtlParser::with_mode(limits, mode)),
            ParserSpec::ApplyPatch(mode) => mode.run(AnyParser(visitor)),
            ParserSpec::Udiff(spec) => spec.run(AnyParser(visitor)),
        }
    }
}

/// Something to do with whichever parser a [`ParserSpec`] names.
pub trait ParserVisitor {
    /// What it returns.
    type Output;
    /// Does it with `parser`.
    fn visit<P: PushParser>(self, parser: P) -> Self::Output;
}

/// Something to do with an apply_patch parser, whichever its mode.
pub trait PatchVisitor {
    /// What it returns.
    type Output;
    /// Does it with `parser`.
    fn visit<P>(self, parser: P) -> Self::Output
    where
        P: for<'e> PushParser<Event<'e> = PatchEvent<'e>>;
}

/// Something to do with a unified-diff parser, whichever its mode.
pub trait DiffVisitor {
    /// What it returns.
    type Output;
    /// Does it with `parser`.
    fn visit<P>(self, parser: P) -> Self::Output
    where
        P: for<'e> PushParser<Event<'e> = UdiffEvent<'e>>;
}

/// A [`ParserVisitor`] seen as a typed one, so each language's dispatch is written once.
struct AnyParser<V>(V);

impl<V: ParserVisitor> PatchVisitor for AnyParser<V> {
    type Output = V::Output;
    fn visit<P>(self, parser: P) -> V::Output
    where
        P: for<'e> PushParser<Event<'e> = PatchEvent<'e>>,
    {
        self.0.visit(parser)
    }
}

impl<V: ParserVisitor> DiffVisitor for AnyParser<V> {
    type Output = V::Output;
    fn visit<P>(self, parser: P) -> V::Output
    where
        P: for<'e> PushParser<Event<'e> = UdiffEvent<'e>>,
    {
        self.0.visit(parser)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds a `*** Begin Patch` line with a trailing space and says how the stream ended.
    struct Probe;

    impl ParserVisitor for Probe {
        type Output = (u64, &'static str);
        fn visit<P: PushParser>(self, mut parser: P) -> Self::Output {
            let _ = parser.push(b"*** Begin Patch \n", &mut |_| {});
            let outcome = parser.finish(&mut |_| {});
            (outcome.consumed, outcome.verdict.as_str())
        }
    }

    #[test]
    fn the_listed_names_are_the_modes_names() {
        let ctl: Vec<_> = CtlMode::ALL.iter().map(|m| m.as_str()).collect();
        let patch: Vec<_> = ApplyPatchMode::ALL.iter().map(|m| m.as_str()).collect();
        let diff: Vec<_> = UdiffSpec::ALL
            .iter()
            .map(|m| UdiffSpec::mode_str(*m))
            .collect();
        assert_eq!(ctl, CtlMode::NAMES);
        assert_eq!(patch, ApplyPatchMode::NAMES);
        assert_eq!(diff, UdiffSpec::NAMES);
    }

    #[test]
    fn every_language_and_mode_parses_from_its_names_and_back() {
        for language in Language::ALL {
            assert_eq!(language.as_str().parse::<Language>(), Ok(language));
            let default = ParserSpec::new(language, None).unwrap();
            assert_eq!(default.mode_name(), language.default_mode());
            for mode in language.modes() {
                let spec = ParserSpec::parse(language.as_str(), Some(mode)).unwrap();
                assert_eq!((spec.language(), spec.mode_name()), (language, *mode));
            }
        }
        assert_eq!(Language::Udiff.default_mode(), "git");
        assert_eq!(Language::ApplyPatch.default_mode(), "strict");
    }

    #[test]
    fn unknown_names_are_refused_with_what_was_expected() {
        let e = ParserSpec::parse("json", None).unwrap_err();
        assert_eq!(e.kind(), "unknown_language");
        assert_eq!(
            e.to_string(),
            "unknown language \"json\" (languages: ctl, udiff, apply_patch)"
        );
        let e = ParserSpec::parse("apply_patch", Some("git")).unwrap_err();
        assert_eq!(e.kind(), "unknown_mode");
        assert_eq!(
            e.to_string(),
            "unknown mode \"git\" for apply_patch (modes: strict, codex, environment)"
        );
        assert!(ParserSpec::parse("ctl", Some("codex")).is_err());
    }

    #[test]
    fn the_spec_builds_the_parser_it_names() {
        // A padded Begin marker: Codex's parser reads on, the strict grammar refuses the space.
        let strict = ParserSpec::parse("apply_patch", Some("strict")).unwrap();
        let codex = ParserSpec::parse("apply_patch", Some("codex")).unwrap();
        assert_eq!(strict.run(Probe).1, "error");
        assert_eq!(codex.run(Probe).1, "incomplete");
        let limits = ctl::Limits {
            max_line: 8,
            max_arg: 1,
        };
        let ctl = ParserSpec::parse("ctl", None)
            .unwrap()
            .with_ctl_limits(limits);
        assert_eq!(
            ctl,
            ParserSpec::Ctl {
                mode: CtlMode::Strict,
                limits
            }
        );
    }
}
