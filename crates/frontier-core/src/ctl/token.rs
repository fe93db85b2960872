//! The tokens of a header line (`id`, `name`, `key`), as the parser hands them over.
//!
//! The parser has already checked every byte of a token against the grammar (ALPHA, DIGIT,
//! `_`, `.`, `:`, `-`), so a token is ASCII. It is passed on as the bytes it borrows from the
//! stream: comparing it with a tool name needs no conversion, and a consumer that wants text
//! calls [`Token::as_str`]. (Without `unsafe` code, making a `&str` means validating UTF-8
//! again; on the header-heavy benchmark that was a fifth of the parser's work, paid whether or
//! not the consumer looked at the token.)

use std::fmt;

/// A token of a CTL header line, borrowed from the stream: one or more token characters.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Token<'a>(&'a [u8]);

impl<'a> Token<'a> {
    /// Wraps bytes the grammar accepted as a token.
    pub(crate) fn new(bytes: &'a [u8]) -> Token<'a> {
        debug_assert!(bytes.iter().all(|&b| super::TOKEN_CHARS.contains(b)));
        Token(bytes)
    }

    /// The token's bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.0
    }

    /// The token as text. Tokens are ASCII, so this never loses anything.
    pub fn as_str(&self) -> &'a str {
        std::str::from_utf8(self.0).unwrap_or_default()
    }
}

impl PartialEq<str> for Token<'_> {
    fn eq(&self, other: &str) -> bool {
        self.0 == other.as_bytes()
    }
}

impl PartialEq<&str> for Token<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.0 == other.as_bytes()
    }
}

impl fmt::Debug for Token<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Token<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_compares_and_prints_as_its_text() {
        let token = Token::new(b"read_file");
        assert!(token == "read_file");
        assert!(token != "read");
        assert_eq!(token.as_str(), "read_file");
        assert_eq!(format!("{token} {token:?}"), "read_file \"read_file\"");
    }
}
