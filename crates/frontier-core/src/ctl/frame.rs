//! The writer: a tool call framed as CTL, so that no program producing CTL has to count.
//!
//! [`write_call`] frames one [`ToolCall`] in a [`CtlMode`]. Strict CTL has one form for an
//! argument, the counted one. Extended CTL has three, and the writer picks per argument
//! ([`arg_form`]):
//!
//! 1. **inline** (`arg k = v` LF) when the value has no LF and the whole line fits `max_line`;
//! 2. **heredoc** (`arg k <<TAG` LF, the value, `TAG` LF) when the value ends with LF, with
//!    the first tag of `EOF`, `EOF1` … `EOF63` that is not a line of the value
//!    ([`pick_tag`]) and a header line within `max_line`;
//! 3. **counted** otherwise: a value that spans lines and does not end with LF, one too long
//!    for an inline line, one in which all 64 tags occur as lines, a key too long for the
//!    other headers.
//!
//! What the parser of the same mode and limits assembles from the output is exactly the call
//! that was framed. A call the language cannot carry is refused with a [`FrameError`] and
//! nothing is written: an `id`, `name` or `key` that is not a token, a header line longer than
//! `max_line`, a value longer than `max_arg`. The last holds in both modes, although an inline
//! value is bounded by `max_line` only: a call framed in one mode can then be framed in the
//! other, and the mode never decides whether a call is accepted.
//!
//! The tags are bounded (64) so that choosing one is a single pass over the value with a
//! 64-bit set, and deterministic, so that the same call always gives the same bytes.

use std::fmt;
use std::io::Write as _;

use super::{Limits, ToolCall, TOKEN_CHARS};
use crate::language::CtlMode;

/// How many heredoc tags the writer tries: `EOF`, then `EOF1` … `EOF63`.
pub const TAG_CANDIDATES: u8 = 64;

/// A heredoc tag the writer picked: `EOF` or `EOF1` … `EOF63`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EofTag(u8);

impl EofTag {
    /// The tag's text length.
    pub fn len(self) -> usize {
        match self.0 {
            0 => 3,
            1..=9 => 4,
            _ => 5,
        }
    }

    /// Always false: a tag has at least one character (for clippy's `len` rule).
    pub fn is_empty(self) -> bool {
        false
    }

    /// Appends the tag's text.
    pub fn write_to(self, out: &mut Vec<u8>) {
        // Writing into a Vec cannot fail.
        let _ = write!(out, "{self}");
    }
}

impl fmt::Display for EofTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            0 => f.write_str("EOF"),
            n => write!(f, "EOF{n}"),
        }
    }
}

/// Which candidate tag a line is, if any: `EOF` is 0, `EOFn` (n from 1 to 63, no leading
/// zero) is n.
fn candidate(line: &[u8]) -> Option<u8> {
    let digits = line.strip_prefix(b"EOF")?;
    match *digits {
        [] => Some(0),
        [d @ b'1'..=b'9'] => Some(d - b'0'),
        [d @ b'1'..=b'9', e @ b'0'..=b'9'] => {
            Some((d - b'0') * 10 + (e - b'0')).filter(|&n| n < TAG_CANDIDATES)
        }
        _ => None,
    }
}

/// The first of `EOF`, `EOF1` … `EOF63` that is not a line of `value` (every LF-separated
/// piece counts as a line, the last one too), or `None` when all of them are. One pass.
pub fn pick_tag(value: &[u8]) -> Option<EofTag> {
    let mut taken = 0u64;
    for line in value.split(|&b| b == b'\n') {
        if let Some(n) = candidate(line) {
            taken |= 1 << n;
        }
    }
    let free = (!taken).trailing_zeros();
    (free < u32::from(TAG_CANDIDATES)).then_some(EofTag(free as u8))
}

/// How one argument is framed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgForm {
    /// `arg KEY NBYTES` LF, then the bytes.
    Counted,
    /// `arg KEY = VALUE` LF.
    Inline,
    /// `arg KEY <<TAG` LF, the value, `TAG` LF.
    Heredoc(EofTag),
}

/// Bytes of the header line `arg KEY = VALUE` LF.
fn inline_line(key: &[u8], value: &[u8]) -> usize {
    b"arg ".len() + key.len() + b" = ".len() + value.len() + 1
}

/// Bytes of the header line `arg KEY <<TAG` LF.
fn heredoc_line(key: &[u8], tag: EofTag) -> usize {
    b"arg ".len() + key.len() + b" <<".len() + tag.len() + 1
}

