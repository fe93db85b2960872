//! The CTL recogniser: grammar and limits as a `Copy` state machine.
//!
//! The grammar is a small automaton over byte classes. A [`Node`] is a position in a header
//! line (what has been read of it), or `Body`, or `Dead` after an error:
//!
//! ```text
//!          "call "             id  SP             name  LF
//! Between ─────────▶ IdStart ─▶ Id ──▶ NameStart ─▶ Name ──▶ InFrame
//!    ▲                                                          │ "arg "  key SP  nbytes  LF
//!    │ "end\n"                                                  ├────────────────────────────▶ Body ─▶ InFrame
//!    └──────────────────────────────────────────────────────────┘
//! ```
//!
//! Everything is derived at compile time from one function, [`grammar`]: the transition table
//! [`NEXT`] (a header byte is one lookup), and the allowed sets.
//!
//! The limits are not in the automaton: they depend on the line so far. The machine counts the
//! bytes the current line may still take (its budget, `max_line` counted down), and every node
//! knows the fewest bytes that can still finish its line ([`min_rest`]), so `max_line` is one
//! comparison per byte: a byte is taken only if the line can still end within its budget after
//! it. `allowed()` is two lookups: the node's bytes that fit the budget ([`ALLOWED_WITHIN`]),
//! intersected with the digits that keep `nbytes` within `max_arg` ([`DIGITS_WITHIN`], whose
//! index the machine keeps while it reads `nbytes`). Nothing is recomputed per byte, and the
//! machine stays a few words to copy.
//!
//! # Extended CTL
//!
//! Mode `extended` adds the inline form `arg KEY = VALUE` LF and the heredoc form
//! `arg KEY <<TAG` LF … `TAG` LF. Their header nodes are more nodes of the same automaton
//! (after `arg KEY SP`, [`Node::ValueStart`] takes `=` and `<` besides the digits; a strict
//! machine enters `SizeStart` there, so strict streams never reach an extended node), and
//! `max_line` bounds them as it bounds every header line, inline value and LF included. The
//! heredoc tag is held in the machine ([`Tag`], at most [`MAX_TAG`] bytes: a narrowing entry of
//! [`DIGITS_WITHIN`] refuses a tag byte past it), and a body's bytes follow [`Tag::step`] and
//! [`Tag::allowed`] instead of the tables: at a line start the bytes matching the tag so far
//! are held, and `count` is the room `max_arg` leaves. The nodes from `Eq` on need more than
//! the tables (`=` and `<` end the narrowing of the digits, a tag byte is kept, a value byte is
//! an event): [`CtlMachine::step_extended`] takes them. They are declared last, after the
//! nodes strict CTL's step already treats apart (the digits of `nbytes` and `Dead`), so that
//! one comparison in `step` (is the next node from `SizeStart` on) keeps all of them off the
//! path of the other header bytes: strict CTL pays nothing for them there, and one comparison
//! in `allowed()` (is this a heredoc body).
//!
//! Decision: the allowed set is looked up when asked, not kept. Keeping it made the query one
//! load (1.45 ns against 2.4 ns) but cost every change of state a 32-byte store: 31 % more
//! instructions on a header-heavy stream fed whole, 38 % more fed a byte at a time, and a slower
//! decoder loop (query, then step) — the loop a constrained decoder runs.

use crate::byteset::ByteSet;
use crate::contract::ParseError;

use super::heredoc::{BodyByte, Tag, MAX_TAG};
use super::line_scan;
use super::{CtlErrorKind, CtlMode, Limits, TOKEN_CHARS};
use crate::recognizer::{InText, KeptRun, LineText};

/// A position in the grammar: what has been read of the current line, or where else the
/// machine is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
enum Node {
    /// At a frame boundary: the stream so far is a sentence, and `call` comes next.
    Between,
    /// `c` of `call ` read.
    C,
    /// `ca` read.
    Ca,
    /// `cal` read.
    Cal,
    /// `call` read; SP comes next.
    Call,
    /// `call ` read: the id's first character comes next.
    IdStart,
    /// Inside the id.
    Id,
    /// After the id's SP: the name's first character comes next.
    NameStart,
    /// Inside the name.
    Name,
    /// At the start of a line inside a frame: `arg` or `end` comes next.
    InFrame,
    /// `a` of `arg ` read.
    A,
    /// `ar` read.
    Ar,
    /// `arg` read; SP comes next.
    Arg,
    /// `arg ` read: the key's first character comes next.
    KeyStart,
    /// Inside the key.
    Key,
    /// `nbytes` is `0`: only LF may follow (no leading zeros).
    SizeZero,
    /// `e` of `end\n` read.
    E,
    /// `en` read.
    En,
    /// `end` read; LF comes next.
    End,
    /// Inside an argument body.
    Body,
    // Extended CTL's header nodes that the tables take. A strict machine never enters these.
    /// After the key's SP in extended mode: a digit, `=` or `<` comes next.
    ValueStart,
    /// `= ` read: the inline value's first byte, or LF for an empty value.
    InlineStart,
    /// `<<` read: the tag's first character comes next.
    TagStart,
    // The nodes from `SizeStart` on need more than the tables when entered (see `step`), so
    // one comparison keeps them off the path of every other header byte.
    /// After the key's SP: the first digit of `nbytes` comes next.
    SizeStart,
    /// Inside a nonzero `nbytes`.
    Size,
    /// After an error: nothing more is taken.
    Dead,
    // The nodes from `Eq` on are extended CTL's (see `step_extended`).
    /// `=` read: SP comes next.
    Eq,
    /// `<` read.
    Lt,
    /// Inside the heredoc tag.
    Tag,
    /// Inside an inline value (the header is confirmed).
    InlineValue,
    /// At the start of a heredoc body line, with the bytes that matched the tag held back.
    HereLine,
    /// Inside a heredoc content line.
    HereText,
}

const NODES: usize = Node::HereText as usize + 1;

