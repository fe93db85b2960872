//! A header line after its first byte: its keyword, then its value, up to the LF.
//!
//! The keyword is matched against a candidate set ([`KwSet`]) that shrinks byte by byte, held
//! in [`Pos::Kw`] with what the line is if no candidate survives. A completed keyword picks
//! the value grammar that follows it (from `value`), enters or proves a tentative header, and
//! refuses a hunk header outside a file patch. Value bytes are held within `max_line` (a
//! tentative `---`/`+++` line that outgrows it, or ends without a name, is demoted to its
//! fallback) while the hunk
//! header's numbers are read as they pass; the LF sets the context of the next line.
//! The file patch ends here when the keyword bytes rule out every keyword that continues it.

use crate::udiff::keyword::{self as kw, KwSet};
use crate::udiff::value::{Range, Value};
use crate::udiff::LineKind::{Add, Remove};
use crate::udiff::{Mode, UdiffErrorKind};

use super::{plain, Class, Ctx, Div, Fallback, Pos, Step, Stepped, Tent, UdiffMachine};
use super::{END_FILE, END_HUNK};

impl UdiffMachine {
    /// A byte while matching keywords (`matched` bytes seen). `ends` carries units already
    /// ended by this byte.
    pub(super) fn keyword(
        &mut self,
        cands: KwSet,
        matched: u8,
        div: Div,
        byte: u8,
        mut ends: u8,
    ) -> Result<Stepped, UdiffErrorKind> {
        let next = kw::filter(cands, matched, byte);
        if next == 0 {
            return match div {
                Div::Garbage => {
                    if Self::in_file(self.ctx) {
                        ends |= END_FILE;
                        if matches!(self.ctx, Ctx::Hunk { .. }) {
                            ends |= END_HUNK;
                        }
                    }
                    self.tent = Tent::None;
                    let mut s = self.begin(Class::Garbage, byte, Ctx::Top);
                    s.ends |= ends;
                    Ok(s)
                }
                Div::Body(kind) => Ok(self.begin(
                    Class::Body(kind),
                    byte,
                    Ctx::Hunk {
                        old: 0,
                        new: 0,
                        bs: true,
                    },
                )),
                Div::Error(kind) => Err(kind),
                Div::Abandon => {
                    let fallback = self.fallback().unwrap_or(Fallback::Garbage);
                    let lines = if self.ctx == Ctx::AfterMinus { 1 } else { 2 };
                    self.abandon(fallback);
                    Ok(Stepped {
                        ends: 0,
                        step: Step::Abandon { lines, fallback },
                    })
                }
            };
        }
        // The line no longer continues the file patch: it ends here.
        if Self::in_file(self.ctx) && next & self.continuing(self.ctx) == 0 {
            ends |= END_FILE;
            if matches!(self.ctx, Ctx::Hunk { .. }) {
                ends |= END_HUNK;
            }
            self.ctx = Ctx::Top;
        }
        let matched = matched + 1;
        self.line_len = matched as u32;
        let Some(k) = kw::complete(next, matched) else {
            self.pos = Pos::Kw {
                cands: next,
                matched,
                div,
            };
            return Ok(Stepped {
                ends,
                step: Step::Held,
            });
        };
        let step = self.keyword_done(k)?;
        Ok(Stepped {
            ends: ends | step.ends,
            step: step.step,
        })
    }