/// Bytes of the header line `arg KEY NBYTES` LF.
fn counted_line(key: &[u8], len: usize) -> usize {
    b"arg ".len() + key.len() + 1 + decimal_digits(len as u64) + 1
}

fn decimal_digits(mut n: u64) -> usize {
    let mut digits = 1;
    while n >= 10 {
        n /= 10;
        digits += 1;
    }
    digits
}

/// The form the writer gives the argument `key` = `value` in `mode` (see the module's
/// documentation for the rule). It does not check the key, `max_arg` or the counted header's
/// length; [`write_call`] does.
pub fn arg_form(key: &[u8], value: &[u8], mode: CtlMode, limits: Limits) -> ArgForm {
    if mode == CtlMode::Strict {
        return ArgForm::Counted;
    }
    let max_line = limits.max_line as usize;
    let multiline = memchr::memchr(b'\n', value).is_some();
    if !multiline && inline_line(key, value) <= max_line {
        return ArgForm::Inline;
    }
    if value.last() == Some(&b'\n') {
        if let Some(tag) = pick_tag(value).filter(|&t| heredoc_line(key, t) <= max_line) {
            return ArgForm::Heredoc(tag);
        }
    }
    ArgForm::Counted
}

/// The part of a call an error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// The call's id.
    Id,
    /// The tool's name.
    Name,
    /// The key of the argument at this index (from 0).
    Key(usize),
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Field::Id => f.write_str("the id"),
            Field::Name => f.write_str("the name"),
            Field::Key(i) => write!(f, "the key of argument {}", i + 1),
        }
    }
}

/// A call the writer refused; nothing of it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// An id, name or key that is empty or holds a byte outside ALPHA / DIGIT / `_ . : -`.
    NotAToken {
        /// Which one.
        field: Field,
        /// The offset of the first bad byte in it (0 for an empty one).
        at: usize,
        /// That byte; `None` when the token is empty.
        byte: Option<u8>,
    },
    /// A header line (the `call` line, or an argument's header in its form) over `max_line`.
    LineTooLong {
        /// The call line (`Field::Id`) or the argument's header (`Field::Key`).
        field: Field,
        /// The line's length, LF included.
        len: usize,
        /// The bound.
        max_line: u32,
    },
    /// A value longer than `max_arg`.
    ArgTooLarge {
        /// The argument's index (from 0).
        arg: usize,
        /// Its length.
        len: u64,
        /// The bound.
        max_arg: u64,
    },
}

impl FrameError {
    /// A stable name: `not_a_token`, `line_too_long` or `arg_too_large`.
    pub fn kind(&self) -> &'static str {
        match self {
            FrameError::NotAToken { .. } => "not_a_token",
            FrameError::LineTooLong { .. } => "line_too_long",
            FrameError::ArgTooLarge { .. } => "arg_too_large",
        }
    }
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.kind())?;
        match *self {
            FrameError::NotAToken {
                field, byte: None, ..
            } => write!(f, "{field} is empty; a CTL token has at least one byte"),
            FrameError::NotAToken {
                field,
                at,
                byte: Some(byte),
            } => write!(
                f,
                "{field} has the byte 0x{byte:02x} at offset {at}; a CTL token is made of \
                 letters, digits and _ . : -"
            ),
            FrameError::LineTooLong {
                field: Field::Key(i),
                len,
                max_line,
            } => write!(
                f,
                "the header of argument {} would be {len} bytes, over max_line ({max_line})",
                i + 1
            ),
            FrameError::LineTooLong { len, max_line, .. } => write!(
                f,
                "the call line would be {len} bytes, over max_line ({max_line})"
            ),
            FrameError::ArgTooLarge { arg, len, max_arg } => write!(
                f,
                "argument {} is {len} bytes, over max_arg ({max_arg})",
                arg + 1
            ),
        }
    }
}

impl std::error::Error for FrameError {}

fn check_token(field: Field, token: &[u8]) -> Result<(), FrameError> {
    if token.is_empty() {
        return Err(FrameError::NotAToken {
            field,
            at: 0,
            byte: None,
        });
    }
    match token.iter().position(|&b| !TOKEN_CHARS.contains(b)) {
        Some(at) => Err(FrameError::NotAToken {
            field,
            at,
            byte: Some(token[at]),
        }),
        None => Ok(()),
    }
}