/// Every node, in declaration order (`ALL_NODES[n as usize] == n`).
const ALL_NODES: [Node; NODES] = {
    use Node::*;
    [
        Between,
        C,
        Ca,
        Cal,
        Call,
        IdStart,
        Id,
        NameStart,
        Name,
        InFrame,
        A,
        Ar,
        Arg,
        KeyStart,
        Key,
        SizeZero,
        E,
        En,
        End,
        Body,
        ValueStart,
        InlineStart,
        TagStart,
        SizeStart,
        Size,
        Dead,
        Eq,
        Lt,
        Tag,
        InlineValue,
        HereLine,
        HereText,
    ]
};

/// What a byte is to the grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Class {
    /// The letters the keywords spell (token characters too).
    C,
    A,
    L,
    R,
    G,
    E,
    N,
    D,
    /// `0`.
    Zero,
    /// `1` to `9`.
    NonZero,
    /// Any other token character.
    Token,
    /// `=`.
    Equals,
    /// `<`.
    Less,
    /// SP.
    Space,
    /// LF.
    Lf,
    /// Anything else.
    Other,
}

const CLASSES: usize = Class::Other as usize + 1;

/// Every class, in declaration order.
const ALL_CLASSES: [Class; CLASSES] = {
    use Class::*;
    [
        C, A, L, R, G, E, N, D, Zero, NonZero, Token, Equals, Less, Space, Lf, Other,
    ]
};

const fn class_of(byte: u8) -> Class {
    match byte {
        b'c' => Class::C,
        b'a' => Class::A,
        b'l' => Class::L,
        b'r' => Class::R,
        b'g' => Class::G,
        b'e' => Class::E,
        b'n' => Class::N,
        b'd' => Class::D,
        b'0' => Class::Zero,
        b'1'..=b'9' => Class::NonZero,
        b'=' => Class::Equals,
        b'<' => Class::Less,
        b' ' => Class::Space,
        b'\n' => Class::Lf,
        _ if TOKEN_CHARS.contains(byte) => Class::Token,
        _ => Class::Other,
    }
}

/// The class of every byte.
const CLASS: [Class; 256] = {
    let mut table = [Class::Other; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = class_of(b as u8);
        b += 1;
    }
    table
};

/// The bytes of every class.
const CLASS_BYTES: [ByteSet; CLASSES] = {
    let mut sets = [ByteSet::EMPTY; CLASSES];
    let mut b = 0;
    while b < 256 {
        let class = CLASS[b] as usize;
        sets[class] = sets[class].with(b as u8);
        b += 1;
    }
    sets
};

/// The grammar: where a byte of `class` leads from `node`, `Dead` where it is refused. The
/// limits are checked apart (see [`min_rest`]); an LF after `nbytes` leads to `InFrame`, and
/// the machine enters `Body` instead when `nbytes` is not zero.
const fn grammar(node: Node, class: Class) -> Node {
    use Class as K;
    use Node::*;
    let token = !matches!(class, K::Equals | K::Less | K::Space | K::Lf | K::Other);
    match (node, class) {
        (Between, K::C) => C,
        (C, K::A) => Ca,
        (Ca, K::L) => Cal,
        (Cal, K::L) => Call,
        (Call, K::Space) => IdStart,
        (IdStart | Id, _) if token => Id,
        (Id, K::Space) => NameStart,
        (NameStart | Name, _) if token => Name,
        (Name, K::Lf) => InFrame,
        (InFrame, K::A) => A,
        (InFrame, K::E) => E,
        (A, K::R) => Ar,
        (Ar, K::G) => Arg,
        (Arg, K::Space) => KeyStart,
        (KeyStart | Key, _) if token => Key,
        (Key, K::Space) => SizeStart,
        (SizeStart | ValueStart, K::Zero) => SizeZero,
        (SizeStart | ValueStart | Size, K::Zero | K::NonZero) => Size,
        (SizeZero | Size, K::Lf) => InFrame,
        (E, K::N) => En,
        (En, K::D) => End,
        (End, K::Lf) => Between,
        (Body, _) => Body,
        (ValueStart, K::Equals) => Eq,
        (Eq, K::Space) => InlineStart,
        (InlineStart | InlineValue, K::Lf) => InFrame,
        (InlineStart | InlineValue, _) => InlineValue,
        (ValueStart, K::Less) => Lt,
        (Lt, K::Less) => TagStart,
        (TagStart | Tag, _) if token => Tag,
        (Tag, K::Lf) => HereLine,
        (HereLine, _) => HereLine,
        (HereText, _) => HereText,
        _ => Dead,
    }
}

/// The fewest bytes, LF included, that can still finish the line at `node`.
const fn min_rest(node: Node) -> u8 {
    use Node::*;
    match node {
        Between | InFrame | Body | Dead | HereLine | HereText => 0,
        // "call " id SP name LF
        C => 8,
        Ca => 7,
        Cal => 6,
        Call => 5,
        IdStart => 4,
        Id => 3,
        NameStart => 2,
        Name => 1,
        // "arg " key SP digit LF
        A => 7,
        Ar => 6,
        Arg => 5,
        KeyStart => 4,
        Key => 3,
        SizeStart => 2,
        SizeZero | Size => 1,
        // "arg " key SP ( digit LF / "= " LF / "<<" tag LF )
        ValueStart => 2,
        Eq => 2,
        InlineStart | InlineValue => 1,
        Lt => 3,
        TagStart => 2,
        Tag => 1,
        // "end\n"
        E => 3,
        En => 2,
        End => 1,
    }
}

/// `NEXT[node][class]`: the grammar as a table.
const NEXT: [[Node; CLASSES]; NODES] = {
    let mut table = [[Node::Dead; CLASSES]; NODES];
    let mut n = 0;
    while n < NODES {
        let mut c = 0;
        while c < CLASSES {
            table[n][c] = grammar(ALL_NODES[n], ALL_CLASSES[c]);
            c += 1;
        }
        n += 1;
    }
    table
};

/// `MIN_REST[node]`: [`min_rest`] as a table.
const MIN_REST: [u8; NODES] = {
    let mut table = [0; NODES];
    let mut n = 0;
    while n < NODES {
        table[n] = min_rest(ALL_NODES[n]);
        n += 1;
    }
    table
};