    /// A keyword was fully matched (in context `self.ctx`).
    pub(super) fn keyword_done(&mut self, k: u8) -> Result<Stepped, UdiffErrorKind> {
        let value = |v: Value| Pos::Value { kw: k, value: v };
        let path = value(Value::Path { empty: true });
        match k {
            kw::DIFF_GIT
            | kw::PLUS
            | kw::COPY_FROM
            | kw::COPY_TO
            | kw::RENAME_FROM
            | kw::RENAME_TO
            | kw::BINARY_FILES => self.pos = path,
            kw::MINUS => {
                self.pos = path;
                if self.mode != Mode::Strict && !matches!(self.ctx, Ctx::GitHdr { .. }) {
                    let fallback = if matches!(self.ctx, Ctx::Hunk { .. }) {
                        Fallback::Body
                    } else {
                        Fallback::Garbage
                    };
                    self.tent = Tent::Some(fallback);
                }
            }
            kw::OLD_MODE | kw::NEW_MODE | kw::DELETED | kw::NEW_FILE => {
                self.pos = value(Value::Mode { digits: 0 })
            }
            kw::SIMILARITY | kw::DISSIMILARITY => {
                self.pos = value(Value::Percent {
                    digits: 0,
                    value: 0,
                    done: false,
                })
            }
            kw::INDEX => {
                self.pos = value(Value::Index {
                    phase: 0,
                    empty: true,
                })
            }
            kw::LITERAL | kw::DELTA => self.pos = value(Value::Size { digits: 0 }),
            kw::SIGNATURE => {
                // Its LF: the whole line, held so far, is garbage.
                return Ok(self.begin(Class::Garbage, b'\n', Ctx::Top));
            }
            kw::GIT_BINARY => {
                self.ctx = Ctx::BinHdr;
                self.pos = Pos::Start;
                return Ok(plain(Step::HeaderLine { kw: k }));
            }
            kw::ATAT_DASH if self.is_orphan_candidate() => {
                // Outside a file patch in `git` mode: garbage unless it proves to be a whole
                // hunk header (see `value`).
                self.nums = [0, 1, 0, 1];
                self.pos = value(Value::Range(Range::START));
            }
            kw::ATAT_DASH | kw::ATAT => {
                let allowed_here = match self.ctx {
                    Ctx::AfterPlus | Ctx::Hunks => true,
                    Ctx::GitHdr { .. } => self.mode != Mode::Strict,
                    _ => false,
                };
                if !allowed_here {
                    return Err(UdiffErrorKind::HunkWithoutHeader);
                }
                self.pos = if k == kw::ATAT {
                    value(Value::Text)
                } else {
                    self.nums = [0, 1, 0, 1];
                    value(Value::Range(Range::START))
                };
                if self.tent != Tent::None {
                    let ends = if self.fallback() == Some(Fallback::Body) {
                        END_HUNK | END_FILE
                    } else {
                        0
                    };
                    self.tent = Tent::None;
                    return Ok(Stepped {
                        ends,
                        step: Step::TentativeHeader,
                    });
                }
            }
            _ => self.pos = path,
        }
        Ok(plain(Step::Held))
    }

    /// Whether a completed `@@ -` starts an orphan line: in `git` mode, outside a file patch,
    /// where git reads a line as garbage unless it parses as a whole hunk header.
    pub(super) fn is_orphan_candidate(&self) -> bool {
        self.mode == Mode::Git && self.ctx == Ctx::Top
    }

    /// A byte of an orphan `@@ -` line: the hunk header's grammar while it holds (`value`),
    /// garbage from the first byte that leaves it (or would pass `max_line`), and
    /// `hunk_without_header` at the `@` that would complete it.
    fn orphan(&mut self, value: Value, byte: u8) -> Result<Stepped, UdiffErrorKind> {
        match value.step(byte) {
            Ok(Some(Value::Range(r))) if r.field == 7 => Err(UdiffErrorKind::HunkWithoutHeader),
            Ok(Some(next)) if self.fits(next.min_rest()) => {
                self.line_len += 1;
                self.pos = Pos::Value {
                    kw: kw::ATAT_DASH,
                    value: next,
                };
                Ok(plain(Step::Held))
            }
            _ => Ok(self.begin(Class::Garbage, byte, Ctx::Top)),
        }
    }

