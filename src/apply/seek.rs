//! Locating a sequence of lines in a file: Codex's four passes, over an index of the file's
//! lines so that a search costs about the number of places the rarest line of the pattern
//! occurs, not the size of the file times the size of the pattern.
//!
//! The passes compare lines ever more loosely: exactly; with trailing whitespace ignored; with
//! both ends trimmed; trimmed and with Unicode dashes, quotes and odd spaces folded to ASCII.
//! For each pass the index holds a hash of every line's key and, per hash, the sorted list of
//! lines that have it. A search takes the pattern line whose hash is rarest, tries each place it
//! occurs, and verifies the keys; when that line is common enough that this could cost more than
//! a linear scan, it runs Knuth-Morris-Pratt over the hashes instead. Either way the cost of one
//! search is bounded by the size of the range searched plus the pattern.

use std::borrow::Cow;
use std::collections::HashMap;

/// One of the four comparisons, strictest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// Byte for byte.
    Exact,
    /// Trailing whitespace ignored.
    TrimEnd,
    /// Leading and trailing whitespace ignored.
    Trim,
    /// Trimmed, and Unicode dashes, quotes and odd spaces folded to ASCII.
    Fold,
}

impl Pass {
    /// The passes in the order they are tried.
    pub const ALL: [Pass; 4] = [Pass::Exact, Pass::TrimEnd, Pass::Trim, Pass::Fold];

    fn slot(self) -> usize {
        self as usize
    }

    /// The form of `line` this pass compares.
    pub fn key(self, line: &str) -> Cow<'_, str> {
        match self {
            Pass::Exact => Cow::Borrowed(line),
            Pass::TrimEnd => Cow::Borrowed(line.trim_end()),
            Pass::Trim => Cow::Borrowed(line.trim()),
            Pass::Fold => {
                let t = line.trim();
                if t.is_ascii() || !t.chars().any(|c| fold(c) != c) {
                    Cow::Borrowed(t)
                } else {
                    Cow::Owned(t.chars().map(fold).collect())
                }
            }
        }
    }
}

/// The ASCII character a typographic one stands for (the characters Codex folds).
pub fn fold(c: char) -> char {
    match c {
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{2018}'..='\u{201B}' => '\'',
        '\u{201C}'..='\u{201F}' => '"',
        '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        other => other,
    }
}

fn hash(s: &str) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let bytes = s.as_bytes();
    let mut h = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        h = (h.rotate_left(5) ^ w).wrapping_mul(K);
    }
    let mut last = 0u64;
    for (i, &b) in chunks.remainder().iter().enumerate() {
        last |= (b as u64) << (8 * i);
    }
    (h.rotate_left(5) ^ last).wrapping_mul(K)
}

/// The keys of the index are already hashes: hash them no further.
#[derive(Clone, Copy, Debug, Default)]
struct Prehashed(u64);

impl std::hash::Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | b as u64;
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type Places = HashMap<u64, Vec<u32>, std::hash::BuildHasherDefault<Prehashed>>;

#[derive(Debug, Default)]
struct PassIndex {
    hashes: Vec<u64>,
    places: Places,
}

/// A file's text split into lines, with a lazily built index per pass.
#[derive(Debug)]
pub struct Lines {
    text: String,
    /// Each line as `(start, content_end, end)`: content without its line ending; `end` past it.
    spans: Vec<(usize, usize, usize)>,
    index: [Option<PassIndex>; 4],
}

