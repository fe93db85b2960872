//! A push reader for server-sent events (the `text/event-stream` format of the HTML living
//! standard, section 9.2).
//!
//! Bytes go in as they arrive, in chunks of any size; each dispatched event comes out to a
//! callback. The reader knows nothing of what the events mean, so the same framing serves
//! every streamed API: the agent loop's chat completions, and the three provider formats of
//! [`crate::streams`] (OpenAI Chat, OpenAI Responses and Anthropic Messages, the last two naming
//! their events with `event:`, before or after the `data:` line).
//!
//! What it implements of the format:
//!
//! - lines end in LF, CRLF or a lone CR; a CR that ends one chunk and an LF that starts the
//!   next are one line end;
//! - a UTF-8 byte order mark at the very start is skipped;
//! - `:` starts a comment (keep-alives), skipped;
//! - `field: value` or `field:value` (one space after the colon is dropped), a line without a
//!   colon is a field with an empty value; `data` lines accumulate, joined by LF; `event`
//!   names the event (empty means `message`); `id` sets the last event id, which persists
//!   across events (an `id` holding a NUL is ignored); `retry` with only digits sets the
//!   reconnection time; other fields are ignored, unless the reader is
//!   [`strict`](SseReader::strict): then a line that is not a comment, not blank and not one of
//!   the four fields is a `not_sse` error at its offset (a JSON error body, an HTML page), also
//!   when it is the unfinished last line of the stream ([`SseReader::finish`]);
//! - a blank line dispatches the event when its data is not empty (an event with no `data`
//!   line, or with one bare `data` line, is dropped, as the standard says) and resets the
//!   data and the name; an event the stream ends in the middle of is
//!   never dispatched ([`SseReader::pending`] says one was cut).
//!
//! Bounds: a line (without its line end) and an event's joined data are each at most the
//! reader's `max` bytes ([`DEFAULT_MAX`], 8 MiB, unless [`SseReader::with_max`] says
//! otherwise); beyond that the reader fails with an [`SseError`] naming the stream offset of the
//! line, and stays failed. Memory is therefore at most about twice `max`, whatever the input.
//!
//! Cost: each chunk is scanned once for line ends (`memchr`); a line complete inside one chunk
//! is read in place; only a line split across chunks is copied, into one reused buffer.

use std::fmt;
use std::ops::ControlFlow;

/// The default bound on a line and on an event's data: 8 MiB.
pub const DEFAULT_MAX: usize = 8 * 1024 * 1024;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One dispatched event. The slices live until the callback returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event<'a> {
    /// The `event` field, empty when the event had none.
    pub name: &'a [u8],
    /// The `data` lines, joined by LF.
    pub data: &'a [u8],
    /// The last event id seen so far in the stream (empty if none).
    pub id: &'a [u8],
    /// The stream offset of the event's first field line.
    pub offset: u64,
}

impl Event<'_> {
    /// The event's type: its `event` field, or `message` when it has none.
    pub fn kind(&self) -> &[u8] {
        if self.name.is_empty() {
            b"message"
        } else {
            self.name
        }
    }
}

/// What went over a bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SseErrorKind {
    /// A line longer than the bound.
    LineTooLong,
    /// An event whose joined `data` is longer than the bound.
    DataTooLong,
    /// A strict reader met a line that is not part of the format.
    NotSse,
}

impl SseErrorKind {
    /// A stable name: `line_too_long`, `data_too_long`, `not_sse`.
    pub fn name(self) -> &'static str {
        match self {
            SseErrorKind::LineTooLong => "line_too_long",
            SseErrorKind::DataTooLong => "data_too_long",
            SseErrorKind::NotSse => "not_sse",
        }
    }
}

/// Why the reader stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SseError {
    /// What went over the bound.
    pub kind: SseErrorKind,
    /// The stream offset of the first byte of the line at fault.
    pub offset: u64,
    /// The bound, in bytes.
    pub max: usize,
}

