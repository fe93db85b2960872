//! Text helpers with CPAT's exact semantics: JavaScript's whitespace set (for "blank" checks and
//! `describeText`), lengths in UTF-16 units, cuts that never split a character, and JSON text
//! with lone surrogate escapes (which `JSON.parse` takes) made readable for serde_json.

use std::borrow::Cow;

/// Whether `c` is whitespace for JavaScript's `trim()` and `\s` (CPAT tests "blank" with them).
/// It differs from Rust's `char::is_whitespace`: U+0085 is not in it, U+FEFF is, and
/// U+001C..U+001F are not.
pub fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0b}' | '\u{0c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// `text.trim()` in JavaScript.
pub fn js_trim(text: &str) -> &str {
    text.trim_matches(is_js_space)
}

/// Whether `text.trim()` is empty in JavaScript.
pub fn is_blank(text: &str) -> bool {
    js_trim(text).is_empty()
}

/// The length of `text` in UTF-16 code units (JavaScript's `length`).
pub fn utf16_len(text: &str) -> usize {
    text.chars().map(char::len_utf16).sum()
}

/// The longest prefix of `text` of at most `units` UTF-16 code units that ends on a character
/// boundary.
// divergence 7: JavaScript's `slice(0, n)` can cut a surrogate pair in two and leave a lone
// surrogate; this cut stops before the character instead.
pub fn head_utf16(text: &str, units: usize) -> &str {
    let mut used = 0;
    for (at, c) in text.char_indices() {
        used += c.len_utf16();
        if used > units {
            return &text[..at];
        }
    }
    text
}

/// CPAT's `describeText(prefix, text)`: whitespace runs collapsed to one space, trimmed, cut at
/// 110 UTF-16 units with `…` when longer; the prefix alone when nothing is left.
pub fn describe_text(prefix: &str, text: &str) -> String {
    let mut flat = String::with_capacity(text.len().min(512));
    let mut pending_space = false;
    for c in js_trim(text).chars() {
        if is_js_space(c) {
            pending_space = true;
            continue;
        }
        if pending_space {
            flat.push(' ');
            pending_space = false;
        }
        flat.push(c);
        // Enough to decide the cut and the ellipsis.
        if flat.len() > 4 * DESCRIPTION_UNITS + 8 {
            break;
        }
    }
    if flat.is_empty() {
        return prefix.to_owned();
    }
    let head = head_utf16(&flat, DESCRIPTION_UNITS);
    let more = utf16_len(&flat) > DESCRIPTION_UNITS;
    format!("{prefix}: {head}{}", if more { "…" } else { "" })
}

/// The UTF-16 length `describe_text` keeps.
pub const DESCRIPTION_UNITS: usize = 110;

/// JSON text with every `\uXXXX` escape of a lone surrogate (half of a pair, with no other
/// half after or before it) written as `\uFFFD`, the replacement character. JavaScript's
/// `JSON.parse` accepts such an escape (a JavaScript string may hold half a pair; CPAT's own
/// cut in UTF-16 units can leave one in a description the model copies back); a Rust string
/// cannot, and serde_json refuses the whole text. Borrowed when there is none, which one
/// `memchr` for a backslash decides for most text.
pub fn lone_surrogates_replaced(json: &str) -> Cow<'_, str> {
    let bytes = json.as_bytes();
    if memchr::memchr(b'\\', bytes).is_none() {
        return Cow::Borrowed(json);
    }
    let hex4 = |at: usize| -> Option<u16> {
        let digits = bytes.get(at..at + 4)?;
        let digits = std::str::from_utf8(digits).ok()?;
        u16::from_str_radix(digits, 16).ok()
    };
    let escape_at = |at: usize| -> Option<u16> {
        (bytes.get(at..at + 2)? == b"\\u")
            .then(|| hex4(at + 2))
            .flatten()
    };
    let mut lone: Vec<usize> = Vec::new();
    let (mut i, mut in_string) = (0, false);
    while i < bytes.len() {
        match bytes[i] {
            b'"' => in_string = !in_string,
            b'\\' if in_string => {
                if let Some(unit) = escape_at(i) {
                    if (0xD800..0xDC00).contains(&unit) {
                        match escape_at(i + 6) {
                            Some(low) if (0xDC00..0xE000).contains(&low) => i += 6,
                            _ => lone.push(i),
                        }
                    } else if (0xDC00..0xE000).contains(&unit) {
                        lone.push(i);
                    }
                    i += 6;
                    continue;
                }
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    if lone.is_empty() {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len());
    let mut from = 0;
    for at in lone {
        out.push_str(&json[from..at]);
        out.push_str("\\uFFFD");
        from = at + 6;
    }
    out.push_str(&json[from..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_uses_javascripts_whitespace() {
        assert_eq!(js_trim("\u{feff} a \u{3000}"), "a");
        assert_eq!(js_trim("\u{1c}a"), "\u{1c}a");
        assert!(is_blank("\u{a0}\u{2028}"));
        assert!(!is_blank("\u{85}"));
    }

    #[test]
    fn descriptions_collapse_and_cut() {
        assert_eq!(
            describe_text("User message", "  hi \n\t there "),
            "User message: hi there"
        );
        assert_eq!(
            describe_text("Restored payload", " \n "),
            "Restored payload"
        );
        let long = "x".repeat(200);
        assert_eq!(
            describe_text("P", &long),
            format!("P: {}…", "x".repeat(110))
        );
        let exact = "y".repeat(110);
        assert_eq!(describe_text("P", &exact), format!("P: {exact}"));
    }

    #[test]
    fn divergence_7_a_cut_never_splits_a_surrogate_pair() {
        // 109 ASCII characters then an emoji: JavaScript's slice(0, 110) keeps half of it.
        let text = format!("{}😀tail", "a".repeat(109));
        let d = describe_text("P", &text);
        assert_eq!(d, format!("P: {}…", "a".repeat(109)));
        assert_eq!(head_utf16("😀😀", 3), "😀");
        assert_eq!(head_utf16("é", 0), "");
    }

    #[test]
    fn lone_surrogate_escapes_become_replacement_characters() {
        let cases = [
            (r#"{"a":"x \ud83d"}"#, r#"{"a":"x \uFFFD"}"#),
            (r#"{"a":"\udE00 y"}"#, r#"{"a":"\uFFFD y"}"#),
            (r#"["\ud83d\ud83d\ude00"]"#, r#"["\uFFFD\ud83d\ude00"]"#),
            (r#"["\ud83d\n"]"#, r#"["\uFFFD\n"]"#),
        ];
        for (text, want) in cases {
            assert_eq!(lone_surrogates_replaced(text), want, "{text}");
            let v: serde_json::Value = serde_json::from_str(want).unwrap();
            assert!(v.to_string().contains('\u{fffd}'), "{v}");
        }
        // Pairs, other escapes, escaped backslashes and text outside strings stay as they are.
        for text in [
            r#"{"a":"\ud83d\ude00"}"#,
            r#"{"a":"\\ud83d"}"#,
            r#"{"a":"\u00e9\"\ud83d\uDE00"}"#,
            r#"{"a":1}"#,
            r#"{"a":"\ud83"}"#,
        ] {
            assert!(
                matches!(lone_surrogates_replaced(text), Cow::Borrowed(_)),
                "{text}"
            );
        }
    }
}
