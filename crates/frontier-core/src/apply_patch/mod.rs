//! apply_patch: the patch language of OpenAI Codex, in two modes.
//!
//! Codex's `apply_patch` tool takes patches in a language of its own, defined by a 19-line
//! Lark grammar (`grammars/apply_patch.lark`, from openai/codex, Apache-2.0):
//!
//! ```text
//! *** Begin Patch
//! *** Update File: src/app.py
//! *** Move to: src/main.py
//! @@ def greet():
//! -print("Hi")
//! +print("Hello")
//! *** End Patch
//! ```
//!
//! - **Strict mode** ([`StrictParser`], recogniser [`StrictMachine`]): exactly the grammar's
//!   language as llguidance enforces it (LF only, strict UTF-8 for `.`). `allowed()` and
//!   `accepting()` agree with llguidance 1.9 on every prefix (`tests/apply_patch_llguidance.rs`).
//! - **Codex mode** ([`CodexParser`], recogniser [`CodexMachine`]): exactly what Codex's own
//!   lenient `parse_patch` accepts (trimmed markers, CRLF, the heredoc wrapper, …), with its
//!   own exact `allowed()`.
//!
//! Both emit the same [`PatchEvent`]s: byte-level confirmations, plus the two unit events
//! `chunk_end` and `file_end`. [`OperationAssembler`] turns them into owned
//! [`units::FileOperation`]s, one per confirmed file operation: what the application engine
//! consumes.
//!
//! # Confirmation and `K`
//!
//! Strict mode: a header marker (`*** …`, `@@`) is pending until it is complete; content bytes
//! are confirmed as they arrive, a UTF-8 character at its last byte. `K = 19` (the longest
//! marker, `*** Environment ID: `, less its last byte), whatever the lengths of lines.
//!
//! Codex mode: the last line decides (a line `*** End Patch` is the end only if nothing but
//! whitespace follows), markers are recognised after trimming, and a CR is content unless an
//! LF follows. A line is pending while its kind is open; once it is settled (a `+`, `-` or ` `
//! line, an `@@ ` context, a path, with no other reading left) its content is confirmed as it
//! arrives, less a partial character, a CR that may be a CRLF's, and a path's trailing
//! whitespace. Whitespace that Codex's rules need to see past (indentation, a possible closing
//! line, the lines after one, a path's trailing run) has no length limit, so there is no
//! constant bound; `pending_bound()` is `u64::MAX` there (see `docs/apply_patch.md`).
//!
//! # Error kinds
//!
//! | kind | when |
//! |---|---|
//! | `expected_begin_patch` | the first line is not `*** Begin Patch` (codex: nor a heredoc opener) |
//! | `expected_hunk_header` | a line that must be a file-operation header (or the end) starts otherwise |
//! | `expected_add_line` | after `*** Add File:` a line does not start with `+` (strict) |
//! | `expected_change_line` | inside an Update a line starts with none of `+ - space @ *` (strict) |
//! | `bad_marker` | a `*** ` line that matches no marker allowed here |
//! | `bad_context_marker` | `@` not followed by `@` and then space or LF; codex: a second `@@`, `@@` without a line after it, a later chunk without `@@` |
//! | `empty_path` | a header's path is empty |
//! | `empty_context` | `@@ ` followed directly by LF (strict) |
//! | `empty_update` | codex: an Update (or Move) with no chunk before the next header or the end |
//! | `invalid_utf8` | a byte that cannot continue valid UTF-8 |
//! | `trailing_data` | anything after the end of the patch |

mod assemble;
mod codex;
mod codex_machine;
mod event;
mod frame;
pub mod keywords;
mod parser;
mod strict;
pub mod units;
pub mod utf8;

pub use assemble::OperationAssembler;
pub use codex::{CodexMachine, CodexParser, LineKind};
pub use event::PatchEvent;
pub use frame::Construct;
pub use parser::StrictParser;
pub use strict::{PathOf, StrictMachine, StrictOptions, TextKind};

/// A file operation's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `*** Add File:`.
    Add,
    /// `*** Delete File:`.
    Delete,
    /// `*** Update File:`.
    Update,
}

impl Op {
    /// `add`, `delete` or `update`.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::Delete => "delete",
            Op::Update => "update",
        }
    }
}

/// A line's kind, from its first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LineOp {
    /// `+`.
    Add,
    /// `-`.
    Remove,
    /// ` ` (or, in codex mode, an empty line inside a chunk).
    Context,
}

impl LineOp {
    /// `add`, `remove` or `context`.
    pub fn as_str(self) -> &'static str {
        match self {
            LineOp::Add => "add",
            LineOp::Remove => "remove",
            LineOp::Context => "context",
        }
    }
}

/// How a chunk was introduced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChunkHeader {
    /// No `@@` line: the first chunk of an Update starting directly with change lines.
    None,
    /// A bare `@@`.
    Bare,
    /// `@@ ` with a context text.
    Context,
}

impl ChunkHeader {
    /// `none`, `bare` or `context`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChunkHeader::None => "none",
            ChunkHeader::Bare => "bare",
            ChunkHeader::Context => "context",
        }
    }
}

/// Why apply_patch refused a byte. See the module documentation for when each occurs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum PatchErrorKind {
    ExpectedBeginPatch,
    ExpectedHunkHeader,
    ExpectedAddLine,
    ExpectedChangeLine,
    BadMarker,
    BadContextMarker,
    EmptyPath,
    EmptyContext,
    EmptyUpdate,
    InvalidUtf8,
    TrailingData,
}

impl crate::contract::ErrorKind for PatchErrorKind {
    fn as_str(self) -> &'static str {
        match self {
            PatchErrorKind::ExpectedBeginPatch => "expected_begin_patch",
            PatchErrorKind::ExpectedHunkHeader => "expected_hunk_header",
            PatchErrorKind::ExpectedAddLine => "expected_add_line",
            PatchErrorKind::ExpectedChangeLine => "expected_change_line",
            PatchErrorKind::BadMarker => "bad_marker",
            PatchErrorKind::BadContextMarker => "bad_context_marker",
            PatchErrorKind::EmptyPath => "empty_path",
            PatchErrorKind::EmptyContext => "empty_context",
            PatchErrorKind::EmptyUpdate => "empty_update",
            PatchErrorKind::InvalidUtf8 => "invalid_utf8",
            PatchErrorKind::TrailingData => "trailing_data",
        }
    }
}
