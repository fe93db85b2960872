//! `tests/c/api_test.c` compiled with `cc` against `include/frontier.h` and
//! `libfrontier_capi.a`, run on a real patch's o200k_base ids: its masks are compared with the
//! Rust matcher's, its parser events with `frontier events`' output for the same file, and its
//! own checks (accept, validate, rollback, reset, clone, EOS, forced bytes, a `.tiktoken` rank
//! file by path, bad arguments) must all pass.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use frontier_core::language::ParserSpec;
use frontier_core::mask::dynamic;
use frontier_core::mask::vocab::tiktoken;
use serde_json::Value;

const PATCH: &str = "corpora/apply_patch/add_delete.patch";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// The target profile directory this test runs from (`target/debug`): the test binary is in
/// its `deps/`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_owned()
}

fn fnv1a(words: &[u32]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for word in words {
        for byte in word.to_le_bytes() {
            h ^= u64::from(byte);
            h = h.wrapping_mul(0x100_0000_01b3);
        }
    }
    h
}

/// Adjacent data records of one value (same event name and fields but `data`) merged, the
/// `end` record dropped: what is left does not depend on chunking.
fn merged(records: impl Iterator<Item = Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for record in records {
        if record["event"] == "end" {
            continue;
        }
        if let Some(last) = out.last_mut() {
            let rest = |v: &Value| {
                let mut m = v.as_object().unwrap().clone();
                m.remove("data");
                m
            };
            if let (Some(Value::String(a)), Some(Value::String(b))) =
                (last.get("data").cloned(), record.get("data"))
            {
                if rest(last) == rest(&record) {
                    last["data"] = Value::String(a + b);
                    continue;
                }
            }
        }
        out.push(record);
    }
    out
}

fn compile_c_test(out_dir: &Path) -> PathBuf {
    // Cargo builds the library's crate types for this test into `deps/`, beside the test
    // binary; `target/<profile>/libfrontier_capi.a` is only refreshed by `cargo build` and may
    // be stale.
    let exe = std::env::current_exe().unwrap();
    let lib = exe.parent().unwrap().join("libfrontier_capi.a");
    assert!(lib.exists(), "{} is not built", lib.display());
    let exe = out_dir.join("api_test");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".to_owned()))
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&exe)
        .arg("-I")
        .arg(root.join("include"))
        .arg(root.join("tests/c/api_test.c"))
        .arg(&lib)
        .args(["-lpthread", "-ldl", "-lm"])
        .status()
        .expect("cc runs");
    assert!(status.success(), "cc failed");
    exe
}

#[test]
fn the_c_program_sees_what_rust_sees() {
    let out_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capi_c_api");
    std::fs::create_dir_all(&out_dir).unwrap();
    let exe = compile_c_test(&out_dir);

    let patch_path = workspace().join(PATCH);
    let patch = std::fs::read_to_string(&patch_path).unwrap();
    let vocab = Arc::new(tiktoken::builtin(tiktoken::Builtin::O200kBase).unwrap());
    let mut ids = vocab.encode(&patch).unwrap();
    ids.push(vocab.eos()[0]);
    let ids_path = out_dir.join("ids.txt");
    let text: Vec<String> = ids.iter().map(u32::to_string).collect();
    std::fs::write(&ids_path, text.join(" ")).unwrap();

    // "call", " ", "c1", " read", "\n", "end" at ranks 0-5, in base64.
    let rank_path = out_dir.join("ctl.tiktoken");
    std::fs::write(
        &rank_path,
        "Y2FsbA== 0\nIA== 1\nYzE= 2\nIHJlYWQ= 3\nCg== 4\nZW5k 5\n",
    )
    .unwrap();

    let run = Command::new(&exe)
        .arg(&ids_path)
        .arg(&patch_path)
        .arg(&rank_path)
        .output()
        .unwrap();
    let stdout = String::from_utf8(run.stdout).unwrap();
    assert!(
        run.status.success(),
        "api_test failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(stdout.ends_with("failures 0\n"), "{stdout}");

    // Masks: the Rust matcher's, hashed the same way, at every step.
    let grammar = dynamic::compile(&ParserSpec::parse("apply_patch", None).unwrap(), vocab);
    let mut matcher = grammar.matcher();
    let mut mask = vec![0u32; grammar.mask_words()];
    let mut expected = Vec::new();
    for step in 0..=ids.len() {
        matcher.fill_mask(&mut mask).unwrap();
        expected.push(format!("mask {step} {:016x}", fnv1a(&mask)));
        if let Some(&id) = ids.get(step) {
            matcher.consume(id).unwrap();
        }
    }
    let masks: Vec<&str> = stdout.lines().filter(|l| l.starts_with("mask ")).collect();
    assert_eq!(masks, expected);

    // Events: those of `frontier events` for the same file.
    let events = merged(
        stdout
            .lines()
            .filter_map(|l| l.strip_prefix("event "))
            .map(|json| serde_json::from_str(json).unwrap()),
    );
    let cli = frontier_events(&patch_path);
    let end: Value = serde_json::from_str(cli.lines().last().unwrap()).unwrap();
    assert_eq!(end["verdict"], "complete");
    assert!(stdout.contains("\nverdict 0\n"), "{stdout}");
    let printed = merged(cli.lines().map(|l| serde_json::from_str(l).unwrap()));
    assert!(printed.len() > 3);
    assert_eq!(events, printed);
}

/// `frontier events --lang apply_patch FILE`, from the workspace's `frontier` binary (which
/// `cargo test` at the workspace root builds before running any test).
fn frontier_events(path: &Path) -> String {
    let frontier = profile_dir().join("frontier");
    assert!(
        frontier.exists(),
        "{} is not built: run `cargo build --bin frontier` (or the workspace's `cargo test`) first",
        frontier.display()
    );
    let out = Command::new(frontier)
        .args(["events", "--lang", "apply_patch"])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
