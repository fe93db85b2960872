//! The `context_update` arguments: `{reason, operations[]}` with CPAT's flat per-op items,
//! normalised into typed [`Operation`]s as CPAT's `parseContextUpdateArgs` does
//! (`cpat_reference.md` §2): a `null` field is a missing one, and each op takes its defaults.
//!
//! Unlike CPAT, a field of the wrong type is never passed on to blow up later or to be
//! iterated per character: the op becomes an [`InvalidField`], which the engine rejects as
//! `invalid_field` (divergence 3). What cannot be an update at all (not JSON, not an object,
//! `operations` not an array, a `null` item, an unknown op) is an
//! [`ArgsError`]: the whole call is refused before any op is tried, as CPAT's throw does.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A normalised update.
#[derive(Clone, Debug, PartialEq)]
pub struct ContextUpdate {
    /// Why (journaled).
    pub reason: String,
    /// The ops in order; an op with a field of the wrong type is an [`InvalidField`].
    pub operations: Vec<Item>,
}

/// One op of an update.
pub type Item = Result<Operation, InvalidField>;

/// An op whose field has the wrong type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidField {
    /// The op.
    pub op: &'static str,
    /// The field.
    pub field: &'static str,
    /// What it must be.
    pub expected: &'static str,
}

/// A summary's description and text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Output {
    /// The summary's description.
    pub description: String,
    /// The summary's text.
    pub content: String,
}

/// What an offloaded block shows instead of its payload.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplaceWith {
    /// The block's new description.
    pub description: String,
    /// The reference's summary (the item's `content`).
    pub summary: String,
    /// How to get the payload back.
    pub retrieval_hint: String,
}

/// A normalised op, in CPAT's `ContextOperation` shape (`types.ts:102-173`), which is also its
/// form in the journal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
#[allow(missing_docs)]
pub enum Operation {
    Compact {
        ids: Vec<String>,
        output: Output,
        preserve: Vec<String>,
        drop: Vec<String>,
    },
    PayloadOffload {
        ids: Vec<String>,
        store: String,
        replace_with: ReplaceWith,
    },
    Restore {
        ids: Vec<String>,
    },
    Merge {
        ids: Vec<String>,
        output: Output,
        resolution: String,
    },
    Fold {
        ids: Vec<String>,
        output: Output,
        scope_label: String,
    },
    Redact {
        ids: Vec<String>,
        drop_fields: Vec<String>,
        /// CPAT's `f.preserve`, with no default: missing is `None`, `null` is `Some(None)`
        /// (journaled as `null`, as `JSON.stringify` writes it); never used.
        #[serde(default, skip_serializing_if = "Option::is_none", with = "nullable")]
        preserve_fields: Option<Option<Vec<String>>>,
    },
    SetVisibility {
        ids: Vec<String>,
        visibility: String,
    },
    Replace {
        id: String,
        content: String,
        /// CPAT's `f.description`, with no default: missing is `None`, `null` is
        /// `Some(None)` (journaled as `null`); used only when it is a non-empty string.
        #[serde(default, skip_serializing_if = "Option::is_none", with = "nullable")]
        description: Option<Option<String>>,
    },
}

impl Operation {
    /// The op's name.
    pub fn name(&self) -> &'static str {
        match self {
            Operation::Compact { .. } => "compact",
            Operation::PayloadOffload { .. } => "payload_offload",
            Operation::Restore { .. } => "restore",
            Operation::Merge { .. } => "merge",
            Operation::Fold { .. } => "fold",
            Operation::Redact { .. } => "redact",
            Operation::SetVisibility { .. } => "set_visibility",
            Operation::Replace { .. } => "replace",
        }
    }

    /// The target ids (`replace`: its one id).
    pub fn ids(&self) -> std::borrow::Cow<'_, [String]> {
        match self {
            Operation::Compact { ids, .. }
            | Operation::PayloadOffload { ids, .. }
            | Operation::Restore { ids }
            | Operation::Merge { ids, .. }
            | Operation::Fold { ids, .. }
            | Operation::Redact { ids, .. }
            | Operation::SetVisibility { ids, .. } => ids.as_slice().into(),
            Operation::Replace { id, .. } => vec![id.clone()].into(),
        }
    }
}

