//! `frontier stream` over the corpus of recorded streams (`corpora/streams/API/NAME.sse` or
//! `.jsonl`, the expected standard output in `NAME.out`, extra flags in `NAME.args`), and
//! `--apply`, and the bad input of the specification end to end.

mod cli_support;

use std::path::{Path, PathBuf};

use cli_support::run;

/// Every recorded stream with its API and extra flags.
fn corpus() -> Vec<(String, PathBuf, Vec<String>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/streams");
    let mut streams = Vec::new();
    for api in ["openai-chat", "openai-responses", "anthropic-messages"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(api))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "sse" || e == "jsonl"))
            .collect();
        files.sort();
        for file in files {
            let args = std::fs::read_to_string(file.with_extension("args"))
                .map(|a| a.split_whitespace().map(str::to_owned).collect())
                .unwrap_or_default();
            streams.push((api.to_owned(), file, args));
        }
    }
    streams
}

fn stream(api: &str, file: &Path, args: &[String], more: &[&str]) -> (i32, String, String) {
    let mut all = vec!["stream".to_owned(), "--api".to_owned(), api.to_owned()];
    all.extend(args.iter().cloned());
    all.extend(more.iter().map(|s| s.to_string()));
    all.push(file.display().to_string());
    run(all, b"")
}

#[test]
fn every_stream_gives_its_expected_output_whole_by_1_and_by_7_bytes() {
    let streams = corpus();
    assert!(
        streams.len() >= 30,
        "the corpus has {} streams",
        streams.len()
    );
    for (api, file, args) in &streams {
        let expected = std::fs::read_to_string(file.with_extension("out")).unwrap();
        let whole = stream(api, file, args, &[]);
        assert_eq!(whole.1, expected, "{}", file.display());
        for chunk in ["1", "7"] {
            let chunked = stream(api, file, args, &["--chunk", chunk]);
            assert_eq!(chunked, whole, "{} by {chunk}", file.display());
        }
        // The exit status follows the end line: 0 exactly when the stream ended cleanly.
        let end: serde_json::Value =
            serde_json::from_str(expected.lines().last().unwrap()).unwrap();
        assert_eq!(end["type"], "end");
        let clean = end["ended_cleanly"].as_bool().unwrap();
        assert_eq!(whole.0, if clean { 0 } else { 1 }, "{}", file.display());
        // Errors carry a kind and an offset inside the file.
        if let Some(error) = end["error"].as_object() {
            let size = std::fs::metadata(file).unwrap().len();
            assert!(
                error["offset"].as_u64().unwrap() < size,
                "{}",
                file.display()
            );
            assert!(error["kind"].as_str().is_some_and(|k| !k.is_empty()));
        }
    }
}

#[test]
fn the_corpus_covers_every_quirk_of_the_specification() {
    let all: String = corpus()
        .iter()
        .map(|(_, file, _)| std::fs::read_to_string(file).unwrap())
        .collect();
    for quirk in [
        "\"obfuscation\"",
        "\"choices\":[]",
        "\"id\":\"\"",
        "\"id\":null",
        ": keep-alive",
        "\r\n",
        "\nevent: response.",
        "data:   {",
        "event: error",
        "\"status\":\"incomplete\"",
        "\"partial_json\":\"\"",
        "reasoning_content",
        "\"reasoning\":",
        "<thi",
        "response.custom_tool_call_input.delta",
        "response.apply_patch_call_operation_diff.delta",
        "\"type\":\"ping\"",
        "\"stop_reason\":\"max_tokens\"",
        "response.incomplete",
        "server_tool_use",
    ] {
        assert!(all.contains(quirk), "no stream has {quirk:?}");
    }
}

#[test]
fn skipped_events_are_counted_on_standard_error() {
    let file = corpus_file("openai-responses/unknown_events_output_index.sse");
    let (status, _, stderr) = stream("openai-responses", &file, &[], &[]);
    assert_eq!(status, 0);
    assert!(stderr.contains("skipped 2 events"), "{stderr}");
}

