//! The hard-line guard for `shell`: commands no policy, prompt or toolset may let through.
//!
//! The seed (004, 11.5) gives the rules as regular expressions anchored at *command
//! position*: the start of the command, after a separator (`;`, `&`, `|`, newline), after an
//! opening `$(` or backtick, or after a wrapper (`sudo`, `env`, `exec`). Quoted text is prose,
//! not code (`echo "rm -rf /"` is harmless), except where a *shell carrier* (`sh -c`, `bash
//! -c`, `eval`, …) hands it to another shell, and except `$(…)` and backticks inside double
//! quotes, which the shell does run.
//!
//! Rather than approximate those anchors with a regular expression over a masked string, the
//! guard reads the command the way a shell would, far enough to know what sits at command
//! position:
//!
//! 1. A lexer splits the text into words (quotes removed, escapes resolved), separators and
//!    redirections; every `$(…)`, backtick and `<(…)` body is set aside as nested code.
//! 2. Each simple command is walked from its first word, skipping assignments, reserved words
//!    and wrappers (`sudo -u root`, `env -i X=1`, `exec`, `nohup`, `timeout 5`, …) to the
//!    command name, whose base name is compared case-insensitively (`/bin/RM` is `rm`).
//! 3. The rules look at that command's own arguments: `rm` with a root-like target (`/`,
//!    `//`, `/.`, `/*`, …, quoted or not), `mkfs[.x]`, `dd of=/dev/<disk>`,
//!    `shutdown|reboot|halt|poweroff` (and their `systemctl` and `init` forms), a redirection
//!    into a raw disk device, and the fork bomb `f(){ f|f& };f` for any name `f`.
//! 4. The code a carrier runs (`sh -c CODE`, `eval ARGS`, `env -S CODE`) and every nested
//!    body go through the same check recursively.
//!
//! Fail-closed: text the guard cannot read (an unterminated quote or substitution, nesting
//! deeper than [`MAX_DEPTH`]) is refused, since it cannot be judged.

use std::fmt;

/// How deep carriers and substitutions may nest before the guard gives up (and refuses).
pub const MAX_DEPTH: usize = 16;

/// A hard-line rule a command breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Violation {
    /// `rm` aimed at the root directory.
    RemoveRoot,
    /// Formatting a filesystem.
    Mkfs,
    /// `dd` writing to a raw disk device.
    DdToDisk,
    /// Shutting down or rebooting the machine.
    PowerOff,
    /// A redirection into a raw disk device.
    RedirectToDisk,
    /// A fork bomb.
    ForkBomb,
    /// The guard could not read the command (fail-closed).
    Unreadable,
}

impl Violation {
    /// A stable snake_case name.
    pub fn kind(self) -> &'static str {
        match self {
            Violation::RemoveRoot => "remove_root",
            Violation::Mkfs => "format_filesystem",
            Violation::DdToDisk => "dd_to_disk",
            Violation::PowerOff => "power_off",
            Violation::RedirectToDisk => "redirect_to_disk",
            Violation::ForkBomb => "fork_bomb",
            Violation::Unreadable => "unreadable_command",
        }
    }

    /// What the rule protects against, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Violation::RemoveRoot => "recursive deletion of the root directory",
            Violation::Mkfs => "formatting a filesystem",
            Violation::DdToDisk => "writing to a raw disk device with dd",
            Violation::PowerOff => "shutting down or rebooting the machine",
            Violation::RedirectToDisk => "redirecting output into a raw disk device",
            Violation::ForkBomb => "a fork bomb",
            Violation::Unreadable => "the guard cannot read this command, so it cannot judge it",
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind(), self.describe())
    }
}

/// Checks a command line against the hard-line rules.
pub fn check(command: &str) -> Result<(), Violation> {
    check_at(command.as_bytes(), 0)
}

