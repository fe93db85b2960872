//! Whole tool calls from CTL events, for consumers that want values rather than a stream.
//!
//! The assembler holds the call being built, so its memory is bounded per call, not only per
//! argument: [`CallBounds`] caps the number of arguments and their bytes together. A call that
//! would cross a bound stops being buffered at once (an `arg` line announces its length, so no
//! byte over the bound is ever held) and is reported when its `end` line confirms it, as a
//! [`CallTooLarge`] the caller must answer (refuse it, say so): it is never dropped silently.

use std::fmt;

use bytes::{Bytes, BytesMut};

use super::CtlEvent;

/// A complete, confirmed tool call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCall {
    /// The call's id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments in the order written. Keys may repeat; judging that is the runtime's job.
    pub args: Vec<(String, Bytes)>,
}

impl ToolCall {
    /// The first argument called `key`.
    pub fn arg(&self, key: &str) -> Option<&Bytes> {
        self.args.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// What one call may hold in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallBounds {
    /// Arguments in one call (default 256).
    pub max_args: usize,
    /// Argument bytes of one call, every argument's `nbytes` summed (default 64 MiB).
    pub max_bytes: u64,
}

impl CallBounds {
    /// The default `max_args`.
    pub const DEFAULT_MAX_ARGS: usize = 256;
    /// The default `max_bytes`: four arguments of the default `max_arg` (16 MiB).
    pub const DEFAULT_MAX_BYTES: u64 = 64 * 1024 * 1024;
}

impl Default for CallBounds {
    fn default() -> Self {
        CallBounds {
            max_args: Self::DEFAULT_MAX_ARGS,
            max_bytes: Self::DEFAULT_MAX_BYTES,
        }
    }
}

/// Which bound a call crossed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crossed {
    /// It has more than `max_args` arguments.
    Args {
        /// The bound.
        max: usize,
    },
    /// Its arguments announce more than `max_bytes` bytes together.
    Bytes {
        /// The bound.
        max: u64,
        /// The bytes announced up to and including the argument that crossed it.
        announced: u64,
    },
}

/// A confirmed call that was not assembled because it crossed a [`CallBounds`] bound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallTooLarge {
    /// The call's id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The bound it crossed.
    pub crossed: Crossed,
    /// The index (from 0) of the argument that crossed it.
    pub arg_index: usize,
}

impl CallTooLarge {
    /// A stable name for the bound crossed: `too_many_args` or `args_too_large`.
    pub fn kind(&self) -> &'static str {
        match self.crossed {
            Crossed::Args { .. } => "too_many_args",
            Crossed::Bytes { .. } => "args_too_large",
        }
    }
}

impl fmt::Display for CallTooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "call {} ({}) not assembled: ", self.id, self.name)?;
        match self.crossed {
            Crossed::Args { max } => write!(
                f,
                "{}: argument {} is over the bound of {max} arguments per call",
                self.kind(),
                self.arg_index + 1
            ),
            Crossed::Bytes { max, announced } => write!(
                f,
                "{}: argument {} brings the call to {announced} bytes, over the bound of {max}",
                self.kind(),
                self.arg_index + 1
            ),
        }
    }
}

impl std::error::Error for CallTooLarge {}

/// The least a value of unknown length grows by when a piece does not fit: what most file
/// contents fit in. Its capacity stays within twice its bytes plus this.
const MIN_GROWTH: usize = 4096;

/// Builds [`ToolCall`]s from [`CtlEvent`]s. Memory is the call being assembled, at most
/// [`CallBounds::max_bytes`] of argument bytes in at most [`CallBounds::max_args`] arguments
/// (each buffer is sized from the confirmed `len`, once it is known to fit).
#[derive(Clone, Debug, Default)]
pub struct CallAssembler {
    bounds: CallBounds,
    current: Option<ToolCall>,
    /// Argument bytes announced by the current call so far.
    announced: u64,
    /// Arguments started in the current call so far.
    started: usize,
    /// Set once the current call crossed a bound: its arguments are no longer kept.
    crossed: Option<(Crossed, usize)>,
    /// Whether the current argument's length was not announced (an inline or heredoc value):
    /// its bytes are counted against `max_bytes` as they arrive.
    counting_data: bool,
    /// For such an argument: the bytes it may hold before the call crosses `max_bytes`.
    value_room: u64,
    /// The bytes the current value may hold before a piece needs more than appending: the
    /// buffer's capacity (a counted value's is its length), and for a value of unknown length
    /// no more than `value_room`; zero once the call crossed a bound. One compare a piece.
    fits: usize,
    key: String,
    body: BytesMut,
}