/// Appends `call` framed in `mode` under `limits` to `out`. On an error `out` is left as it
/// was: a call is written whole or not at all.
pub fn write_call(
    call: &ToolCall,
    mode: CtlMode,
    limits: Limits,
    out: &mut Vec<u8>,
) -> Result<(), FrameError> {
    let start = out.len();
    let written = write_whole(call, mode, limits, out);
    if written.is_err() {
        out.truncate(start);
    }
    written
}

fn write_whole(
    call: &ToolCall,
    mode: CtlMode,
    limits: Limits,
    out: &mut Vec<u8>,
) -> Result<(), FrameError> {
    let (id, name) = (call.id.as_bytes(), call.name.as_bytes());
    check_token(Field::Id, id)?;
    check_token(Field::Name, name)?;
    let call_line = b"call ".len() + id.len() + 1 + name.len() + 1;
    if call_line > limits.max_line as usize {
        return Err(FrameError::LineTooLong {
            field: Field::Id,
            len: call_line,
            max_line: limits.max_line,
        });
    }
    out.extend_from_slice(b"call ");
    out.extend_from_slice(id);
    out.push(b' ');
    out.extend_from_slice(name);
    out.push(b'\n');
    for (i, (key, value)) in call.args.iter().enumerate() {
        let key = key.as_bytes();
        check_token(Field::Key(i), key)?;
        if value.len() as u64 > limits.max_arg {
            return Err(FrameError::ArgTooLarge {
                arg: i,
                len: value.len() as u64,
                max_arg: limits.max_arg,
            });
        }
        out.extend_from_slice(b"arg ");
        out.extend_from_slice(key);
        match arg_form(key, value, mode, limits) {
            ArgForm::Inline => {
                out.extend_from_slice(b" = ");
                out.extend_from_slice(value);
                out.push(b'\n');
            }
            ArgForm::Heredoc(tag) => {
                out.extend_from_slice(b" <<");
                tag.write_to(out);
                out.push(b'\n');
                out.extend_from_slice(value);
                tag.write_to(out);
                out.push(b'\n');
            }
            ArgForm::Counted => {
                let len = counted_line(key, value.len());
                if len > limits.max_line as usize {
                    return Err(FrameError::LineTooLong {
                        field: Field::Key(i),
                        len,
                        max_line: limits.max_line,
                    });
                }
                // Writing into a Vec cannot fail.
                let _ = writeln!(out, " {}", value.len());
                out.extend_from_slice(value);
            }
        }
    }
    out.extend_from_slice(b"end\n");
    Ok(())
}