impl Lines {
    /// Splits `text` at LF. With `strip_cr`, a CR before the LF is part of the line ending, not
    /// of the content. A final LF does not start another line.
    pub fn new(text: String, strip_cr: bool) -> Lines {
        let mut spans = Vec::new();
        let bytes = text.as_bytes();
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', bytes) {
            let content_end = if strip_cr && nl > start && bytes[nl - 1] == b'\r' {
                nl - 1
            } else {
                nl
            };
            spans.push((start, content_end, nl + 1));
            start = nl + 1;
        }
        if start < bytes.len() {
            spans.push((start, bytes.len(), bytes.len()));
        }
        Lines {
            text,
            spans,
            index: [None, None, None, None],
        }
    }

    /// The number of lines.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether there are no lines.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The whole text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Line `i` without its line ending.
    pub fn line(&self, i: usize) -> &str {
        let (s, e, _) = self.spans[i];
        &self.text[s..e]
    }

    /// Line `i` with its line ending, as it is in the file.
    pub fn raw(&self, i: usize) -> &str {
        let (s, _, e) = self.spans[i];
        &self.text[s..e]
    }

    /// The line ending of line `i` (`""` for a last line without one).
    pub fn ending(&self, i: usize) -> &str {
        let (_, c, e) = self.spans[i];
        &self.text[c..e]
    }

    /// Whether every line ending of the text is CRLF (and there is at least one).
    pub fn uses_crlf(&self) -> bool {
        let mut any = false;
        for i in 0..self.len() {
            match self.ending(i) {
                "\r\n" => any = true,
                "\n" => return false,
                _ => {}
            }
        }
        any
    }

    fn pass_index(&mut self, pass: Pass) -> &PassIndex {
        if self.index[pass.slot()].is_none() {
            let mut idx = PassIndex {
                hashes: Vec::with_capacity(self.len()),
                places: Places::default(),
            };
            for i in 0..self.len() {
                let h = hash(&pass.key(self.line(i)));
                idx.hashes.push(h);
                idx.places.entry(h).or_default().push(i as u32);
            }
            self.index[pass.slot()] = Some(idx);
        }
        self.index[pass.slot()].as_ref().expect("just built")
    }

    /// The places, in ascending order, where `pattern` matches at `pass` starting at or after
    /// `from` (only at the very end of the file when `at_end`), at most `max` of them. An empty
    /// pattern matches nowhere.
    pub fn find(
        &mut self,
        pass: Pass,
        pattern: &[&str],
        from: usize,
        at_end: bool,
        max: usize,
    ) -> Vec<usize> {
        let m = pattern.len();
        let n = self.len();
        if m == 0 || m > n || max == 0 {
            return Vec::new();
        }
        let last = n - m;
        let from = if at_end { last } else { from };
        if from > last {
            return Vec::new();
        }
        let keys: Vec<Cow<'_, str>> = pattern.iter().map(|p| pass.key(p)).collect();
        let pat_hashes: Vec<u64> = keys.iter().map(|k| hash(k)).collect();
        self.pass_index(pass);
        let idx = self.index[pass.slot()].as_ref().expect("built");
        let verify = |start: usize| -> bool {
            idx.hashes[start..start + m] == pat_hashes[..]
                && (0..m).all(|k| pass.key(self.line(start + k)) == keys[k])
        };
        let mut found = Vec::new();
        if at_end {
            if verify(last) {
                found.push(last);
            }
            return found;
        }
        // The rarest line of the pattern.
        let mut rarest: Option<(usize, &Vec<u32>)> = None;
        for (k, h) in pat_hashes.iter().enumerate() {
            match idx.places.get(h) {
                None => return found,
                Some(places) => {
                    if rarest.is_none_or(|(_, r)| places.len() < r.len()) {
                        rarest = Some((k, places));
                    }
                }
            }
        }
        let (k, places) = rarest.expect("pattern is not empty");
        let span = last + 1 - from;
        if places.len().saturating_mul(m) <= 2 * (span + m) {
            let first = places.partition_point(|&p| (p as usize) < from + k);
            for &p in &places[first..] {
                let start = p as usize - k;
                if start > last {
                    break;
                }
                if verify(start) {
                    found.push(start);
                    if found.len() == max {
                        break;
                    }
                }
            }
        } else {
            kmp(&idx.hashes[from..], &pat_hashes, |at| {
                let start = from + at;
                if verify(start) {
                    found.push(start);
                }
                found.len() < max
            });
        }
        found
    }
}