impl SseError {
    /// What went wrong, without the kind's name and the offset.
    pub fn message(&self) -> String {
        match self.kind {
            SseErrorKind::LineTooLong => format!("a line longer than {} bytes", self.max),
            SseErrorKind::DataTooLong => {
                format!("the data of an event longer than {} bytes", self.max)
            }
            SseErrorKind::NotSse => {
                "a line that is not an event-stream field (data, event, id, retry) or comment"
                    .to_owned()
            }
        }
    }
}

impl fmt::Display for SseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: event-stream line at byte {}: {}",
            self.kind.name(),
            self.offset,
            self.message()
        )
    }
}

impl std::error::Error for SseError {}

/// The push reader. See the module documentation for the format and the bounds.
#[derive(Clone, Debug)]
pub struct SseReader {
    max: usize,
    /// The start of a line that the last chunk ended inside.
    partial: Vec<u8>,
    /// The last chunk ended with a CR: an LF first in the next chunk belongs to it.
    after_cr: bool,
    /// Stream offset of the next byte to read.
    offset: u64,
    /// Stream offset where the current line began.
    line_start: u64,
    data: Vec<u8>,
    has_data: bool,
    name: Vec<u8>,
    id: Vec<u8>,
    retry: Option<u64>,
    /// Where the event being read began (its first field line).
    event_start: Option<u64>,
    strict: bool,
    failed: Option<SseError>,
}

impl Default for SseReader {
    fn default() -> SseReader {
        SseReader::with_max(DEFAULT_MAX)
    }
}

impl SseReader {
    /// A reader whose lines and event data are each at most `max` bytes.
    pub fn with_max(max: usize) -> SseReader {
        SseReader {
            max,
            partial: Vec::new(),
            after_cr: false,
            offset: 0,
            line_start: 0,
            data: Vec::new(),
            has_data: false,
            name: Vec::new(),
            id: Vec::new(),
            retry: None,
            event_start: None,
            strict: false,
            failed: None,
        }
    }

    /// The same reader, refusing lines that are not part of the format (see the module
    /// documentation) instead of ignoring them.
    pub fn strict(mut self) -> SseReader {
        self.strict = true;
        self
    }

    /// Ends the stream. A strict reader fails when the unfinished last line cannot be the
    /// start of a field or a comment; any reader returns its error if it failed.
    /// [`SseReader::pending`] still says whether an event was cut.
    pub fn finish(&mut self) -> Result<(), SseError> {
        if let Some(error) = self.failed {
            return Err(error);
        }
        // A first line keeps its byte-order mark (or the part of one that arrived) until it
        // ends: the field, if any, is after it.
        let mut partial = &self.partial[..];
        if self.line_start == 0 {
            let bom = BOM.len().min(partial.len());
            if partial[..bom] == BOM[..bom] {
                partial = &partial[bom..];
            }
        }
        if self.strict && !partial.is_empty() && !may_begin_field(partial) {
            return Err(self.fail(SseErrorKind::NotSse));
        }
        Ok(())
    }

