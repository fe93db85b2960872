//! Removing members from a JSON object given as text, for `redact`, without reading it into
//! values and writing it back: the other members keep their order and the exact text of their
//! numbers, the whitespace between tokens goes, and strings are written as `JSON.stringify`
//! writes them (escapes decoded, then only `"`, `\\` and control characters escaped), so that
//! apart from divergence 7 the text is CPAT's.
// divergence 7: CPAT re-serialises with JSON.stringify, which moves integer-like keys first
// and rewrites numbers (`1e3` → `1000`, `12345678901234567890` → `12345678901234567000`).

use std::fmt::Write;

/// Why the text cannot be redacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotAnObject {
    /// It does not parse.
    NotJson,
    /// It parses, but is not an object.
    NotObject,
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn skip_ws(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && is_ws(s[i]) {
        i += 1;
    }
    i
}

/// The end of the string starting at `i` (a `"`), past its closing quote.
fn string_end(s: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < s.len() {
        match s[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// The end of the (valid) value starting at `i`.
fn value_end(s: &[u8], mut i: usize) -> usize {
    match s[i] {
        b'"' => string_end(s, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            while i < s.len() {
                match s[i] {
                    b'"' => {
                        i = string_end(s, i);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return i + 1;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            i
        }
        _ => {
            while i < s.len() && !matches!(s[i], b',' | b'}' | b']') && !is_ws(s[i]) {
                i += 1;
            }
            i
        }
    }
}

/// Appends the (valid) JSON string `raw` as `JSON.stringify` writes its value: escapes
/// decoded, then `"`, `\\`, and the control characters escaped (`\b \t \n \f \r`, the others
/// as `\u00xx`); everything else, `/` and U+2028 included, as itself.
fn push_js_string(out: &mut String, raw: &str) {
    if !raw.contains('\\') {
        out.push_str(raw);
        return;
    }
    match serde_json::from_str::<String>(raw) {
        Ok(text) => push_js_text(out, &text),
        Err(_) => out.push_str(raw),
    }
}

/// Appends `text` as `JSON.stringify` writes a string ([`push_js_string`]'s escapes).
fn push_js_text(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends `raw` without the whitespace between its tokens, its strings as
/// [`push_js_string`] writes them.
fn push_compact(out: &mut String, raw: &str) {
    let s = raw.as_bytes();
    let mut i = 0;
    let mut start = 0;
    while i < s.len() {
        if s[i] == b'"' {
            out.push_str(&raw[start..i]);
            let end = string_end(s, i);
            push_js_string(out, &raw[i..end]);
            i = end;
            start = i;
        } else if is_ws(s[i]) {
            out.push_str(&raw[start..i]);
            i = skip_ws(s, i);
            start = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&raw[start..]);
}

/// `text` without the members named in `drop`, compact.
pub fn remove_members(text: &str, drop: &[String]) -> Result<String, NotAnObject> {
    serde_json::from_str::<serde::de::IgnoredAny>(text).map_err(|_| NotAnObject::NotJson)?;
    let s = text.as_bytes();
    let mut i = skip_ws(s, 0);
    if s.get(i) != Some(&b'{') {
        return Err(NotAnObject::NotObject);
    }
    // (decoded key, raw value); a repeated key keeps its first place, its last value.
    let mut members: Vec<(String, &str)> = Vec::new();
    i = skip_ws(s, i + 1);
    while s.get(i) == Some(&b'"') {
        let key_end = string_end(s, i);
        let key: String =
            serde_json::from_str(&text[i..key_end]).map_err(|_| NotAnObject::NotJson)?;
        i = skip_ws(s, key_end) + 1; // the colon
        i = skip_ws(s, i);
        let end = value_end(s, i);
        let raw_value = &text[i..end];
        match members.iter_mut().find(|m| m.0 == key) {
            Some(m) => m.1 = raw_value,
            None => members.push((key, raw_value)),
        }
        i = skip_ws(s, end);
        if s.get(i) == Some(&b',') {
            i = skip_ws(s, i + 1);
        }
    }
    let mut out = String::with_capacity(text.len());
    out.push('{');
    let mut first = true;
    for (key, raw_value) in &members {
        if drop.iter().any(|d| d == key) {
            continue;
        }
        if !first {
            out.push(',');
        }
        first = false;
        push_js_text(&mut out, key);
        out.push(':');
        push_compact(&mut out, raw_value);
    }
    out.push('}');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drop(text: &str, fields: &[&str]) -> Result<String, NotAnObject> {
        let fields: Vec<String> = fields.iter().map(|s| s.to_string()).collect();
        remove_members(text, &fields)
    }

    #[test]
    fn divergence_7_redact_keeps_key_order_and_number_text() {
        let text = r#"{ "b": 1.50, "2": 1e3, "secret": "x", "1": 12345678901234567890, "n": {"a" : [1, 2]} }"#;
        assert_eq!(
            drop(text, &["secret"]).unwrap(),
            r#"{"b":1.50,"2":1e3,"1":12345678901234567890,"n":{"a":[1,2]}}"#
        );
    }

    #[test]
    fn strings_keep_their_spaces_and_are_written_as_json_stringify_writes_them() {
        assert_eq!(
            drop(r#"{"a": "x y \" }", "b": "\u00e9"}"#, &["zz"]).unwrap(),
            r#"{"a":"x y \" }","b":"é"}"#
        );
        assert_eq!(
            drop(
                r#"{"k\u0065y": ["\/", "\u0001\u001F", "\t\b\f", "\u2028", "\\\""]}"#,
                &[]
            )
            .unwrap(),
            "{\"key\":[\"/\",\"\\u0001\\u001f\",\"\\t\\b\\f\",\"\u{2028}\",\"\\\\\\\"\"]}"
        );
        assert_eq!(
            drop(r#"{"a":1,"a":2,"b":3}"#, &[]).unwrap(),
            r#"{"a":2,"b":3}"#
        );
        assert_eq!(drop("{}", &["a"]).unwrap(), "{}");
    }

    #[test]
    fn not_json_and_not_objects() {
        assert_eq!(drop("{nope", &["a"]), Err(NotAnObject::NotJson));
        assert_eq!(drop("[1,2]", &["0"]), Err(NotAnObject::NotObject));
        assert_eq!(drop("null", &["a"]), Err(NotAnObject::NotObject));
    }
}
