//! CTL: the line-framed tool-call language.
//!
//! ```text
//! call <id> <name>\n
//! arg <key> <nbytes>\n
//! <exactly nbytes raw bytes>
//! end\n
//! ```
//!
//! Header lines are short and bounded by `max_line`; argument bodies are length-prefixed raw
//! bytes with no escaping, so every byte can be confirmed the moment it arrives (compare JSON,
//! where an unclosed `"` lets any later byte change the meaning of what came before). The
//! shared specification `ctl.md` is the full statement.
//!
//! The crate splits the language in two layers:
//!
//! - [`CtlMachine`], the recogniser: a `Copy` value of a few words that knows the grammar and
//!   the limits, answers `allowed()` exactly and steps byte by byte. It is what a constrained
//!   decoder clones along a token trie.
//! - [`CtlParser`], the push parser: the machine plus a line buffer of at most `max_line`
//!   bytes, emitting [`CtlEvent`]s whose tokens are borrowed [`Token`]s. [`CallAssembler`]
//!   builds whole [`ToolCall`]s from them.
//!
//! # Confirmation and `K`
//!
//! A `call` or `arg` header is confirmed at its LF; each body byte as it arrives; `end\n`
//! confirms the whole call. Pending bytes are the current header line, so `K = max_line − 1`.
//!
//! # Error kinds
//!
//! | kind | when |
//! |---|---|
//! | `line_too_long` | the grammar allows the byte, but the header line could no longer end within `max_line` |
//! | `arg_too_large` | a digit of `nbytes` would make it exceed `max_arg` (checked before the line limit) |
//! | `unexpected_byte` | any other byte outside the grammar |

mod assemble;
mod frame;
mod heredoc;
mod line_scan;
mod machine;
mod parser;
mod token;

pub use crate::language::CtlMode;
pub use assemble::{CallAssembler, CallBounds, CallTooLarge, Crossed, ToolCall};
pub use frame::{
    arg_form, frame_call, pick_tag, write_call, ArgForm, EofTag, Field, FrameError, TAG_CANDIDATES,
};
pub use heredoc::{Tag, MAX_TAG};
pub use machine::{Construct, CtlKey, CtlMachine, Step};
pub use parser::{CtlEvent, CtlParser};
pub use token::Token;

/// The two limits of the language. Both are part of the language: `allowed()` respects them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Bytes in one header line, its LF included (default 256).
    pub max_line: u32,
    /// The largest `nbytes` of an argument (default 16 MiB).
    pub max_arg: u64,
}

impl Limits {
    /// The default `max_line`.
    pub const DEFAULT_MAX_LINE: u32 = 256;
    /// The default `max_arg`.
    pub const DEFAULT_MAX_ARG: u64 = 16 * 1024 * 1024;
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_line: Self::DEFAULT_MAX_LINE,
            max_arg: Self::DEFAULT_MAX_ARG,
        }
    }
}

/// Why CTL refused a byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CtlErrorKind {
    /// The grammar allows the byte, but the header line could no longer end within `max_line`.
    LineTooLong,
    /// A digit of `nbytes` would make it exceed `max_arg`.
    ArgTooLarge,
    /// Any other byte outside the grammar.
    UnexpectedByte,
}

impl crate::contract::ErrorKind for CtlErrorKind {
    fn as_str(self) -> &'static str {
        match self {
            CtlErrorKind::LineTooLong => "line_too_long",
            CtlErrorKind::ArgTooLarge => "arg_too_large",
            CtlErrorKind::UnexpectedByte => "unexpected_byte",
        }
    }
}

/// The bytes of `id`, `name` and `key`: ALPHA / DIGIT / `_` / `.` / `:` / `-`.
pub const TOKEN_CHARS: crate::ByteSet = crate::ByteSet::range(b'a', b'z')
    .union(crate::ByteSet::range(b'A', b'Z'))
    .union(crate::ByteSet::range(b'0', b'9'))
    .union(crate::ByteSet::of(b"_.:-"));
