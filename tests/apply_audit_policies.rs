//! The two policies against each other on random files and patches: where the safe policy
//! applies a patch whose chunks all match exactly, with no pure addition and no blank line at
//! the end of the file (the documented differences), Codex's policy applies it too, with the
//! same result; where safe finds no place for a chunk, codex fails too.

mod apply_support;
#[path = "apply_patch_support/gen.rs"]
mod gen;

use apply_support::{read, workspace};
use frontier::apply::{apply_patch_stream, ErrorKind, Policy, Workspace};
use frontier::apply_patch::CodexParser;
use gen::Rng;

fn run(file: &str, patch: &str, policy: Policy) -> Result<String, ErrorKind> {
    let dir = workspace(&[("f.txt", file)]);
    let ws = Workspace::new(dir.path()).unwrap();
    apply_patch_stream(
        CodexParser::new(),
        patch.as_bytes(),
        0,
        ws,
        policy,
        |_, _| {},
    )
    .map_err(|f| f.error.kind)?;
    Ok(read(&dir, "f.txt"))
}

#[test]
fn safe_and_codex_agree_where_safe_applies() {
    let mut rng = Rng(0x5afe_c0de);
    let words = ["a", "b", "c", "x", "fn f()", "}"];
    let (mut agreed, mut refused) = (0, 0);
    for case in 0..3000 {
        let n = 1 + rng.below(12);
        let lines: Vec<&str> = (0..n).map(|_| rng.pick(&words)).collect();
        let file: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let mut patch = String::from("*** Begin Patch\n*** Update File: f.txt\n");
        let mut at = 0;
        for _ in 0..1 + rng.below(3) {
            if at >= n {
                break;
            }
            let start = at + rng.below(n - at);
            let len = 1 + rng.below((n - start).min(3));
            if rng.chance(30) {
                patch += &format!("@@ {}\n", lines[start.saturating_sub(1)]);
            } else {
                patch += "@@\n";
            }
            for (k, l) in lines[start..start + len].iter().enumerate() {
                match (k, rng.below(3)) {
                    (0, _) | (_, 0) => patch += &format!("-{l}\n"),
                    _ => patch += &format!(" {l}\n"),
                }
            }
            patch += &format!("+new{case}\n");
            at = start + len;
        }
        patch += "*** End Patch\n";
        let safe = run(&file, &patch, Policy::Safe);
        let codex = run(&file, &patch, Policy::Codex);
        match safe {
            Ok(text) => {
                assert_eq!(codex, Ok(text), "case {case}: {file:?}\n{patch}");
                agreed += 1;
            }
            Err(ErrorKind::LinesNotFound | ErrorKind::ContextNotFound) => {
                assert!(codex.is_err(), "case {case}: {file:?}\n{patch}");
                refused += 1;
            }
            Err(_) => {}
        }
    }
    assert!(agreed > 300 && refused > 10, "{agreed} {refused}");
}
