//! JSON lines: one event or chunk object per line, as SDK test fixtures record streams.
//!
//! A push reader like [`super::sse::SseReader`]: bytes in any chunking, each complete line out
//! with the stream offset where it began. Lines end in LF (a CR before it is dropped); blank
//! lines are skipped; a line complete inside one chunk is handed over in place, only a line
//! split across chunks is copied, into one reused buffer of at most `max` bytes (beyond it a
//! `line_too_long` error at the line's offset). The last line needs no line end:
//! [`LineReader::finish`] hands it over.

/// A line longer than the bound: its offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineTooLong {
    /// The stream offset where the line began.
    pub offset: u64,
    /// The bound.
    pub max: usize,
}

/// The push reader of JSON lines.
#[derive(Clone, Debug)]
pub struct LineReader {
    max: usize,
    partial: Vec<u8>,
    /// The stream offset of the next byte.
    offset: u64,
    /// Where the current line began.
    line_start: u64,
    failed: Option<LineTooLong>,
}

impl LineReader {
    /// A reader of lines of at most `max` bytes.
    pub fn with_max(max: usize) -> LineReader {
        LineReader {
            max,
            partial: Vec::new(),
            offset: 0,
            line_start: 0,
            failed: None,
        }
    }

    /// Reads `bytes`, handing each complete, non-blank line (line end removed) and its offset
    /// to `on_line`; `on_line` returning `false` stops the reading.
    pub fn push(
        &mut self,
        bytes: &[u8],
        on_line: &mut dyn FnMut(&[u8], u64) -> bool,
    ) -> Result<(), LineTooLong> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        let mut rest = bytes;
        while !rest.is_empty() {
            let Some(at) = memchr::memchr(b'\n', rest) else {
                if self.partial.len() + rest.len() > self.max + 1 {
                    return Err(self.fail());
                }
                self.partial.extend_from_slice(rest);
                self.offset += rest.len() as u64;
                return Ok(());
            };
            if self.partial.len() + at > self.max + 1 {
                return Err(self.fail());
            }
            let go_on = if self.partial.is_empty() {
                self.line(&rest[..at], on_line)
            } else {
                let mut line = std::mem::take(&mut self.partial);
                line.extend_from_slice(&rest[..at]);
                let go_on = self.line(&line, on_line);
                line.clear();
                self.partial = line;
                go_on
            };
            if self.failed.is_some() {
                return Err(self.fail());
            }
            rest = &rest[at + 1..];
            self.offset += at as u64 + 1;
            self.line_start = self.offset;
            if !go_on {
                return Ok(());
            }
        }
        Ok(())
    }

    /// The end of the stream: the last line, if it had no line end.
    pub fn finish(
        &mut self,
        on_line: &mut dyn FnMut(&[u8], u64) -> bool,
    ) -> Result<(), LineTooLong> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        let line = std::mem::take(&mut self.partial);
        self.line(&line, on_line);
        match self.failed {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The bytes read so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    fn fail(&mut self) -> LineTooLong {
        *self.failed.get_or_insert(LineTooLong {
            offset: self.line_start,
            max: self.max,
        })
    }

    fn line(&mut self, line: &[u8], on_line: &mut dyn FnMut(&[u8], u64) -> bool) -> bool {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.len() > self.max {
            self.fail();
            return false;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            return true;
        }
        on_line(line, self.line_start)
    }
}

/// Whether `line`, the stream's last and with no LF, was cut in the middle: JSON that ended
/// too early, or a proper prefix of `[DONE]`. A complete last line is read as any other.
pub fn is_cut_line(line: &[u8]) -> bool {
    let line = line.trim_ascii();
    if line.is_empty() {
        return false;
    }
    if line.len() < b"[DONE]".len() && b"[DONE]".starts_with(line) {
        return true;
    }
    matches!(
        serde_json::from_slice::<serde::de::IgnoredAny>(line),
        Err(e) if e.is_eof()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(chunks: &[&[u8]], max: usize) -> (Vec<(String, u64)>, Option<LineTooLong>) {
        let mut reader = LineReader::with_max(max);
        let mut out = Vec::new();
        let mut on_line = |l: &[u8], at: u64| {
            out.push((String::from_utf8_lossy(l).into_owned(), at));
            true
        };
        for chunk in chunks {
            if let Err(e) = reader.push(chunk, &mut on_line) {
                return (out, Some(e));
            }
        }
        let error = reader.finish(&mut on_line).err();
        (out, error)
    }

    #[test]
    fn lines_and_offsets_are_the_same_at_every_split() {
        let stream = b"{\"a\":1}\r\n\n  \n{\"b\":2}\n{\"c\":3}";
        let expected = vec![
            ("{\"a\":1}".to_owned(), 0),
            ("{\"b\":2}".to_owned(), 13),
            ("{\"c\":3}".to_owned(), 21),
        ];
        assert_eq!(lines(&[stream], 64), (expected.clone(), None));
        for i in 0..=stream.len() {
            let (a, b) = stream.split_at(i);
            assert_eq!(lines(&[a, b], 64), (expected.clone(), None), "{i}");
        }
    }

    #[test]
    fn a_line_over_the_bound_is_an_error_at_its_offset() {
        let stream = b"1234\n123456\n";
        for i in 0..=stream.len() {
            let (a, b) = stream.split_at(i);
            let (out, error) = lines(&[a, b], 4);
            assert_eq!(out, vec![("1234".to_owned(), 0)], "{i}");
            assert_eq!(error, Some(LineTooLong { offset: 5, max: 4 }), "{i}");
        }
        // With a CRLF, the CR is not counted; the last line is bounded too.
        assert_eq!(lines(&[b"1234\r\n"], 4).1, None);
        assert_eq!(
            lines(&[b"12345"], 4).1,
            Some(LineTooLong { offset: 0, max: 4 })
        );
    }
}
