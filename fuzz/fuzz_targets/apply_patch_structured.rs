//! Valid strict patches rendered from arbitrary operations, then cut and mutated: the whole
//! patch is complete and assembles to exactly its operations (paths, added lines, old and new
//! sides of every update); a cut confirms only operations whose text ended before it; a
//! mutated patch passes the contract checks in both modes.
#![no_main]

use arbitrary::Arbitrary;
use frontier::apply_patch::units::FileOperation;
use frontier::apply_patch::{CodexParser, OperationAssembler, StrictOptions, StrictParser};
use frontier::contract::{PushParser, Verdict};
use frontier::harness::check_contract;
use libfuzzer_sys::fuzz_target;

const WORDS: [&str; 6] = ["alpha", "β-line", "*** End Patch", "@@ x", "", " x"];

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
        first: u8,
        more: Vec<u8>,
    },
    Delete {
        path: u8,
    },
    Update {
        path: u8,
        move_to: Option<u8>,
        chunks: Vec<(Option<u8>, Line, Vec<Line>)>,
        eof: bool,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    ops: Vec<Op>,
    cut: u16,
    flip_at: u16,
    flip_to: u8,
}

fn word(i: u8) -> &'static str {
    WORDS[i as usize % WORDS.len()]
}

fn path(i: u8) -> String {
    format!("dir/file_{i}.txt")
}

fn line_text(line: &Line) -> String {
    match line {
        Line::Context(w) => format!(" {}\n", word(*w)),
        Line::Remove(w) => format!("-{}\n", word(*w)),
        Line::Add(w) => format!("+{}\n", word(*w)),
    }
}

/// The patch text and where each operation's text ends.
fn render(ops: &[Op]) -> (String, Vec<usize>) {
    let mut text = String::from("*** Begin Patch\n");
    let mut ends = Vec::new();
    for op in ops {
        match op {
            Op::Add {
                path: p,
                first,
                more,
            } => {
                text += &format!("*** Add File: {}\n", path(*p));
                for w in std::iter::once(first).chain(more) {
                    text += &format!("+{}\n", word(*w));
                }
            }
            Op::Delete { path: p } => text += &format!("*** Delete File: {}\n", path(*p)),
            Op::Update {
                path: p,
                move_to,
                chunks,
                eof,
            } => {
                text += &format!("*** Update File: {}\n", path(*p));
                if let Some(to) = move_to {
                    text += &format!("*** Move to: {}\n", path(*to));
                }
                for (context, first, more) in chunks {
                    match context {
                        Some(w) if !word(*w).is_empty() => text += &format!("@@ {}\n", word(*w)),
                        _ => text += "@@\n",
                    }
                    for line in std::iter::once(first).chain(more) {
                        text += &line_text(line);
                    }
                }
                if *eof && !chunks.is_empty() {
                    text += "*** End of File\n";
                }
            }
        }
        ends.push(text.len());
    }
    text += "*** End Patch\n";
    (text, ends)
}

fn old_and_new(op: &Op) -> (Vec<&'static str>, Vec<&'static str>) {
    let (mut old, mut new) = (Vec::new(), Vec::new());
    if let Op::Update { chunks, .. } = op {
        for (_, first, more) in chunks {
            for line in std::iter::once(first).chain(more) {
                match line {
                    Line::Context(w) => {
                        old.push(word(*w));
                        new.push(word(*w));
                    }
                    Line::Remove(w) => old.push(word(*w)),
                    Line::Add(w) => new.push(word(*w)),
                }
            }
        }
    }
    (old, new)
}

fn assemble(parser: &mut StrictParser, bytes: &[u8]) -> Vec<FileOperation> {
    let mut assembler = OperationAssembler::default();
    let mut ops = Vec::new();
    parser
        .push(bytes, &mut |e| ops.extend(assembler.on_event(&e)))
        .unwrap();
    ops
}

fuzz_target!(|input: Input| {
    if input.ops.is_empty() {
        return; // the grammar needs at least one operation
    }
    let (text, ends) = render(&input.ops);
    let bytes = text.as_bytes();
    let parser = StrictParser::new(StrictOptions::default());

    let mut whole = parser.clone();
    let mut ops = assemble(&mut whole, bytes);
    let mut assembler = OperationAssembler::default();
    assert_eq!(
        whole
            .finish(&mut |e| ops.extend(assembler.on_event(&e)))
            .verdict,
        Verdict::Complete
    );
    assert_eq!(ops.len(), input.ops.len());
    for (got, spec) in ops.iter().zip(&input.ops) {
        match (got, spec) {
            (
                FileOperation::Add { path: p, lines },
                Op::Add {
                    path: q,
                    first,
                    more,
                },
            ) => {
                assert_eq!(p, &path(*q));
                let expected: Vec<&str> = std::iter::once(first)
                    .chain(more)
                    .map(|w| word(*w))
                    .collect();
                assert_eq!(lines, &expected);
            }
            (FileOperation::Delete { path: p }, Op::Delete { path: q }) => assert_eq!(p, &path(*q)),
            (
                FileOperation::Update {
                    path: p,
                    move_to,
                    chunks,
                },
                Op::Update {
                    path: q,
                    move_to: to,
                    ..
                },
            ) => {
                assert_eq!(p, &path(*q));
                assert_eq!(move_to, &to.map(path));
                let old: Vec<&str> = chunks.iter().flat_map(|c| c.old_lines()).collect();
                let new: Vec<&str> = chunks.iter().flat_map(|c| c.new_lines()).collect();
                assert_eq!((old, new), old_and_new(spec));
            }
            (got, spec) => panic!("{got:?} for {spec:?}"),
        }
    }

    let cut = input.cut as usize % (bytes.len() + 1);
    let confirmed = assemble(&mut parser.clone(), &bytes[..cut]).len();
    assert!(confirmed <= ends.iter().filter(|&&end| end <= cut).count());

    let mut mutated = bytes.to_vec();
    let at = input.flip_at as usize % mutated.len();
    mutated[at] = input.flip_to;
    check_contract(&parser, &mutated, &[at]).unwrap();
    check_contract(&CodexParser::new(), &mutated, &[at]).unwrap();
});