/// Whether the command names a file called `name`, as far as reading it can tell: `name`
/// appears as a whole file name (not part of a longer one) in the text or in any word once
/// quotes and escapes are resolved, in the code of substitutions and carriers included.
/// Best effort, for the runtime's own files: a path built at run time (a variable, a glob, a
/// script) is not seen.
pub fn mentions(command: &str, name: &[u8]) -> bool {
    !name.is_empty() && mentions_at(command.as_bytes(), name, 0)
}

fn mentions_at(code: &[u8], name: &[u8], depth: usize) -> bool {
    if names_file(code, name) {
        return true;
    }
    if depth > MAX_DEPTH {
        return false;
    }
    let Ok(lexed) = lex(code) else {
        return false;
    };
    let words = lexed.tokens.iter().filter_map(|t| match t {
        Token::Word(w) => Some(w),
        _ => None,
    });
    for word in words {
        // A word that is itself code (a carrier's operand) is read as code too; one that
        // lexes to itself is only text.
        if names_file(word, name) || (word.as_slice() != code && mentions_at(word, name, depth + 1))
        {
            return true;
        }
    }
    lexed
        .nested
        .iter()
        .any(|body| mentions_at(body, name, depth + 1))
}

/// Whether `name` occurs in `text` with no file-name byte right before or after it.
fn names_file(text: &[u8], name: &[u8]) -> bool {
    let part = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-');
    memchr::memmem::find_iter(text, name).any(|at| {
        let before = at.checked_sub(1).and_then(|i| text.get(i));
        let after = text.get(at + name.len());
        !before.is_some_and(part) && !after.is_some_and(part)
    })
}

fn check_at(code: &[u8], depth: usize) -> Result<(), Violation> {
    if depth > MAX_DEPTH {
        return Err(Violation::Unreadable);
    }
    let lexed = lex(code)?;
    for nested in &lexed.nested {
        check_at(nested, depth + 1)?;
    }
    fork_bomb(&lexed.tokens)?;
    let mut i = 0;
    while i < lexed.tokens.len() {
        // One simple command: the words (and redirections) up to the next separator.
        let start = i;
        while i < lexed.tokens.len() && !matches!(lexed.tokens[i], Token::Sep(_)) {
            i += 1;
        }
        simple_command(&lexed.tokens[start..i], depth)?;
        i += 1;
    }
    Ok(())
}

/// A piece of a command line.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    /// A word, quotes removed and escapes resolved.
    Word(Vec<u8>),
    /// A redirection operator (`>`, `>>`, `<`, `&>`, …); its target is the next word.
    Redirect,
    /// A separator or grouping operator: what follows is at command position.
    Sep(u8),
}

struct Lexed {
    tokens: Vec<Token>,
    /// Bodies of `$(…)`, backticks and process substitutions: code of their own.
    nested: Vec<Vec<u8>>,
}