/// `MOVES_ALONG[next]`: whether entering `next` only moves along the line, with nothing to
/// record: not the end of a line (`Between`, `InFrame`, `Body`), and none of the nodes from
/// `SizeStart` on (the start or a digit of `nbytes`, whose digits that may follow change; a
/// refusal; the nodes that need more than the tables).
const MOVES_ALONG: [bool; NODES] = {
    let mut table = [true; NODES];
    let mut n = 0;
    while n < NODES {
        table[n] = !matches!(ALL_NODES[n], Node::Between | Node::InFrame | Node::Body)
            && (n as u8) < Node::SizeStart as u8;
        n += 1;
    }
    table
};

/// The largest [`min_rest`]: with this much room left, every byte the grammar allows fits.
const ROOM_CAP: usize = 8;

/// `ALLOWED_WITHIN[node][budget]`: the bytes the grammar allows at `node` that a line with
/// `budget` bytes left can take: the byte itself and the fewest that can follow it
/// ([`min_rest`]) must fit. `budget` is capped at `ROOM_CAP + 1`, where every byte fits.
const ALLOWED_WITHIN: [[ByteSet; ROOM_CAP + 2]; NODES] = {
    let mut table = [[ByteSet::EMPTY; ROOM_CAP + 2]; NODES];
    let mut n = 0;
    while n < NODES {
        let mut budget = 0;
        while budget <= ROOM_CAP + 1 {
            let mut c = 0;
            while c < CLASSES {
                let next = NEXT[n][c];
                if !matches!(next, Node::Dead) && (MIN_REST[next as usize] as usize) < budget {
                    table[n][budget] = table[n][budget].union(CLASS_BYTES[c]);
                }
                c += 1;
            }
            budget += 1;
        }
        n += 1;
    }
    table
};

/// `DIGITS_WITHIN[n]`: every byte but the digits from the `n`-th on (`0`..`n−1` stay). Inside
/// `nbytes` the machine keeps `n`, how many digits can extend it within `max_arg`;
/// elsewhere `n` is 10 and the set is every byte, but for [`TAG_FULL`]. (16 entries, so that
/// an index masked to four bits needs no bounds check.)
const DIGITS_WITHIN: [ByteSet; 16] = {
    let mut sets = [ByteSet::FULL; 16];
    let mut n = 0;
    while n < 10 {
        sets[n] = ByteSet::range(b'0' + n as u8, b'9').complement();
        n += 1;
    }
    sets[TAG_FULL as usize] = TOKEN_CHARS.complement();
    sets
};

/// The [`DIGITS_WITHIN`] entry of a heredoc tag of [`MAX_TAG`] bytes: no more tag characters.
const TAG_FULL: u8 = 11;

/// [`DIGITS_WITHIN`] that narrows nothing.
const EVERY_DIGIT: u8 = 10;

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
    /// The LF of a heredoc `arg` line (extended): the header is confirmed, the body follows.
    HeredocLine,
    /// The first byte of an inline value (extended): it confirms the header before it and is
    /// the value's first byte.
    ValueStart,
    /// A value byte of an inline or heredoc argument (extended), confirmed; `held` heredoc
    /// bytes held back before it on its line (a prefix of the tag) are content too.
    Text {
        /// Bytes of the tag held back before it, now content.
        held: u8,
    },
    /// A heredoc byte held back: it matches the tag so far at a line start.
    Held,
    /// A whole inline `arg` line taken at once by [`CtlMachine::take_line`] (extended): the
    /// argument is complete. (`step` never returns it.)
    InlineLine,
    /// The LF that ends an inline value or a heredoc's tag line: the argument is complete.
    /// `announce` when its header is still to be confirmed (an empty inline value).
    ValueEnd {
        /// Whether the header line is confirmed by this LF too.
        announce: bool,
    },
    /// The LF of `end`: the call is complete.
    CallEnd,
    /// A body byte; `last` when it completes the argument.
    Body {
        /// Whether this byte was the argument's last.
        last: bool,
    },
}

/// A construct of CTL that a cut-off stream can leave open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Construct {
    /// A `call` line cut before its LF.
    CallLine,
    /// An `arg` line cut before its LF.
    ArgLine,
    /// An `end` line cut before its LF.
    EndLine,
    /// An argument body with bytes still owed.
    ArgBody,
    /// A call between its lines: `arg` or `end` comes next.
    Frame,
    /// An inline value cut before its LF (extended).
    InlineValue,
    /// A heredoc body cut before its tag line (extended).
    HeredocBody,
}

impl Construct {
    /// The construct's stable name (`docs/ctl.md`).
    pub fn as_str(self) -> &'static str {
        match self {
            Construct::CallLine => "call_line",
            Construct::ArgLine => "arg_line",
            Construct::EndLine => "end_line",
            Construct::ArgBody => "arg_body",
            Construct::Frame => "frame",
            Construct::InlineValue => "inline_value",
            Construct::HeredocBody => "heredoc_body",
        }
    }
}

/// The CTL recogniser: a few words of state, `Copy`, exact `allowed()` in constant time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CtlMachine {
    node: Node,
    /// Bytes the current header line may still take: `max_line` minus its bytes so far.
    budget: u32,
    /// Inside `nbytes`, its value so far; inside a body, the bytes still owed; inside a
    /// heredoc body, the bytes its value may still take; else 0.
    count: u64,
    /// How many digits can extend `nbytes` within `max_arg` (an index of [`DIGITS_WITHIN`]);
    /// [`TAG_FULL`] in a heredoc tag of [`MAX_TAG`] bytes; [`EVERY_DIGIT`] elsewhere.
    digit_room: u8,
    mode: CtlMode,
    /// The heredoc tag and the bytes of a body line that matched it (empty outside).
    tag: Tag,
    consumed: u64,
    limits: Limits,
    error: Option<ParseError<CtlErrorKind>>,
}

impl Default for CtlMachine {
    fn default() -> Self {
        CtlMachine::new(Limits::default())
    }
}

impl CtlMachine {
    /// A strict CTL machine at the start of a stream.
    pub fn new(limits: Limits) -> CtlMachine {
        CtlMachine::with_mode(limits, CtlMode::Strict)
    }

    /// A machine of `mode` at the start of a stream.
    pub fn with_mode(limits: Limits, mode: CtlMode) -> CtlMachine {
        CtlMachine {
            node: Node::Between,
            budget: limits.max_line,
            count: 0,
            digit_room: EVERY_DIGIT,
            mode,
            tag: Tag::default(),
            consumed: 0,
            limits,
            error: None,
        }
    }

