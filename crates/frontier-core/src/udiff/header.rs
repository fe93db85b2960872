//! Header line values as the file header holds them: names (C-quoted or not, timestamps cut),
//! modes, percentages, `index` lines, and the names of `diff --git a/X b/Y`.
//!
//! The recogniser has validated each line's grammar before these functions see it, so they
//! only take it apart; where the grammar is loose (names), they are best effort, like git.

/// A line's value without its LF and a CR before it.
pub fn trim_eol(v: &[u8]) -> &[u8] {
    let v = v.strip_suffix(b"\n").unwrap_or(v);
    v.strip_suffix(b"\r").unwrap_or(v)
}

/// Undoes git's C quoting of `"..."` at the start of `v`; returns the name and the bytes after
/// the closing quote, or `None` if `v` does not start with a well-formed quoted name.
pub fn unquote(v: &[u8]) -> Option<(Vec<u8>, &[u8])> {
    let mut rest = v.strip_prefix(b"\"")?;
    let mut out = Vec::with_capacity(rest.len());
    loop {
        let (&c, tail) = rest.split_first()?;
        rest = tail;
        match c {
            b'"' => return Some((out, rest)),
            b'\\' => {
                let (&e, tail) = rest.split_first()?;
                rest = tail;
                let byte = match e {
                    b'a' => 7,
                    b'b' => 8,
                    b't' => b'\t',
                    b'n' => b'\n',
                    b'v' => 11,
                    b'f' => 12,
                    b'r' => b'\r',
                    b'"' | b'\\' => e,
                    b'0'..=b'3' => {
                        let digits = rest.get(..2)?;
                        if !digits.iter().all(|d| (b'0'..=b'7').contains(d)) {
                            return None;
                        }
                        rest = &rest[2..];
                        ((e - b'0') << 6) | ((digits[0] - b'0') << 3) | (digits[1] - b'0')
                    }
                    _ => return None,
                };
                out.push(byte);
            }
            _ => out.push(c),
        }
    }
}

/// The name of a `---`/`+++` line: unquoted, and without a TAB-separated timestamp. A side
/// dated the epoch is `/dev/null`: that is how `diff -N` (and `diff -ruN`) writes a file that
/// does not exist on that side, and how `git apply` and GNU patch read it.
pub fn side_name(v: &[u8]) -> Vec<u8> {
    let v = trim_eol(v);
    let (name, rest) = match unquote(v) {
        Some((name, rest)) => (name, rest),
        None => match memchr::memchr(b'\t', v) {
            Some(tab) => (v[..tab].to_vec(), &v[tab..]),
            None => (v.to_vec(), &[][..]),
        },
    };
    match rest.strip_prefix(b"\t") {
        Some(stamp) if is_epoch(stamp) => b"/dev/null".to_vec(),
        _ => name,
    }
}

/// Whether a timestamp in `diff -u`'s form, `YYYY-MM-DD HH:MM:SS[.fraction] [±HHMM]`, is the
/// Unix epoch (1970-01-01 00:00:00 UTC; `1969-12-31 19:00:00 -0500` is it too).
fn is_epoch(stamp: &[u8]) -> bool {
    let text = String::from_utf8_lossy(stamp);
    let mut parts = text.split_ascii_whitespace();
    let (Some(date), Some(time)) = (parts.next(), parts.next()) else {
        return false;
    };
    let zone = parts.next().unwrap_or("+0000");
    let numbers = |s: &str, sep: char| -> Option<Vec<i64>> {
        s.split(sep).map(|n| n.parse::<i64>().ok()).collect()
    };
    let (Some(ymd), Some(hms)) = (
        numbers(date, '-'),
        numbers(time.split('.').next().unwrap_or(""), ':'),
    ) else {
        return false;
    };
    let (&[y, m, d], &[hh, mm, ss]) = (&ymd[..], &hms[..]) else {
        return false;
    };
    let fraction_zero = time
        .split_once('.')
        .is_none_or(|(_, f)| f.bytes().all(|b| b == b'0'));
    let (sign, digits) = match zone.as_bytes().first() {
        Some(b'+') => (1, &zone[1..]),
        Some(b'-') => (-1, &zone[1..]),
        _ => return false,
    };
    let Ok(z) = digits.parse::<i64>() else {
        return false;
    };
    if digits.len() != 4 || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return false;
    }
    // Days from 1970-01-01 to y-m-d (the civil calendar), then seconds, less the zone.
    let (y, m) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let offset = sign * ((z / 100) * 3600 + (z % 100) * 60);
    fraction_zero && days * 86_400 + hh * 3600 + mm * 60 + ss - offset == 0
}

