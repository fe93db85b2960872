//! The recogniser layer: one small `Copy` state per language and mode, shared by everything
//! that asks "which bytes may come next" without wanting events.
//!
//! A [`PushParser`](crate::contract::PushParser) emits events and holds the bounded buffers
//! they need; its recogniser is the part that knows the grammar and the limits. A decoder
//! walking a token trie tries thousands of byte paths per step and backs out of most of them,
//! so the recogniser is `Copy` (a few words, no heap): backing out of a byte is restoring the
//! copy taken before it, and a rejected byte prunes the whole subtree below it (the shape of
//! llguidance's `try_append`).
//!
//! # Example
//!
//! Stepping CTL's recogniser byte by byte, as a sampler would:
//!
//! ```
//! use frontier_core::ctl::CtlMachine;
//! use frontier_core::recognizer::Recognizer;
//!
//! let mut state = CtlMachine::default();
//! for &byte in b"call c1 read_file\n" {
//!     assert!(state.allowed().contains(byte));
//!     assert!(state.try_byte(byte));
//! }
//! let before = state;
//! assert!(!state.try_byte(b'\n'), "a blank line is not CTL");
//! assert_eq!(state, before, "a refused byte changes nothing");
//! assert_eq!(state.forced_bytes_vec(), b"");   // `arg` or `end` may follow
//! assert!(state.try_byte(b'e'));
//! assert_eq!(state.forced_bytes_vec(), b"nd\n");
//! ```

use std::fmt::Debug;
use std::hash::Hash;

use crate::byteset::ByteSet;

/// Longest run [`Recognizer::forced_bytes`] follows. Every language has a choice within a few
/// bytes of any state; the bound only keeps a defective grammar from looping.
pub const MAX_FORCED: usize = 4096;