    /// The mode this machine recognises.
    pub fn mode(&self) -> CtlMode {
        self.mode
    }

    /// The limits this machine enforces.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Bytes accepted so far.
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// Bytes of the current, unfinished header line (an inline value's line included).
    pub fn line_len(&self) -> u32 {
        self.limits.max_line - self.budget
    }

    /// Bytes taken but not confirmed: the current header line, or at a heredoc body line
    /// start the bytes held back as a possible tag line. An inline value confirms its line.
    pub fn pending(&self) -> u32 {
        match self.node {
            Node::InlineValue => 0,
            Node::HereLine => self.tag.held().len() as u32,
            _ => self.line_len(),
        }
    }

    /// The heredoc's tag and the bytes of the current body line held back as matching it
    /// ([`Tag::held`]); empty outside a heredoc.
    pub fn tag(&self) -> &Tag {
        &self.tag
    }

    /// The sticky error, if any.
    pub fn error(&self) -> Option<ParseError<CtlErrorKind>> {
        self.error
    }

    /// Whether the stream so far ends at a frame boundary.
    pub fn accepting(&self) -> bool {
        self.node == Node::Between
    }

    /// Body bytes still owed by the current argument (0 outside a body).
    pub fn body_remaining(&self) -> u64 {
        match self.node {
            Node::Body => self.count,
            _ => 0,
        }
    }

    /// The innermost construct a stream ending here leaves open (see `docs/ctl.md`): a header
    /// line cut before its LF, an argument body, or the frame of a call between its lines.
    /// `None` at a frame boundary and after an error.
    pub fn open_construct(&self) -> Option<Construct> {
        use Node::*;
        match self.node {
            Between | Dead => None,
            C | Ca | Cal | Call | IdStart | Id | NameStart | Name => Some(Construct::CallLine),
            InFrame => Some(Construct::Frame),
            A | Ar | Arg | KeyStart | Key | SizeStart | SizeZero | Size => Some(Construct::ArgLine),
            ValueStart | Eq | InlineStart | Lt | TagStart | Tag => Some(Construct::ArgLine),
            E | En | End => Some(Construct::EndLine),
            Body => Some(Construct::ArgBody),
            InlineValue => Some(Construct::InlineValue),
            HereLine | HereText => Some(Construct::HeredocBody),
        }
    }

    /// The bytes that may come next. Empty after an error.
    #[inline]
    pub fn allowed(&self) -> ByteSet {
        if self.node >= Node::HereLine {
            return self.tag.allowed(self.node == Node::HereLine, self.count);
        }
        let budget = self.budget.min(ROOM_CAP as u32 + 1) as usize;
        ALLOWED_WITHIN[self.node as usize][budget]
            .intersection(DIGITS_WITHIN[self.digit_room as usize & 15])
    }

    /// How many digits can extend `nbytes` (its value so far in `count`) within `max_arg`.
    fn digits_within_bound(&self) -> u8 {
        match self.count.checked_mul(10) {
            Some(base) if base <= self.limits.max_arg => {
                (self.limits.max_arg - base).min(9) as u8 + 1
            }
            _ => 0,
        }
    }

    /// Takes one byte. On a refusal the machine enters its sticky error state.
    #[inline(always)]
    pub fn step(&mut self, byte: u8) -> Result<Step, ParseError<CtlErrorKind>> {
        if self.node == Node::Body {
            self.consumed += 1;
            self.count -= 1;
            let last = self.count == 0;
            if last {
                self.node = Node::InFrame;
            }
            return Ok(Step::Body { last });
        }
        let class = CLASS[byte as usize];
        let mut next = NEXT[self.node as usize][class as usize];
        // Every node that needs more than the tables is from `SizeStart` on: one comparison
        // keeps them off the path of the other header bytes.
        if next >= Node::SizeStart {
            match next {
                Node::SizeStart | Node::Size => next = self.enter_size(byte, next)?,
                Node::Dead => return Err(self.refuse(byte, CtlErrorKind::UnexpectedByte)),
                _ => return self.step_extended(byte, next),
            }
        }
        if MIN_REST[next as usize] as u32 >= self.budget {
            return Err(self.refuse(byte, CtlErrorKind::LineTooLong));
        }
        self.consumed += 1;
        if class != Class::Lf {
            self.node = next;
            self.budget -= 1;
            return Ok(Step::Header);
        }
        self.budget = self.limits.max_line;
        self.digit_room = EVERY_DIGIT;
        let step = match self.node {
            Node::Name => Step::CallLine,
            Node::End => Step::CallEnd,
            Node::InlineStart => Step::ValueEnd { announce: true },
            Node::InlineValue => Step::ValueEnd { announce: false },
            _ => Step::ArgLine { len: self.count },
        };
        self.node = if self.count > 0 { Node::Body } else { next };
        Ok(step)
    }

    /// [`step`](Self::step)'s part for a byte entering `nbytes` or a digit of it (`next` is
    /// `SizeStart` or `Size`): the value so far within `max_arg` and the digits that may
    /// follow. Returns the node to enter: extended CTL's `ValueStart` for `SizeStart`, where
    /// `=` and `<` may come too.
    #[inline(always)]
    fn enter_size(&mut self, byte: u8, next: Node) -> Result<Node, ParseError<CtlErrorKind>> {
        let mut next = next;
        if next == Node::Size {
            let value = self
                .count
                .checked_mul(10)
                .and_then(|v| v.checked_add((byte - b'0') as u64));
            match value.filter(|&v| v <= self.limits.max_arg) {
                Some(value) => self.count = value,
                None => return Err(self.refuse(byte, CtlErrorKind::ArgTooLarge)),
            }
        } else if self.mode == CtlMode::Extended {
            next = Node::ValueStart;
        }
        self.digit_room = self.digits_within_bound();
        Ok(next)
    }

