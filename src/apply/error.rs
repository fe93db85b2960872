//! The one error type of the engine: a stable kind, the operation, the path, and the lines that
//! could not be placed (with the candidate line numbers when a chunk was ambiguous).

use std::fmt;

use super::workspace::PathError;

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
    /// 1-based line numbers of the places an ambiguous chunk matched.
    pub candidates: Vec<usize>,
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
            candidates: Vec::new(),
        }
    }

    /// Adds the lines that could not be placed.
    pub fn with_lines(mut self, lines: Vec<String>) -> ApplyError {
        self.lines = lines;
        self
    }

    /// A refused path.
    pub fn path(operation: &'static str, e: PathError) -> ApplyError {
        let (kind, path) = match &e {
            PathError::Invalid(p) => (ErrorKind::InvalidPath, p.clone()),
            PathError::Absolute(p) => (ErrorKind::AbsolutePath, p.clone()),
            PathError::Escapes(p) => (ErrorKind::PathEscapesRoot, p.clone()),
            PathError::SymlinkOutside(p) => (ErrorKind::SymlinkOutsideRoot, p.clone()),
            PathError::Protected(p) => (ErrorKind::ProtectedPath, p.clone()),
            PathError::Io(p, _) => (ErrorKind::Io, p.clone()),
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
        if self.path.is_empty() {
            write!(f, "{}: {} [{kind}]", self.operation, self.detail)?;
        } else {
            write!(
                f,
                "{} {}: {} [{kind}]",
                self.operation, self.path, self.detail
            )?;
        }
        if !self.candidates.is_empty() {
            let list: Vec<String> = self.candidates.iter().map(|c| c.to_string()).collect();
            write!(f, "\n  candidate lines: {}", list.join(", "))?;
        }
        if !self.lines.is_empty() {
            write!(f, "\n  lines that could not be placed:")?;
            for line in &self.lines {
                write!(f, "\n  | {line}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for ApplyError {}

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
