//! Events as data: the one schema shared by every language.
//!
//! Each language has its own event enum, borrowing its bytes. To print them (`frontier
//! events`), snapshot them (insta) or compare two chunkings, every event describes itself
//! through [`Event`]: a stable name, its fields, whether it carries streamed content
//! ([`Event::data`]) and whether it confirms a unit ([`Event::unit`]). [`Recorder`] turns a
//! stream of events into owned [`Record`]s, merging adjacent data events, which makes the
//! record list independent of how the input was chunked.
//!
//! # JSON schema
//!
//! A record is printed as one JSON object: `"event"` holds the name, then each field by its
//! name. Numbers are numbers; bytes are a string when they are valid UTF-8, otherwise
//! `{"base64":"..."}`. For example `{"event":"arg_start","key":"path","len":10}`.

use base64::Engine as _;
use serde::ser::{Serialize, SerializeMap, Serializer};

/// A field value as an event lends it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    /// An unsigned number (offsets, counts, lengths).
    U64(u64),
    /// A flag.
    Bool(bool),
    /// Raw bytes (paths, content), not necessarily UTF-8.
    Bytes(&'a [u8]),
    /// Text known to be UTF-8 (names, kinds).
    Str(&'a str),
    /// An absent optional value.
    Null,
}

/// What every language's event tells about itself.
pub trait Event {
    /// Stable snake_case name, such as `call_start`.
    fn name(&self) -> &'static str;

    /// Streamed content, for events that carry a piece of a larger value. Adjacent data events
    /// of the same name and fields are one value split by chunking.
    fn data(&self) -> Option<&[u8]> {
        None
    }

    /// The unit this event confirms (for example `calls`), if any.
    fn unit(&self) -> Option<&'static str> {
        None
    }

    /// Hands each field other than [`data`](Self::data) to `visit`, in schema order.
    fn fields(&self, visit: &mut dyn FnMut(&'static str, Value<'_>));
}

/// An owned field value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OwnedValue {
    /// See [`Value::U64`].
    U64(u64),
    /// See [`Value::Bool`].
    Bool(bool),
    /// See [`Value::Bytes`].
    Bytes(Vec<u8>),
    /// See [`Value::Str`].
    Str(String),
    /// See [`Value::Null`].
    Null,
}

impl From<Value<'_>> for OwnedValue {
    fn from(v: Value<'_>) -> Self {
        match v {
            Value::U64(n) => OwnedValue::U64(n),
            Value::Bool(b) => OwnedValue::Bool(b),
            Value::Bytes(b) => OwnedValue::Bytes(b.to_vec()),
            Value::Str(s) => OwnedValue::Str(s.to_owned()),
            Value::Null => OwnedValue::Null,
        }
    }
}

/// Serialises bytes as a JSON string when they are UTF-8, else as `{"base64": ...}`.
pub struct BytesJson<'a>(pub &'a [u8]);

impl Serialize for BytesJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(self.0) {
            Ok(text) => s.serialize_str(text),
            Err(_) => {
                let mut map = s.serialize_map(Some(1))?;
                map.serialize_entry(
                    "base64",
                    &base64::engine::general_purpose::STANDARD.encode(self.0),
                )?;
                map.end()
            }
        }
    }
}

impl Serialize for OwnedValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            OwnedValue::U64(n) => s.serialize_u64(*n),
            OwnedValue::Bool(b) => s.serialize_bool(*b),
            OwnedValue::Bytes(b) => BytesJson(b).serialize(s),
            OwnedValue::Str(t) => s.serialize_str(t),
            OwnedValue::Null => s.serialize_unit(),
        }
    }
}

/// One event, owned, with its data merged across chunk boundaries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The event's name.
    pub event: &'static str,
    /// Its fields, in schema order; a data event's content is the field `data`, last.
    pub fields: Vec<(&'static str, OwnedValue)>,
    /// The unit it confirms, if any.
    pub unit: Option<&'static str>,
    is_data: bool,
}

impl Record {
    /// Copies an event.
    pub fn of<E: Event + ?Sized>(event: &E) -> Record {
        let mut fields = Vec::new();
        event.fields(&mut |name, value| fields.push((name, value.into())));
        let is_data = match event.data() {
            Some(data) => {
                fields.push(("data", OwnedValue::Bytes(data.to_vec())));
                true
            }
            None => false,
        };
        Record {
            event: event.name(),
            fields,
            unit: event.unit(),
            is_data,
        }
    }

    /// The field called `name`.
    pub fn field(&self, name: &str) -> Option<&OwnedValue> {
        self.fields.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// Appends `next` to this record if both are pieces of one data value.
    fn absorb(&mut self, next: &Record) -> bool {
        let same_value = self.is_data
            && next.is_data
            && self.event == next.event
            && self.fields.len() == next.fields.len()
            && self.fields[..self.fields.len() - 1] == next.fields[..next.fields.len() - 1];
        if !same_value {
            return false;
        }
        if let (Some((_, OwnedValue::Bytes(mine))), Some((_, OwnedValue::Bytes(theirs)))) =
            (self.fields.last_mut(), next.fields.last())
        {
            mine.extend_from_slice(theirs);
            true
        } else {
            false
        }
    }
}

impl Serialize for Record {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.fields.len() + 1))?;
        map.serialize_entry("event", self.event)?;
        for (name, value) in &self.fields {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

/// Collects events as [`Record`]s, merging adjacent data events, and counts units.
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    /// The records so far.
    pub records: Vec<Record>,
}

impl Recorder {
    /// Records one event.
    pub fn record<E: Event + ?Sized>(&mut self, event: &E) {
        let next = Record::of(event);
        if let Some(last) = self.records.last_mut() {
            if last.absorb(&next) {
                return;
            }
        }
        self.records.push(next);
    }

    /// How many units of kind `unit` were confirmed.
    pub fn units(&self, unit: &str) -> u64 {
        self.records.iter().filter(|r| r.unit == Some(unit)).count() as u64
    }
}