/// The JSON of an item as journaled: the normalised op, or the op and its bad field.
pub fn item_json(item: &Item) -> Value {
    match item {
        Ok(op) => serde_json::to_value(op).expect("an op serialises"),
        Err(bad) => serde_json::json!({"op": bad.op, "invalid_field": bad.field}),
    }
}

/// Why arguments are not an update at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgsError {
    /// Not JSON.
    Json {
        /// 1-based line of the error.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// JSON, but not an object.
    NotObject,
    /// `reason` is neither a string nor missing.
    Reason,
    /// `operations` is neither an array nor missing.
    Operations,
    /// A `null` item (any other item that is not an object has no `op`: [`UnknownOp`]).
    ///
    /// [`UnknownOp`]: ArgsError::UnknownOp
    Item {
        /// Its index.
        index: usize,
    },
    /// An item whose `op` is not one of the eight (CPAT's message).
    UnknownOp {
        /// Its index.
        index: usize,
        /// The op as JavaScript would print it.
        op: String,
    },
}

impl ArgsError {
    /// A stable name for the kind of error.
    pub fn kind(&self) -> &'static str {
        match self {
            ArgsError::Json { .. } => "not_json",
            ArgsError::NotObject => "not_object",
            ArgsError::Reason => "reason_type",
            ArgsError::Operations => "operations_type",
            ArgsError::Item { .. } => "item_type",
            ArgsError::UnknownOp { .. } => "unknown_op",
        }
    }
}

impl std::fmt::Display for ArgsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArgsError::Json { message, .. } => write!(f, "arguments are not JSON: {message}"),
            ArgsError::NotObject => f.write_str("arguments must be a JSON object"),
            ArgsError::Reason => f.write_str("\"reason\" must be a string"),
            ArgsError::Operations => f.write_str("\"operations\" must be an array"),
            ArgsError::Item { index } => write!(f, "operation {index} is not an object"),
            ArgsError::UnknownOp { op, .. } => write!(f, "unknown op \"{op}\""),
        }
    }
}

impl std::error::Error for ArgsError {}

/// Parses the arguments as the model sent them (JSON text).
pub fn parse(text: &str) -> Result<ContextUpdate, ArgsError> {
    let text = super::text::lone_surrogates_replaced(text);
    let raw: Value = serde_json::from_str(&text).map_err(|e| ArgsError::Json {
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    normalise(&raw)
}

/// Normalises parsed arguments.
pub fn normalise(raw: &Value) -> Result<ContextUpdate, ArgsError> {
    // divergence 8: CPAT throws on `null` and treats any other non-object as `operations: []`.
    let raw = raw.as_object().ok_or(ArgsError::NotObject)?;
    let reason = match present(raw, "reason") {
        None => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(ArgsError::Reason),
    };
    let items = match present(raw, "operations") {
        None => &[][..],
        Some(Value::Array(items)) => items.as_slice(),
        Some(_) => return Err(ArgsError::Operations),
    };
    let mut operations = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        // CPAT reads `f.ids` then `f.op` of each item: a `null` item throws (a TypeError),
        // and any other value that is not an object (a string, a number, an array) has no
        // `op`, so it is CPAT's `unknown op "undefined"`.
        let f = match item {
            Value::Object(f) => f,
            Value::Null => return Err(ArgsError::Item { index }),
            _ => {
                return Err(ArgsError::UnknownOp {
                    index,
                    op: js_string(None),
                })
            }
        };
        // The raw `op`, `null` included: CPAT's `${f.op}` prints `null` as "null".
        let op = f.get("op");
        let name = op.and_then(Value::as_str).and_then(op_name);
        let Some(name) = name else {
            return Err(ArgsError::UnknownOp {
                index,
                op: js_string(op),
            });
        };
        operations.push(normalise_item(name, f));
    }
    Ok(ContextUpdate { reason, operations })
}

const OPS: [&str; 8] = [
    "compact",
    "payload_offload",
    "restore",
    "merge",
    "fold",
    "redact",
    "set_visibility",
    "replace",
];

fn op_name(s: &str) -> Option<&'static str> {
    OPS.iter().copied().find(|&n| n == s)
}

