//! The CTL recogniser: grammar and limits as a `Copy` state machine.
//!
//! ```text
//!            "call "          id        SP       name       LF
//! Between ──────────▶ Token(Id) ──▶ … ──▶ Token(Name) ──▶ … ──▶ InFrame
//!    ▲                                                            │ "arg "  key SP nbytes LF
//!    │ "end\n"                                                    ├──────────────────────────▶ Body(n) ─▶ InFrame
//!    └────────────────────────────────────────────────────────────┘
//! ```
//!
//! Every header state knows the fewest bytes that can still finish its line
//! ([`State::min_rest`]), so the line limit is checked per transition: a byte is allowed only
//! if the line can still end within `max_line` after it.

use crate::byteset::ByteSet;
use crate::contract::ParseError;

use super::{CtlErrorKind, Limits, TOKEN_CHARS};

const DIGITS: ByteSet = ByteSet::range(b'0', b'9');

/// [`TOKEN_CHARS`] as a table, for the token-run fast path.
const IS_TOKEN: [bool; 256] = TOKEN_CHARS.table();

/// `DIGITS_UP_TO[t]` is the digits `0..=t`: the next digits of `nbytes` that stay within
/// `max_arg`, looked up instead of built at query time.
const DIGITS_UP_TO: [ByteSet; 10] = {
    let mut sets = [ByteSet::EMPTY; 10];
    let mut top = 0;
    while top < 10 {
        sets[top] = ByteSet::range(b'0', b'0' + top as u8);
        top += 1;
    }
    sets
};

/// A keyword a line starts with, SP or LF included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Word {
    Call,
    Arg,
    End,
}

impl Word {
    const fn text(self) -> &'static [u8] {
        match self {
            Word::Call => b"call ",
            Word::Arg => b"arg ",
            Word::End => b"end\n",
        }
    }
}

/// Which token a run of token characters is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Id,
    Name,
    Key,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// At a frame boundary: the stream so far is a sentence.
    Between,
    /// At the start of a line inside a frame: `arg` or `end` comes next.
    InFrame,
    /// `matched` bytes of a keyword seen.
    Word { word: Word, matched: u8 },
    /// Inside a token; `empty` until its first character.
    Token { field: Field, empty: bool },
    /// Inside `nbytes`; `digits` seen so far, with their value.
    Size { value: u64, digits: u8 },
    /// Inside an argument body with `remaining` bytes to go.
    Body { remaining: u64 },
}

impl State {
    /// The fewest bytes, LF included, that can still finish the current header line.
    const fn min_rest(self) -> u32 {
        match self {
            State::Between | State::InFrame | State::Body { .. } => 0,
            // "call " id SP name LF, "arg " key SP digit LF, "end\n"
            State::Word {
                word: Word::Call,
                matched,
            } => 9 - matched as u32,
            State::Word {
                word: Word::Arg,
                matched,
            } => 8 - matched as u32,
            State::Word {
                word: Word::End,
                matched,
            } => 4 - matched as u32,
            State::Token {
                field: Field::Id | Field::Key,
                empty,
            } => 3 + empty as u32,
            State::Token {
                field: Field::Name,
                empty,
            } => 1 + empty as u32,
            State::Size { digits, .. } => 1 + (digits == 0) as u32,
        }
    }
}

/// What one byte did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A byte inside a header line that does not finish it.
    Header,
    /// The LF of a `call` line.
    CallLine,
    /// The LF of an `arg` line announcing `len` body bytes.
    ArgLine {
        /// The argument's `nbytes`.
        len: u64,
    },
    /// The LF of `end`: the call is complete.
    CallEnd,
    /// A body byte; `last` when it completes the argument.
    Body {
        /// Whether this byte was the argument's last.
        last: bool,
    },
}

/// The CTL recogniser: a few words of state, `Copy`, exact `allowed()` in constant time.
///
/// The allowed set is kept up to date after every transition, so that a decoder's query is one
/// load; bulk paths (token runs, whole lines, bodies) update it once per run, not per byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CtlMachine {
    state: State,
    line_len: u32,
    limits: Limits,
    consumed: u64,
    error: Option<ParseError<CtlErrorKind>>,
    allowed: ByteSet,
}

impl Default for CtlMachine {
    fn default() -> Self {
        CtlMachine::new(Limits::default())
    }
}

impl CtlMachine {
    /// A machine at the start of a stream.
    pub fn new(limits: Limits) -> CtlMachine {
        let mut machine = CtlMachine {
            state: State::Between,
            line_len: 0,
            limits,
            consumed: 0,
            error: None,
            allowed: ByteSet::EMPTY,
        };
        machine.allowed = machine.compute_allowed();
        machine
    }

