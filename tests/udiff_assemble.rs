//! The assembler yields each unit as soon as it is confirmed: the header, then each hunk, then
//! the whole file patch, with binary blocks and git metadata filled in.

use frontier::contract::PushParser;
use frontier::udiff::units::{Binary, BinaryKind};
use frontier::udiff::{Assembled, PatchAssembler, UdiffEvent, UdiffParser};

fn corpus(name: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("corpora/udiff")
            .join(name),
    )
    .unwrap()
}

/// Feeds `input` byte by byte and returns, for each yielded item, its kind and the number of
/// bytes consumed when it came.
fn items(input: &[u8]) -> Vec<(String, usize)> {
    let mut parser = UdiffParser::git();
    let mut assembler = PatchAssembler::default();
    let mut out = Vec::new();
    for (i, b) in input.iter().enumerate() {
        parser
            .push(&[*b], &mut |e: UdiffEvent<'_>| {
                let item = match assembler.on_event(&e) {
                    Some(Assembled::Header(h)) => {
                        format!(
                            "header {}",
                            String::from_utf8_lossy(h.new_path.as_deref().unwrap_or(b"-"))
                        )
                    }
                    Some(Assembled::Hunk(h)) => format!(
                        "hunk -{},{} +{},{}",
                        h.old_start, h.old_count, h.new_start, h.new_count
                    ),
                    Some(Assembled::File(f)) => format!("file {} hunks", f.hunks.len()),
                    None => return,
                };
                out.push((item, i + 1));
            })
            .unwrap();
    }
    parser.finish(&mut |e: UdiffEvent<'_>| {
        if let Some(Assembled::File(f)) = assembler.on_event(&e) {
            out.push((format!("file {} hunks", f.hunks.len()), input.len()));
        } else if let UdiffEvent::HunkEnd { .. } = e {
            out.push(("hunk (at end)".into(), input.len()));
        }
    });
    out
}

#[test]
fn header_then_hunks_then_file_as_they_are_confirmed() {
    let input = corpus("git_basic.diff");
    let got = items(&input);
    let kinds: Vec<&str> = got.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "header b/main.rs",
            "hunk -1,7 +1,7",
            "file 1 hunks",
            "header b/numbers.txt",
            "hunk -2,7 +2,7",
            "hunk -17,7 +17,6",
            "hunk (at end)",
            "file 3 hunks",
        ]
    );
    // Each hunk is yielded one byte after its last line: at the first byte of what follows.
    let next = input[1..]
        .windows(10)
        .position(|w| w == b"diff --git")
        .unwrap()
        + 1;
    assert_eq!(
        got[1].1,
        next + 1,
        "first hunk confirmed by the `d` of the next file patch"
    );
    // The header is yielded at the LF of `+++ `.
    let plus = input
        .windows(12)
        .position(|w| w == b"+++ b/main.r")
        .unwrap();
    let lf = plus + input[plus..].iter().position(|&b| b == b'\n').unwrap() + 1;
    assert_eq!(got[0].1, lf);
}

#[test]
fn binary_blocks_and_metadata_are_assembled() {
    let (files, _) =
        frontier::udiff::parse_all(UdiffParser::git(), &corpus("git_binary_patch.diff"));
    let Some(Binary::Patch {
        forward,
        reverse: Some(reverse),
    }) = &files[0].header.binary
    else {
        panic!("{:?}", files[0].header.binary);
    };
    assert_eq!((forward.kind, forward.size), (BinaryKind::Literal, 19));
    assert_eq!((reverse.kind, reverse.size), (BinaryKind::Literal, 10));
    // zlib streams: header byte 0x78.
    assert_eq!(forward.deflated[0], 0x78);
    assert_eq!(reverse.deflated[0], 0x78);

    let (files, _) = frontier::udiff::parse_all(UdiffParser::git(), &corpus("git_meta.diff"));
    let rename = files
        .iter()
        .find(|f| f.header.rename_from.is_some())
        .unwrap();
    assert_eq!(
        rename.header.rename_to.as_deref(),
        Some(&b"new_name.txt"[..])
    );
    assert_eq!(rename.header.similarity, Some(66));
    assert_eq!(rename.header.index.as_ref().unwrap().2, Some(0o100644));
    let mode = files.iter().find(|f| f.header.old_mode.is_some()).unwrap();
    assert_eq!(
        (mode.header.old_mode, mode.header.new_mode),
        (Some(0o100644), Some(0o100755))
    );
    assert!(mode.hunks.is_empty());
    let deleted = files
        .iter()
        .find(|f| f.header.deleted_file_mode.is_some())
        .unwrap();
    assert_eq!(deleted.header.new_path.as_deref(), Some(&b"/dev/null"[..]));
}
