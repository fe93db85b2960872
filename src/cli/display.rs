//! How the CLI shows names and messages to people: file names lossily (they need not be
//! UTF-8), control characters escaped (a NUL or an escape sequence in a file name or a patch
//! path must not reach the terminal raw), counts with the right number.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::fmt::Write as _;

/// `text` with every control character written as an escape (`\n`, `\t`, `\r`, `\0`, else
/// `\x1b` or `\u{85}`); other characters as they are.
pub fn escaped(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            c if (c as u32) < 0x80 && c.is_control() => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A file name for display: lossy UTF-8, control characters escaped.
pub fn path(name: &OsStr) -> String {
    escaped(&name.to_string_lossy()).into_owned()
}

/// `"1 call"`, `"2 calls"`: `n` and the unit, whose name is its plural (`calls`, `files`,
/// `chunks`, `hunks`, `bytes`: every unit name is a plural in `s`).
pub fn count(n: u64, plural: &str) -> String {
    match plural.strip_suffix('s') {
        Some(one) if n == 1 => format!("1 {one}"),
        _ => format!("{n} {plural}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_the_rest_kept() {
        assert_eq!(escaped("a.txt"), "a.txt");
        assert_eq!(
            escaped("a\0b\nc\x1b[31m\u{85}é"),
            "a\\0b\\nc\\x1b[31m\\u{85}é"
        );
    }

    #[test]
    fn counts_agree_in_number() {
        assert_eq!(count(1, "calls"), "1 call");
        assert_eq!(count(0, "calls"), "0 calls");
        assert_eq!(count(2, "hunks"), "2 hunks");
        assert_eq!(count(1, "bytes"), "1 byte");
    }

    #[cfg(unix)]
    #[test]
    fn a_file_name_that_is_not_utf8_is_shown_lossily() {
        use std::os::unix::ffi::OsStrExt;
        assert_eq!(path(OsStr::from_bytes(b"a\xffb\x01")), "a\u{fffd}b\\x01");
    }
}
