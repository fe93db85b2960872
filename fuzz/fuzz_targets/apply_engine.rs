//! Random apply_patch operations on a random tree: whatever the patch, nothing is ever written
//! outside the root, and under the safe policy a failed patch changes nothing.
#![no_main]

use std::collections::BTreeMap;
use std::path::Path;

use arbitrary::Arbitrary;
use frontier::apply::{apply_operations, Policy, Workspace};
use frontier::apply_patch::units::{ChangeLine, Chunk, FileOperation};
use libfuzzer_sys::fuzz_target;

/// Paths drawn from a small set so that operations collide, including hostile ones.
const PATHS: [&str; 10] = [
    "a.txt",
    "b.txt",
    "dir/c.txt",
    "dir/sub/d.txt",
    "../escape.txt",
    "/abs.txt",
    "dir/../a.txt",
    "link/x.txt",
    "dir",
    "e\u{2014}.txt",
];
const LINES: [&str; 6] = ["alpha", "beta", "gamma", "  beta  ", "beta\u{2013}x", ""];

#[derive(Arbitrary, Debug)]
enum Line {
    Context(u8),
    Remove(u8),
    Add(u8),
}

#[derive(Arbitrary, Debug)]
enum Op {
    Add {
        path: u8,
        lines: Vec<u8>,
    },
    Delete {
        path: u8,
    },
    Update {
        path: u8,
        move_to: Option<u8>,
        chunks: Vec<(Option<u8>, Vec<Line>, bool)>,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    files: Vec<(u8, Vec<u8>)>,
    ops: Vec<Op>,
    safe: bool,
}

fn path(i: u8) -> String {
    PATHS[i as usize % PATHS.len()].to_owned()
}

fn line(i: u8) -> String {
    LINES[i as usize % LINES.len()].to_owned()
}

fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            let key = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            if meta.is_dir() {
                out.insert(key + "/", Vec::new());
                stack.push(p);
            } else if meta.file_type().is_symlink() {
                out.insert(key, b"<link>".to_vec());
            } else {
                out.insert(key, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fuzz_target!(|input: Input| {
    let sandbox = tempfile::tempdir().unwrap();
    let root = sandbox.path().join("root");
    let outside = sandbox.path().join("outside");
    std::fs::create_dir_all(root.join("dir/sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
    for (p, lines) in &input.files {
        let p = path(*p);
        if p.starts_with('/') || p.contains("..") || p.starts_with("link") || p == "dir" {
            continue;
        }
        let text: String = lines.iter().map(|&l| line(l) + "\n").collect();
        std::fs::write(root.join(&p), text).unwrap();
    }
    let ops: Vec<FileOperation> = input
        .ops
        .iter()
        .map(|op| match op {
            Op::Add { path: p, lines } => FileOperation::Add {
                path: path(*p),
                lines: lines.iter().map(|&l| line(l)).collect(),
            },
            Op::Delete { path: p } => FileOperation::Delete { path: path(*p) },
            Op::Update {
                path: p,
                move_to,
                chunks,
            } => FileOperation::Update {
                path: path(*p),
                move_to: move_to.map(path),
                chunks: chunks
                    .iter()
                    .map(|(context, lines, eof)| Chunk {
                        context: context.map(line),
                        lines: lines
                            .iter()
                            .map(|l| match l {
                                Line::Context(i) => ChangeLine::Context(line(*i)),
                                Line::Remove(i) => ChangeLine::Remove(line(*i)),
                                Line::Add(i) => ChangeLine::Add(line(*i)),
                            })
                            .collect(),
                        end_of_file: *eof,
                    })
                    .collect(),
            },
        })
        .collect();
    let before = snapshot(&root);
    let policy = if input.safe {
        Policy::Safe
    } else {
        Policy::Codex
    };
    let result = apply_operations(Workspace::new(&root).unwrap(), policy, &ops);
    assert!(
        snapshot(&outside).is_empty(),
        "something was written outside the root"
    );
    assert!(!sandbox.path().join("escape.txt").exists() && !Path::new("/abs.txt").exists());
    if result.is_err() && input.safe {
        assert_eq!(
            snapshot(&root),
            before,
            "a failed safe patch changed the tree"
        );
    }
});
