//! The one error type of the engine: a stable kind, the operation, the path, and the lines that
//! could not be placed (with the candidate line numbers when a chunk was ambiguous).

use std::fmt;

use super::workspace::{OpenError, PathError};

/// Why an operation could not be applied. Each kind has a stable snake_case name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The path is empty, holds a NUL byte or is not UTF-8.
    InvalidPath,
    /// An absolute path.
    AbsolutePath,
    /// `..` climbs out of the root.
    PathEscapesRoot,
    /// A symbolic link on the way leads outside the root.
    SymlinkOutsideRoot,
    /// The path is one of the runtime's own files (a protected path of the workspace).
    ProtectedPath,
    /// The file to read, update or delete does not exist.
    FileNotFound,
    /// A file the patch creates already exists (unified diff).
    FileExists,
    /// The path names a directory where a file was expected.
    IsDirectory,
    /// The path names a FIFO, a socket or a device: never opened.
    NotRegularFile,
    /// The file is not UTF-8 (apply_patch works on text).
    NotUtf8,
    /// An `@@ context` line is not in the file.
    ContextNotFound,
    /// A chunk's or hunk's old lines are not in the file.
    LinesNotFound,
    /// A chunk matches at more than one place and nothing singles one out.
    Ambiguous,
    /// A deletion patch does not remove the whole file.
    DeleteNotEmpty,
    /// The patch holds no operation.
    EmptyPatch,
    /// `Binary files A and B differ`: the change is not in the patch.
    BinaryWithoutData,
    /// A binary block does not inflate, or its delta is malformed.
    BinaryCorrupt,
    /// A binary block's sizes do not agree with the file.
    BinaryMismatch,
    /// A name could not be stripped by `-p N`, or a file patch names no file.
    BadName,
    /// Reading or writing failed.
    Io,
    /// The session already failed or was used after its end.
    SessionClosed,
    /// The patch does not parse, or was cut off: nothing is applied.
    Parse,
    /// Something the engine does not do: a symbolic link or a submodule (git modes 120000,
    /// 160000).
    Unsupported,
}

impl ErrorKind {
    /// The stable name.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::InvalidPath => "invalid_path",
            ErrorKind::AbsolutePath => "absolute_path",
            ErrorKind::PathEscapesRoot => "path_escapes_root",
            ErrorKind::SymlinkOutsideRoot => "symlink_outside_root",
            ErrorKind::ProtectedPath => "protected_path",
            ErrorKind::FileNotFound => "file_not_found",
            ErrorKind::FileExists => "file_exists",
            ErrorKind::IsDirectory => "is_directory",
            ErrorKind::NotRegularFile => "not_regular_file",
            ErrorKind::NotUtf8 => "not_utf8",
            ErrorKind::ContextNotFound => "context_not_found",
            ErrorKind::LinesNotFound => "lines_not_found",
            ErrorKind::Ambiguous => "ambiguous",
            ErrorKind::DeleteNotEmpty => "delete_not_empty",
            ErrorKind::EmptyPatch => "empty_patch",
            ErrorKind::BinaryWithoutData => "binary_without_data",
            ErrorKind::BinaryCorrupt => "binary_corrupt",
            ErrorKind::BinaryMismatch => "binary_mismatch",
            ErrorKind::BadName => "bad_name",
            ErrorKind::Io => "io_error",
            ErrorKind::SessionClosed => "session_closed",
            ErrorKind::Parse => "parse_error",
            ErrorKind::Unsupported => "unsupported",
        }
    }
}

/// An operation that could not be applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApplyError {
    /// What went wrong.
    pub kind: ErrorKind,
    /// The operation: `add`, `delete`, `update`, `move`, `patch` (a unified-diff file patch),
    /// `commit`.
    pub operation: &'static str,
    /// The path as written in the patch (empty when there is none).
    pub path: String,
    /// A sentence for people.
    pub detail: String,
    /// The lines that could not be placed (for a hunk or chunk), as written in the patch.
    pub lines: Vec<String>,
    /// What only rare failures carry (see [`Self::candidates`], [`Self::parse_error`] and
    /// [`Self::unrestored`]), boxed so that the common error stays small.
    extra: Option<Box<Extra>>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Extra {
    candidates: Vec<usize>,
    parse: Option<ParseErrorInfo>,
    unrestored: Vec<String>,
}