    /// [`step`](Self::step) into the nodes that need more than the tables: `=` or `<` after a
    /// key, a tag byte (kept, within [`MAX_TAG`]), the LF of a heredoc header, an inline value
    /// byte, a heredoc body byte. `next` is the table's node for `byte`.
    #[inline(never)]
    fn step_extended(&mut self, byte: u8, next: Node) -> Result<Step, ParseError<CtlErrorKind>> {
        match next {
            Node::HereLine | Node::HereText if self.node == next => self.step_body_line(byte),
            Node::HereLine => {
                // The heredoc header's LF: the value may take `max_arg` bytes.
                self.consumed += 1;
                self.budget = self.limits.max_line;
                self.digit_room = EVERY_DIGIT;
                self.count = self.limits.max_arg;
                self.node = Node::HereLine;
                Ok(Step::HeredocLine)
            }
            _ => {
                if next == Node::Tag && self.tag.is_full() {
                    return Err(self.refuse(byte, CtlErrorKind::LineTooLong));
                }
                if MIN_REST[next as usize] as u32 >= self.budget {
                    return Err(self.refuse(byte, CtlErrorKind::LineTooLong));
                }
                self.consumed += 1;
                self.budget -= 1;
                let step = match next {
                    Node::Tag => {
                        self.tag.push(byte);
                        if self.tag.is_full() {
                            self.digit_room = TAG_FULL;
                        }
                        Step::Header
                    }
                    Node::InlineValue if self.node == Node::InlineStart => Step::ValueStart,
                    Node::InlineValue => Step::Text { held: 0 },
                    // `=` or `<` after the key: no `nbytes`, its digits' narrowing ends.
                    _ => {
                        self.digit_room = EVERY_DIGIT;
                        Step::Header
                    }
                };
                self.node = next;
                Ok(step)
            }
        }
    }

    /// One byte of a heredoc body ([`Tag::step`]).
    fn step_body_line(&mut self, byte: u8) -> Result<Step, ParseError<CtlErrorKind>> {
        let line_start = self.node == Node::HereLine;
        match self.tag.step(line_start, &mut self.count, byte) {
            BodyByte::Held => {
                self.consumed += 1;
                Ok(Step::Held)
            }
            BodyByte::Content { held, lf } => {
                self.consumed += 1;
                self.node = if lf { Node::HereLine } else { Node::HereText };
                Ok(Step::Text { held })
            }
            BodyByte::Close => {
                self.consumed += 1;
                self.tag = Tag::default();
                self.count = 0;
                self.node = Node::InFrame;
                Ok(Step::ValueEnd { announce: false })
            }
            BodyByte::TooLarge => Err(self.refuse(byte, CtlErrorKind::ArgTooLarge)),
        }
    }

    /// Takes inline value bytes at the start of `bytes` at once (the machine inside an inline
    /// value): as many as the line can take, and the LF that ends the value if it is among
    /// them. Returns the value bytes taken and whether the LF ended the value. A byte the line
    /// cannot take is left for [`step`](Self::step) to refuse.
    #[inline]
    pub(super) fn take_inline(&mut self, bytes: &[u8]) -> (usize, bool) {
        if self.node != Node::InlineValue {
            return (0, false);
        }
        let window = &bytes[..bytes.len().min(self.budget as usize)];
        // `memchr`'s setup costs more than it saves on a few bytes (a decoder's one-byte push).
        let lf = if window.len() < 16 {
            window.iter().position(|&b| b == b'\n')
        } else {
            memchr::memchr(b'\n', window)
        };
        match lf {
            Some(lf) => {
                self.consumed += lf as u64 + 1;
                self.budget = self.limits.max_line;
                self.node = Node::InFrame;
                (lf, true)
            }
            None => {
                // A value byte needs room for the LF after it.
                let taken = window.len().min(self.budget as usize - 1);
                self.consumed += taken as u64;
                self.budget -= taken as u32;
                (taken, false)
            }
        }
    }

    /// Takes heredoc content at once (the machine inside a content line): `text` is content up
    /// to a line start the caller found could be the tag line, or to a line start the caller
    /// leaves to [`step`](Self::step): no line of it that starts after one of its LFs is the
    /// tag line (the parser finds the tag line with a substring search). Takes what `max_arg`
    /// certainly allows (all but the last byte of the room, which only an LF may use) and
    /// returns how many bytes that was. Cut short by the room, the run ends at its last LF: the
    /// bytes after it begin a line, where [`step`](Self::step) holds those matching the tag.
    #[inline(always)]
    pub(super) fn take_heredoc_text(&mut self, text: &[u8]) -> usize {
        if self.node != Node::HereText && !self.departs_at_line_start(text) {
            return 0;
        }
        let mut taken = text.len().min(self.count.saturating_sub(1) as usize);
        if taken < text.len() {
            if let Some(lf) = memchr::memrchr(b'\n', &text[..taken]) {
                taken = lf + 1;
            }
        }
        if taken > 0 {
            self.count -= taken as u64;
            self.consumed += taken as u64;
            self.node = if text[taken - 1] == b'\n' {
                Node::HereLine
            } else {
                Node::HereText
            };
        }
        taken
    }

    /// Takes one byte inside a heredoc content line when the value has room for it and for
    /// the LF after it: [`take_heredoc_text`](Self::take_heredoc_text) for one byte, in a few
    /// instructions for the one-byte path (a content line's byte is content whatever it is).
    /// Returns whether it took the byte; if not, nothing changed.
    #[inline(always)]
    pub(super) fn take_text_byte(&mut self, byte: u8) -> bool {
        let takes = self.node == Node::HereText && self.count >= 2;
        if takes {
            self.count -= 1;
            self.consumed += 1;
            if byte == b'\n' {
                self.node = Node::HereLine;
            }
        }
        takes
    }

    /// Takes all of `text`, a stream's short chunk (at most [`line_scan::SCANNED`] bytes)
    /// inside a heredoc content line (or at the start of one that departs from the tag at its
    /// first byte), when no line in it begins with the tag's first byte and
    /// the value has room for it and an LF after: the common chunk of a heredoc, in one mask
    /// test rather than [`take_heredoc_text`](Self::take_heredoc_text)'s search and checks.
    /// Returns whether it took `text`; if not, nothing changed.
    #[inline(always)]
    pub(super) fn take_short_text(&mut self, text: &[u8]) -> bool {
        let takes = (self.node == Node::HereText || self.departs_at_line_start(text))
            && !text.is_empty()
            && text.len() <= line_scan::SCANNED
            && self.count > text.len() as u64
            && !line_scan::has_line_starting_with(text, self.tag.first());
        if takes {
            self.count -= text.len() as u64;
            self.consumed += text.len() as u64;
            self.node = if text.last() == Some(&b'\n') {
                Node::HereLine
            } else {
                Node::HereText
            };
        }
        takes
    }

