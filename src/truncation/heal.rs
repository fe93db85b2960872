//! Partial-JSON healing, as streaming servers and SDKs do it: at a cut, close what is open
//! and keep what that yields.
//!
//! The healer drops what cannot be completed (a dangling escape, a half `\u` escape, a half
//! UTF-8 character, a key without a value, a trailing comma), completes what looks
//! unambiguous (`tr` → `true`, `12.` → `12`, an open string gets its quote) and closes every
//! open array and object. That is exactly the danger: `"path": "src/par` becomes the path
//! `src/par`, and `123.5` cut after `123.` becomes `123`.

/// What the scanner expects next inside a container.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    Key,
    Colon,
    Value,
    Comma,
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    object: bool,
    expect: Expect,
    /// Where the current member began: right after `{`, `[` or `,`.
    member_start: usize,
}

/// Heals a cut-off JSON text into one that parses, when its structure allows.
pub fn heal(prefix: &[u8]) -> Vec<u8> {
    let prefix = match std::str::from_utf8(prefix) {
        Ok(_) => prefix,
        Err(e) if e.error_len().is_none() => &prefix[..e.valid_up_to()],
        Err(_) => prefix,
    };
    let mut stack: Vec<Frame> = Vec::new();
    let mut in_string = false;
    let mut key_string = false;
    let mut escape = false;
    let mut unicode_left = 0u8;
    let mut unicode_start = 0usize;
    let mut scalar_start: Option<usize> = None;
    for (i, &b) in prefix.iter().enumerate() {
        if in_string {
            if unicode_left > 0 {
                unicode_left -= 1;
            } else if escape {
                escape = false;
                if b == b'u' {
                    unicode_left = 4;
                    unicode_start = i - 1;
                }
            } else if b == b'\\' {
                escape = true;
            } else if b == b'"' {
                in_string = false;
                if let Some(top) = stack.last_mut() {
                    top.expect = if key_string {
                        Expect::Colon
                    } else {
                        Expect::Comma
                    };
                }
            }
            continue;
        }
        if scalar_start.is_some() {
            if b.is_ascii_alphanumeric() || b"+-.".contains(&b) {
                continue;
            }
            scalar_start = None;
            if let Some(top) = stack.last_mut() {
                top.expect = Expect::Comma;
            }
        }
        match b {
            b'{' | b'[' => stack.push(Frame {
                object: b == b'{',
                expect: if b == b'{' {
                    Expect::Key
                } else {
                    Expect::Value
                },
                member_start: i + 1,
            }),
            b'}' | b']' => {
                stack.pop();
                if let Some(top) = stack.last_mut() {
                    top.expect = Expect::Comma;
                }
            }
            b'"' => {
                in_string = true;
                key_string = matches!(stack.last(), Some(f) if f.object && f.expect == Expect::Key);
            }
            b':' => {
                if let Some(top) = stack.last_mut() {
                    top.expect = Expect::Value;
                }
            }
            b',' => {
                if let Some(top) = stack.last_mut() {
                    top.expect = if top.object {
                        Expect::Key
                    } else {
                        Expect::Value
                    };
                    top.member_start = i + 1;
                }
            }
            b' ' | b'\t' | b'\n' | b'\r' => {}
            _ => scalar_start = Some(i),
        }
    }

    let mut out = prefix.to_vec();
    let Some(top) = stack.last_mut() else {
        return out;
    };
    if in_string {
        if key_string {
            out.truncate(top.member_start);
            top.expect = Expect::Key;
        } else {
            if unicode_left > 0 {
                out.truncate(unicode_start);
            } else if escape {
                out.pop();
            }
            out.push(b'"');
            top.expect = Expect::Comma;
        }
    } else if let Some(start) = scalar_start {
        match complete_scalar(&out[start..]) {
            Some(done) => {
                out.truncate(start);
                out.extend_from_slice(&done);
                top.expect = Expect::Comma;
            }
            None => out.truncate(start),
        }
    }
    if top.object && matches!(top.expect, Expect::Colon | Expect::Value) {
        out.truncate(top.member_start);
    }
    while matches!(out.last(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        out.pop();
    }
    if out.last() == Some(&b',') {
        out.pop();
    }
    for frame in stack.iter().rev() {
        out.push(if frame.object { b'}' } else { b']' });
    }
    out
}

/// Completes a cut-off literal or number the way healers do, or gives up on it.
fn complete_scalar(token: &[u8]) -> Option<Vec<u8>> {
    for word in [&b"true"[..], b"false", b"null"] {
        if word.starts_with(token) {
            return Some(word.to_vec());
        }
    }
    let mut number = token.to_vec();
    while matches!(number.last(), Some(b'.' | b'e' | b'E' | b'+' | b'-')) {
        number.pop();
    }
    (!number.is_empty()).then_some(number)
}

#[cfg(test)]
mod tests {
    use super::heal;

    fn healed(text: &str) -> String {
        String::from_utf8(heal(text.as_bytes())).unwrap()
    }

    #[test]
    fn closes_strings_and_containers() {
        assert_eq!(
            healed(r#"[{"name":"read_file","arguments":{"path":"src/par"#),
            r#"[{"name":"read_file","arguments":{"path":"src/par"}}]"#
        );
        assert_eq!(healed(r#"[{"a":1},"#), r#"[{"a":1}]"#);
        assert_eq!(healed(r#"{"a":[1,2"#), r#"{"a":[1,2]}"#);
    }

    #[test]
    fn truncates_numbers_and_completes_literals() {
        assert_eq!(healed(r#"{"x":123."#), r#"{"x":123}"#);
        assert_eq!(healed(r#"{"x":-"#), r#"{}"#);
        assert_eq!(healed(r#"{"x":1.5e-"#), r#"{"x":1.5}"#);
        assert_eq!(healed(r#"{"ok":tr"#), r#"{"ok":true}"#);
    }

    #[test]
    fn drops_keys_without_values_and_broken_escapes() {
        assert_eq!(healed(r#"{"a":1,"b"#), r#"{"a":1}"#);
        assert_eq!(healed(r#"{"a":1,"b":"#), r#"{"a":1}"#);
        assert_eq!(healed(r#"{"s":"x\"#), r#"{"s":"x"}"#);
        assert_eq!(healed(r#"{"s":"x\u00"#), r#"{"s":"x"}"#);
        let cut = &"{\"s\":\"é".as_bytes()[..7];
        assert_eq!(heal(cut), b"{\"s\":\"\"}");
    }

    #[test]
    fn every_healed_prefix_of_a_document_parses() {
        let doc = r#"[{"id":"c1","name":"t","arguments":{"n":-1.5e3,"s":"a\"b\u00e9 ü","l":[true,null,{}]}}]"#;
        for k in 0..=doc.len() {
            let healed = heal(&doc.as_bytes()[..k]);
            if k > 0 {
                assert!(
                    serde_json::from_slice::<serde_json::Value>(&healed).is_ok(),
                    "{k}: {}",
                    String::from_utf8_lossy(&healed)
                );
            }
        }
    }
}