    /// The limits this machine enforces.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Bytes accepted so far.
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// Bytes of the current, unfinished header line.
    pub fn line_len(&self) -> u32 {
        self.line_len
    }

    /// The sticky error, if any.
    pub fn error(&self) -> Option<ParseError<CtlErrorKind>> {
        self.error
    }

    /// Whether the stream so far ends at a frame boundary.
    pub fn accepting(&self) -> bool {
        self.error.is_none() && self.state == State::Between
    }

    /// Body bytes still owed by the current argument (0 outside a body).
    pub fn body_remaining(&self) -> u64 {
        match self.state {
            State::Body { remaining } => remaining,
            _ => 0,
        }
    }

    /// Whether a header line could still end within `max_line` after one more byte that
    /// leads to `next`.
    #[inline]
    fn fits(&self, next: State) -> bool {
        self.line_len as u64 + 1 + next.min_rest() as u64 <= self.limits.max_line as u64
    }

    fn set_if_fits(&self, set: ByteSet, next: State) -> ByteSet {
        if self.fits(next) {
            set
        } else {
            ByteSet::EMPTY
        }
    }

    /// The digits that may extend `nbytes`: those that keep it within `max_arg`, and none
    /// after a leading `0`.
    fn digits_within_bound(&self, value: u64, digits: u8) -> ByteSet {
        if digits == 1 && value == 0 {
            return ByteSet::EMPTY; // no leading zeros
        }
        match value.checked_mul(10) {
            Some(base) if base <= self.limits.max_arg => {
                DIGITS_UP_TO[(self.limits.max_arg - base).min(9) as usize]
            }
            _ => ByteSet::EMPTY,
        }
    }

    /// The bytes that may come next. Empty after an error.
    #[inline]
    pub fn allowed(&self) -> ByteSet {
        self.allowed
    }

    /// Moves to `next` after `bytes` more bytes of the same header line (`line_done` when
    /// they ended it) and refreshes the allowed set.
    #[inline]
    fn advance(&mut self, next: State, bytes: u32, line_done: bool) {
        self.state = next;
        self.consumed += bytes as u64;
        self.line_len = if line_done { 0 } else { self.line_len + bytes };
        self.allowed = self.compute_allowed();
    }

    /// The allowed set of the current state, computed from the grammar and the limits.
    fn compute_allowed(&self) -> ByteSet {
        if self.error.is_some() {
            return ByteSet::EMPTY;
        }
        match self.state {
            State::Between => self.set_if_fits(
                ByteSet::single(b'c'),
                State::Word {
                    word: Word::Call,
                    matched: 1,
                },
            ),
            State::InFrame => self
                .set_if_fits(
                    ByteSet::single(b'a'),
                    State::Word {
                        word: Word::Arg,
                        matched: 1,
                    },
                )
                .union(self.set_if_fits(
                    ByteSet::single(b'e'),
                    State::Word {
                        word: Word::End,
                        matched: 1,
                    },
                )),
            State::Word { word, matched } => self.set_if_fits(
                ByteSet::single(word.text()[matched as usize]),
                advance_word(word, matched + 1),
            ),
            State::Token { field, empty } => {
                let more = self.set_if_fits(
                    TOKEN_CHARS,
                    State::Token {
                        field,
                        empty: false,
                    },
                );
                if empty {
                    more
                } else {
                    more.union(self.set_if_fits(token_end_byte(field), after_token(field)))
                }
            }
            State::Size { value, digits } => {
                let more = self.set_if_fits(
                    self.digits_within_bound(value, digits),
                    State::Size {
                        value,
                        digits: digits.saturating_add(1),
                    },
                );
                if digits == 0 {
                    more
                } else {
                    more.union(self.set_if_fits(ByteSet::single(b'\n'), State::InFrame))
                }
            }
            State::Body { .. } => ByteSet::FULL,
        }
    }

    /// Takes one byte. On a refusal the machine enters its sticky error state.
    #[inline]
    pub fn step(&mut self, byte: u8) -> Result<Step, ParseError<CtlErrorKind>> {
        if let Some(error) = self.error {
            return Err(error);
        }
        match self.transition(byte) {
            Ok((next, step)) => {
                if let (State::Body { .. }, State::Body { .. }) = (self.state, next) {
                    // Inside a body the set stays FULL: skip the refresh.
                    self.state = next;
                    self.consumed += 1;
                } else {
                    self.advance(next, 1, step != Step::Header);
                }
                Ok(step)
            }
            Err(kind) => {
                let error = ParseError {
                    offset: self.consumed,
                    byte,
                    kind,
                };
                self.error = Some(error);
                self.allowed = ByteSet::EMPTY;
                Err(error)
            }
        }
    }