/// A name of a `rename from`-style line.
pub fn plain_name(v: &[u8]) -> Vec<u8> {
    let v = trim_eol(v);
    match unquote(v) {
        Some((name, _)) => name,
        None => v.to_vec(),
    }
}

/// The two names of `diff --git A B`. Unquoted names may hold spaces; like git, prefer the
/// split where both names are the same after their first path component.
pub fn git_names(v: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    let v = trim_eol(v);
    if let Some((a, rest)) = unquote(v) {
        let rest = rest.strip_prefix(b" ")?;
        return Some((a, plain_name(rest)));
    }
    // `a/x "b/y"`: the second name is quoted. (Short lines: byte searches, no `memmem`
    // finder to build, no allocation but the names returned.)
    let quoted = memchr::memchr_iter(b'"', v).find(|&q| q > 0 && v[q - 1] == b' ');
    if let Some(q) = quoted.map(|q| q - 1) {
        if let Some((b, _)) = unquote(&v[q + 1..]) {
            return Some((v[..q].to_vec(), b));
        }
    }
    let strip = |name: &'_ [u8]| -> usize {
        match memchr::memchr(b'/', name) {
            Some(i) => i + 1,
            None => 0,
        }
    };
    for i in memchr::memchr_iter(b' ', v) {
        let (a, b) = (&v[..i], &v[i + 1..]);
        if !a.is_empty() && !b.is_empty() && a[strip(a)..] == b[strip(b)..] {
            return Some((a.to_vec(), b.to_vec()));
        }
    }
    // Different names (a rename): split before ` b/` if there is one, else at the first space.
    let mut spaces = memchr::memchr_iter(b' ', v);
    let first = spaces.next()?;
    let split = std::iter::once(first)
        .chain(spaces)
        .find(|&i| v[i + 1..].starts_with(b"b/"))
        .unwrap_or(first);
    Some((v[..split].to_vec(), v[split + 1..].to_vec()))
}

/// An octal mode.
pub fn mode(v: &[u8]) -> u32 {
    trim_eol(v).iter().fold(0u32, |acc, d| {
        acc.wrapping_mul(8).wrapping_add((d - b'0') as u32)
    })
}

/// A decimal number (at most the digits the recogniser allows).
pub fn number(v: &[u8]) -> u64 {
    v.iter()
        .take_while(|d| d.is_ascii_digit())
        .fold(0u64, |acc, d| {
            acc.saturating_mul(10).saturating_add((d - b'0') as u64)
        })
}

/// The first place where `byte` occurs twice in a row: a byte search, cheaper than building
/// a `memmem` finder for the short lines of a header.
fn pair(v: &[u8], byte: u8) -> Option<usize> {
    memchr::memchr_iter(byte, v).find(|&i| v.get(i + 1) == Some(&byte))
}

/// `OLD..NEW[ MODE]`.
pub fn index(v: &[u8]) -> (Vec<u8>, Vec<u8>, Option<u32>) {
    let v = trim_eol(v);
    let dots = pair(v, b'.').unwrap_or(v.len());
    let old = v[..dots].to_vec();
    let rest = v.get(dots + 2..).unwrap_or_default();
    match memchr::memchr(b' ', rest) {
        Some(sp) => (old, rest[..sp].to_vec(), Some(mode(&rest[sp + 1..]))),
        None => (old, rest.to_vec(), None),
    }
}

