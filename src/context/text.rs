//! Text helpers with CPAT's exact semantics: JavaScript's whitespace set (for "blank" checks and
//! `describeText`), lengths in UTF-16 units, and cuts that never split a character.

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
}
