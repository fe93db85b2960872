//! `frontier events`: the confirmed events as JSON lines, schema in `frontier::event`.
//!
//! Adjacent data events are merged before printing, so the output is the same for every
//! chunking, but a merged value is printed in records of at most [`MAX_RECORD_DATA`] bytes of
//! data: a run of garbage or an argument of any length costs that much memory, not its length.
//! The cuts fall at fixed offsets of the merged value (each as close below the bound as keeps
//! UTF-8 characters whole), never at chunk boundaries, so the output stays chunk-independent;
//! consecutive records with the same name and fields are pieces of one value. The last line is
//! `{"event":"end","verdict":...,"consumed":...,"confirmed":...,"error":...}`, with
//! `"unclosed":{"construct":...,"began_at":...}` before `error` when the verdict is incomplete.

use std::ffi::{OsStr, OsString};
use std::io::{self, BufWriter, Write};

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use frontier::contract::{Owed, PushParser, Unclosed, Verdict};
use frontier::event::{BytesJson, Event, OwnedValue, Record, Value};

use super::check::{erase_kind, ErrorReport};
use super::input::{self, Input};
use super::lang::{dispatch, LangArgs, WithParser};
use super::{bounds, display};

/// The most data bytes one printed record carries.
pub const MAX_RECORD_DATA: usize = 64 * 1024;

/// Flags of `events`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    lang: LangArgs,
    /// Feed the parser at most N bytes at a time, 1 to 1073741824 (default: each read whole).
    #[arg(long, value_parser = bounds::CHUNK.parser::<usize>())]
    chunk: Option<usize>,
    /// The file to parse; `-` is standard input.
    file: OsString,
}

/// The last line of `events`.
#[derive(serde::Serialize)]
struct EndRecord {
    event: &'static str,
    verdict: &'static str,
    consumed: u64,
    confirmed: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    unclosed: Option<UnclosedReport>,
    error: Option<ErrorReport>,
}

/// What an incomplete stream left open, as the `end` record prints it.
#[derive(serde::Serialize)]
struct UnclosedReport {
    construct: &'static str,
    began_at: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    owed: Option<OwedReport>,
}

/// What a length-prefixed construct still needs: `{"bytes":N}` or `{"old":N,"new":M}`.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum OwedReport {
    Bytes { bytes: u64 },
    Lines { old: u64, new: u64 },
}

impl UnclosedReport {
    fn of(unclosed: &Unclosed) -> UnclosedReport {
        UnclosedReport {
            construct: unclosed.construct,
            began_at: unclosed.began_at,
            owed: unclosed.owed.map(|owed| match owed {
                Owed::Bytes(bytes) => OwedReport::Bytes { bytes },
                Owed::Lines { old, new } => OwedReport::Lines { old, new },
            }),
        }
    }
}

/// Prints events as records: a non-data event at once, a data value once it ends or in pieces
/// of `bound` bytes as it grows.
struct Merger<W: Write> {
    out: W,
    /// The data value being merged: its first event's record without the data, and the data.
    open: Option<(Record, Vec<u8>)>,
    bound: usize,
}

impl<W: Write> Merger<W> {
    fn new(out: W, bound: usize) -> Merger<W> {
        Merger {
            out,
            open: None,
            bound: bound.max(4),
        }
    }

    fn event<E: Event + ?Sized>(&mut self, event: &E) -> io::Result<()> {
        let Some(data) = event.data() else {
            self.end_value()?;
            return print(&Record::of(event), None, &mut self.out);
        };
        match self
            .open
            .as_mut()
            .filter(|(open, _)| continues(open, event))
        {
            Some((_, merged)) => merged.extend_from_slice(data),
            None => {
                self.end_value()?;
                let mut record = Record::of(event);
                // The record's last field is the data; it is kept apart while it grows.
                let merged = match record.fields.pop() {
                    Some((_, OwnedValue::Bytes(merged))) => merged,
                    other => {
                        record.fields.extend(other);
                        data.to_vec()
                    }
                };
                self.open = Some((record, merged));
            }
        }
        self.print_full_pieces()
    }