    /// Whether `bytes` start a heredoc body line that departs from the tag at its first byte
    /// (most lines): nothing held, and a first byte that is not the tag's. Such a line is
    /// content from its first byte on, as if the machine were inside it.
    #[inline]
    pub(super) fn departs_at_line_start(&self, bytes: &[u8]) -> bool {
        self.node == Node::HereLine
            && self.tag.held().is_empty()
            && matches!(bytes.first(), Some(&b) if b != self.tag.first())
    }

    /// [`take_line`](Self::take_line) for an inline `arg` line (extended): `arg`, the key up to
    /// `separator`, `= `, the value, LF, all there and within `max_line`. A complete line
    /// within the limit passed every check stepping it would make (the value is any bytes but
    /// LF), as for the other lines.
    #[inline(never)]
    fn take_inline_line(
        &mut self,
        bytes: &[u8],
        keyword: usize,
        separator: usize,
    ) -> Option<(usize, Step, usize)> {
        if keyword != 4 || separator == keyword {
            return None;
        }
        match bytes.get(separator..separator + 3) {
            Some(b" = ") => {}
            Some(b" <<") => return self.take_heredoc_line(bytes, separator),
            _ => return None,
        }
        let start = separator + 3;
        let end = bytes.len().min(self.limits.max_line as usize);
        let lf = start + memchr::memchr(b'\n', bytes.get(start..end)?)?;
        self.consumed += lf as u64 + 1;
        self.node = Node::InFrame;
        Some((lf + 1, Step::InlineLine, separator))
    }

    /// [`take_inline_line`](Self::take_inline_line) for a heredoc header (extended): `arg`,
    /// the key up to `separator`, ` <<`, a tag of 1 to [`MAX_TAG`] token characters, LF, all
    /// there and within `max_line`. Such a line passed every check stepping it would make, and
    /// leaves the machine where stepping it would: at the body's first line start, the tag
    /// kept, the value's room `max_arg`.
    fn take_heredoc_line(
        &mut self,
        bytes: &[u8],
        separator: usize,
    ) -> Option<(usize, Step, usize)> {
        let start = separator + 3;
        let end = bytes.len().min(self.limits.max_line as usize);
        let tag = bytes.get(start..end)?;
        let tag_len = tag
            .iter()
            .take(MAX_TAG + 1)
            .position(|&b| !TOKEN_CHARS.contains(b))?;
        if tag_len == 0 || tag[tag_len] != b'\n' {
            return None;
        }
        let lf = start + tag_len;
        self.tag.set(&tag[..tag_len]);
        self.consumed += lf as u64 + 1;
        self.budget = self.limits.max_line;
        self.digit_room = EVERY_DIGIT;
        self.count = self.limits.max_arg;
        self.node = Node::HereLine;
        Some((lf + 1, Step::HeredocLine, separator))
    }

    /// Takes a heredoc's tag line at once when all of it starts `bytes` (the machine at a body
    /// line start): the value ends, as stepping the tag and its LF would end it. Returns the
    /// bytes taken, 0 when the line is not all here or is not the tag line.
    #[inline]
    pub(super) fn take_tag_line(&mut self, bytes: &[u8]) -> usize {
        if self.node != Node::HereLine
            || !self.tag.held().is_empty()
            || !self.tag.starts_tag_line(bytes)
        {
            return 0;
        }
        let taken = self.tag.as_bytes().len() + 1;
        self.consumed += taken as u64;
        self.tag = Tag::default();
        self.count = 0;
        self.node = Node::InFrame;
        taken
    }

    /// Whether the machine is inside an inline value or a heredoc body, where the parser takes
    /// bytes with [`take_inline`](Self::take_inline), [`take_heredoc_text`](Self::take_heredoc_text) and
    /// [`step`](Self::step) instead of the header paths.
    #[inline]
    pub(super) fn in_value(&self) -> bool {
        self.node >= Node::InlineValue
    }

    /// Whether the machine is inside a heredoc content line.
    #[inline]
    pub(super) fn in_heredoc_text(&self) -> bool {
        self.node == Node::HereText
    }

    /// Steps the current header line through `bytes` until a byte ends it or `bytes` runs out;
    /// returns how many bytes it took and the step of the last one ([`Step::Header`] when the
    /// line goes on). Inside a body it takes nothing.
    ///
    /// The same as [`step`](Self::step) byte by byte: the bytes that only move along the line
    /// (keywords, tokens, spaces) are taken in a tight loop over the node and the line length,
    /// and every other byte (a digit of `nbytes`, an LF, one past a limit, a refused one) goes
    /// through `step`.
    #[inline]
    pub fn step_line(&mut self, bytes: &[u8]) -> Result<(usize, Step), ParseError<CtlErrorKind>> {
        if self.node == Node::Body {
            return Ok((0, Step::Header));
        }
        let (mut node, mut budget) = (self.node, self.budget);
        let mut stepped = 0;
        for (at, &byte) in bytes.iter().enumerate() {
            let next = NEXT[node as usize][CLASS[byte as usize] as usize];
            if MOVES_ALONG[next as usize] && (MIN_REST[next as usize] as u32) < budget {
                node = next;
                budget -= 1;
                continue;
            }
            self.node = node;
            self.budget = budget;
            self.consumed += (at - stepped) as u64;
            let step = self.step_out_of_line(byte)?;
            stepped = at + 1;
            if step != Step::Header {
                return Ok((stepped, step));
            }
            (node, budget) = (self.node, self.budget);
        }
        self.node = node;
        self.budget = budget;
        self.consumed += (bytes.len() - stepped) as u64;
        Ok((bytes.len(), Step::Header))
    }

    /// [`step`](Self::step) as a call, for the bytes that end a run of [`step_line`]: keeps
    /// the run's loop small.
    #[inline(never)]
    fn step_out_of_line(&mut self, byte: u8) -> Result<Step, ParseError<CtlErrorKind>> {
        self.step(byte)
    }