    /// Reads `bytes`, calling `on_event` for every event they complete. `on_event` returning
    /// `Break` stops the reading at once: the result is then `Break(n)`, `n` being how many of
    /// `bytes` were read (the rest can be pushed again later). `Continue` means all were read.
    /// After an error every push fails with the same error.
    pub fn push(
        &mut self,
        bytes: &[u8],
        on_event: &mut dyn FnMut(&Event<'_>) -> ControlFlow<()>,
    ) -> Result<ControlFlow<usize>, SseError> {
        if let Some(error) = self.failed {
            return Err(error);
        }
        let mut rest = bytes;
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
                self.offset += 1;
                self.line_start = self.offset;
            }
        }
        while !rest.is_empty() {
            let Some(at) = memchr::memchr2(b'\r', b'\n', rest) else {
                if self.partial.len() + rest.len() > self.max {
                    return Err(self.fail(SseErrorKind::LineTooLong));
                }
                self.partial.extend_from_slice(rest);
                self.offset += rest.len() as u64;
                return Ok(ControlFlow::Continue(()));
            };
            if self.partial.len() + at > self.max {
                return Err(self.fail(SseErrorKind::LineTooLong));
            }
            let mut end = at + 1;
            if rest[at] == b'\r' {
                match rest.get(end) {
                    Some(b'\n') => end += 1,
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            let flow = if self.partial.is_empty() {
                self.line(&rest[..at], on_event)?
            } else {
                let mut line = std::mem::take(&mut self.partial);
                line.extend_from_slice(&rest[..at]);
                let flow = self.line(&line, on_event);
                line.clear();
                self.partial = line;
                flow?
            };
            rest = &rest[end..];
            self.offset += end as u64;
            self.line_start = self.offset;
            if flow.is_break() {
                return Ok(ControlFlow::Break(bytes.len() - rest.len()));
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    /// Whether the stream, if it ended now, would cut an event: part of a line, or `data`
    /// lines not yet dispatched by a blank line, or the reader failed.
    pub fn pending(&self) -> bool {
        !self.partial.is_empty() || self.has_data || self.failed.is_some()
    }

    /// The bytes read so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The reconnection time the stream asked for (`retry:`), in milliseconds.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    fn fail(&mut self, kind: SseErrorKind) -> SseError {
        let error = SseError {
            kind,
            offset: self.line_start,
            max: self.max,
        };
        self.failed = Some(error);
        error
    }

    /// One complete line, without its line end.
    fn line(
        &mut self,
        mut line: &[u8],
        on_event: &mut dyn FnMut(&Event<'_>) -> ControlFlow<()>,
    ) -> Result<ControlFlow<()>, SseError> {
        if self.line_start == 0 {
            line = line.strip_prefix(BOM).unwrap_or(line);
        }
        if line.is_empty() {
            // Empty data (one bare `data` line) dispatches nothing, as the standard says: a
            // keep-alive some servers send.
            let flow = if self.has_data && !self.data.is_empty() {
                on_event(&Event {
                    name: &self.name,
                    data: &self.data,
                    id: &self.id,
                    offset: self.event_start.unwrap_or(self.line_start),
                })
            } else {
                ControlFlow::Continue(())
            };
            self.data.clear();
            self.has_data = false;
            self.name.clear();
            self.event_start = None;
            return Ok(flow);
        }
        if line[0] == b':' {
            return Ok(ControlFlow::Continue(()));
        }
        self.event_start.get_or_insert(self.line_start);
        let (field, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                let joined = self.data.len() + usize::from(self.has_data) + value.len();
                if joined > self.max {
                    return Err(self.fail(SseErrorKind::DataTooLong));
                }
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            b"event" => {
                self.name.clear();
                self.name.extend_from_slice(value);
            }
            b"id" if memchr::memchr(0, value).is_none() => {
                self.id.clear();
                self.id.extend_from_slice(value);
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                if let Ok(ms) = std::str::from_utf8(value).unwrap_or("").parse() {
                    self.retry = Some(ms);
                }
            }
            b"id" | b"retry" => {}
            _ if self.strict => return Err(self.fail(SseErrorKind::NotSse)),
            _ => {}
        }
        Ok(ControlFlow::Continue(()))
    }
}

/// Whether an unfinished line could still become a field line or a comment: a prefix of a
/// field name, or a field name and its colon.
fn may_begin_field(partial: &[u8]) -> bool {
    let field = match memchr::memchr(b':', partial) {
        Some(0) => return true,
        Some(colon) => &partial[..colon],
        None => partial,
    };
    let complete = memchr::memchr(b':', partial).is_some();
    [&b"data"[..], b"event", b"id", b"retry"]
        .iter()
        .any(|name| {
            if complete {
                *name == field
            } else {
                name.starts_with(field)
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What reading a stream gave: the events as `(name, data, id)`, then the error if any,
    /// and whether an event was left pending.
    #[derive(Debug, PartialEq, Eq)]
    struct Outcome {
        events: Vec<(String, String, String)>,
        error: Option<SseError>,
        pending: bool,
    }

    fn read(chunks: &[&[u8]], max: usize) -> Outcome {
        let mut reader = SseReader::with_max(max);
        let mut events = Vec::new();
        let mut error = None;
        for chunk in chunks {
            let pushed = reader.push(chunk, &mut |e| {
                let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
                events.push((text(e.kind()), text(e.data), text(e.id)));
                ControlFlow::Continue(())
            });
            match pushed {
                Ok(flow) => assert_eq!(flow, ControlFlow::Continue(())),
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        Outcome {
            events,
            error,
            pending: reader.pending(),
        }
    }

    /// The outcome of `stream` whole equals its outcome at every split into two and into
    /// three chunks, and byte by byte.
    fn same_at_every_split(stream: &[u8], max: usize) -> Outcome {
        let whole = read(&[stream], max);
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(read(&bytes, max), whole, "byte by byte");
        for i in 0..=stream.len() {
            let (a, rest) = stream.split_at(i);
            assert_eq!(read(&[a, rest], max), whole, "split at {i}");
            for j in 0..=rest.len() {
                let (b, c) = rest.split_at(j);
                assert_eq!(read(&[a, b, c], max), whole, "split at {i}, {}", i + j);
            }
        }
        whole
    }

    fn events(list: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
        list.iter()
            .map(|(n, d, i)| (n.to_string(), d.to_string(), i.to_string()))
            .collect()
    }

    #[test]
    fn every_line_end_kind_frames_the_same_events() {
        let expected = events(&[
            ("message", "a", ""),
            ("message", "b\nc", ""),
            ("message", "[DONE]", ""),
        ]);
        let lf = ": keep-alive\ndata: a\n\ndata:b\ndata: c\n\ndata: [DONE]\n\n";
        for stream in [
            lf.to_owned(),
            lf.replace('\n', "\r\n"),
            lf.replace('\n', "\r"),
            // Mixed: CR, then LF, then CRLF.
            ": keep-alive\rdata: a\n\rdata:b\r\ndata: c\n\r\ndata: [DONE]\r\r".to_owned(),
        ] {
            let outcome = same_at_every_split(stream.as_bytes(), DEFAULT_MAX);
            assert_eq!(outcome.events, expected, "{stream:?}");
            assert_eq!(outcome.error, None);
            assert!(!outcome.pending);
        }
    }

    #[test]
    fn fields_names_ids_and_comments() {
        let stream = "\u{feff}event: delta\r\nid: 7\r\ndata: {\"x\":1}\r\n\r\n\
                      : comment\r\nretry: 1500\r\ndata\r\n\r\n\
                      event: end\rdata:  two spaces\rignored: field\rnocolon\rid: a\0b\r\r\
                      \n\n\nevent: no-data\n\ndata:\ndata\n\n";
        let outcome = same_at_every_split(stream.as_bytes(), DEFAULT_MAX);
        assert_eq!(
            outcome.events,
            events(&[
                ("delta", "{\"x\":1}", "7"),
                // A bare `data` line: empty data, so no event (a keep-alive); the id persists.
                // One space dropped, not two; an id with a NUL is ignored.
                ("end", " two spaces", "7"),
                // Two bare `data` lines: the data is one line end, an event.
                ("message", "\n", "7"),
            ])
        );
        assert!(!outcome.pending);
        let mut reader = SseReader::default();
        let _ = reader.push(stream.as_bytes(), &mut |_| ControlFlow::Continue(()));
        assert_eq!(reader.retry(), Some(1500));
        assert_eq!(reader.offset(), stream.len() as u64);
    }

    #[test]
    fn a_stream_ending_inside_an_event_dispatches_nothing_of_it() {
        for stream in [
            "data: a\n\ndata: cut",
            "data: a\n\ndata: cut\n",
            "data: a\r\n\r\ndata: cut\r",
        ] {
            let outcome = same_at_every_split(stream.as_bytes(), DEFAULT_MAX);
            assert_eq!(outcome.events, events(&[("message", "a", "")]));
            assert!(outcome.pending, "{stream:?}");
        }
    }

    #[test]
    fn a_line_longer_than_the_bound_is_an_error_at_its_offset() {
        // `max` is 12: "data: 123456" (12 bytes) passes, "data: 1234567" does not.
        let ok = "data: 123456\n\n";
        assert_eq!(same_at_every_split(ok.as_bytes(), 12).events.len(), 1);
        for stream in [
            "data: 1\n\ndata: 1234567\n\n",
            "data: 1\r\rdata: 1234567",
            "data: 1\n\n: 0123456789ab",
        ] {
            let outcome = same_at_every_split(stream.as_bytes(), 12);
            assert_eq!(
                outcome.events,
                events(&[("message", "1", "")]),
                "{stream:?}"
            );
            let error = outcome.error.expect("over the bound");
            assert_eq!(error.kind, SseErrorKind::LineTooLong);
            assert_eq!(error.offset, 9);
            assert_eq!(
                error.to_string(),
                "line_too_long: event-stream line at byte 9: a line longer than 12 bytes"
            );
        }
        // Joined data over the bound, each line within it.
        let outcome = same_at_every_split(b"data: 12345\ndata: 12345\ndata: 1\n\n", 12);
        let error = outcome.error.expect("data over the bound");
        assert_eq!((error.kind, error.offset), (SseErrorKind::DataTooLong, 24));
        assert!(outcome.events.is_empty());
        // The reader stays failed.
        let mut reader = SseReader::with_max(4);
        assert!(reader
            .push(b"data: long", &mut |_| ControlFlow::Continue(()))
            .is_err());
        assert_eq!(
            reader.push(b"\n\n", &mut |_| ControlFlow::Continue(())),
            Err(error_at(0, 4))
        );
    }

    #[test]
    fn a_strict_reader_refuses_what_is_not_the_format_and_offsets_name_the_event() {
        let read_strict = |stream: &[u8]| {
            let mut reader = SseReader::default().strict();
            let mut offsets = Vec::new();
            let pushed = reader.push(stream, &mut |e| {
                offsets.push(e.offset);
                ControlFlow::Continue(())
            });
            (offsets, pushed.err().or(reader.finish().err()))
        };
        // `event:` after `data:`, a comment first: the event begins at its first field line.
        let (offsets, error) = read_strict(b": hi\ndata: 1\nevent: x\n\n\nevent: y\ndata: 2\n\n");
        assert_eq!((offsets, error), (vec![5, 24], None));
        let (offsets, error) = read_strict(b"data: 1\n\n{\"error\":{}}\n\n");
        assert_eq!(offsets, [0]);
        let error = error.expect("not the format");
        assert_eq!((error.kind, error.offset), (SseErrorKind::NotSse, 9));
        // The unfinished last line: a prefix of a field name may still become one.
        assert_eq!(read_strict(b"dat").1, None);
        assert_eq!(read_strict(b"data: {\"cut").1, None);
        assert_eq!(
            read_strict(b"<html>").1.map(|e| e.kind),
            Some(SseErrorKind::NotSse)
        );
        assert_eq!(read_strict(b"{\"a\":1}").1.map(|e| e.offset), Some(0));
        // The lax reader (the agent loop's) ignores such lines.
        let mut lax = SseReader::default();
        assert!(lax
            .push(b"junk\n\n", &mut |_| ControlFlow::Continue(()))
            .is_ok());
        assert_eq!(lax.finish(), Ok(()));
    }

    fn error_at(offset: u64, max: usize) -> SseError {
        SseError {
            kind: SseErrorKind::LineTooLong,
            offset,
            max,
        }
    }

    #[test]
    fn breaking_stops_at_the_event_and_the_rest_can_be_pushed_again() {
        let stream = b"data: 1\r\rdata: 2\r\rdata: 3\r\r";
        let mut reader = SseReader::default();
        let mut seen = Vec::new();
        let mut rest = &stream[..];
        while !rest.is_empty() {
            let flow = reader
                .push(rest, &mut |e| {
                    seen.push(e.data.to_vec());
                    ControlFlow::Break(())
                })
                .unwrap();
            match flow {
                ControlFlow::Break(n) => rest = &rest[n..],
                ControlFlow::Continue(()) => rest = &[],
            }
        }
        assert_eq!(seen, [b"1".to_vec(), b"2".to_vec(), b"3".to_vec()]);
        assert!(!reader.pending());
    }
}