/// Splits a command line into tokens the way a POSIX shell does, far enough for the rules.
fn lex(code: &[u8]) -> Result<Lexed, Violation> {
    let mut out = Lexed {
        tokens: Vec::new(),
        nested: Vec::new(),
    };
    let mut word: Option<Vec<u8>> = None;
    let mut i = 0;
    let end_word = |word: &mut Option<Vec<u8>>, tokens: &mut Vec<Token>| {
        if let Some(w) = word.take() {
            tokens.push(Token::Word(w));
        }
    };
    while i < code.len() {
        let b = code[i];
        match b {
            b' ' | b'\t' => {
                end_word(&mut word, &mut out.tokens);
                i += 1;
            }
            b'#' if word.is_none() => {
                // A comment runs to the end of the line.
                while i < code.len() && code[i] != b'\n' {
                    i += 1;
                }
            }
            b'\n' | b';' | b'&' | b'|' | b'(' | b')' => {
                end_word(&mut word, &mut out.tokens);
                if b == b'&' && code.get(i + 1) == Some(&b'>') {
                    out.tokens.push(Token::Redirect);
                    i += 2;
                    if code.get(i) == Some(&b'>') {
                        i += 1;
                    }
                    continue;
                }
                out.tokens.push(Token::Sep(b));
                i += 1;
            }
            b'<' | b'>' => {
                end_word(&mut word, &mut out.tokens);
                if code.get(i + 1) == Some(&b'(') {
                    // Process substitution: its body is code.
                    let close = matching_paren(code, i + 2)?;
                    out.nested.push(code[i + 2..close].to_vec());
                    word = Some(b"<process substitution>".to_vec());
                    i = close + 1;
                    continue;
                }
                out.tokens.push(Token::Redirect);
                i += 1;
                while i < code.len() && matches!(code[i], b'>' | b'<' | b'|' | b'&') {
                    i += 1;
                }
            }
            b'\\' => {
                let w = word.get_or_insert_with(Vec::new);
                match code.get(i + 1) {
                    Some(b'\n') => {}
                    Some(&c) => w.push(c),
                    None => {}
                }
                i += 2;
            }
            b'\'' => {
                let close = find(code, i + 1, b'\'')?;
                word.get_or_insert_with(Vec::new)
                    .extend_from_slice(&code[i + 1..close]);
                i = close + 1;
            }
            b'"' => {
                let w = word.get_or_insert_with(Vec::new);
                i = double_quoted(code, i + 1, w, &mut out.nested)?;
            }
            b'`' => {
                let close = backtick_end(code, i + 1)?;
                out.nested.push(code[i + 1..close].to_vec());
                word.get_or_insert_with(Vec::new)
                    .extend_from_slice(b"<command substitution>");
                i = close + 1;
            }
            b'$' if code.get(i + 1) == Some(&b'(') => {
                let close = matching_paren(code, i + 2)?;
                out.nested.push(code[i + 2..close].to_vec());
                word.get_or_insert_with(Vec::new)
                    .extend_from_slice(b"<command substitution>");
                i = close + 1;
            }
            b'$' if code.get(i + 1) == Some(&b'\'') => {
                let w = word.get_or_insert_with(Vec::new);
                i = ansi_c_quoted(code, i + 2, w)?;
            }
            _ => {
                word.get_or_insert_with(Vec::new).push(b);
                i += 1;
            }
        }
    }
    end_word(&mut word, &mut out.tokens);
    Ok(out)
}

/// The index of the next `want` from `from`, or the command is unreadable.
fn find(code: &[u8], from: usize, want: u8) -> Result<usize, Violation> {
    code.get(from..)
        .and_then(|rest| memchr::memchr(want, rest))
        .map(|at| from + at)
        .ok_or(Violation::Unreadable)
}

/// The closing backtick of a backtick substitution whose body starts at `from`.
fn backtick_end(code: &[u8], mut from: usize) -> Result<usize, Violation> {
    while from < code.len() {
        match code[from] {
            b'\\' => from += 2,
            b'`' => return Ok(from),
            _ => from += 1,
        }
    }
    Err(Violation::Unreadable)
}

/// Reads a double-quoted string whose content starts at `from` into `word`; `$(…)` and
/// backtick bodies inside go to `nested` (the shell runs them). Returns the index after the
/// closing quote.
fn double_quoted(
    code: &[u8],
    mut i: usize,
    word: &mut Vec<u8>,
    nested: &mut Vec<Vec<u8>>,
) -> Result<usize, Violation> {
    while i < code.len() {
        match code[i] {
            b'"' => return Ok(i + 1),
            b'\\' => {
                match code.get(i + 1) {
                    Some(&c @ (b'$' | b'`' | b'"' | b'\\')) => word.push(c),
                    Some(b'\n') => {}
                    Some(&c) => word.extend_from_slice(&[b'\\', c]),
                    None => return Err(Violation::Unreadable),
                }
                i += 2;
            }
            b'`' => {
                let close = backtick_end(code, i + 1)?;
                nested.push(code[i + 1..close].to_vec());
                word.extend_from_slice(b"<command substitution>");
                i = close + 1;
            }
            b'$' if code.get(i + 1) == Some(&b'(') => {
                let close = matching_paren(code, i + 2)?;
                nested.push(code[i + 2..close].to_vec());
                word.extend_from_slice(b"<command substitution>");
                i = close + 1;
            }
            c => {
                word.push(c);
                i += 1;
            }
        }
    }
    Err(Violation::Unreadable)
}