fn corpus_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpora/streams")
        .join(path)
}

/// `frontier stream --api API --apply` of the corpus file `path` into a fresh workspace
/// holding `files` (name, content), with `more` flags: the workspace, then the exit status
/// and both outputs.
fn apply_in_workspace(
    api: &str,
    path: &str,
    files: &[(&str, &str)],
    more: &[&str],
) -> (tempfile::TempDir, (i32, String, String)) {
    let dir = tempfile::tempdir().unwrap();
    for (name, content) in files {
        std::fs::write(dir.path().join(name), content).unwrap();
    }
    let root = dir.path().display().to_string();
    let mut flags = vec!["--apply", "--root", &root];
    flags.extend_from_slice(more);
    let output = stream(api, &corpus_file(path), &[], &flags);
    (dir, output)
}

/// The text of `name` in the workspace `dir`.
fn read(dir: &tempfile::TempDir, name: &str) -> String {
    std::fs::read_to_string(dir.path().join(name)).unwrap()
}

#[test]
fn apply_applies_confirmed_patches_as_they_stream() {
    let (dir, (status, stdout, stderr)) = apply_in_workspace(
        "openai-responses",
        "openai-responses/apply_patch_custom.sse",
        &[("notes.txt", "old line\n")],
        &["--chunk", "3"],
    );
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(stdout.lines().count(), 2);
    assert_eq!(read(&dir, "hello.txt"), "hello\nworld\n");
    assert_eq!(read(&dir, "notes.txt"), "new line\n");
    assert!(stderr.contains("applied: A hello.txt"), "{stderr}");

    // The built-in apply_patch_call: one operation per call.
    let (dir, (status, _, stderr)) = apply_in_workspace(
        "openai-responses",
        "openai-responses/apply_patch_call.sse",
        &[("notes.txt", "old line\n"), ("old.txt", "bye\n")],
        &[],
    );
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(read(&dir, "notes.txt"), "new line\n");
    assert!(!dir.path().join("old.txt").exists());
}

#[test]
fn a_relabelled_length_or_a_malformed_patch_is_never_applied() {
    for (api, path) in [
        ("openai-chat", "openai-chat/relabelled_length.sse"),
        ("openai-responses", "openai-responses/custom_tools.sse"),
    ] {
        let (dir, (_, stdout, _)) =
            apply_in_workspace(api, path, &[("a.txt", "keep\n"), ("x", "keep\n")], &[]);
        let calls = stdout
            .lines()
            .filter(|l| l.starts_with("{\"type\":\"tool_call\""));
        assert!(calls.clone().count() >= 1, "{stdout}");
        assert!(
            calls.into_iter().all(|l| !l.contains("apply_patch")),
            "{stdout}"
        );
        assert!(stdout
            .lines()
            .last()
            .unwrap()
            .contains("\"malformed_tool_calls\":[{"));
        assert_eq!(read(&dir, "a.txt"), "keep\n");
        assert_eq!(read(&dir, "x"), "keep\n");
    }
}

#[test]
fn a_patch_that_cannot_apply_changes_nothing_and_fails_the_command() {
    // notes.txt lacks the line the Update removes: the Add of the same patch is not written.
    let (dir, (status, stdout, stderr)) = apply_in_workspace(
        "openai-responses",
        "openai-responses/apply_patch_custom.sse",
        &[("notes.txt", "something else\n")],
        &[],
    );
    assert_eq!(status, 1);
    assert!(
        stdout.contains("\"kind\":\"apply_patch\""),
        "the call itself is confirmed"
    );
    assert!(stderr.contains("not applied"), "{stderr}");
    assert!(!dir.path().join("hello.txt").exists());
    assert_eq!(read(&dir, "notes.txt"), "something else\n");
}