/// Calls `hit` with each place `pattern` occurs in `text`, in order, while it returns true.
fn kmp(text: &[u64], pattern: &[u64], mut hit: impl FnMut(usize) -> bool) {
    let m = pattern.len();
    let mut fail = vec![0usize; m];
    let mut k = 0;
    for i in 1..m {
        while k > 0 && pattern[i] != pattern[k] {
            k = fail[k - 1];
        }
        if pattern[i] == pattern[k] {
            k += 1;
        }
        fail[i] = k;
    }
    let mut q = 0;
    for (i, &t) in text.iter().enumerate() {
        while q > 0 && t != pattern[q] {
            q = fail[q - 1];
        }
        if t == pattern[q] {
            q += 1;
        }
        if q == m {
            if !hit(i + 1 - m) {
                return;
            }
            q = fail[q - 1];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The obvious search, for comparison.
    fn naive(lines: &[&str], pattern: &[&str], pass: Pass, from: usize) -> Vec<usize> {
        if pattern.is_empty() || pattern.len() > lines.len() {
            return Vec::new();
        }
        (from..=lines.len() - pattern.len())
            .filter(|&i| (0..pattern.len()).all(|k| pass.key(lines[i + k]) == pass.key(pattern[k])))
            .collect()
    }

    #[test]
    fn passes_loosen_in_order() {
        let mut l = Lines::new(
            "foo   \n  bar\n\u{201C}q\u{201D} \u{2014} x\n".into(),
            false,
        );
        assert_eq!(
            l.find(Pass::Exact, &["foo"], 0, false, 9),
            Vec::<usize>::new()
        );
        assert_eq!(l.find(Pass::TrimEnd, &["foo"], 0, false, 9), vec![0]);
        assert_eq!(
            l.find(Pass::TrimEnd, &["bar"], 0, false, 9),
            Vec::<usize>::new()
        );
        assert_eq!(l.find(Pass::Trim, &["foo", "bar"], 0, false, 9), vec![0]);
        assert_eq!(
            l.find(Pass::Trim, &["\"q\" - x"], 0, false, 9),
            Vec::<usize>::new()
        );
        assert_eq!(l.find(Pass::Fold, &["\"q\" - x"], 0, false, 9), vec![2]);
    }

    #[test]
    fn crlf_is_an_ending_when_asked() {
        let mut l = Lines::new("a\r\nb\r\n".into(), true);
        assert!(l.uses_crlf());
        assert_eq!(l.find(Pass::Exact, &["a", "b"], 0, false, 9), vec![0]);
        let mut raw = Lines::new("a\r\nb\r\n".into(), false);
        assert_eq!(
            raw.find(Pass::Exact, &["a", "b"], 0, false, 9),
            Vec::<usize>::new()
        );
        assert_eq!(raw.find(Pass::TrimEnd, &["a", "b"], 0, false, 9), vec![0]);
    }

    #[test]
    fn repetitive_files_use_kmp_and_agree() {
        let text = "x\n".repeat(1000) + "y\n";
        let mut l = Lines::new(text, false);
        assert_eq!(
            l.find(Pass::Exact, &["x", "x", "y"], 0, false, 5),
            vec![998]
        );
        assert_eq!(
            l.find(Pass::Exact, &["x", "x"], 10, false, 3),
            vec![10, 11, 12]
        );
        assert_eq!(l.find(Pass::Exact, &["x", "y"], 0, true, 3), vec![999]);
    }

    proptest! {
        #[test]
        fn agrees_with_the_naive_search(
            file in proptest::collection::vec(prop_oneof!["a", " a", "b ", "\u{2014}", "-", ""], 0..40),
            pattern in proptest::collection::vec(prop_oneof!["a", " a", "b", "-", ""], 1..4),
            from in 0usize..40,
            p in 0usize..4,
        ) {
            let pass = Pass::ALL[p];
            let text: String = file.iter().map(|l| format!("{l}\n")).collect();
            let mut lines = Lines::new(text, false);
            let refs: Vec<&str> = file.iter().map(|s| s.as_str()).collect();
            let pat: Vec<&str> = pattern.iter().map(|s| s.as_str()).collect();
            prop_assert_eq!(lines.find(pass, &pat, from, false, usize::MAX), naive(&refs, &pat, pass, from));
        }
    }
}
