//! The confirmation contract as types.
//!
//! Every language of the crate implements [`PushParser`]: bytes go in through
//! [`push`](PushParser::push) in chunks of any size, confirmed events come out through a
//! callback, and after every byte the parser can say which bytes may come next
//! ([`allowed`](PushParser::allowed)) and whether the input so far is a whole sentence
//! ([`accepting`](PushParser::accepting)). `../spec/contract.md` in the shared specification is
//! the full statement; this module is its shape in Rust.
//!
//! # The loop of a constrained decoder
//!
//! ```
//! use frontier_core::contract::PushParser;
//! use frontier_core::ctl::CtlParser;
//!
//! let mut parser = CtlParser::default();
//! for &byte in b"call c1 read_file\nend\n" {
//!     // A sampler would mask its logits with this set.
//!     assert!(parser.allowed().contains(byte));
//!     parser.push(&[byte], &mut |_event| {}).unwrap();
//! }
//! assert!(parser.accepting());
//! ```
//!
//! Events are handed to the callback by reference to bytes the parser already holds (its input
//! chunk or a bounded line buffer): nothing is copied unless the consumer copies it, and the
//! callback is generic so that a consumer that ignores events costs nothing.

use std::fmt;

use crate::byteset::ByteSet;
use crate::event::Event;
use crate::recognizer::Recognizer;

/// The stable name of an error kind, as printed by the CLI and documented per language.
pub trait ErrorKind: Copy + Eq + fmt::Debug + 'static {
    /// The kind's stable name, such as `unexpected_byte`.
    fn as_str(self) -> &'static str;
}

/// The first byte outside the allowed set: where it was, what it was, and why it was refused.
///
/// Errors are sticky: once a parser has returned one, every later push returns the same value.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct ParseError<K> {
    /// Absolute offset of the refused byte in the stream.
    pub offset: u64,
    /// The refused byte.
    pub byte: u8,
    /// Why it was refused.
    pub kind: K,
}

impl<K: Copy> ParseError<K> {
    /// The same error with its offset and byte cleared: what a recogniser's
    /// [`mask_key`](crate::recognizer::Recognizer::mask_key) keeps of it, since no
    /// continuation can observe where a stream failed, only that it did and why.
    pub fn without_position(self) -> ParseError<K> {
        ParseError {
            offset: 0,
            byte: 0,
            kind: self.kind,
        }
    }
}

impl<K: ErrorKind> fmt::Display for ParseError<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at byte {} (0x{:02x}",
            self.kind.as_str(),
            self.offset,
            self.byte
        )?;
        if self.byte.is_ascii_graphic() || self.byte == b' ' {
            write!(f, " {:?}", self.byte as char)?;
        }
        write!(f, ")")
    }
}

impl<K: ErrorKind> std::error::Error for ParseError<K> {}

/// What a cut-off stream left open: the innermost construct of the language that had begun and
/// not ended, and where it began.
///
/// Every language documents its construct names (`docs/ctl.md`, `docs/apply_patch.md`,
/// `docs/udiff.md`), small stable names like the error kinds. All three languages are framed by
/// lines, so every construct begins at a line start (in CTL a line may follow a body with no LF
/// between). `began_at` is at most the bytes consumed, and past the confirmation frontier only
/// at the start of a line after lines the parser holds back whole
/// ([`check_unclosed`](crate::harness::check_unclosed) checks both).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Unclosed {
    /// The construct's stable name, such as `arg_body` or `hunk`.
    pub construct: &'static str,
    /// Absolute offset of the construct's first byte.
    pub began_at: u64,
    /// What a length-prefixed construct still needs, when the language knows it.
    pub owed: Option<Owed>,
}

/// What a length-prefixed construct still needs before it can close.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Owed {
    /// Bytes (a CTL argument body).
    Bytes(u64),
    /// Lines of each side (a unified-diff hunk with counts).
    Lines {
        /// Old-side lines (context or removed).
        old: u64,
        /// New-side lines (context or added).
        new: u64,
    },
}

impl Unclosed {
    /// A construct that owes nothing countable.
    pub const fn at(construct: &'static str, began_at: u64) -> Unclosed {
        Unclosed {
            construct,
            began_at,
            owed: None,
        }
    }
}

impl fmt::Display for Unclosed {
    /// `unclosed arg_body begun at byte 20 (3 bytes owed)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unclosed {} begun at byte {}",
            self.construct, self.began_at
        )?;
        match self.owed {
            Some(Owed::Bytes(1)) => f.write_str(" (1 byte owed)"),
            Some(Owed::Bytes(n)) => write!(f, " ({n} bytes owed)"),
            Some(Owed::Lines { old, new }) => {
                write!(f, " ({old} old and {new} new lines owed)")
            }
            None => Ok(()),
        }
    }
}