/// Reads `$'…'` (ANSI-C quoting, content from `i`), resolving its escapes so that
/// `$'\x2f'` is seen as `/`. Returns the index after the closing quote.
fn ansi_c_quoted(code: &[u8], mut i: usize, word: &mut Vec<u8>) -> Result<usize, Violation> {
    while i < code.len() {
        match code[i] {
            b'\'' => return Ok(i + 1),
            b'\\' => {
                let c = *code.get(i + 1).ok_or(Violation::Unreadable)?;
                i += 2;
                match c {
                    b'n' => word.push(b'\n'),
                    b't' => word.push(b'\t'),
                    b'x' => {
                        let (value, used) = digits(&code[i..], 16, 2);
                        word.push(value);
                        i += used;
                    }
                    b'0'..=b'7' => {
                        let (value, used) = digits(&code[i - 1..], 8, 3);
                        word.push(value);
                        i += used - 1;
                    }
                    other => word.push(other),
                }
            }
            c => {
                word.push(c);
                i += 1;
            }
        }
    }
    Err(Violation::Unreadable)
}

/// Up to `max` digits of `radix` at the start of `s`: their value (wrapped to a byte) and
/// how many were read.
fn digits(s: &[u8], radix: u32, max: usize) -> (u8, usize) {
    let mut value: u32 = 0;
    let mut used = 0;
    while used < max {
        match s.get(used).and_then(|&c| (c as char).to_digit(radix)) {
            Some(d) => value = value * radix + d,
            None => break,
        }
        used += 1;
    }
    (value as u8, used)
}