/// A cheap, copyable state of a language's grammar and limits.
///
/// Laws, checked for every language by [`crate::harness`]:
/// - `try_byte(b)` succeeds exactly when `allowed().contains(b)`; a refusal leaves the state
///   unchanged (it does not enter an error state);
/// - `allowed()` and `accepting()` agree with the parser that handed the recogniser out, at
///   every prefix;
/// - two states with equal [`mask_key`](Recognizer::mask_key)`(h)` accept exactly the same
///   byte strings of length at most `h`, and agree on `accepting()` after each of them.
pub trait Recognizer: Copy + Debug + Send + Sync + 'static {
    /// What [`mask_key`](Recognizer::mask_key) returns: the state with everything that no
    /// continuation of the horizon's length can observe (absolute offsets, a body length far
    /// beyond the horizon) taken out.
    type Key: Copy + Eq + Hash + Debug + Send + Sync + 'static;

    /// The bytes that may come next. Constant time.
    fn allowed(&self) -> ByteSet;

    /// Whether the bytes so far are a sentence of the language.
    fn accepting(&self) -> bool;

    /// Takes `byte` and returns `true` if it is allowed; otherwise returns `false` and the
    /// state is unchanged.
    fn try_byte(&mut self, byte: u8) -> bool;

    /// Takes the longest allowed prefix of `bytes` and returns its length; the state is the
    /// one after that prefix.
    fn try_bytes(&mut self, bytes: &[u8]) -> usize {
        for (i, &b) in bytes.iter().enumerate() {
            if !self.try_byte(b) {
                return i;
            }
        }
        bytes.len()
    }

    /// A key equal for two states exactly when no byte string of at most `horizon` bytes can
    /// tell them apart (see the trait's laws). A token mask depends only on this key with
    /// `horizon` the vocabulary's longest token, which is what lets a matcher compute a mask
    /// once per key and reuse it.
    fn mask_key(&self, horizon: u32) -> Self::Key;

    /// The kinds of line text [`line_text`](Recognizer::line_text) may answer for this
    /// language and mode (asked of a grammar's initial state), so that a grammar builds their
    /// token tables when it is compiled rather than at its first mask.
    fn line_text_kinds(&self) -> &'static [LineText] {
        &[]
    }

    /// `Some` when the state reads a run of its answer's class ([`LineText::class`]: free text
    /// up to the next LF, or CTL's token characters up to the SP or LF after an id, name or
    /// key): a token mask can then be assembled from tables of the vocabulary instead of a walk
    /// of most of the trie (`crate::mask::line_text`). The law, for every byte string `x` of
    /// the class of fewer than `horizon` bytes (checked by [`crate::harness`] at every prefix):
    /// - the state takes `x` whole exactly when the answer's kind says `x` is viable
    ///   ([`LineText::viable`]); a state claims a run only while its line has room for it;
    /// - if the answer [`forgets`](InText::forgets): when `x` is a whole run
    ///   ([`LineText::complete`]) and not empty, then for every byte `e` outside the class the
    ///   state after `x` refuses `e` exactly when the state after `a` (a whole run) does, and
    ///   otherwise the state after `x e` has the same
    ///   [`mask_key`](Recognizer::mask_key)`(horizon − |x| − 1)` as the state after `a e`:
    ///   what the run held is never read by the rest of a token. (An empty run may differ: a
    ///   path or an id that must not be empty refuses its exit at once.) A state whose run may
    ///   still turn out to be something else (a keyword in progress that falls back to prose)
    ///   says after which first bytes it does ([`InText::except`]): the law then speaks only
    ///   of runs that start with another byte.
    ///
    /// `None` (the default) is always sound: masks are then walked.
    fn line_text(&self, _horizon: u32) -> Option<InText> {
        None
    }

    /// `Some` when the state reads a run of its answer's class that it keeps (a heredoc tag,
    /// whose bytes the machine holds to find the closing line, so no [`line_text`]
    /// (Recognizer::line_text) answer fits it: what follows the run depends on what it held).
    /// The law, checked by [`crate::harness`] at every prefix: for every nonempty byte string
    /// `x` of the class, the state takes `x` whole exactly when the kind says `x` is viable
    /// ([`LineText::viable`]) and `x` has at most [`KeptRun::room`] bytes; and after every such
    /// `x` it takes, the bytes outside the class that the state takes are the same. A token
    /// mask then takes the tokens of the class from the vocabulary's tables (all those that
    /// fit the room) and walks, byte by byte, only the tokens that leave the run at one of
    /// those bytes (`crate::mask::line_text`). `None` (the default) is always sound.
    fn kept_run(&self) -> Option<KeptRun> {
        None
    }

    /// `Some(true)` when the state is byte-blind: every byte is allowed and leads to the same
    /// [`mask_key`](Recognizer::mask_key) at every horizon, so which byte came is never seen
    /// (a CTL body with bytes left); the harness checks the claim at every prefix.
    /// `Some(false)` makes the matcher treat the state as not blind. `None` (the default):
    /// the recogniser does not say, and the matcher tries the 256 bytes itself, once per key.
    fn byte_blind(&self) -> Option<bool> {
        None
    }

    /// Appends the bytes every viable continuation starts with (at most [`MAX_FORCED`]):
    /// followed while exactly one byte is allowed and the bytes so far are not a sentence
    /// (a sentence may also end here, so nothing is forced).
    fn forced_bytes(&self, out: &mut Vec<u8>) {
        let mut state = *self;
        for _ in 0..MAX_FORCED {
            if state.accepting() {
                return;
            }
            let allowed = state.allowed();
            if allowed.len() != 1 {
                return;
            }
            let Some(byte) = allowed.iter().next() else {
                return;
            };
            if !state.try_byte(byte) {
                return;
            }
            out.push(byte);
        }
    }

    /// [`forced_bytes`](Recognizer::forced_bytes) into a new vector.
    fn forced_bytes_vec(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.forced_bytes(&mut out);
        out
    }
}

/// A state inside a run ([`Recognizer::line_text`]): the run's kind, whether what the run
/// holds is forgotten when it ends, and the first bytes after which it is not a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InText {
    /// What the run may hold.
    pub kind: LineText,
    /// Whether every whole nonempty run leads, at the byte that ends it, where `a` does.
    pub forgets: bool,
    /// Bytes of the class that do not continue the run when they come first (a keyword in
    /// progress on a line that is prose if it diverges: its next byte): the law speaks only
    /// of runs whose first byte is not among them, and never of `a`. Tokens starting with
    /// one are walked. Empty for a plain run.
    pub except: ByteSet,
}

impl InText {
    /// A run of `kind` whose content is never read again.
    pub const fn forgetting(kind: LineText) -> InText {
        InText {
            kind,
            forgets: true,
            except: ByteSet::EMPTY,
        }
    }