    /// Prints pieces of `bound` bytes off the front of the open value while it is longer.
    fn print_full_pieces(&mut self) -> io::Result<()> {
        let Some((record, merged)) = self.open.as_mut() else {
            return Ok(());
        };
        let mut done = 0;
        while merged.len() - done > self.bound {
            let rest = &merged[done..];
            let cut = cut_at(rest, self.bound);
            print(record, Some(&rest[..cut]), &mut self.out)?;
            done += cut;
        }
        merged.drain(..done);
        Ok(())
    }

    /// Prints what is left of the open value.
    fn end_value(&mut self) -> io::Result<()> {
        match self.open.take() {
            Some((record, merged)) => print(&record, Some(&merged), &mut self.out),
            None => Ok(()),
        }
    }
}

/// Whether `event` continues the value of `open` (its record without the data): same name,
/// same fields.
fn continues<E: Event + ?Sized>(open: &Record, event: &E) -> bool {
    if open.event != event.name() {
        return false;
    }
    let mut i = 0;
    let mut same = true;
    event.fields(&mut |name, value| {
        same &= open
            .fields
            .get(i)
            .is_some_and(|(n, v)| *n == name && equal(v, value));
        i += 1;
    });
    same && i == open.fields.len()
}

fn equal(owned: &OwnedValue, value: Value<'_>) -> bool {
    match (owned, value) {
        (OwnedValue::U64(a), Value::U64(b)) => *a == b,
        (OwnedValue::Bool(a), Value::Bool(b)) => *a == b,
        (OwnedValue::Bytes(a), Value::Bytes(b)) => a.as_slice() == b,
        (OwnedValue::Str(a), Value::Str(b)) => a == b,
        (OwnedValue::Null, Value::Null) => true,
        _ => false,
    }
}

/// Where to cut `data` (longer than `bound`, which is at least 4): at `bound`, or up to 3
/// bytes before it so as not to split a UTF-8 character (when the bytes there are a
/// character's continuation bytes).
fn cut_at(data: &[u8], bound: usize) -> usize {
    let continuation = |b: u8| b & 0xC0 == 0x80;
    (bound - 3..=bound)
        .rev()
        .find(|&at| !continuation(data[at]))
        .unwrap_or(bound)
}

/// Prints `record`, with `data` as its last field `data` when given (a data value's piece).
fn print(record: &Record, data: Option<&[u8]>, out: &mut impl Write) -> io::Result<()> {
    serde_json::to_writer(&mut *out, &Printed { record, data })?;
    writeln!(out)
}

struct Printed<'a> {
    record: &'a Record,
    data: Option<&'a [u8]>,
}

impl Serialize for Printed<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Some(data) = self.data else {
            return self.record.serialize(s);
        };
        let mut map = s.serialize_map(Some(self.record.fields.len() + 2))?;
        map.serialize_entry("event", self.record.event)?;
        for (name, value) in &self.record.fields {
            map.serialize_entry(name, value)?;
        }
        map.serialize_entry("data", &BytesJson(data))?;
        map.end()
    }
}

struct Events<'a> {
    path: &'a OsStr,
    chunk: Option<usize>,
}