    /// A byte of a header value.
    pub(super) fn value(
        &mut self,
        k: u8,
        value: Value,
        byte: u8,
    ) -> Result<Stepped, UdiffErrorKind> {
        if k == kw::ATAT_DASH && self.is_orphan_candidate() {
            return self.orphan(value, byte);
        }
        let tentative = self.fallback().is_some() && (k == kw::MINUS || k == kw::PLUS);
        let next = match value.step(byte) {
            Ok(next) => next,
            // A tentative line that cannot be a header (`--- ` or `+++ ` without a name)
            // is its fallback, as garbage or a body line may be.
            Err(_) if tentative => return Ok(self.demote(k, byte)),
            Err(kind) => return Err(kind),
        };
        let Some(next) = next else {
            return Ok(self.value_end(k));
        };
        if !self.fits(next.min_rest()) {
            if tentative {
                return Ok(self.demote(k, byte));
            }
            return Err(UdiffErrorKind::LineTooLong);
        }
        if let (Value::Range(r), b'0'..=b'9') = (value, byte) {
            if let Some(i) = r.number() {
                let n = if r.digits == 0 { 0 } else { self.nums[i] };
                self.nums[i] = n * 10 + (byte - b'0') as u64;
            }
        }
        self.line_len += 1;
        self.pos = Pos::Value { kw: k, value: next };
        Ok(plain(Step::Held))
    }

    /// A tentative `---`/`+++` line (keyword `k`) that `byte` proves no header line (it
    /// outgrows `max_line`, or it is the LF of a line without a name): the complete held
    /// lines and this one become the fallback, the line streaming on, or ended by an LF.
    fn demote(&mut self, k: u8, byte: u8) -> Stepped {
        let fallback = self.fallback().unwrap_or(Fallback::Garbage);
        let lines = if k == kw::MINUS { 0 } else { 1 };
        let class = match (fallback, k) {
            (Fallback::Garbage, _) => Class::Garbage,
            (Fallback::Body, kw::MINUS) => Class::Body(Remove),
            (Fallback::Body, _) => Class::Body(Add),
        };
        let ended = byte == b'\n';
        self.tent = Tent::None;
        self.ctx = self.fallback_ctx(fallback);
        self.pos = if ended {
            Pos::Start
        } else {
            Pos::Stream(class)
        };
        self.line_len = 0;
        plain(Step::Demote {
            lines,
            fallback,
            class,
            ended,
        })
    }

    /// The LF of a header value line.
    fn value_end(&mut self, k: u8) -> Stepped {
        self.pos = Pos::Start;
        let mut ends = 0;
        self.ctx = match (k, self.ctx) {
            (kw::DIFF_GIT, _) => Ctx::GitHdr { seen: 0 },
            (kw::MINUS, Ctx::GitHdr { seen }) if seen & kw::METADATA != 0 => Ctx::MetaMinus,
            (kw::MINUS, _) => Ctx::AfterMinus,
            (kw::PLUS, Ctx::MetaMinus) => Ctx::Hunks,
            (kw::PLUS, _) => Ctx::AfterPlus,
            (kw::BINARY_FILES, _) => {
                ends = END_FILE;
                Ctx::Top
            }
            (kw::LITERAL | kw::DELTA, ctx) => Ctx::Base85 {
                first: ctx == Ctx::BinHdr,
            },
            (kw::ATAT_DASH, _) => {
                let [_, old, _, new] = self.nums;
                self.ctx = if old == 0 && new == 0 {
                    Ctx::HunkDone { bs: false }
                } else {
                    Ctx::Hunk {
                        old,
                        new,
                        bs: false,
                    }
                };
                return plain(Step::HunkHeader);
            }
            (kw::ATAT, _) => {
                self.ctx = Ctx::Hunk {
                    old: 0,
                    new: 0,
                    bs: false,
                };
                return plain(Step::HunkHeader);
            }
            (k, Ctx::GitHdr { seen }) => Ctx::GitHdr {
                seen: seen | kw::bit(k),
            },
            (_, ctx) => ctx,
        };
        Stepped {
            ends,
            step: Step::HeaderLine { kw: k },
        }
    }
}
