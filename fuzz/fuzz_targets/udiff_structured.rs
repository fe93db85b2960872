//! Valid unified diffs rendered from arbitrary hunks, then cut and mutated: in every mode the
//! whole diff is complete with exactly its files, hunk ranges and lines; a cut confirms only
//! hunks whose last line came before it; a mutated diff passes the contract checks.
#![no_main]

use arbitrary::Arbitrary;
use frontier::contract::Verdict;
use frontier::harness::check_contract;
use frontier::udiff::units::LineKind;
use frontier::udiff::{parse_all, Limits, Mode, UdiffParser};
use libfuzzer_sys::fuzz_target;

const WORDS: [&[u8]; 6] = [
    b"alpha",
    b"--- a/x",
    b"+++ b/x",
    b"@@ -1 +1 @@",
    b"caf\xc3\xa9\r",
    b"",
];

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Line {
    Context(u8),
    Remove(u8),
    Add(u8),
}

#[derive(Arbitrary, Debug)]
struct File {
    name: u8,
    hunks: Vec<(Line, Vec<Line>)>,
}

#[derive(Arbitrary, Debug)]
struct Input {
    files: Vec<File>,
    cut: u16,
    flip_at: u16,
    flip_to: u8,
}

fn word(i: u8) -> &'static [u8] {
    WORDS[i as usize % WORDS.len()]
}

fuzz_target!(|input: Input| {
    let mut text = Vec::new();
    let mut hunk_ends = Vec::new();
    let mut expected = Vec::new();
    for file in input.files.iter().filter(|f| !f.hunks.is_empty()) {
        text.extend_from_slice(format!("--- a/f{0}.txt\n+++ b/f{0}.txt\n", file.name).as_bytes());
        let mut hunks = Vec::new();
        let mut start = 1u64;
        for (first, more) in &file.hunks {
            let lines: Vec<Line> = std::iter::once(*first)
                .chain(more.iter().copied())
                .collect();
            let old = lines.iter().filter(|l| !matches!(l, Line::Add(_))).count() as u64;
            let new = lines
                .iter()
                .filter(|l| !matches!(l, Line::Remove(_)))
                .count() as u64;
            text.extend_from_slice(format!("@@ -{start},{old} +{start},{new} @@\n").as_bytes());
            for line in &lines {
                let (prefix, w) = match line {
                    Line::Context(w) => (b' ', w),
                    Line::Remove(w) => (b'-', w),
                    Line::Add(w) => (b'+', w),
                };
                text.push(prefix);
                text.extend_from_slice(word(*w));
                text.push(b'\n');
            }
            hunk_ends.push(text.len());
            hunks.push((start, old, new, lines));
            start += old.max(new) + 10;
        }
        expected.push((file.name, hunks));
    }
    for mode in [Mode::Strict, Mode::Git] {
        let parser = UdiffParser::new(mode, Limits::default());
        let (files, outcome) = parse_all(parser.clone(), &text);
        assert_eq!(outcome.verdict, Verdict::Complete, "{mode:?}");
        assert_eq!(files.len(), expected.len());
        for (got, (name, hunks)) in files.iter().zip(&expected) {
            assert_eq!(
                got.header.new_path.as_deref(),
                Some(format!("b/f{name}.txt").as_bytes())
            );
            assert_eq!(got.hunks.len(), hunks.len());
            for (hunk, (start, old, new, lines)) in got.hunks.iter().zip(hunks) {
                assert_eq!(
                    (
                        hunk.old_start,
                        hunk.old_count,
                        hunk.new_start,
                        hunk.new_count
                    ),
                    (*start, *old, *start, *new)
                );
                assert_eq!(hunk.lines.len(), lines.len());
                for (got_line, line) in hunk.lines.iter().zip(lines) {
                    let (kind, w) = match line {
                        Line::Context(w) => (LineKind::Context, w),
                        Line::Remove(w) => (LineKind::Remove, w),
                        Line::Add(w) => (LineKind::Add, w),
                    };
                    assert_eq!(
                        (got_line.kind, got_line.content.as_slice()),
                        (kind, word(*w))
                    );
                }
            }
        }
        let cut = input.cut as usize % (text.len() + 1);
        let (_, _) = parse_all(parser.clone(), &text[..cut]);
        let mut confirmed = 0;
        let mut assembler = frontier::udiff::PatchAssembler::default();
        let mut cut_parser = parser.clone();
        frontier::contract::PushParser::push(&mut cut_parser, &text[..cut], &mut |e| {
            confirmed += matches!(
                assembler.on_event(&e),
                Some(frontier::udiff::Assembled::Hunk(_))
            ) as usize;
        })
        .unwrap();
        // A hunk is confirmed one byte after its last line, so a cut confirms at most the
        // hunks that ended strictly before it.
        assert!(confirmed <= hunk_ends.iter().filter(|&&end| end < cut).count());
        if !text.is_empty() {
            let mut mutated = text.clone();
            let at = input.flip_at as usize % mutated.len();
            mutated[at] = input.flip_to;
            check_contract(&parser, &mutated, &[at]).unwrap();
        }
    }
});