/// A field, `null` counting as missing (CPAT's `??`).
fn present<'a>(f: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    f.get(name).filter(|v| !v.is_null())
}

/// How JavaScript's template literal prints a value.
fn js_string(v: Option<&Value>) -> String {
    match v {
        None => "undefined".into(),
        Some(Value::Null) => "null".into(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|e| match e {
                Value::Null => String::new(),
                e => js_string(Some(e)),
            })
            .collect::<Vec<_>>()
            .join(","),
        Some(Value::Object(_)) => "[object Object]".into(),
        Some(Value::Number(n)) => js_number(n.as_f64().unwrap_or(f64::NAN)),
        Some(other) => other.to_string(),
    }
}

/// JavaScript's `Number.prototype.toString()` (ECMA-262 `Number::toString`, radix 10): the
/// shortest digits that round-trip, in plain notation from 1e-6 up to 1e21 and in exponent
/// notation outside it; `-0` is `0`. A JSON number is a double in JavaScript, so an integer
/// beyond 2^53 prints as that double does (`12345678901234567890` is `12345678901234567000`).
fn js_number(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x == 0.0 {
        return "0".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if x < 0.0 {
        return format!("-{}", js_number(-x));
    }
    // `{:e}` is Rust's shortest round-trip form: `d[.ddd]e[-]N`.
    let sci = format!("{x:e}");
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = digits.len() as i64;
    // x = 0.digits × 10^n
    let n = exponent.parse::<i64>().unwrap_or(0) + 1;
    if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let sign = if n - 1 < 0 { '-' } else { '+' };
        let e = (n - 1).abs();
        match digits.split_at(1) {
            (first, "") => format!("{first}e{sign}{e}"),
            (first, rest) => format!("{first}.{rest}e{sign}{e}"),
        }
    }
}

/// A field that may be missing (`None`, not serialised), `null` (`Some(None)`) or a value.
mod nullable {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<T: Serialize, S: Serializer>(
        v: &Option<Option<T>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match v {
            Some(inner) => inner.serialize(s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Option<T>>, D::Error> {
        Option::<T>::deserialize(d).map(Some)
    }
}

/// Reads the typed fields of one op.
struct Fields<'a> {
    op: &'static str,
    f: &'a Map<String, Value>,
}

impl Fields<'_> {
    fn bad(&self, field: &'static str, expected: &'static str) -> InvalidField {
        InvalidField {
            op: self.op,
            field,
            expected,
        }
    }

    // divergence 3: CPAT passes a value of any type on (`content: 42` throws in `trim()`,
    // `ids: "t"` is iterated per character); here it is the op's `invalid_field`.
    fn text(&self, field: &'static str) -> Result<Option<String>, InvalidField> {
        match present(self.f, field) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(self.bad(field, "a string")),
        }
    }

    fn text_or_empty(&self, field: &'static str) -> Result<String, InvalidField> {
        Ok(self.text(field)?.unwrap_or_default())
    }

    fn list(&self, field: &'static str) -> Result<Option<Vec<String>>, InvalidField> {
        match present(self.f, field) {
            None => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .map(Some)
                .ok_or_else(|| self.bad(field, "an array of strings")),
            Some(_) => Err(self.bad(field, "an array of strings")),
        }
    }

    /// A field CPAT copies without `??`: `null` stays `null` (`Some(None)`), missing is `None`.
    fn nullable<T>(
        &self,
        read: impl FnOnce(&Self) -> Result<Option<T>, InvalidField>,
        field: &str,
    ) -> Result<Option<Option<T>>, InvalidField> {
        match self.f.get(field) {
            Some(Value::Null) => Ok(Some(None)),
            _ => Ok(read(self)?.map(Some)),
        }
    }

