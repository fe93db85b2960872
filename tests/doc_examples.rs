//! Every command example in the README and in `docs/` runs, and prints what the page says.
//!
//! An example is a fenced block tagged `console`: lines starting with `$ ` are commands (a
//! trailing `\` continues one onto the next line), run by `bash` with the freshly built
//! `frontier` first on the `PATH`, in a scratch directory per block (the commands of one block
//! share it) that holds the repository's `corpora/`, `grammars/` and `prompts/`, so that the
//! examples' relative paths work and what they write goes nowhere. The lines after a command,
//! up to the next command or the end of the block, are its expected standard output, compared
//! line by line: a line `...` stands for any number of lines and `[..]` inside a line for any
//! text. A last line `[exit N]` gives the
//! expected exit status (0 otherwise). The Rust examples (blocks tagged `rust`) run as
//! doctests (`src/lib.rs` includes the pages); blocks tagged `text` show formats and `sh`
//! commands that need what a test machine lacks (a model server, `cargo fuzz`), not runs.

use std::path::{Path, PathBuf};
use std::process::Command;

/// One command of an example with what it must print.
#[derive(Debug)]
struct Example {
    page: String,
    line: usize,
    command: String,
    expected: Vec<String>,
    exit: i32,
}

/// The pages that hold examples.
fn pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The `console` blocks of one page, each a list of examples that run in one directory, in
/// order. Untagged fences are refused (rustdoc would take them for Rust).
fn blocks(page: &Path) -> Vec<Vec<Example>> {
    let text = std::fs::read_to_string(page).unwrap();
    let name = page
        .strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(page)
        .display()
        .to_string();
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        let Some(tag) = line.strip_prefix("```") else {
            continue;
        };
        assert!(!tag.is_empty(), "{name}:{}: a fence without a tag", n + 1);
        let body: Vec<(usize, &str)> = lines.by_ref().take_while(|(_, l)| *l != "```").collect();
        if tag == "console" {
            let mut block = Vec::new();
            parse_block(&name, &body, &mut block);
            out.push(block);
        }
    }
    out
}

fn parse_block(page: &str, body: &[(usize, &str)], out: &mut Vec<Example>) {
    let mut i = 0;
    while i < body.len() {
        let (n, line) = body[i];
        let Some(first) = line.strip_prefix("$ ") else {
            panic!("{page}:{}: output before any command", n + 1);
        };
        let mut command = first.to_owned();
        while command.ends_with('\\') && i + 1 < body.len() {
            i += 1;
            command.push('\n');
            command.push_str(body[i].1);
        }
        i += 1;
        let mut expected = Vec::new();
        let mut exit = 0;
        while i < body.len() && !body[i].1.starts_with("$ ") {
            let l = body[i].1;
            match l.strip_prefix("[exit ").and_then(|r| r.strip_suffix(']')) {
                Some(code) => exit = code.parse().expect("[exit N]"),
                None => expected.push(l.to_owned()),
            }
            i += 1;
        }
        out.push(Example {
            page: page.to_owned(),
            line: n + 1,
            command,
            expected,
            exit,
        });
    }
}

/// Whether `actual` matches `pattern`, where `[..]` stands for any text.
fn line_matches(pattern: &str, actual: &str) -> bool {
    let mut parts = pattern.split("[..]");
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = actual.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (k, part) in parts.iter().enumerate() {
        if k + 1 == parts.len() {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// Whether the lines match the patterns, `...` standing for any number of lines.
fn lines_match(patterns: &[String], actual: &[&str]) -> bool {
    match patterns.split_first() {
        None => actual.is_empty(),
        Some((p, rest)) if p == "..." => {
            (0..=actual.len()).any(|k| lines_match(rest, &actual[k..]))
        }
        Some((p, rest)) => actual
            .split_first()
            .is_some_and(|(a, more)| line_matches(p, a) && lines_match(rest, more)),
    }
}

/// A scratch directory with the repository's data directories linked in.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for data in ["corpora", "grammars", "prompts"] {
        std::os::unix::fs::symlink(root.join(data), dir.path().join(data)).unwrap();
    }
    dir
}

/// Runs a block's examples in order in one scratch directory; the first failure.
fn run_block(block: &[Example]) -> Result<(), String> {
    let dir = scratch();
    block.iter().try_for_each(|e| run(e, dir.path()))
}

fn run(example: &Example, dir: &Path) -> Result<(), String> {
    let bin = Path::new(env!("CARGO_BIN_EXE_frontier")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .args(["-o", "pipefail", "-c", &example.command])
        .current_dir(dir)
        .env("PATH", path)
        // `frontier run` makes its run directories there, not in the home directory.
        .env("XDG_STATE_HOME", dir.join(".state"))
        .output()
        .map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let actual: Vec<&str> = stdout.lines().collect();
    if out.status.code() != Some(example.exit) || !lines_match(&example.expected, &actual) {
        return Err(format!(
            "{}:{}: `{}` exited {:?} (expected {}) and printed:\n{stdout}\nstderr:\n{}",
            example.page,
            example.line,
            example.command,
            out.status.code(),
            example.exit,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

#[test]
fn every_command_example_prints_what_its_page_says() {
    let all: Vec<Vec<Example>> = pages().iter().flat_map(|p| blocks(p)).collect();
    let failures: Vec<String> = all.iter().filter_map(|b| run_block(b).err()).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    let commands: usize = all.iter().map(Vec::len).sum();
    assert!(commands >= 5, "only {commands} examples");
}

#[test]
fn the_matcher_of_expected_output_can_fail() {
    assert!(line_matches("a[..]c", "abbbc"));
    assert!(!line_matches("a[..]c", "abbbd"));
    assert!(line_matches("[..]", "anything"));
    assert!(!line_matches("exact", "exact plus"));
    let p = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(lines_match(&p(&["a", "...", "z"]), &["a", "b", "c", "z"]));
    assert!(!lines_match(&p(&["a", "...", "z"]), &["a", "b"]));
    assert!(!lines_match(&p(&["a"]), &["a", "b"]));
}
