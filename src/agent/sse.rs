//! A push decoder for server-sent events (the `text/event-stream` format).
//!
//! Bytes go in as they arrive from the socket; each complete event's `data` comes out. Lines
//! end in LF or CRLF; `data:` lines accumulate (joined with LF) until a blank line dispatches
//! the event; comments (`:`) and other fields (`event:`, `id:`, `retry:`) are skipped. A line
//! longer than the limit is an error rather than unbounded memory.

/// The longest line kept.
pub const MAX_LINE: usize = 8 * 1024 * 1024;

/// Decodes an event stream incrementally.
#[derive(Clone, Debug, Default)]
pub struct SseDecoder {
    line: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
}

impl SseDecoder {
    /// Pushes bytes; calls `on_data` with the data of every event they complete.
    pub fn push(
        &mut self,
        mut bytes: &[u8],
        on_data: &mut dyn FnMut(&[u8]) -> Result<(), String>,
    ) -> Result<(), String> {
        while !bytes.is_empty() {
            match memchr::memchr(b'\n', bytes) {
                None => {
                    self.line.extend_from_slice(bytes);
                    if self.line.len() > MAX_LINE {
                        return Err(format!("event-stream line longer than {MAX_LINE} bytes"));
                    }
                    return Ok(());
                }
                Some(at) => {
                    self.line.extend_from_slice(&bytes[..at]);
                    bytes = &bytes[at + 1..];
                    let mut line = std::mem::take(&mut self.line);
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                    self.line_done(&line, on_data)?;
                    line.clear();
                    self.line = line;
                }
            }
        }
        Ok(())
    }

    fn line_done(
        &mut self,
        line: &[u8],
        on_data: &mut dyn FnMut(&[u8]) -> Result<(), String>,
    ) -> Result<(), String> {
        if line.is_empty() {
            if self.has_data {
                self.has_data = false;
                let data = std::mem::take(&mut self.data);
                on_data(&data)?;
            }
            return Ok(());
        }
        if line[0] == b':' {
            return Ok(());
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(at) => {
                let value = &line[at + 1..];
                (&line[..at], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        if field == b"data" {
            if self.has_data {
                self.data.push(b'\n');
            }
            self.data.extend_from_slice(value);
            self.has_data = true;
        }
        Ok(())
    }

    /// Whether bytes of an unfinished line or event are held (the stream stopped mid-event).
    pub fn pending(&self) -> bool {
        !self.line.is_empty() || self.has_data
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(chunks: &[&[u8]]) -> Vec<String> {
        let mut d = SseDecoder::default();
        let mut out = Vec::new();
        for c in chunks {
            d.push(c, &mut |data| {
                out.push(String::from_utf8_lossy(data).into_owned());
                Ok(())
            })
            .unwrap();
        }
        out
    }

    #[test]
    fn events_across_chunks() {
        let whole: &[u8] = b": hi\r\ndata: a\r\n\r\nevent: x\ndata:b\ndata: c\n\ndata: [DONE]\n\n";
        let expected = vec!["a".to_owned(), "b\nc".to_owned(), "[DONE]".to_owned()];
        assert_eq!(decode(&[whole]), expected);
        let bytes: Vec<&[u8]> = whole.chunks(1).collect();
        assert_eq!(decode(&bytes), expected);
    }
}