/// `call` framed in `mode` under `limits`, as a new buffer.
pub fn frame_call(call: &ToolCall, mode: CtlMode, limits: Limits) -> Result<Vec<u8>, FrameError> {
    let mut out = Vec::new();
    write_call(call, mode, limits, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn call(args: &[(&str, &[u8])]) -> ToolCall {
        ToolCall {
            id: "c1".into(),
            name: "write_file".into(),
            args: args
                .iter()
                .map(|(k, v)| (k.to_string(), Bytes::copy_from_slice(v)))
                .collect(),
        }
    }

    fn framed(args: &[(&str, &[u8])], mode: CtlMode, limits: Limits) -> String {
        String::from_utf8(frame_call(&call(args), mode, limits).unwrap()).unwrap()
    }

    #[test]
    fn strict_counts_every_argument() {
        let text = framed(
            &[("path", b"a.txt"), ("content", b"hi\n")],
            CtlMode::Strict,
            Limits::default(),
        );
        assert_eq!(
            text,
            "call c1 write_file\narg path 5\na.txtarg content 3\nhi\nend\n"
        );
    }

    #[test]
    fn tags_skip_the_lines_of_the_value() {
        assert_eq!(pick_tag(b"a\nb\n").unwrap().to_string(), "EOF");
        assert_eq!(pick_tag(b"EOF\n").unwrap().to_string(), "EOF1");
        assert_eq!(pick_tag(b"EOF\nEOF1\nEOF3\n").unwrap().to_string(), "EOF2");
        // Lines that only start with a tag, or spell a number another way, do not count.
        assert_eq!(
            pick_tag(b"EOFX\nEOF \nEOF01\nEOF64\n").unwrap().to_string(),
            "EOF"
        );
        let mut all = Vec::new();
        for n in 0..TAG_CANDIDATES {
            EofTag(n).write_to(&mut all);
            all.push(b'\n');
        }
        assert_eq!(pick_tag(&all), None);
        all.truncate(all.len() - "EOF63\n".len());
        assert_eq!(pick_tag(&all).unwrap().to_string(), "EOF63");
        assert_eq!(EofTag(63).len(), 5);
        assert_eq!(EofTag(7).len(), 4);
    }

    #[test]
    fn forms_follow_the_rule() {
        let l = Limits::default();
        let ext = CtlMode::Extended;
        assert_eq!(arg_form(b"k", b"src/a.rs", ext, l), ArgForm::Inline);
        assert_eq!(arg_form(b"k", b"", ext, l), ArgForm::Inline);
        assert_eq!(arg_form(b"k", b"a\r", ext, l), ArgForm::Inline);
        assert_eq!(arg_form(b"k", b"\n", ext, l), ArgForm::Heredoc(EofTag(0)));
        assert_eq!(
            arg_form(b"k", b"a\nEOF\n", ext, l),
            ArgForm::Heredoc(EofTag(1))
        );
        assert_eq!(arg_form(b"k", b"a\nb", ext, l), ArgForm::Counted);
        // The inline line, LF included, exactly at max_line and one over.
        let small = Limits {
            max_line: 16,
            max_arg: 100,
        };
        assert_eq!(arg_form(b"k", b"1234567", ext, small), ArgForm::Inline);
        assert_eq!(arg_form(b"k", b"12345678", ext, small), ArgForm::Counted);
        // A heredoc header (`arg KEY <<EOF` LF) that does not fit falls back to counting.
        let key = [b'k'; 6];
        assert_eq!(arg_form(&key, b"x\n", ext, small), ArgForm::Counted);
        assert_eq!(
            arg_form(&key[..5], b"x\n", ext, small),
            ArgForm::Heredoc(EofTag(0))
        );
    }

    #[test]
    fn extended_picks_a_form_per_argument() {
        let text = framed(
            &[
                ("path", b"a.txt"),
                ("content", b"one\nEOF\n"),
                ("tail", b"no\nnewline"),
            ],
            CtlMode::Extended,
            Limits::default(),
        );
        assert_eq!(
            text,
            "call c1 write_file\narg path = a.txt\narg content <<EOF1\none\nEOF\nEOF1\n\
             arg tail 10\nno\nnewlineend\n"
        );
    }

    #[test]
    fn a_refused_call_writes_nothing() {
        let limits = Limits {
            max_line: 16,
            max_arg: 4,
        };
        let mut out = b"kept".to_vec();
        let bad = |id: &str, name: &str, args: &[(&str, &[u8])]| ToolCall {
            id: id.into(),
            name: name.into(),
            args: args
                .iter()
                .map(|(k, v)| (k.to_string(), Bytes::copy_from_slice(v)))
                .collect(),
        };
        let cases = [
            (
                bad("c 1", "t", &[]),
                FrameError::NotAToken {
                    field: Field::Id,
                    at: 1,
                    byte: Some(b' '),
                },
            ),
            (
                bad("c1", "", &[]),
                FrameError::NotAToken {
                    field: Field::Name,
                    at: 0,
                    byte: None,
                },
            ),
            (
                bad("c1", "t", &[("k", b"1"), ("k\n", b"1")]),
                FrameError::NotAToken {
                    field: Field::Key(1),
                    at: 1,
                    byte: Some(b'\n'),
                },
            ),
            (
                bad("c1", "tool_name", &[]),
                FrameError::LineTooLong {
                    field: Field::Id,
                    len: 18,
                    max_line: 16,
                },
            ),
            (
                bad("c1", "t", &[("k", b"12345")]),
                FrameError::ArgTooLarge {
                    arg: 0,
                    len: 5,
                    max_arg: 4,
                },
            ),
            (
                bad("c1", "t", &[("a_long_key", b"1\n2")]),
                FrameError::LineTooLong {
                    field: Field::Key(0),
                    len: 17,
                    max_line: 16,
                },
            ),
        ];
        for (call, expected) in cases {
            for mode in [CtlMode::Strict, CtlMode::Extended] {
                let got = write_call(&call, mode, limits, &mut out).unwrap_err();
                assert_eq!(got, expected, "{call:?}");
                assert_eq!(out, b"kept");
            }
        }
        assert_eq!(
            FrameError::NotAToken {
                field: Field::Key(1),
                at: 1,
                byte: Some(b'\n')
            }
            .to_string(),
            "not_a_token: the key of argument 2 has the byte 0x0a at offset 1; a CTL token is \
             made of letters, digits and _ . : -"
        );
    }
}
