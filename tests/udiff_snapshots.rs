//! Snapshots of the event streams of the corpus (as `frontier events` prints them), so that any
//! change of what the parser confirms shows up in review.

use std::path::PathBuf;

use frontier::harness::run;
use frontier::udiff::{Limits, Mode, UdiffParser};

fn snapshot(name: &str, mode: Mode) -> Vec<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("corpora/udiff")
        .join(name);
    let input = std::fs::read(path).unwrap();
    let t = run(
        UdiffParser::new(mode, Limits::default()),
        &input,
        Some(64 * 1024),
    );
    let mut lines: Vec<String> = t
        .records
        .iter()
        .map(|r| serde_json::to_string(r).unwrap())
        .collect();
    lines.push(format!(
        "{} consumed={} confirmed={} error={:?}",
        t.outcome.verdict.as_str(),
        t.outcome.consumed,
        t.outcome.confirmed,
        t.outcome.verdict.error()
    ));
    lines
}

macro_rules! snap {
    ($test:ident, $file:literal, $mode:expr) => {
        #[test]
        fn $test() {
            insta::assert_json_snapshot!(snapshot($file, $mode));
        }
    };
}

snap!(git_basic_strict, "git_basic.diff", Mode::Strict);
snap!(git_meta_git, "git_meta.diff", Mode::Git);
snap!(git_no_newline_git, "git_no_newline.diff", Mode::Git);
snap!(git_binary_patch_git, "git_binary_patch.diff", Mode::Git);
snap!(git_binary_differ_git, "git_binary_differ.diff", Mode::Git);
snap!(git_quoted_git, "git_quoted.diff", Mode::Git);
snap!(git_crlf_git, "git_crlf.diff", Mode::Git);
snap!(gnu_diff_ru_git, "gnu_diff_ru.diff", Mode::Git);
snap!(model_recount_recount, "model_recount.diff", Mode::Recount);
snap!(model_recount_git, "model_recount.diff", Mode::Git);
snap!(model_wrong_counts_git, "model_wrong_counts.diff", Mode::Git);
snap!(
    model_wrong_counts_recount,
    "model_wrong_counts.diff",
    Mode::Recount
);
snap!(bad_overrun_strict, "bad_overrun.diff", Mode::Strict);
snap!(
    model_git_header_hunks_git,
    "model_git_header_hunks.diff",
    Mode::Git
);
snap!(
    model_named_metadata_strict,
    "model_named_metadata.diff",
    Mode::Strict
);