    /// Consumes up to `n` body bytes at once; returns how many were taken and whether they
    /// completed the argument. Outside a body it takes nothing.
    #[inline]
    pub fn skip_body(&mut self, n: u64) -> (u64, bool) {
        match self.state {
            State::Body { remaining } if self.error.is_none() => {
                let taken = remaining.min(n);
                self.consumed += taken;
                if taken == remaining {
                    self.state = State::InFrame;
                    self.allowed = self.compute_allowed();
                    (taken, true)
                } else {
                    self.state = State::Body {
                        remaining: remaining - taken,
                    };
                    (taken, false)
                }
            }
            _ => (0, false),
        }
    }

    /// Consumes, in one go, the longest run at the start of `bytes` that stays inside the
    /// current header line without ending it: token characters inside a token (as many as the
    /// line limit allows), or the rest of a keyword but its last byte. Returns how many bytes
    /// it took; the byte after the run goes through [`step`](Self::step). This is the header
    /// fast path: ids, names, keys and keywords are most of a header's bytes.
    #[inline]
    pub fn skip_run(&mut self, bytes: &[u8]) -> usize {
        if self.error.is_some() {
            return 0;
        }
        let (run, next) = match self.state {
            State::Token { field, .. } => {
                let filled = State::Token {
                    field,
                    empty: false,
                };
                let room = (self.limits.max_line as u64)
                    .saturating_sub(self.line_len as u64 + filled.min_rest() as u64)
                    .min(bytes.len() as u64) as usize;
                let run = bytes[..room]
                    .iter()
                    .position(|&b| !IS_TOKEN[b as usize])
                    .unwrap_or(room);
                (run, filled)
            }
            State::Between | State::InFrame => {
                let word = match bytes.first() {
                    Some(b'c') if self.state == State::Between => Word::Call,
                    Some(b'a') if self.state == State::InFrame => Word::Arg,
                    Some(b'e') if self.state == State::InFrame => Word::End,
                    _ => return 0,
                };
                self.word_run(word, 0, bytes)
            }
            State::Word { word, matched } => self.word_run(word, matched, bytes),
            State::Size { .. } | State::Body { .. } => return 0,
        };
        if run > 0 {
            self.advance(next, run as u32, false);
        }
        run
    }

    /// Takes a whole header line at the start of `bytes` in one go, when the machine is at a
    /// line start and the line is there complete and valid within the limits; returns its
    /// length and what it was. Otherwise takes nothing and returns `None`, and the caller steps
    /// the line byte by byte, which finds the exact refused byte.
    ///
    /// A complete line that ends within `max_line` passed every intermediate limit check (the
    /// bytes after each position are at least the fewest needed), and `nbytes` only grows
    /// digit by digit, so checking the whole line is the same as stepping it.
    #[inline]
    pub fn take_line(&mut self, bytes: &[u8]) -> Option<(usize, Step, usize)> {
        if self.error.is_some() || self.line_len != 0 {
            return None;
        }
        let max = (self.limits.max_line as usize).min(bytes.len());
        let line = &bytes[..max];
        let tokens = |from: usize| {
            from + line.get(from..).map_or(0, |rest| {
                rest.iter().take_while(|&&b| IS_TOKEN[b as usize]).count()
            })
        };
        let (len, next, step, separator) = match self.state {
            State::Between if line.starts_with(b"call ") => {
                let id_end = tokens(5);
                let name_end = tokens(id_end + 1);
                let shaped = id_end > 5
                    && line.get(id_end) == Some(&b' ')
                    && name_end > id_end + 1
                    && line.get(name_end) == Some(&b'\n');
                shaped.then_some((name_end + 1, State::InFrame, Step::CallLine, id_end))?
            }
            State::InFrame if line.starts_with(b"end\n") => (4, State::Between, Step::CallEnd, 0),
            State::InFrame if line.starts_with(b"arg ") => {
                let key_end = tokens(4);
                if key_end == 4 || line.get(key_end) != Some(&b' ') {
                    return None;
                }
                let digits = &line[key_end + 1..];
                let count = digits.iter().take_while(|b| b.is_ascii_digit()).count();
                if count == 0
                    || count > 20
                    || (count > 1 && digits[0] == b'0')
                    || digits.get(count) != Some(&b'\n')
                {
                    return None;
                }
                let value = digits[..count]
                    .iter()
                    .try_fold(0u64, |v, &d| {
                        v.checked_mul(10)?.checked_add((d - b'0') as u64)
                    })
                    .filter(|&v| v <= self.limits.max_arg)?;
                let next = if value == 0 {
                    State::InFrame
                } else {
                    State::Body { remaining: value }
                };
                (
                    key_end + 1 + count + 1,
                    next,
                    Step::ArgLine { len: value },
                    key_end,
                )
            }
            _ => return None,
        };
        self.advance(next, len as u32, true);
        Some((len, step, separator))
    }