#[test]
fn a_function_call_named_apply_patch_is_applied_from_its_patch_argument() {
    let patch = "*** Begin Patch\n*** Add File: new.txt\n+x\n*** End Patch\n";
    let args = serde_json::json!({ "patch": patch }).to_string();
    let chunk = serde_json::json!({"choices":[{"index":0,"delta":{"tool_calls":[
        {"index":0,"id":"call_1","function":{"name":"apply_patch","arguments":args}}]},
        "finish_reason":"tool_calls"}]});
    let body = format!("data: {chunk}\n\ndata: [DONE]\n\n");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().display().to_string();
    let (status, _, stderr) = run(
        [
            "stream",
            "--api",
            "openai-chat",
            "--apply",
            "--root",
            &root,
            "-",
        ],
        body.as_bytes(),
    );
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(read(&dir, "new.txt"), "x\n");
}

#[test]
fn a_data_line_over_the_limit_is_an_error_with_its_offset_and_earlier_calls_stay() {
    let first = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\n\n\
                 data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"c2\",\"function\":{\"name\":\"g\",\"arguments\":\"\"}}]}}]}\n\n";
    let mut body = first.as_bytes().to_vec();
    body.extend_from_slice(b"data: ");
    body.resize(body.len() + 8 * 1024 * 1024 + 1, b'x');
    body.extend_from_slice(b"\n\ndata: [DONE]\n\n");
    let (status, stdout, _) = run(["stream", "--api", "openai-chat", "-"], &body);
    assert_eq!(status, 1);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout:.300}");
    assert!(lines[0].contains("\"id\":\"c1\""));
    let end: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(end["error"]["kind"], "line_too_long");
    assert_eq!(end["error"]["offset"], first.len());
    assert_eq!(end["incomplete_tool_calls"][0]["id"], "c2");
}

#[test]
fn usage_errors_exit_2() {
    let cases: [(&[&str], &str); 5] = [
        (&["--api", "gemini"], "an unknown API"),
        (&["--api", "openai-chat", "--apply"], "--apply needs --root"),
        (
            &[
                "--api",
                "openai-chat",
                "--apply",
                "--root",
                "/nonexistent/x",
            ],
            "a root that does not exist",
        ),
        (
            &["--api", "openai-chat", "--mode", "extended"],
            "--mode needs --ctl",
        ),
        (
            &["--api", "openai-chat", "--ctl", "--mode", "bogus"],
            "an unknown mode",
        ),
    ];
    for (args, why) in cases {
        let all = ["stream"].iter().chain(args).chain(&["-"]);
        let (status, _, stderr) = run(all, b"");
        assert_eq!(status, 2, "{why}: {stderr}");
        if why == "an unknown mode" {
            assert!(stderr.contains("unknown mode \"bogus\""), "{stderr}");
        }
    }
}

#[test]
fn the_truncation_experiment_in_provider_formats() {
    let (status, stdout, stderr) = run(["truncate", "--providers", "--json"], b"");
    assert_eq!(status, 0, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(report["calls"], 26);
    for format in ["openai_chat", "anthropic"] {
        let runtimes = &report["providers"][format];
        let cuts = runtimes["frontier"]["cut_points"].as_u64().unwrap();
        for runtime in [
            "frontier",
            "frontier_relabelled",
            "accumulate_parse",
            "healing",
        ] {
            assert_eq!(runtimes[runtime]["cut_points"], cuts, "{format} {runtime}");
        }
        // frontier executes nothing wrong under an honest limit; healing does.
        assert_eq!(runtimes["frontier"]["executed_wrong"], 0, "{format}");
        assert!(runtimes["healing"]["executed_wrong"].as_u64().unwrap() > 0);
        // Relabelled, the only wrong calls are those cut right after their header: one per
        // call of the corpus.
        assert_eq!(
            runtimes["frontier_relabelled"]["executed_wrong"], 26,
            "{format}"
        );
    }
}