impl CallAssembler {
    /// An assembler with the given bounds.
    pub fn new(bounds: CallBounds) -> CallAssembler {
        CallAssembler {
            bounds,
            ..CallAssembler::default()
        }
    }

    /// The bounds this assembler keeps.
    pub fn bounds(&self) -> CallBounds {
        self.bounds
    }

    /// Takes one event; returns the call it completes, if any, or the refusal of a completed
    /// call that crossed a bound.
    pub fn on_event(&mut self, event: &CtlEvent<'_>) -> Result<Option<ToolCall>, CallTooLarge> {
        match *event {
            CtlEvent::CallStart { id, name } => {
                self.current = Some(ToolCall {
                    id: id.as_str().to_owned(),
                    name: name.as_str().to_owned(),
                    args: Vec::new(),
                });
                self.announced = 0;
                self.started = 0;
                self.crossed = None;
            }
            CtlEvent::ArgStart { key, len } => {
                let index = self.started;
                self.started += 1;
                self.counting_data = len.is_none();
                let len = len.unwrap_or(0);
                self.announced = self.announced.saturating_add(len);
                if self.crossed.is_none() {
                    self.crossed = self.crossing(index).map(|c| (c, index));
                }
                if self.crossed.is_some() {
                    self.drop_arguments();
                    return Ok(None);
                }
                self.value_room = self.bounds.max_bytes - self.announced;
                self.key.clear();
                self.key.push_str(key.as_str());
                // `len` fits within `max_bytes`, checked just above.
                self.body = BytesMut::with_capacity(len as usize);
                self.fits = len as usize;
            }
            CtlEvent::ArgData(data) => {
                let held = self.body.len() + data.len();
                if held > self.fits && !self.make_room(held) {
                    return Ok(None);
                }
                self.body.extend_from_slice(data);
            }
            CtlEvent::ArgEnd => {
                if self.crossed.is_none() {
                    if self.counting_data {
                        self.announced += self.body.len() as u64;
                    }
                    let value = std::mem::take(&mut self.body).freeze();
                    if let Some(call) = self.current.as_mut() {
                        call.args.push((std::mem::take(&mut self.key), value));
                    }
                }
            }
            CtlEvent::CallEnd => {
                let call = self.current.take();
                return match (call, self.crossed.take()) {
                    (Some(call), Some((crossed, arg_index))) => Err(CallTooLarge {
                        id: call.id,
                        name: call.name,
                        crossed,
                        arg_index,
                    }),
                    (call, _) => Ok(call),
                };
            }
        }
        Ok(None)
    }

    /// The bound the argument at `index` crosses, given the bytes announced with it.
    fn crossing(&self, index: usize) -> Option<Crossed> {
        if index >= self.bounds.max_args {
            Some(Crossed::Args {
                max: self.bounds.max_args,
            })
        } else if self.announced > self.bounds.max_bytes {
            Some(Crossed::Bytes {
                max: self.bounds.max_bytes,
                announced: self.announced,
            })
        } else {
            None
        }
    }

    /// A piece takes the current value to `held` bytes, past `fits`: whether
    /// the value keeps it. Not when the call already crossed a bound, or this piece takes it
    /// across `max_bytes` (only a value of unknown length can: a count was checked at its
    /// start); else the buffer grows as needed.
    #[inline(never)]
    fn make_room(&mut self, held: usize) -> bool {
        if self.crossed.is_some() {
            return false;
        }
        if !self.counting_data {
            // A counted value's pieces add up to its length: nothing to check or grow.
            self.fits = held;
            return true;
        }
        if held as u64 > self.value_room {
            self.cross_with_value(held);
            return false;
        }
        if self.body.capacity() < held {
            self.grow_value(held - self.body.len());
        }
        self.fits = (self.body.capacity() as u64).min(self.value_room) as usize;
        true
    }

    /// Makes room for `more` bytes of a value of unknown length (extended CTL). Arriving in
    /// one piece, as a whole buffer brings it, the value gets one exact allocation; arriving in
    /// pieces (a stream, a decoder's bytes), it grows by at least what it holds and
    /// [`MIN_GROWTH`], so a 4 KiB value fed a byte at a time is two allocations, not ten.
    fn grow_value(&mut self, more: usize) {
        if self.body.capacity() == 0 {
            self.body = BytesMut::with_capacity(more);
        } else {
            self.body.reserve(more.max(self.body.len()).max(MIN_GROWTH));
        }
    }