    /// Takes `byte` if it only moves along the current header line (a keyword's letter, a
    /// token's character, most SPs): what [`step`](Self::step) does with it, without its
    /// result. Returns whether it took the byte; if not, nothing changed, and `step` takes
    /// or refuses it.
    #[inline(always)]
    pub(super) fn move_along(&mut self, byte: u8) -> bool {
        let next = NEXT[self.node as usize][CLASS[byte as usize] as usize];
        let moves = MOVES_ALONG[next as usize] && (MIN_REST[next as usize] as u32) < self.budget;
        if moves {
            self.node = next;
            self.budget -= 1;
            self.consumed += 1;
        }
        moves
    }

    /// Enters the sticky error state (or keeps the error already there) and returns it.
    #[cold]
    fn refuse(&mut self, byte: u8, kind: CtlErrorKind) -> ParseError<CtlErrorKind> {
        if let Some(error) = self.error {
            return error;
        }
        let error = ParseError {
            offset: self.consumed,
            byte,
            kind,
        };
        self.error = Some(error);
        // The frontier stays where it was: a dead machine's pending bytes are its line's, so
        // the line is set to what was pending (an inline value's line was confirmed, a heredoc
        // line's held bytes were not).
        self.budget = self.limits.max_line - self.pending();
        self.node = Node::Dead;
        error
    }

    /// Consumes up to `n` body bytes at once; returns how many were taken and whether they
    /// completed the argument. Outside a body it takes nothing.
    #[inline]
    pub fn skip_body(&mut self, n: u64) -> (u64, bool) {
        if self.node != Node::Body {
            return (0, false);
        }
        let taken = self.count.min(n);
        self.consumed += taken;
        self.count -= taken;
        let last = self.count == 0;
        if last {
            self.node = Node::InFrame;
        }
        (taken, last)
    }

    /// Takes a whole header line at the start of `bytes` in one go, when the machine is at a
    /// line start and the line is there complete and valid within the limits; returns its
    /// length, what it was, and where its first token ends (the SP after `id` or `key`).
    /// Otherwise takes nothing and returns `None`, and the caller steps the line byte by byte,
    /// which finds the exact refused byte.
    ///
    /// A complete line that ends within `max_line` passed every intermediate limit check (the
    /// bytes after each position are at least the fewest needed), and `nbytes` only grows
    /// digit by digit, so checking the whole line is the same as stepping it.
    #[inline(always)]
    pub fn take_line(&mut self, bytes: &[u8]) -> Option<(usize, Step, usize)> {
        let keyword = match self.node {
            Node::Between if bytes.starts_with(b"call ") => 5,
            // `end\n` is shorter than any call line, which fitted.
            Node::InFrame if bytes.starts_with(b"end\n") => {
                self.node = Node::Between;
                self.consumed += 4;
                return Some((4, Step::CallEnd, 0));
            }
            Node::InFrame if bytes.starts_with(b"arg ") => 4,
            _ => return None,
        };
        // The first two bytes after the keyword that are not token characters must be the SP
        // between the two tokens and the LF.
        let (separator, lf) = line_scan::separators(bytes, keyword, self.limits.max_line as usize)?;
        if bytes.get(separator) != Some(&b' ')
            || bytes.get(lf) != Some(&b'\n')
            || separator == keyword
            || lf == separator + 1
        {
            if self.mode == CtlMode::Extended {
                return self.take_inline_line(bytes, keyword, separator);
            }
            return None;
        }
        let step = if keyword == 5 {
            self.node = Node::InFrame;
            Step::CallLine
        } else {
            let digits = bytes.get(separator + 1..lf)?;
            // Up to 19 digits cannot overflow a u64; a longer `nbytes` is stepped, which
            // finds the digit that crosses `max_arg`.
            if digits.len() > 19 || (digits.len() > 1 && digits[0] == b'0') {
                return None;
            }
            let mut len = 0u64;
            for &digit in digits {
                let digit = digit.wrapping_sub(b'0');
                if digit > 9 {
                    return None;
                }
                len = len * 10 + digit as u64;
            }
            if len > self.limits.max_arg {
                return None;
            }
            self.count = len;
            self.node = if len > 0 { Node::Body } else { Node::InFrame };
            Step::ArgLine { len }
        };
        self.consumed += lf as u64 + 1;
        Some((lf + 1, step, separator))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_is_small_and_copy() {
        // A decoder clones this along a token trie: keep it a few words. 56 bytes for strict
        // CTL; the heredoc tag (`MAX_TAG` bytes, its length and the held count) and the mode
        // bring it to 128, two cache lines (`docs/ctl.md`).
        eprintln!("CtlMachine: {} bytes", std::mem::size_of::<CtlMachine>());
        assert!(std::mem::size_of::<CtlMachine>() <= 128);
    }

    #[test]
    fn tables_follow_declaration_order() {
        for (i, node) in ALL_NODES.iter().enumerate() {
            assert_eq!(*node as usize, i);
        }
        for (i, class) in ALL_CLASSES.iter().enumerate() {
            assert_eq!(*class as usize, i);
        }
    }

    #[test]
    fn room_cap_covers_every_node() {
        assert_eq!(MIN_REST.iter().max().copied(), Some(ROOM_CAP as u8));
        for node in ALL_NODES {
            assert_eq!(
                ALLOWED_WITHIN[node as usize][ROOM_CAP + 1],
                CLASS_BYTES
                    .iter()
                    .zip(NEXT[node as usize])
                    .filter(|(_, next)| *next != Node::Dead)
                    .fold(ByteSet::EMPTY, |set, (bytes, _)| set.union(*bytes)),
                "{node:?}"
            );
        }
    }

    /// Two ids with equal keys accept the same strings of up to `horizon` bytes, however near
    /// the line limit they are (a key that clipped the room left at `horizon + 1` did not:
    /// the fewest bytes finishing the line need room too).
    #[test]
    fn equal_keys_near_the_line_limit_accept_the_same_strings() {
        use crate::recognizer::Recognizer;
        let limits = Limits {
            max_line: 100,
            ..Limits::default()
        };
        let horizon = 20u32;
        let in_id = |len: usize| {
            let mut m = CtlMachine::new(limits);
            assert_eq!(m.try_bytes(b"call "), 5);
            assert_eq!(m.try_bytes(&vec![b'x'; len]), len);
            m
        };
        let takes = |mut m: CtlMachine, s: &[u8]| m.try_bytes(s) == s.len();
        for a in 1..90 {
            for b in a + 1..90 {
                let (ma, mb) = (in_id(a), in_id(b));
                if ma.mask_key(horizon) != mb.mask_key(horizon) {
                    continue;
                }
                for len in 0..=horizon as usize {
                    let run = vec![b'y'; len];
                    let mut named = run.clone();
                    named.extend_from_slice(b" n");
                    for s in [&run, &named] {
                        assert_eq!(takes(ma, s), takes(mb, s), "ids of {a} and {b}, {len}");
                    }
                }
            }
        }
    }

    #[test]
    fn every_keyword_spells_its_line() {
        let mut machine = CtlMachine::default();
        for &byte in b"call c1 read_file\narg path 2\nabend\n" {
            assert!(machine.allowed().contains(byte), "{:?}", byte as char);
            machine.step(byte).unwrap();
        }
        assert!(machine.accepting());
        assert_eq!(machine.consumed(), 35);
    }
}

/// [`CtlMachine`]'s [`Recognizer::Key`](crate::recognizer::Recognizer::Key): the node, and the line budget and byte counts clipped
/// to the horizon (a body of 3 bytes left and one of 3,000 differ only for longer strings).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CtlKey {
    node: Node,
    budget: u32,
    count: u64,
    digit_room: u8,
    tag: Tag,
}