/// The `)` that closes a `(` whose body starts at `from`, skipping quoted text and nested
/// parentheses.
fn matching_paren(code: &[u8], mut i: usize) -> Result<usize, Violation> {
    let mut depth = 0usize;
    while i < code.len() {
        match code[i] {
            b'\\' => i += 1,
            b'\'' => i = find(code, i + 1, b'\'')?,
            b'"' => {
                i += 1;
                while i < code.len() && code[i] != b'"' {
                    if code[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                if i >= code.len() {
                    return Err(Violation::Unreadable);
                }
            }
            b'(' => depth += 1,
            b')' if depth == 0 => return Ok(i),
            b')' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    Err(Violation::Unreadable)
}

/// Reserved words and grouping that leave the next word at command position.
const KEYWORDS: &[&[u8]] = &[
    b"{", b"}", b"!", b"if", b"then", b"else", b"elif", b"fi", b"do", b"done", b"while", b"until",
];

/// Wrappers that run their operands as a command, with how their own options are read.
enum Wrapper {
    /// Options; those listed take the next word as their value.
    Options(&'static [&'static [u8]]),
    /// Options, then one positional operand (a duration, a priority) before the command.
    OptionsThenOperand(&'static [&'static [u8]]),
}

fn wrapper(name: &[u8]) -> Option<Wrapper> {
    Some(match name {
        b"sudo" => Wrapper::Options(&[
            b"-u", b"-g", b"-C", b"-D", b"-h", b"-p", b"-r", b"-t", b"-U", b"-T", b"-R",
        ]),
        b"doas" => Wrapper::Options(&[b"-u", b"-C"]),
        b"env" => Wrapper::Options(&[b"-u", b"-C", b"--unset", b"--chdir"]),
        b"exec" => Wrapper::Options(&[b"-a"]),
        b"nice" => Wrapper::Options(&[b"-n", b"--adjustment"]),
        b"ionice" => Wrapper::Options(&[b"-c", b"-n", b"-p"]),
        b"xargs" => Wrapper::Options(&[b"-I", b"-L", b"-n", b"-P", b"-s", b"-d", b"-E", b"-a"]),
        b"command" | b"builtin" | b"nohup" | b"time" | b"stdbuf" | b"setsid" => {
            Wrapper::Options(&[])
        }
        b"timeout" => Wrapper::OptionsThenOperand(&[b"-s", b"-k", b"--signal", b"--kill-after"]),
        _ => return None,
    })
}

/// Shells whose `-c` operand is code.
const SHELLS: &[&[u8]] = &[
    b"sh", b"bash", b"zsh", b"ksh", b"dash", b"ash", b"mksh", b"busybox",
];

/// Checks one simple command (its words and redirections).
fn simple_command(tokens: &[Token], depth: usize) -> Result<(), Violation> {
    // Redirections first: their targets are not arguments.
    let mut words: Vec<&[u8]> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            Token::Redirect => {
                if let Some(Token::Word(target)) = tokens.get(i + 1) {
                    if is_disk_device(target) {
                        return Err(Violation::RedirectToDisk);
                    }
                    i += 1;
                }
            }
            Token::Word(w) => words.push(w),
            Token::Sep(_) => {}
        }
        i += 1;
    }
    let mut k = 0;
    loop {
        let Some(&first) = words.get(k) else {
            return Ok(());
        };
        if KEYWORDS.contains(&first) || is_assignment(first) {
            k += 1;
            continue;
        }
        let name = command_name(first);
        let Some(wrapper) = wrapper(&name) else {
            break;
        };
        if name == b"env" {
            // `env -S STRING` splits STRING into a command: it is code.
            if let Some(at) = words[k + 1..].iter().position(|w| *w == b"-S") {
                if let Some(code) = words.get(k + 2 + at) {
                    check_at(code, depth + 1)?;
                }
            }
        }
        k += 1;
        let (takes_value, operand) = match wrapper {
            Wrapper::Options(list) => (list, false),
            Wrapper::OptionsThenOperand(list) => (list, true),
        };
        while let Some(&w) = words.get(k) {
            if w == b"--" {
                k += 1;
                break;
            }
            if w.first() != Some(&b'-') || w.len() == 1 {
                break;
            }
            k += if takes_value.contains(&w) { 2 } else { 1 };
        }
        if operand {
            k += 1;
        }
    }
    let name = command_name(words[k]);
    let args = &words[k + 1..];
    if SHELLS.contains(&name.as_slice()) {
        return shell_carrier(args, depth);
    }
    match name.as_slice() {
        b"eval" => check_at(&args.join(&b' '), depth + 1),
        b"rm" => {
            let mut options = true;
            for arg in args {
                if options && *arg == b"--" {
                    options = false;
                } else if options && arg.first() == Some(&b'-') && arg.len() > 1 {
                } else if is_root_target(arg) {
                    return Err(Violation::RemoveRoot);
                }
            }
            Ok(())
        }
        b"mkfs" | b"mke2fs" | b"mkswap" => Err(Violation::Mkfs),
        n if n.starts_with(b"mkfs.") => Err(Violation::Mkfs),
        b"dd" => {
            if args
                .iter()
                .any(|a| a.strip_prefix(b"of=").is_some_and(is_disk_device))
            {
                Err(Violation::DdToDisk)
            } else {
                Ok(())
            }
        }
        b"shutdown" | b"reboot" | b"halt" | b"poweroff" => Err(Violation::PowerOff),
        b"systemctl" => {
            let verbs: &[&[u8]] = &[b"poweroff", b"reboot", b"halt", b"kexec"];
            if args.iter().any(|a| verbs.contains(a)) {
                Err(Violation::PowerOff)
            } else {
                Ok(())
            }
        }
        b"init" | b"telinit" if matches!(args.first(), Some(&(b"0" | b"6"))) => {
            Err(Violation::PowerOff)
        }
        _ => Ok(()),
    }
}