/// The section text of a hunk header line (the whole line, `@@` to LF): what follows the
/// closing `@@`, without one leading space and without the LF.
pub fn section(line: &[u8]) -> &[u8] {
    let body = line.strip_suffix(b"\n").unwrap_or(line);
    let after_open = body.get(2..).unwrap_or_default();
    match pair(after_open, b'@') {
        Some(i) => {
            let rest = &after_open[i + 2..];
            rest.strip_prefix(b" ").unwrap_or(rest)
        }
        None => b"",
    }
}

/// The ranges of a `recount` hunk header, if it has them in the usual form (counts default to
/// 1); `None` when they are absent (`@@ ... @@`, `@@`) or in another form.
pub fn lenient_ranges(line: &[u8]) -> Option<[u64; 4]> {
    fn range(v: &[u8]) -> Option<(u64, u64, &[u8])> {
        let digits = v.iter().take_while(|d| d.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        let start = number(&v[..digits]);
        let v = &v[digits..];
        if let Some(v) = v.strip_prefix(b",") {
            let n = v.iter().take_while(|d| d.is_ascii_digit()).count();
            if n == 0 {
                return None;
            }
            return Some((start, number(&v[..n]), &v[n..]));
        }
        Some((start, 1, v))
    }
    let parse = || -> Option<[u64; 4]> {
        let v = line.strip_prefix(b"@@ -")?;
        let (a, b, v) = range(v)?;
        let v = v.strip_prefix(b" +")?;
        let (c, d, _) = range(v)?;
        Some([a, b, c, d])
    };
    parse()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(side_name(b"a/x y\t2024-01-01 10:00\n"), b"a/x y");
        // A side dated the epoch does not exist (`diff -N`).
        for stamp in [
            "1970-01-01 00:00:00.000000000 +0000",
            "1970-01-01 00:00:00 +0000",
            "1970-01-01 01:00:00.000000000 +0100",
            "1969-12-31 19:00:00.000000000 -0500",
        ] {
            let line = format!("a/born.txt\t{stamp}\n");
            assert_eq!(side_name(line.as_bytes()), b"/dev/null", "{stamp}");
        }
        for stamp in [
            "1970-01-01 00:00:01.000000000 +0000",
            "1970-01-01 00:00:00.5 +0000",
            "2026-12-01 21:00:00.000000000 +0000",
            "1970-01-01 00:00:00 +0100",
            "not a date",
        ] {
            let line = format!("a/f\t{stamp}\n");
            assert_eq!(side_name(line.as_bytes()), b"a/f", "{stamp}");
        }
        assert_eq!(side_name(b"\"a/t\\303\\251\\tx\"\n"), "a/té\tx".as_bytes());
        assert_eq!(
            git_names(b"a/x y b/x y\n"),
            Some((b"a/x y".to_vec(), b"b/x y".to_vec()))
        );
        assert_eq!(
            git_names(b"a/old b/new\n"),
            Some((b"a/old".to_vec(), b"b/new".to_vec()))
        );
        assert_eq!(
            git_names(b"\"a/\\\"q\" \"b/\\\"q\"\n"),
            Some((b"a/\"q".to_vec(), b"b/\"q".to_vec()))
        );
        assert_eq!(
            index(b"abc..def 100644\n"),
            (b"abc".to_vec(), b"def".to_vec(), Some(0o100644))
        );
        assert_eq!(section(b"@@ -1 +1 @@ fn main\n"), b"fn main");
        assert_eq!(lenient_ranges(b"@@ -3 +4,5 @@\n"), Some([3, 1, 4, 5]));
        assert_eq!(lenient_ranges(b"@@ ... @@\n"), None);
        assert_eq!(lenient_ranges(b"@@\n"), None);
    }
}