impl crate::recognizer::Recognizer for CtlMachine {
    type Key = CtlKey;

    #[inline]
    fn allowed(&self) -> ByteSet {
        CtlMachine::allowed(self)
    }

    #[inline]
    fn accepting(&self) -> bool {
        CtlMachine::accepting(self)
    }

    #[inline]
    fn try_byte(&mut self, byte: u8) -> bool {
        CtlMachine::allowed(self).contains(byte) && self.step(byte).is_ok()
    }

    /// A body with bytes left: every byte is its content, and only the count goes down.
    fn byte_blind(&self) -> Option<bool> {
        Some(self.node == Node::Body)
    }

    fn line_text_kinds(&self) -> &'static [LineText] {
        match self.mode {
            CtlMode::Strict => &[LineText::Token],
            CtlMode::Extended => &[LineText::Bytes, LineText::Token],
        }
    }

    /// An id, a name or a key (a run of token characters ended by SP or LF) while its line
    /// has room for a whole token, its exit and the fewest bytes that can finish the line
    /// after it (`budget > horizon + ROOM_CAP + 1`, past the key's clip of the budget even
    /// after the token), so that the line's room is never seen by a token's bytes: nothing
    /// reads the token's bytes again. In extended mode also
    /// an inline value while its line has room for a whole token and the LF, and a heredoc
    /// content line while the value has room for two (so that the room left after any token
    /// and its LF is past what the key keeps); a heredoc body line's start too, with the tag's
    /// next byte excepted (a line that starts with it may be the tag line).
    fn line_text(&self, horizon: u32) -> Option<InText> {
        if self.error.is_some() {
            return None;
        }
        let horizon = horizon as u64;
        let kind = match self.node {
            Node::IdStart
            | Node::Id
            | Node::NameStart
            | Node::Name
            | Node::KeyStart
            | Node::Key
                if self.budget as u64 > horizon + ROOM_CAP as u64 + 1 =>
            {
                LineText::Token
            }
            Node::InlineStart | Node::InlineValue if self.budget as u64 > horizon + 1 => {
                LineText::Bytes
            }
            Node::HereText if self.count >= 2 * horizon + MAX_TAG as u64 + 4 => LineText::Bytes,
            // A body line's start is content too, except after the tag's next byte (the line
            // may be the tag line: those tokens are walked); the held bytes need room as well.
            // Not when that byte is the tables' stand-in for every run (`a`): walked.
            Node::HereLine
                if self.count >= 2 * horizon + 2 * MAX_TAG as u64 + 4
                    && self.tag.expected() != b'a' =>
            {
                let expected = self.tag.expected();
                let except = if expected == b'\n' {
                    ByteSet::EMPTY
                } else {
                    ByteSet::single(expected)
                };
                return Some(InText::forgetting(LineText::Bytes).except(except));
            }
            _ => return None,
        };
        Some(InText::forgetting(kind))
    }

    /// A heredoc tag: the machine keeps its bytes (to find the closing line). A tag byte needs
    /// room for itself and the header's LF, and the tag holds at most [`MAX_TAG`]; after any
    /// tag the same bytes end it (LF).
    fn kept_run(&self) -> Option<KeptRun> {
        if self.error.is_some() || !matches!(self.node, Node::TagStart | Node::Tag) {
            return None;
        }
        let tag_room = (MAX_TAG - self.tag.as_bytes().len()) as u32;
        let line_room = self
            .budget
            .saturating_sub(MIN_REST[Node::Tag as usize] as u32);
        Some(KeptRun {
            kind: LineText::Token,
            room: tag_room.min(line_room),
        })
    }

    fn mask_key(&self, horizon: u32) -> CtlKey {
        let beyond = horizon.saturating_add(1);
        // A header byte needs room for itself and the fewest bytes after it (at most
        // `ROOM_CAP`): with this much left, no string of `horizon` bytes meets the line limit.
        let room = beyond.saturating_add(ROOM_CAP as u32);
        let count = match self.node {
            // Every later digit and the body's length depend on the value so far.
            Node::Size | Node::SizeStart | Node::SizeZero | Node::ValueStart => self.count,
            // A heredoc's room: a string of `horizon` bytes after `MAX_TAG` held bytes needs
            // at most `horizon + MAX_TAG + 1`.
            Node::HereLine | Node::HereText => self.count.min(beyond as u64 + MAX_TAG as u64 + 1),
            _ => self.count.min(beyond as u64),
        };
        CtlKey {
            node: self.node,
            budget: self.budget.min(room),
            count,
            digit_room: self.digit_room,
            tag: self.tag,
        }
    }
}