impl WithParser for Events<'_> {
    type Output = io::Result<bool>;

    fn run<P: PushParser>(self, mut parser: P) -> Self::Output {
        let stdout = io::stdout();
        let mut merger = Merger::new(BufWriter::new(stdout.lock()), MAX_RECORD_DATA);
        let mut failure = Ok(());
        let mut input = Input::open(self.path)?;
        'read: while let Some(read) = input.next_read()? {
            for piece in input::pieces(read, self.chunk) {
                let pushed = parser.push(piece, &mut |e| {
                    if failure.is_ok() {
                        failure = merger.event(&e);
                    }
                });
                std::mem::replace(&mut failure, Ok(()))?;
                if pushed.is_err() {
                    break 'read;
                }
            }
            // What a read confirmed is printed before the next read waits for more input.
            merger.out.flush()?;
        }
        let outcome = erase_kind(parser.finish(&mut |e| {
            if failure.is_ok() {
                failure = merger.event(&e);
            }
        }));
        failure?;
        merger.end_value()?;
        let end = EndRecord {
            event: "end",
            verdict: outcome.verdict.as_str(),
            consumed: outcome.consumed,
            confirmed: outcome.confirmed,
            unclosed: outcome.verdict.unclosed().map(UnclosedReport::of),
            error: outcome.verdict.error().map(|e| ErrorReport {
                offset: e.offset,
                byte: e.byte,
                kind: e.kind,
            }),
        };
        serde_json::to_writer(&mut merger.out, &end)?;
        writeln!(merger.out)?;
        merger.out.flush()?;
        Ok(matches!(outcome.verdict, Verdict::Complete))
    }
}

pub fn run(args: Args) -> Result<i32, String> {
    let complete = dispatch(
        &args.lang,
        Events {
            path: &args.file,
            chunk: args.chunk,
        },
    )?
    .map_err(|e| format!("{}: {e}", display::path(&args.file)))?;
    Ok(if complete { 0 } else { 1 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use frontier::ctl::{CtlParser, Limits};
    use frontier::udiff::UdiffParser;

    /// The printed records of `input` pushed in pieces of `chunk` bytes, with `bound`.
    fn printed<P: PushParser>(mut parser: P, input: &[u8], chunk: usize, bound: usize) -> String {
        let mut merger = Merger::new(Vec::new(), bound);
        for piece in input.chunks(chunk) {
            let _ = parser.push(piece, &mut |e| merger.event(&e).unwrap());
        }
        let _ = parser.finish(&mut |e| merger.event(&e).unwrap());
        merger.end_value().unwrap();
        String::from_utf8(merger.out).unwrap()
    }

    #[test]
    fn a_long_garbage_run_is_cut_at_fixed_offsets_for_every_chunking() {
        let garbage = "hello world\n".repeat(10);
        let whole = printed(UdiffParser::git(), garbage.as_bytes(), 1000, 50);
        let lines: Vec<&str> = whole.lines().collect();
        // 120 bytes in pieces of 50, 50 and 20, each keeping the span's start.
        assert_eq!(lines.len(), 3, "{whole}");
        assert_eq!(
            lines[0],
            format!(
                r#"{{"event":"garbage","start":0,"data":"{}"}}"#,
                garbage[..50].replace('\n', "\\n")
            )
        );
        assert!(lines[2].contains(r#"ld\nhello world\n"}"#), "{}", lines[2]);
        for chunk in [1, 3, 7, 49, 50, 51, 64] {
            assert_eq!(
                printed(UdiffParser::git(), garbage.as_bytes(), chunk, 50),
                whole,
                "chunk {chunk}"
            );
        }
    }

    #[test]
    fn a_cut_keeps_utf8_characters_whole() {
        // "é" is two bytes: a cut at 5 would fall inside the third one, so it falls at 4.
        let value = "é".repeat(8);
        let stream = format!("call c1 w\narg k {}\n{value}end\n", value.len());
        let out = printed(CtlParser::new(Limits::default()), stream.as_bytes(), 1, 5);
        let pieces: Vec<&str> = out.lines().filter(|l| l.contains("arg_data")).collect();
        assert_eq!(pieces, [r#"{"event":"arg_data","data":"éé"}"#; 4]);
    }

    #[test]
    fn values_split_only_by_chunking_are_printed_as_one_record() {
        let stream = b"call c1 w\narg a 5\nhelloarg b 3\nyouend\n";
        let out = printed(
            CtlParser::new(Limits::default()),
            stream,
            1,
            MAX_RECORD_DATA,
        );
        assert!(
            out.contains(r#"{"event":"arg_data","data":"hello"}"#),
            "{out}"
        );
        assert!(
            out.contains(r#"{"event":"arg_data","data":"you"}"#),
            "{out}"
        );
    }
}