/// How a stream ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Verdict<K> {
    /// The input is a sentence of the language.
    Complete,
    /// The input is a viable prefix that was cut off, inside the given construct.
    Incomplete(Unclosed),
    /// The input left the language at the given byte.
    Error(ParseError<K>),
}

impl<K> Verdict<K> {
    /// The verdict of a stream ending now: its sticky error if it has one, else incomplete
    /// when a construct is still open (`unclosed`, `None` when the input is a sentence), else
    /// complete.
    pub fn at_end(error: Option<ParseError<K>>, unclosed: Option<Unclosed>) -> Verdict<K> {
        match (error, unclosed) {
            (Some(error), _) => Verdict::Error(error),
            (None, Some(unclosed)) => Verdict::Incomplete(unclosed),
            (None, None) => Verdict::Complete,
        }
    }

    /// `complete`, `incomplete` or `error`: the names the CLI prints.
    pub fn as_str(&self) -> &'static str {
        match self {
            Verdict::Complete => "complete",
            Verdict::Incomplete(_) => "incomplete",
            Verdict::Error(_) => "error",
        }
    }

    /// What was left open, if the verdict is incomplete.
    pub fn unclosed(&self) -> Option<&Unclosed> {
        match self {
            Verdict::Incomplete(unclosed) => Some(unclosed),
            _ => None,
        }
    }

    /// The error, if the verdict is one.
    pub fn error(&self) -> Option<&ParseError<K>> {
        match self {
            Verdict::Error(e) => Some(e),
            _ => None,
        }
    }
}

/// What [`PushParser::finish`] reports.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Outcome<K> {
    /// Complete, incomplete or error.
    pub verdict: Verdict<K>,
    /// Bytes accepted; for an error, the error's offset.
    pub consumed: u64,
    /// The confirmation frontier after the end of the stream was taken into account.
    pub confirmed: u64,
}

/// An incremental parser that emits only confirmed events.
///
/// Implementations keep their state between pushes and never rescan consumed bytes, and they
/// do not allocate per byte. A clone copies the parser's buffers, which hold at most the
/// pending bytes (bounded by the language's limits, except in codex-mode apply_patch, whose
/// current line Codex itself does not bound); a decoder that only needs allowed sets copies
/// the [`recognizer`](PushParser::recognizer) instead: 56 to 104 bytes, no heap.
pub trait PushParser: Clone {
    /// The events of the language. They borrow from the pushed chunk or from the parser's
    /// bounded buffers, for the duration of the callback only.
    type Event<'e>: Event;
    /// The language's error kinds.
    type ErrorKind: ErrorKind;
    /// The kinds of unit `check --json` counts, in the order it prints them (for example
    /// `["calls"]`). Each unit is announced by an event whose [`Event::unit`] names it.
    const UNITS: &'static [&'static str];
    /// The language's recogniser ([`crate::recognizer`]): grammar and limits as a small
    /// `Copy` state, without the buffers that events need.
    type Recognizer: Recognizer;

    /// The recogniser standing where the parser stands: stepped on its own from here, it
    /// answers `allowed()` and `accepting()` exactly as the parser would.
    fn recognizer(&self) -> Self::Recognizer;

    /// Feeds the next chunk (any size, zero included). Events confirmed by it are handed to
    /// `on_event` in order. The first byte outside [`allowed`](Self::allowed) stops the push
    /// and is returned as an error; the parser stays in that error from then on.
    fn push<F>(
        &mut self,
        chunk: &[u8],
        on_event: &mut F,
    ) -> Result<(), ParseError<Self::ErrorKind>>
    where
        F: for<'e> FnMut(Self::Event<'e>);

    /// Ends the stream: confirms what only the end can confirm (a one-byte lookahead) and says
    /// whether the input was a sentence, a cut-off prefix (naming the construct it left open:
    /// [`Unclosed`]), or an error.
    fn finish<F>(self, on_event: &mut F) -> Outcome<Self::ErrorKind>
    where
        F: for<'e> FnMut(Self::Event<'e>);

    /// The bytes that may come next. Empty after an error. Constant time.
    fn allowed(&self) -> ByteSet;

    /// Whether the input so far is a sentence (so `finish` would say complete). Constant time.
    fn accepting(&self) -> bool;

    /// Bytes accepted so far (the error's offset once there is one).
    fn consumed(&self) -> u64;

    /// The confirmation frontier: every byte before it is represented in an emitted event.
    fn confirmed(&self) -> u64;

    /// The sticky error, if any.
    fn error(&self) -> Option<ParseError<Self::ErrorKind>>;

    /// The language's bound `K` on pending bytes for this parser's configuration.
    fn pending_bound(&self) -> u64;

    /// Bytes consumed but not yet confirmed; never more than [`pending_bound`](Self::pending_bound).
    fn pending(&self) -> u64 {
        self.consumed() - self.confirmed()
    }
}