/// `sh -c CODE …`: CODE is code. Any option word containing `c` (`-c`, `-ec`, `-lc`) makes
/// the first operand the code.
fn shell_carrier(args: &[&[u8]], depth: usize) -> Result<(), Violation> {
    let mut takes_code = false;
    for (i, arg) in args.iter().enumerate() {
        if arg.len() > 1 && arg[0] == b'-' && arg[1] != b'-' {
            if arg.contains(&b'c') {
                takes_code = true;
            }
            continue;
        }
        if arg.len() > 1 && arg[0] == b'+' {
            continue;
        }
        if takes_code {
            check_at(arg, depth + 1)?;
        }
        // `busybox sh -c …`: the applet name comes first.
        if i == 0 && SHELLS.contains(arg) {
            return shell_carrier(&args[1..], depth);
        }
        return Ok(());
    }
    Ok(())
}

/// The command's base name, lower-cased (`/usr/bin/RM` → `rm`).
fn command_name(word: &[u8]) -> Vec<u8> {
    let base = match word.iter().rposition(|&b| b == b'/') {
        Some(at) if at + 1 < word.len() => &word[at + 1..],
        _ => word,
    };
    base.to_ascii_lowercase()
}

/// `NAME=value`, a variable assignment before the command.
fn is_assignment(word: &[u8]) -> bool {
    match word.iter().position(|&b| b == b'=') {
        Some(at) if at > 0 => word[..at]
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'_'),
        _ => false,
    }
}

/// `/`, `//`, `/.`, `/..`, `/./`, `/*`, `/.*`, …: the seed's root pattern
/// `/((\.\.?)?/)*(\.\.?)?\**`.
fn is_root_target(arg: &[u8]) -> bool {
    let Some(rest) = arg.strip_prefix(b"/") else {
        return false;
    };
    let trimmed = {
        let mut end = rest.len();
        while end > 0 && rest[end - 1] == b'*' {
            end -= 1;
        }
        &rest[..end]
    };
    trimmed
        .split(|&b| b == b'/')
        .all(|segment| matches!(segment, b"" | b"." | b".."))
}

/// A raw disk device: `/dev/sd*`, `/dev/nvme*`, `/dev/vd*`, `/dev/xvd*`, `/dev/hd*`,
/// `/dev/mmcblk*`.
fn is_disk_device(path: &[u8]) -> bool {
    let Some(name) = path.strip_prefix(b"/dev/") else {
        return false;
    };
    [&b"sd"[..], b"nvme", b"vd", b"xvd", b"hd", b"mmcblk"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// `NAME(){ … NAME|NAME … }`: a function that pipes itself into itself.
fn fork_bomb(tokens: &[Token]) -> Result<(), Violation> {
    for (i, window) in tokens.windows(3).enumerate() {
        let [Token::Word(name), Token::Sep(b'('), Token::Sep(b')')] = window else {
            continue;
        };
        let body = &tokens[i + 3..];
        let recursive_pipe = body.windows(3).any(|w| {
            matches!(w, [Token::Word(a), Token::Sep(b'|'), Token::Word(b)] if a == name && b == name)
        });
        if recursive_pipe {
            return Err(Violation::ForkBomb);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexes_quotes_and_substitutions() {
        let lexed = lex(br#"echo "a $(rm -rf /) b" 'c d' e\ f"#).unwrap();
        assert_eq!(lexed.nested, vec![b"rm -rf /".to_vec()]);
        assert_eq!(
            lexed.tokens,
            vec![
                Token::Word(b"echo".to_vec()),
                Token::Word(b"a <command substitution> b".to_vec()),
                Token::Word(b"c d".to_vec()),
                Token::Word(b"e f".to_vec()),
            ]
        );
    }

    #[test]
    fn root_targets() {
        for t in ["/", "//", "/.", "/..", "/./", "/*", "/.*", "/./..//*"] {
            assert!(is_root_target(t.as_bytes()), "{t}");
        }
        for t in ["/tmp", "/.git", "./", "*", "/x/..", "tmp/"] {
            assert!(!is_root_target(t.as_bytes()), "{t}");
        }
    }
}