    /// The run of a keyword's bytes, from `matched`, short of its last byte; taken only if
    /// the shortest line it can start still fits (every byte of a keyword needs the same room).
    fn word_run(&self, word: Word, matched: u8, bytes: &[u8]) -> (usize, State) {
        let text = &word.text()[matched as usize..word.text().len() - 1];
        let run = text.iter().zip(bytes).take_while(|(a, b)| a == b).count();
        let start = State::Word { word, matched };
        let needed = self.line_len as u64 + start.min_rest() as u64;
        if run == 0 || needed > self.limits.max_line as u64 {
            return (0, start);
        }
        (run, advance_word(word, matched + run as u8))
    }

    /// The grammar's transition on `byte`, with the limits checked.
    #[inline]
    fn transition(&self, byte: u8) -> Result<(State, Step), CtlErrorKind> {
        use CtlErrorKind::*;
        let (next, step) = match self.state {
            State::Body { remaining } => {
                return Ok(if remaining <= 1 {
                    (State::InFrame, Step::Body { last: true })
                } else {
                    (
                        State::Body {
                            remaining: remaining - 1,
                        },
                        Step::Body { last: false },
                    )
                });
            }
            State::Between if byte == b'c' => (advance_word(Word::Call, 1), Step::Header),
            State::InFrame if byte == b'a' => (advance_word(Word::Arg, 1), Step::Header),
            State::InFrame if byte == b'e' => (advance_word(Word::End, 1), Step::Header),
            State::Word { word, matched } if word.text()[matched as usize] == byte => {
                let next = advance_word(word, matched + 1);
                let step = if next == State::Between {
                    Step::CallEnd
                } else {
                    Step::Header
                };
                (next, step)
            }
            State::Token { field, .. } if TOKEN_CHARS.contains(byte) => (
                State::Token {
                    field,
                    empty: false,
                },
                Step::Header,
            ),
            State::Token {
                field,
                empty: false,
            } if token_end_byte(field).contains(byte) => {
                let step = if field == Field::Name {
                    Step::CallLine
                } else {
                    Step::Header
                };
                (after_token(field), step)
            }
            State::Size { value, digits } if DIGITS.contains(byte) => {
                if digits == 1 && value == 0 {
                    return Err(UnexpectedByte);
                }
                let value = value
                    .checked_mul(10)
                    .and_then(|v| v.checked_add((byte - b'0') as u64))
                    .filter(|&v| v <= self.limits.max_arg)
                    .ok_or(ArgTooLarge)?;
                (
                    State::Size {
                        value,
                        digits: digits.saturating_add(1),
                    },
                    Step::Header,
                )
            }
            State::Size { value, digits } if digits > 0 && byte == b'\n' => {
                let next = if value == 0 {
                    State::InFrame
                } else {
                    State::Body { remaining: value }
                };
                (next, Step::ArgLine { len: value })
            }
            _ => return Err(UnexpectedByte),
        };
        if self.fits(next) {
            Ok((next, step))
        } else {
            Err(LineTooLong)
        }
    }
}

/// The state after `matched` bytes of `word`; a whole word moves on to what follows it.
const fn advance_word(word: Word, matched: u8) -> State {
    if (matched as usize) < word.text().len() {
        return State::Word { word, matched };
    }
    match word {
        Word::Call => State::Token {
            field: Field::Id,
            empty: true,
        },
        Word::Arg => State::Token {
            field: Field::Key,
            empty: true,
        },
        Word::End => State::Between,
    }
}

/// The byte that ends a token: SP after `id` and `key`, LF after `name`.
const fn token_end_byte(field: Field) -> ByteSet {
    match field {
        Field::Id | Field::Key => ByteSet::single(b' '),
        Field::Name => ByteSet::single(b'\n'),
    }
}

const fn after_token(field: Field) -> State {
    match field {
        Field::Id => State::Token {
            field: Field::Name,
            empty: true,
        },
        Field::Name => State::InFrame,
        Field::Key => State::Size {
            value: 0,
            digits: 0,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_is_small_and_copy() {
        // A decoder clones this along a token trie: keep it a few words.
        eprintln!("CtlMachine: {} bytes", std::mem::size_of::<CtlMachine>());
        assert!(std::mem::size_of::<CtlMachine>() <= 128);
    }

    #[test]
    fn every_line_ending_state_has_zero_rest() {
        assert_eq!(State::InFrame.min_rest(), 0);
        assert_eq!(advance_word(Word::Call, 0).min_rest(), 9);
        assert_eq!(advance_word(Word::Call, 5).min_rest(), 4);
        assert_eq!(advance_word(Word::Arg, 4).min_rest(), 4);
    }
}