/// A parser's refusal, with the kind as its stable name: the structure of
/// [`ParseError`](crate::contract::ParseError) for every language at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseErrorInfo {
    /// Absolute offset of the refused byte.
    pub offset: u64,
    /// The refused byte.
    pub byte: u8,
    /// The parser's error kind, such as `unexpected_byte`.
    pub kind: &'static str,
}

impl<K: crate::contract::ErrorKind> From<crate::contract::ParseError<K>> for ParseErrorInfo {
    fn from(e: crate::contract::ParseError<K>) -> ParseErrorInfo {
        ParseErrorInfo {
            offset: e.offset,
            byte: e.byte,
            kind: e.kind.as_str(),
        }
    }
}

impl ApplyError {
    /// An error with no lines.
    pub fn new(
        kind: ErrorKind,
        operation: &'static str,
        path: impl Into<String>,
        detail: impl Into<String>,
    ) -> ApplyError {
        ApplyError {
            kind,
            operation,
            path: path.into(),
            detail: detail.into(),
            lines: Vec::new(),
            extra: None,
        }
    }

    /// The patch does not parse (`error` is the parser's refusal) or was cut off (`None`).
    pub fn parse(error: Option<ParseErrorInfo>, detail: impl Into<String>) -> ApplyError {
        let mut e = ApplyError::new(ErrorKind::Parse, "parse", "", detail);
        if error.is_some() {
            e.extra_mut().parse = error;
        }
        e
    }

    /// Adds the paths an undo could not restore.
    pub fn with_unrestored(mut self, unrestored: Vec<String>) -> ApplyError {
        if !unrestored.is_empty() {
            self.extra_mut().unrestored = unrestored;
        }
        self
    }

    /// Adds the 1-based line numbers of the places an ambiguous chunk matched.
    pub fn with_candidates(mut self, candidates: Vec<usize>) -> ApplyError {
        if !candidates.is_empty() {
            self.extra_mut().candidates = candidates;
        }
        self
    }

    /// 1-based line numbers of the places an ambiguous chunk matched (empty for every other
    /// failure).
    pub fn candidates(&self) -> &[usize] {
        self.extra.as_ref().map_or(&[], |x| &x.candidates)
    }

    /// For [`ErrorKind::Parse`]: where and why the parser refused the patch (`None` when the
    /// patch was cut off rather than refused, and for every other kind).
    pub fn parse_error(&self) -> Option<&ParseErrorInfo> {
        self.extra.as_ref().and_then(|x| x.parse.as_ref())
    }

    /// After a failed all-or-nothing commit: the paths whose undo failed, each with the reason
    /// and where the original was left. Empty when everything was restored.
    pub fn unrestored(&self) -> &[String] {
        self.extra.as_ref().map_or(&[], |x| &x.unrestored)
    }

    fn extra_mut(&mut self) -> &mut Extra {
        self.extra.get_or_insert_with(Box::default)
    }

    /// Adds the lines that could not be placed.
    pub fn with_lines(mut self, lines: Vec<String>) -> ApplyError {
        self.lines = lines;
        self
    }

    /// A refused path.
    pub fn path(operation: &'static str, e: PathError) -> ApplyError {
        let (kind, path) = match &e {
            PathError::Invalid(p) | PathError::DirectoryName(p) => {
                (ErrorKind::InvalidPath, p.clone())
            }
            PathError::Absolute(p) => (ErrorKind::AbsolutePath, p.clone()),
            PathError::Escapes(p) => (ErrorKind::PathEscapesRoot, p.clone()),
            PathError::SymlinkOutside(p) => (ErrorKind::SymlinkOutsideRoot, p.clone()),
            PathError::Protected(p) => (ErrorKind::ProtectedPath, p.clone()),
            PathError::Io(p, _) => (ErrorKind::Io, p.clone()),
        };
        ApplyError::new(kind, operation, path, e.to_string())
    }