    /// The current value of unknown length, at `held` bytes, takes the call over `max_bytes`.
    #[cold]
    fn cross_with_value(&mut self, held: usize) {
        self.announced = self.announced.saturating_add(held as u64);
        let index = self.started.saturating_sub(1);
        self.crossed = self.crossing(index).map(|c| (c, index));
        self.drop_arguments();
    }

    /// Frees what the current call holds, once it has crossed a bound.
    fn drop_arguments(&mut self) {
        if let Some(call) = self.current.as_mut() {
            call.args = Vec::new();
        }
        self.body = BytesMut::new();
        self.fits = 0;
        self.key = String::new();
    }

    /// The call being assembled, if a `call` line has been confirmed and its `end` has not
    /// (with no arguments once it has crossed a bound).
    pub fn in_progress(&self) -> Option<&ToolCall> {
        self.current.as_ref()
    }

    /// The bound the call being assembled has crossed, if it has.
    pub fn crossed(&self) -> Option<Crossed> {
        self.crossed.map(|(c, _)| c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::PushParser;
    use crate::ctl::{CtlParser, Limits};

    /// The outcomes of `stream` through an assembler with `bounds`, and the largest buffer
    /// capacity it held at any event.
    fn assemble(stream: &[u8], bounds: CallBounds) -> (Vec<Result<ToolCall, CallTooLarge>>, usize) {
        let mut parser = CtlParser::new(Limits::default());
        let mut assembler = CallAssembler::new(bounds);
        let mut out = Vec::new();
        let mut peak = 0;
        for byte in stream.chunks(3) {
            parser
                .push(byte, &mut |e| {
                    if let Some(r) = assembler.on_event(&e).transpose() {
                        out.push(r);
                    }
                    let held: usize = assembler.body.capacity()
                        + assembler
                            .current
                            .iter()
                            .flat_map(|c| c.args.iter())
                            .map(|(_, v)| v.len())
                            .sum::<usize>();
                    peak = peak.max(held);
                })
                .unwrap();
        }
        (out, peak)
    }

    #[test]
    fn a_call_within_the_bounds_is_assembled() {
        let bounds = CallBounds {
            max_args: 2,
            max_bytes: 5,
        };
        let (out, _) = assemble(b"call c1 w\narg a 2\nhiarg b 3\nyouend\n", bounds);
        assert_eq!(out.len(), 1);
        let call = out[0].as_ref().unwrap();
        assert_eq!(call.arg("a").unwrap().as_ref(), b"hi");
        assert_eq!(call.arg("b").unwrap().as_ref(), b"you");
    }

    #[test]
    fn too_many_arguments_are_refused_at_the_end_of_the_call() {
        let bounds = CallBounds {
            max_args: 2,
            max_bytes: 100,
        };
        let (out, _) = assemble(
            b"call c1 w\narg a 0\narg b 0\narg c 0\narg d 1\nxend\ncall c2 r\nend\n",
            bounds,
        );
        assert_eq!(out.len(), 2);
        let refused = out[0].as_ref().unwrap_err();
        assert_eq!(refused.id, "c1");
        assert_eq!(refused.name, "w");
        assert_eq!(refused.crossed, Crossed::Args { max: 2 });
        assert_eq!(refused.arg_index, 2);
        assert_eq!(refused.kind(), "too_many_args");
        // The next call is assembled as usual.
        assert_eq!(out[1].as_ref().unwrap().id, "c2");
    }

    #[test]
    fn bytes_over_the_bound_are_never_buffered() {
        let bounds = CallBounds {
            max_args: 10,
            max_bytes: 8,
        };
        let body = vec![b'x'; 1000];
        let mut stream = b"call c1 w\narg a 6\nabcdefarg b 1000\n".to_vec();
        stream.extend_from_slice(&body);
        stream.extend_from_slice(b"end\n");
        let (out, peak) = assemble(&stream, bounds);
        let refused = out[0].as_ref().unwrap_err();
        assert_eq!(
            refused.crossed,
            Crossed::Bytes {
                max: 8,
                announced: 1006
            }
        );
        assert_eq!(refused.arg_index, 1);
        assert!(peak <= 8, "held {peak} bytes with a bound of 8");
        assert!(refused.to_string().contains("args_too_large"), "{refused}");
    }

    #[test]
    fn an_unannounced_value_is_counted_as_it_arrives() {
        // Extended CTL: a heredoc's length is known only at its end, so its bytes are
        // counted against `max_bytes` as they come, and none past the bound is held.
        let bounds = CallBounds {
            max_args: 10,
            max_bytes: 8,
        };
        let mut stream = b"call c1 w\narg a = abcdef\narg b <<EOF\n".to_vec();
        stream.extend_from_slice(&[b'x'; 1000]);
        stream.extend_from_slice(b"\nEOF\nend\ncall c2 w\narg a = 12345678\nend\n");
        let mut parser = CtlParser::with_mode(Limits::default(), crate::ctl::CtlMode::Extended);
        let mut assembler = CallAssembler::new(bounds);
        let mut out = Vec::new();
        let mut peak = 0;
        for chunk in stream.chunks(3) {
            parser
                .push(chunk, &mut |e| {
                    out.extend(assembler.on_event(&e).transpose());
                    peak = peak.max(assembler.body.len());
                })
                .unwrap();
        }
        let refused = out[0].as_ref().unwrap_err();
        assert_eq!(refused.arg_index, 1);
        assert!(matches!(refused.crossed, Crossed::Bytes { max: 8, announced } if announced > 8));
        assert!(peak <= 8, "held {peak} bytes with a bound of 8");
        // Exactly the bound is assembled.
        assert_eq!(
            out[1].as_ref().unwrap().arg("a").unwrap().as_ref(),
            b"12345678"
        );
    }

    #[test]
    fn the_byte_bound_holds_exactly_whatever_the_forms_and_the_pieces() {
        // 3 inline + 5 heredoc + 2 counted = 10 argument bytes; a long heredoc after it grows
        // its buffer past `MIN_GROWTH` several times.
        let long: Vec<u8> = (0..9_999u32).map(|i| b"ab\n"[i as usize % 3]).collect();
        let mut stream =
            b"call c1 w\narg a = abc\narg b <<EOF\ndefg\nEOF\narg c 2\nhiend\n".to_vec();
        stream.extend_from_slice(b"call c2 w\narg d <<EOF\n");
        stream.extend_from_slice(&long);
        stream.extend_from_slice(b"EOF\nend\n");
        for max_bytes in [0, 1, 3, 4, 8, 9, 10, 11, 9_998, 9_999, 10_000] {
            for chunk in [1, 2, 5, 7, 64, stream.len()] {
                let bounds = CallBounds {
                    max_args: 10,
                    max_bytes,
                };
                let mut parser =
                    CtlParser::with_mode(Limits::default(), crate::ctl::CtlMode::Extended);
                let mut assembler = CallAssembler::new(bounds);
                let (mut out, mut peak) = (Vec::new(), 0);
                for piece in stream.chunks(chunk) {
                    parser
                        .push(piece, &mut |e| {
                            out.extend(assembler.on_event(&e).transpose());
                            let kept = assembler.current.iter().flat_map(|c| &c.args);
                            let held =
                                assembler.body.len() + kept.map(|(_, v)| v.len()).sum::<usize>();
                            peak = peak.max(held);
                        })
                        .unwrap();
                }
                let at = format!("max_bytes {max_bytes}, chunks of {chunk}");
                assert_eq!(out.len(), 2, "{at}: {out:?}");
                assert!(peak as u64 <= max_bytes, "{at}: held {peak}");
                if max_bytes >= 10 {
                    let call = out[0].as_ref().unwrap();
                    let args: Vec<_> = call
                        .args
                        .iter()
                        .map(|(k, v)| (k.as_str(), v.as_ref()))
                        .collect();
                    assert_eq!(
                        args,
                        [("a", &b"abc"[..]), ("b", b"defg\n"), ("c", b"hi")],
                        "{at}"
                    );
                } else {
                    let refused = out[0].as_ref().unwrap_err();
                    assert!(
                        matches!(refused.crossed, Crossed::Bytes { max, .. } if max == max_bytes),
                        "{at}"
                    );
                }
                if max_bytes >= 9_999 {
                    assert_eq!(
                        out[1].as_ref().unwrap().arg("d").unwrap().as_ref(),
                        &long[..],
                        "{at}"
                    );
                } else {
                    assert!(out[1].is_err(), "{at}");
                }
            }
        }
    }

    #[test]
    fn a_cut_call_over_the_bound_is_in_progress_without_its_arguments() {
        let mut assembler = CallAssembler::new(CallBounds {
            max_args: 1,
            max_bytes: 10,
        });
        let mut parser = CtlParser::new(Limits::default());
        parser
            .push(b"call c1 w\narg a 1\nxarg b 1\n", &mut |e| {
                assert_eq!(assembler.on_event(&e), Ok(None));
            })
            .unwrap();
        assert_eq!(assembler.crossed(), Some(Crossed::Args { max: 1 }));
        assert!(assembler.in_progress().unwrap().args.is_empty());
    }
}
