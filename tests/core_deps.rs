//! The crate an inference engine embeds, `frontier-core`, builds without the command line, an
//! HTTP client, TLS, process control or a full tokenizer: its dependency tree (normal and
//! build dependencies, from the lock file) holds none of them.

use std::process::Command;

#[test]
fn the_core_needs_no_cli_http_tls_or_agent() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .args([
            "tree",
            "-p",
            "frontier-core",
            "-e",
            "normal,build",
            "--prefix",
            "none",
            "--locked",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8(out.stdout).unwrap();
    let crates: Vec<&str> = tree.lines().filter_map(|l| l.split(' ').next()).collect();
    assert!(crates.contains(&"frontier-core"), "{tree}");
    assert!(
        crates.contains(&"tiktoken-rs"),
        "the tree is the real one: {tree}"
    );
    for heavy in [
        "frontier",
        "clap",
        "ureq",
        "rustls",
        "ring",
        "webpki-roots",
        "rustix",
        "tokenizers",
        "sha2",
        "flate2",
    ] {
        assert!(
            !crates.contains(&heavy),
            "frontier-core depends on {heavy}:\n{tree}"
        );
    }
}