    /// A path that could not be opened for reading.
    pub fn open(operation: &'static str, path: &str, e: OpenError) -> ApplyError {
        let kind = match &e {
            OpenError::NotFound => ErrorKind::FileNotFound,
            OpenError::IsDirectory => ErrorKind::IsDirectory,
            OpenError::Special { .. } => ErrorKind::NotRegularFile,
            OpenError::NotDirectory | OpenError::Io(_) => ErrorKind::Io,
        };
        ApplyError::new(kind, operation, path, e.to_string())
    }

    /// An I/O failure.
    pub fn io(operation: &'static str, path: &str, e: &std::io::Error) -> ApplyError {
        let kind = match e.kind() {
            std::io::ErrorKind::NotFound => ErrorKind::FileNotFound,
            _ => ErrorKind::Io,
        };
        ApplyError::new(kind, operation, path, e.to_string())
    }
}

impl fmt::Display for ApplyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = self.kind.name();
        let detail = Escaped(&self.detail);
        if self.path.is_empty() {
            write!(f, "{}: {detail} [{kind}]", self.operation)?;
        } else {
            let path = Escaped(&self.path);
            write!(f, "{} {path}: {detail} [{kind}]", self.operation)?;
        }
        if !self.candidates().is_empty() {
            let list: Vec<String> = self.candidates().iter().map(|c| c.to_string()).collect();
            write!(f, "\n  candidate lines: {}", list.join(", "))?;
        }
        if !self.lines.is_empty() {
            write!(f, "\n  lines that could not be placed:")?;
            for line in &self.lines {
                write!(f, "\n  | {}", Escaped(line))?;
            }
        }
        if !self.unrestored().is_empty() {
            write!(f, "\n  could not be restored:")?;
            for path in self.unrestored() {
                write!(f, "\n  ! {}", Escaped(path))?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for ApplyError {}

/// Text for a terminal: control characters but the tab (NUL, ESC, CR, …) written as escapes
/// (`\0`, `\x1b`, `\r`), so that a message never carries a raw control byte from a patch or a
/// path.
pub struct Escaped<'a>(pub &'a str);

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(at) = rest.find(|c: char| c.is_control() && c != '\t') {
            f.write_str(&rest[..at])?;
            let c = rest[at..].chars().next().unwrap_or_default();
            match c {
                '\0' => f.write_str("\\0")?,
                '\r' => f.write_str("\\r")?,
                '\n' => f.write_str("\\n")?,
                c if c.is_ascii() => write!(f, "\\x{:02x}", c as u32)?,
                c => write!(f, "\\u{{{:04x}}}", c as u32)?,
            }
            rest = &rest[at + c.len_utf8()..];
        }
        f.write_str(rest)
    }
}

/// The first failure of a session. Once one step fails, every later step returns the same
/// error, so a stream's first failure is the one reported, whatever arrives after it.
#[derive(Clone, Debug, Default)]
pub(crate) struct FirstFailure(Option<ApplyError>);

impl FirstFailure {
    /// The failure, if there was one.
    pub(crate) fn get(&self) -> Option<&ApplyError> {
        self.0.as_ref()
    }

    /// `Err` with the failure, if there was one: the check at the start of every step.
    pub(crate) fn check(&self) -> Result<(), ApplyError> {
        match &self.0 {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Passes `r` through, remembering it if it is a failure. (Steps check first, so after
    /// a failure no step gets this far.)
    pub(crate) fn record<T>(&mut self, r: Result<T, ApplyError>) -> Result<T, ApplyError> {
        if let Err(e) = &r {
            self.0 = Some(e.clone());
        }
        r
    }

    /// The failure, by value.
    pub(crate) fn into_inner(self) -> Option<ApplyError> {
        self.0
    }
}