    fn list_or_empty(&self, field: &'static str) -> Result<Vec<String>, InvalidField> {
        Ok(self.list(field)?.unwrap_or_default())
    }

    fn output(&self) -> Result<Output, InvalidField> {
        Ok(Output {
            description: self.text_or_empty("description")?,
            content: self.text_or_empty("content")?,
        })
    }
}

fn normalise_item(op: &'static str, f: &Map<String, Value>) -> Item {
    let x = Fields { op, f };
    let ids = x.list_or_empty("ids")?;
    Ok(match op {
        "compact" => Operation::Compact {
            ids,
            output: x.output()?,
            preserve: x.list_or_empty("preserve")?,
            drop: x.list_or_empty("drop")?,
        },
        "payload_offload" => Operation::PayloadOffload {
            ids,
            store: "file".into(),
            replace_with: ReplaceWith {
                description: x.text_or_empty("description")?,
                summary: x.text_or_empty("content")?,
                retrieval_hint: x.text_or_empty("retrieval_hint")?,
            },
        },
        "restore" => Operation::Restore { ids },
        "merge" => Operation::Merge {
            ids,
            output: x.output()?,
            resolution: x.text("resolution")?.unwrap_or_else(|| "update".into()),
        },
        "fold" => Operation::Fold {
            ids,
            output: x.output()?,
            scope_label: x.text_or_empty("scope_label")?,
        },
        "redact" => Operation::Redact {
            ids,
            drop_fields: x.list_or_empty("drop")?,
            preserve_fields: x.nullable(|x| x.list("preserve"), "preserve")?,
        },
        "set_visibility" => Operation::SetVisibility {
            ids,
            visibility: x.text("visibility")?.unwrap_or_else(|| "archived".into()),
        },
        "replace" => Operation::Replace {
            id: ids.into_iter().next().unwrap_or_default(),
            content: x.text_or_empty("content")?,
            description: x.nullable(|x| x.text("description"), "description")?,
        },
        _ => unreachable!("op names come from OPS"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_surrogate_escape_is_read_as_a_replacement_character() {
        let update = parse(r#"{"reason":"cut \ud83d","operations":[]}"#).unwrap();
        assert_eq!(update.reason, "cut \u{fffd}");
        assert!(parse(r#"{"reason":"r","operations":[],"x":1e400}"#).is_err());
    }

    #[test]
    fn unknown_ops_print_as_javascript_would() {
        let e = parse(r#"{"operations":[{"op":"clear","ids":[]}]}"#).unwrap_err();
        assert_eq!(e.to_string(), "unknown op \"clear\"");
        let e = parse(r#"{"operations":[{"ids":[]}]}"#).unwrap_err();
        assert_eq!(e.to_string(), "unknown op \"undefined\"");
        // `null` is not a missing op here: `${null}` is "null".
        let e = parse(r#"{"operations":[{"op":null,"ids":[]}]}"#).unwrap_err();
        assert_eq!(e.to_string(), "unknown op \"null\"");
        let e = parse(r#"{"operations":[{"op":[1,null,"x"]}]}"#).unwrap_err();
        assert_eq!(e.to_string(), "unknown op \"1,,x\"");
        // Numbers as JavaScript's `${n}` writes them (each checked against node's output).
        for (json, js) in [
            ("1.0", "1"),
            ("-0", "0"),
            ("1e2", "100"),
            ("12345678901234567890", "12345678901234567000"),
            ("1e21", "1e+21"),
            ("123456789012345678901234", "1.2345678901234569e+23"),
            ("0.000001", "0.000001"),
            ("0.0000001", "1e-7"),
            ("1.5e-10", "1.5e-10"),
            ("-2.5", "-2.5"),
            ("0.1", "0.1"),
            ("123.456", "123.456"),
            ("1e300", "1e+300"),
            ("[1.0,2]", "1,2"),
        ] {
            let e = parse(&format!(r#"{{"operations":[{{"op":{json}}}]}}"#)).unwrap_err();
            assert_eq!(e.to_string(), format!("unknown op \"{js}\""), "{json}");
        }
    }
}