    /// A run of `kind` whose content may still matter when it ends.
    pub const fn remembering(kind: LineText) -> InText {
        InText {
            kind,
            forgets: false,
            except: ByteSet::EMPTY,
        }
    }

    /// The same run, except after the first bytes `first` (see [`InText::except`]).
    pub const fn except(self, first: ByteSet) -> InText {
        InText {
            except: first,
            ..self
        }
    }
}

/// A run a state keeps ([`Recognizer::kept_run`]): its kind, and the most bytes it may still
/// take.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeptRun {
    /// What the run may hold.
    pub kind: LineText,
    /// The longest string of the class the state takes.
    pub room: u32,
}

/// A run of one byte class, as a recogniser reads it ([`Recognizer::line_text`]): free text up
/// to an LF, or a CTL token. A byte outside the class ends the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LineText {
    /// Any byte but LF (unified diff's body lines, CTL's inline values).
    Bytes,
    /// Strict UTF-8 without LF: shortest encodings of scalar values (apply_patch's text).
    Utf8,
    /// CTL's token characters ([`TOKEN_CHARS`](crate::ctl::TOKEN_CHARS): ALPHA / DIGIT /
    /// `_.:-`): an id, a name or a key, ended by SP or LF.
    Token,
    /// Lowercase hexadecimal digits: a unified diff `index` line's object names, ended by
    /// `..`, SP or LF.
    Hex,
}

/// The bytes of [`LineText::Hex`].
const HEX_DIGITS: ByteSet = ByteSet::range(b'0', b'9').union(ByteSet::range(b'a', b'f'));

impl LineText {
    /// Every kind, in the order of their index.
    pub const ALL: [LineText; 4] = [
        LineText::Bytes,
        LineText::Utf8,
        LineText::Token,
        LineText::Hex,
    ];

    /// The kind's position in [`LineText::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The bytes a run of this kind is made of; any other byte ends it.
    pub const fn class(self) -> ByteSet {
        match self {
            LineText::Bytes | LineText::Utf8 => ByteSet::single(b'\n').complement(),
            LineText::Token => crate::ctl::TOKEN_CHARS,
            LineText::Hex => HEX_DIGITS,
        }
    }

    /// Whether one byte alone ends a run of this kind (LF).
    pub const fn one_exit(self) -> bool {
        matches!(self, LineText::Bytes | LineText::Utf8)
    }

    /// Where the run at the start of `x` ends: the index of the first byte outside the class.
    pub fn run_len(self, x: &[u8]) -> Option<usize> {
        match self {
            LineText::Bytes | LineText::Utf8 => memchr::memchr(b'\n', x),
            LineText::Token | LineText::Hex => {
                let class = self.class();
                x.iter().position(|&b| !class.contains(b))
            }
        }
    }

    /// Whether a state reading this kind of run at a character boundary takes all of `x`:
    /// only bytes of the class, and for UTF-8 whole characters possibly followed by the start
    /// of one.
    pub fn viable(self, x: &[u8]) -> bool {
        if self.run_len(x).is_some() {
            return false;
        }
        match self {
            LineText::Bytes | LineText::Token | LineText::Hex => true,
            LineText::Utf8 => match std::str::from_utf8(x) {
                Ok(_) => true,
                Err(e) => e.error_len().is_none(),
            },
        }
    }

    /// Whether `x` is viable and ends at a character boundary, so that the run may end.
    pub fn complete(self, x: &[u8]) -> bool {
        match self {
            LineText::Bytes | LineText::Token | LineText::Hex => self.run_len(x).is_none(),
            LineText::Utf8 => self.run_len(x).is_none() && std::str::from_utf8(x).is_ok(),
        }
    }
}

/// `try_byte` for a machine whose `step` takes an allowed byte and puts a refused one into a
/// sticky error: refuses what `allowed` excludes without stepping, and restores the machine
/// should `step` ever refuse an allowed byte, so the trait's law holds even then.
#[inline]
pub(crate) fn step_if_allowed<M: Copy, T, E>(
    machine: &mut M,
    allowed: ByteSet,
    byte: u8,
    step: impl FnOnce(&mut M, u8) -> Result<T, E>,
) -> bool {
    if !allowed.contains(byte) {
        return false;
    }
    let before = *machine;
    if step(machine, byte).is_err() {
        *machine = before;
        return false;
    }
    true
}
