//! The machine as a [`Recognizer`]: stepping it on its own gives the parser's answers.
//!
//! A tentative `---`/`+++` header that fails ([`Step::Abandon`]) un-consumes the current line:
//! its held bytes, a prefix of the keyword the header expected, must be fed again from the
//! fallback context, and then the byte that failed. The parser replays them from its line
//! buffer; here they are known from the state itself (a prefix of one keyword), which is what
//! [`UdiffMachine::resolved`] computes, so the recogniser needs no buffer.

use crate::byteset::ByteSet;
use crate::contract::ParseError;
use crate::recognizer::{InText, LineText, Recognizer};
use crate::udiff::value::{Range, Value};

use super::{Ctx, Div, Pos, Step, Tent, UdiffMachine};
use crate::udiff::keyword as kw;
use crate::udiff::Mode;

impl Recognizer for UdiffMachine {
    /// The machine with its offsets taken out, hunk counts and the line's room clipped to the
    /// horizon, and the hunk ranges kept only while a header line is read.
    type Key = UdiffMachine;

    #[inline]
    fn allowed(&self) -> ByteSet {
        UdiffMachine::allowed(self)
    }

    #[inline]
    fn accepting(&self) -> bool {
        UdiffMachine::accepting(self)
    }

    /// Steps a copy rather than asking `allowed()` first: at a line start outside a hunk body
    /// `allowed()` probes the machine with 18 bytes, and a trie walk tries hundreds of bytes
    /// there. The step refuses exactly what `allowed()` excludes (the harness checks both
    /// against the parser at every prefix).
    fn try_byte(&mut self, byte: u8) -> bool {
        let before = *self;
        let taken = match self.step(byte) {
            Ok(stepped) if matches!(stepped.step, Step::Abandon { .. }) => {
                // Fall back, replay the held keyword prefix, then the byte again.
                match before.resolved() {
                    Some(resolved) => {
                        *self = resolved;
                        self.step(byte)
                            .is_ok_and(|s| !matches!(s.step, Step::Abandon { .. }))
                    }
                    None => false,
                }
            }
            Ok(_) => true,
            Err(_) => false,
        };
        if !taken {
            *self = before;
        }
        taken
    }

    fn line_text_kinds(&self) -> &'static [LineText] {
        &[LineText::Bytes, LineText::Hex]
    }

    /// Inside a body, garbage or `\` line outside a tentative header (every byte but LF is
    /// content that nothing reads again, and such lines have no length limit), and in a
    /// header's path, free text or a hunk header's section text while the line has room for
    /// a whole token and its LF. A keyword in progress on a line that is garbage or a body
    /// line if it diverges, and a line start where a line that starts no keyword is garbage,
    /// are such text except after the bytes that continue a keyword (once a keyword is
    /// whole, its value has a grammar of its own: `index x` is refused), unless `a`
    /// continues one.
    fn line_text(&self, horizon: u32) -> Option<InText> {
        if self.error.is_some() {
            return None;
        }
        let room = self.line_len as u64 + (horizon as u64) < self.max_line as u64;
        match (self.pos, self.tent) {
            (Pos::Stream(_), Tent::None) => Some(InText::forgetting(LineText::Bytes)),
            // A line start where every line that is not a keyword's is garbage (after a
            // finished git hunk, but for the lines that overrun it and a `\` line).
            (Pos::Start, Tent::None)
                if self.mode != Mode::Strict
                    && matches!(
                        self.ctx,
                        Ctx::Top | Ctx::GitHdr { .. } | Ctx::AfterBlock { .. } | Ctx::Hunks
                    )
                    || self.mode == Mode::Git && matches!(self.ctx, Ctx::HunkDone { .. }) =>
            {
                let cands = self.continuing(self.ctx) | self.top_kws();
                let mut keywords = kw::next_bytes(cands, 0).intersection(LineText::Bytes.class());
                if matches!(self.ctx, Ctx::HunkDone { .. }) {
                    keywords = keywords.union(ByteSet::of(b" +-\\"));
                }
                (!keywords.contains(b'a'))
                    .then(|| InText::forgetting(LineText::Bytes).except(keywords))
            }
            (
                Pos::Kw {
                    cands,
                    matched,
                    div: Div::Garbage | Div::Body(_),
                },
                Tent::None,
            ) => {
                let keywords = kw::next_bytes(cands, matched).intersection(LineText::Bytes.class());
                (!keywords.contains(b'a'))
                    .then(|| InText::forgetting(LineText::Bytes).except(keywords))
            }
            (
                Pos::Value {
                    value: Value::Path { .. } | Value::Text | Value::Range(Range { field: 7, .. }),
                    ..
                },
                _,
            ) if room => Some(InText::forgetting(LineText::Bytes)),
            // An object name of `index`: its digits are never read again, but the line goes
            // on after it, so its room must be past what the key keeps.
            (
                Pos::Value {
                    value: Value::Index { phase: 0 | 2, .. },
                    ..
                },
                _,
            ) if self.line_len as u64 + horizon as u64 + Value::MAX_MIN_REST as u64 + 10
                < self.max_line as u64 =>
            {
                Some(InText::forgetting(LineText::Hex))
            }
            _ => None,
        }
    }

    fn mask_key(&self, horizon: u32) -> UdiffMachine {
        // Within `horizon` bytes at most `horizon` lines end, and a header line grows by at
        // most `horizon` bytes (plus the fewest bytes that could still finish it).
        let lines = horizon as u64 + 1;
        let room = horizon.saturating_add(1 + Value::MAX_MIN_REST + 8);
        let mut key = *self;
        key.consumed = 0;
        key.error = self.error.map(ParseError::without_position);
        if let Ctx::Hunk { old, new, bs } = self.ctx {
            key.ctx = Ctx::Hunk {
                old: old.min(lines),
                new: new.min(lines),
                bs,
            };
        }
        let left = self.max_line.saturating_sub(self.line_len);
        if left > room {
            key.line_len = self.max_line - room;
        }
        // The ranges are read only while a hunk header's ranges are (`@@ -` sets them first),
        // and only the counts decide what may follow: the starts are reported, never checked.
        // A count of `lines` or more (typed so far, or the default 1 not yet replaced) stays
        // so as digits are added and outlasts every body line within the horizon, as the
        // hunk's own counts in the key do: hunks of the same counts at other lines share it.
        if matches!(
            self.pos,
            Pos::Value {
                value: Value::Range(_),
                ..
            }
        ) {
            let [_, old, _, new] = self.nums;
            key.nums = [0, old.min(lines), 0, new.min(lines)];
        } else {
            key.nums = [0; 4];
        }
        key
    }
}
