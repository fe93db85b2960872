//! The apply_patch engine on units built by hand: safety (paths, atomicity), ambiguity, CRLF,
//! Unicode folding, placement of pure additions, and the differences between the policies.

mod apply_support;

use apply_support::{read, workspace};
use std::fs;
use std::path::Path;

use frontier::apply::{apply_operations, ErrorKind, PatchSession, Policy, Workspace};
use frontier::apply_patch::units::{ChangeLine, Chunk, FileOperation};

fn ctx(t: &str) -> ChangeLine {
    ChangeLine::Context(t.into())
}
fn del(t: &str) -> ChangeLine {
    ChangeLine::Remove(t.into())
}
fn add(t: &str) -> ChangeLine {
    ChangeLine::Add(t.into())
}

fn chunk(context: Option<&str>, lines: Vec<ChangeLine>) -> Chunk {
    Chunk {
        context: context.map(str::to_owned),
        lines,
        end_of_file: false,
    }
}

fn update(path: &str, chunks: Vec<Chunk>) -> FileOperation {
    FileOperation::Update {
        path: path.into(),
        move_to: None,
        chunks,
    }
}

fn adding(path: &str, lines: &[&str]) -> FileOperation {
    FileOperation::Add {
        path: path.into(),
        lines: lines.iter().map(|l| l.to_string()).collect(),
    }
}

/// Every file under `root`, relative path and content, sorted.
fn tree(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.push((rel, fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn run(
    dir: &tempfile::TempDir,
    policy: Policy,
    ops: &[FileOperation],
) -> Result<(), frontier::apply::Failure> {
    apply_operations(Workspace::new(dir.path()).unwrap(), policy, ops).map(|_| ())
}

#[test]
fn paths_outside_the_root_are_refused_under_both_policies() {
    let outside = tempfile::tempdir().unwrap();
    for policy in [Policy::Safe, Policy::Codex] {
        let dir = workspace(&[("a.txt", "a\n")]);
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
        let before = tree(dir.path());
        for (path, kind) in [
            ("../escape.txt", ErrorKind::PathEscapesRoot),
            ("sub/../../escape.txt", ErrorKind::PathEscapesRoot),
            ("/tmp/abs.txt", ErrorKind::AbsolutePath),
            ("link/x.txt", ErrorKind::SymlinkOutsideRoot),
        ] {
            let err = run(&dir, policy, &[adding(path, &["x"])]).unwrap_err();
            assert_eq!(err.error.kind, kind, "{path}");
            assert_eq!(err.error.path, path);
            let err =
                run(&dir, policy, &[FileOperation::Delete { path: path.into() }]).unwrap_err();
            assert_eq!(err.error.kind, kind, "{path}");
        }
        // A move whose destination leads out is refused too.
        let mv = FileOperation::Update {
            path: "a.txt".into(),
            move_to: Some("link/moved.txt".into()),
            chunks: vec![chunk(None, vec![del("a"), add("b")])],
        };
        assert_eq!(
            run(&dir, policy, &[mv]).unwrap_err().error.kind,
            ErrorKind::SymlinkOutsideRoot
        );
        assert_eq!(tree(dir.path()), before);
        assert!(fs::read_dir(outside.path()).unwrap().next().is_none());
    }
}

#[test]
fn a_failure_in_the_last_operation_changes_nothing_under_safe() {
    let dir = workspace(&[
        ("a.txt", "one\ntwo\n"),
        ("b.txt", "b\n"),
        ("gone.txt", "g\n"),
    ]);
    let before = tree(dir.path());
    let ops = [
        adding("new/dir/c.txt", &["c"]),
        update("a.txt", vec![chunk(None, vec![del("one"), add("ONE")])]),
        FileOperation::Delete {
            path: "gone.txt".into(),
        },
        FileOperation::Update {
            path: "b.txt".into(),
            move_to: Some("moved/b.txt".into()),
            chunks: vec![chunk(None, vec![del("b"), add("B")])],
        },
        update("a.txt", vec![chunk(None, vec![del("not there"), add("x")])]),
    ];
    let err = run(&dir, Policy::Safe, &ops).unwrap_err();
    assert_eq!(err.error.kind, ErrorKind::LinesNotFound);
    assert_eq!(err.error.operation, "update");
    assert_eq!(err.error.path, "a.txt");
    assert_eq!(err.error.lines, vec!["-not there", "+x"]);
    assert!(err.written.is_empty());
    assert_eq!(tree(dir.path()), before);
    assert!(!dir.path().join("new").exists());

    // The codex policy keeps what came before the failure, as Codex does.
    let err = run(&dir, Policy::Codex, &ops).unwrap_err();
    assert_eq!(err.written.len(), 5);
    assert_eq!(read(&dir, "new/dir/c.txt"), "c\n");
    assert_eq!(read(&dir, "a.txt"), "ONE\ntwo\n");
    assert_eq!(read(&dir, "moved/b.txt"), "B\n");
    assert!(!dir.path().join("gone.txt").exists());
}

#[test]
fn an_ambiguous_chunk_is_an_error_with_candidates() {
    let text = "fn a() {\n    x = 1;\n}\nfn b() {\n    x = 1;\n}\n";
    let dir = workspace(&[("f.rs", text)]);
    let op = update(
        "f.rs",
        vec![chunk(None, vec![del("    x = 1;"), add("    x = 2;")])],
    );
    let err = run(&dir, Policy::Safe, std::slice::from_ref(&op)).unwrap_err();
    assert_eq!(err.error.kind, ErrorKind::Ambiguous);
    assert_eq!(err.error.candidates(), [2, 5]);
    assert_eq!(read(&dir, "f.rs"), text);
    assert!(err.error.to_string().contains("candidate lines: 2, 5"));

    // An @@ context line singles one out.
    let op2 = update(
        "f.rs",
        vec![chunk(
            Some("fn b() {"),
            vec![del("    x = 1;"), add("    x = 2;")],
        )],
    );
    run(&dir, Policy::Safe, &[op2]).unwrap();
    assert_eq!(
        read(&dir, "f.rs"),
        "fn a() {\n    x = 1;\n}\nfn b() {\n    x = 2;\n}\n"
    );

    // Codex takes the first.
    let dir = workspace(&[("f.rs", text)]);
    run(&dir, Policy::Codex, &[op]).unwrap();
    assert_eq!(
        read(&dir, "f.rs"),
        "fn a() {\n    x = 2;\n}\nfn b() {\n    x = 1;\n}\n"
    );
}

#[test]
fn ambiguity_is_decided_at_the_winning_pass() {
    // Exact once, trimmed twice: the exact pass wins, so it is not ambiguous.
    let dir = workspace(&[("f", "  x\nx\n  x \n")]);
    run(
        &dir,
        Policy::Safe,
        &[update("f", vec![chunk(None, vec![del("x"), add("y")])])],
    )
    .unwrap();
    assert_eq!(read(&dir, "f"), "  x\ny\n  x \n");
    // Only trimmed matches, two of them: ambiguous.
    let dir = workspace(&[("f", "  x\nz\n  x \n")]);
    let err = run(
        &dir,
        Policy::Safe,
        &[update("f", vec![chunk(None, vec![del("x"), add("y")])])],
    );
    assert_eq!(err.unwrap_err().error.candidates(), [1, 3]);
}

#[test]
fn context_lines_that_occur_twice_must_lead_to_one_place() {
    let text = "impl A {\n    fn new() {\n        init();\n    }\n}\nimpl B {\n    fn new() {\n        init();\n    }\n}\n";
    let dir = workspace(&[("f", text)]);
    let op = update(
        "f",
        vec![chunk(
            Some("    fn new() {"),
            vec![del("        init();"), add("        go();")],
        )],
    );
    let err = run(&dir, Policy::Safe, &[op]).unwrap_err();
    assert_eq!(err.error.kind, ErrorKind::Ambiguous);
    assert_eq!(err.error.candidates(), [3, 8]);
    let op = update(
        "f",
        vec![chunk(
            Some("impl B {"),
            vec![del("        init();"), add("        go();")],
        )],
    );
    run(&dir, Policy::Safe, &[op]).unwrap();
    assert!(read(&dir, "f").ends_with("impl B {\n    fn new() {\n        go();\n    }\n}\n"));
}

#[test]
fn a_pure_addition_goes_after_its_context_line_under_safe_and_to_the_end_under_codex() {
    let text = "[a]\nx = 1\n[b]\ny = 2\n";
    let op = update("c.toml", vec![chunk(Some("[a]"), vec![add("new = 0")])]);
    let dir = workspace(&[("c.toml", text)]);
    run(&dir, Policy::Safe, std::slice::from_ref(&op)).unwrap();
    assert_eq!(read(&dir, "c.toml"), "[a]\nnew = 0\nx = 1\n[b]\ny = 2\n");
    let dir = workspace(&[("c.toml", text)]);
    run(&dir, Policy::Codex, &[op]).unwrap();
    assert_eq!(read(&dir, "c.toml"), "[a]\nx = 1\n[b]\ny = 2\nnew = 0\n");
    // A context line that occurs twice cannot place a pure addition.
    let dir = workspace(&[("c.toml", "[a]\nx\n[a]\ny\n")]);
    let op = update("c.toml", vec![chunk(Some("[a]"), vec![add("new")])]);
    let e = run(&dir, Policy::Safe, &[op]).unwrap_err();
    assert_eq!(
        (e.error.kind, e.error.candidates().to_vec()),
        (ErrorKind::Ambiguous, vec![1, 3])
    );
    // In a CRLF file the added lines get CRLF.
    let dir = workspace(&[("w.ini", "[a]\r\nx\r\n")]);
    run(
        &dir,
        Policy::Safe,
        &[update("w.ini", vec![chunk(Some("[a]"), vec![add("n")])])],
    )
    .unwrap();
    assert_eq!(read(&dir, "w.ini"), "[a]\r\nn\r\nx\r\n");
    // A bare @@ appends under both.
    for policy in [Policy::Safe, Policy::Codex] {
        let dir = workspace(&[("c.toml", text)]);
        run(
            &dir,
            policy,
            &[update("c.toml", vec![chunk(None, vec![add("z = 3")])])],
        )
        .unwrap();
        assert_eq!(read(&dir, "c.toml"), format!("{text}z = 3\n"));
    }
}

#[test]
fn crlf_files_keep_crlf_under_safe() {
    let text = "one\r\ntwo  \r\nthree\r\n";
    let op = update(
        "w.txt",
        vec![chunk(
            None,
            vec![ctx("one"), del("two"), add("TWO"), add("2b")],
        )],
    );
    let dir = workspace(&[("w.txt", text)]);
    run(&dir, Policy::Safe, std::slice::from_ref(&op)).unwrap();
    // Context keeps the file's own text; added lines get CRLF.
    assert_eq!(read(&dir, "w.txt"), "one\r\nTWO\r\n2b\r\nthree\r\n");
    // Codex matches at its trailing-whitespace pass and writes LF, as Codex does on Unix.
    let dir = workspace(&[("w.txt", text)]);
    run(&dir, Policy::Codex, &[op]).unwrap();
    assert_eq!(read(&dir, "w.txt"), "one\nTWO\n2b\nthree\r\n");
}

#[test]
fn unicode_punctuation_is_folded_at_the_last_pass() {
    let text = "let s = \u{201C}hi\u{201D};\u{00A0}// \u{2014} note\nnext\n";
    let op = update(
        "u.rs",
        vec![chunk(
            None,
            vec![del("let s = \"hi\"; // - note"), add("let s = \"bye\";")],
        )],
    );
    for policy in [Policy::Safe, Policy::Codex] {
        let dir = workspace(&[("u.rs", text)]);
        run(&dir, policy, std::slice::from_ref(&op)).unwrap();
        assert_eq!(read(&dir, "u.rs"), "let s = \"bye\";\nnext\n");
    }
    // Folding is only for the listed characters.
    let dir = workspace(&[("u.rs", "a \u{2603} b\n")]);
    let op = update("u.rs", vec![chunk(None, vec![del("a * b"), add("c")])]);
    assert_eq!(
        run(&dir, Policy::Safe, &[op]).unwrap_err().error.kind,
        ErrorKind::LinesNotFound
    );
}

#[test]
fn end_of_file_chunks_match_at_the_end() {
    let text = "x\ny\nx\ny\n";
    let mut c = chunk(None, vec![ctx("x"), del("y"), add("z")]);
    c.end_of_file = true;
    for policy in [Policy::Safe, Policy::Codex] {
        let dir = workspace(&[("e", text)]);
        run(&dir, policy, &[update("e", vec![c.clone()])]).unwrap();
        assert_eq!(read(&dir, "e"), "x\ny\nx\nz\n");
    }
}

#[test]
fn missing_files_directories_and_moves() {
    let dir = workspace(&[("d/f", "f\n"), ("src.txt", "s\n"), ("dst.txt", "old\n")]);
    for policy in [Policy::Safe, Policy::Codex] {
        let e = run(&dir, policy, &[FileOperation::Delete { path: "d".into() }]).unwrap_err();
        assert_eq!(e.error.kind, ErrorKind::IsDirectory);
        let e = run(
            &dir,
            policy,
            &[FileOperation::Delete {
                path: "nope".into(),
            }],
        )
        .unwrap_err();
        assert_eq!(e.error.kind, ErrorKind::FileNotFound);
        let e = run(
            &dir,
            policy,
            &[update("nope", vec![chunk(None, vec![del("a")])])],
        )
        .unwrap_err();
        assert_eq!(e.error.kind, ErrorKind::FileNotFound);
        assert_eq!(
            run(&dir, policy, &[]).unwrap_err().error.kind,
            ErrorKind::EmptyPatch
        );
    }
    let mv = FileOperation::Update {
        path: "src.txt".into(),
        move_to: Some("dst.txt".into()),
        chunks: vec![chunk(None, vec![del("s"), add("moved")])],
    };
    run(&dir, Policy::Safe, &[mv]).unwrap();
    assert!(!dir.path().join("src.txt").exists());
    assert_eq!(read(&dir, "dst.txt"), "moved\n");
}

#[test]
fn later_operations_see_earlier_ones() {
    let dir = workspace(&[]);
    let ops = [
        adding("n.txt", &["a", "b"]),
        update("n.txt", vec![chunk(None, vec![del("b"), add("c")])]),
        update("n.txt", vec![chunk(None, vec![ctx("a"), add("a2")])]),
    ];
    run(&dir, Policy::Safe, &ops).unwrap();
    assert_eq!(read(&dir, "n.txt"), "a\na2\nc\n");
}

#[test]
fn streaming_reports_the_first_failing_chunk_before_the_operation_ends() {
    let dir = workspace(&[("s.txt", "a\nb\nc\n")]);
    let mut session = PatchSession::new(Workspace::new(dir.path()).unwrap(), Policy::Safe);
    session.operation(&adding("first.txt", &["1"])).unwrap();
    session.begin_update("s.txt").unwrap();
    session
        .chunk(&chunk(None, vec![del("a"), add("A")]))
        .unwrap();
    let e = session.chunk(&chunk(None, vec![del("zzz")])).unwrap_err();
    assert_eq!(e.kind, ErrorKind::LinesNotFound);
    // The session stays failed, and the commit writes nothing.
    assert_eq!(
        session.operation(&adding("late.txt", &["x"])).unwrap_err(),
        e
    );
    assert_eq!(*session.commit().unwrap_err().error, e);
    assert_eq!(
        tree(dir.path()),
        vec![("s.txt".to_owned(), b"a\nb\nc\n".to_vec())]
    );

    // Chunks given while streaming are not located twice.
    let mut session = PatchSession::new(Workspace::new(dir.path()).unwrap(), Policy::Safe);
    let c = chunk(None, vec![del("b"), add("B")]);
    session.begin_update("s.txt").unwrap();
    session.chunk(&c).unwrap();
    session.operation(&update("s.txt", vec![c])).unwrap();
    session.commit().unwrap();
    assert_eq!(read(&dir, "s.txt"), "a\nB\nc\n");
}

#[test]
fn updates_end_with_one_newline_and_keep_blank_lines_under_safe() {
    let dir = workspace(&[("n", "a\nb")]);
    run(
        &dir,
        Policy::Safe,
        &[update("n", vec![chunk(None, vec![del("a"), add("x")])])],
    )
    .unwrap();
    assert_eq!(read(&dir, "n"), "x\nb\n");
    // Codex drops one trailing blank line of the file; safe keeps the file as it was.
    let op = update("m", vec![chunk(None, vec![del("a"), add("x")])]);
    let dir = workspace(&[("m", "a\n\n")]);
    run(&dir, Policy::Safe, std::slice::from_ref(&op)).unwrap();
    assert_eq!(read(&dir, "m"), "x\n\n");
    let dir = workspace(&[("m", "a\n\n")]);
    run(&dir, Policy::Codex, &[op]).unwrap();
    assert_eq!(read(&dir, "m"), "x\n");
}

mod model {
    //! Random edits checked against a reference model: the chunk's old lines are found by the
    //! obvious scan; safe applies at the single place or reports every place; codex applies at
    //! the first.
    use super::*;
    use proptest::prelude::*;

    fn occurrences(file: &[String], pattern: &[String]) -> Vec<usize> {
        if pattern.is_empty() || pattern.len() > file.len() {
            return Vec::new();
        }
        (0..=file.len() - pattern.len())
            .filter(|&i| file[i..i + pattern.len()] == *pattern)
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn edits_apply_where_the_model_says(
            file in proptest::collection::vec(prop_oneof!["a", "b", "c", "d"].prop_map(String::from), 1..30),
            start in 0usize..30,
            len in 1usize..4,
            before in 0usize..3,
            after in 0usize..3,
            new in proptest::collection::vec(prop_oneof!["x", "y"].prop_map(String::from), 0..3),
        ) {
            let start = start % file.len();
            let end = (start + len).min(file.len());
            let ctx_start = start.saturating_sub(before);
            let ctx_end = (end + after).min(file.len());
            let mut lines = Vec::new();
            lines.extend(file[ctx_start..start].iter().map(|l| ctx(l)));
            lines.extend(file[start..end].iter().map(|l| del(l)));
            lines.extend(new.iter().map(|l| add(l)));
            lines.extend(file[end..ctx_end].iter().map(|l| ctx(l)));
            let pattern: Vec<String> = file[ctx_start..ctx_end].to_vec();
            let places = occurrences(&file, &pattern);
            let text: String = file.iter().map(|l| format!("{l}\n")).collect();
            let op = update("f", vec![chunk(None, lines)]);
            let expected_at = |at: usize| -> String {
                let mut out: Vec<String> = file[..at].to_vec();
                out.extend(file[at..at + (start - ctx_start)].iter().cloned());
                out.extend(new.iter().cloned());
                out.extend(file[at + (end - ctx_start)..].iter().cloned());
                out.iter().map(|l| format!("{l}\n")).collect()
            };

            let dir = workspace(&[("f", &text)]);
            let r = run(&dir, Policy::Safe, std::slice::from_ref(&op));
            if places.len() == 1 {
                prop_assert!(r.is_ok());
                prop_assert_eq!(read(&dir, "f"), expected_at(places[0]));
            } else {
                let e = r.unwrap_err();
                prop_assert_eq!(e.error.kind, ErrorKind::Ambiguous);
                prop_assert_eq!(e.error.candidates().to_vec(), places.iter().map(|p| p + 1).collect::<Vec<_>>());
                prop_assert_eq!(read(&dir, "f"), text.clone());
            }

            let dir = workspace(&[("f", &text)]);
            run(&dir, Policy::Codex, &[op]).unwrap();
            prop_assert_eq!(read(&dir, "f"), expected_at(places[0]));
        }
    }
}

#[test]
fn a_failure_is_known_before_the_patch_ends() {
    use frontier::apply::apply_patch_stream;
    use frontier::apply_patch::StrictParser;
    let dir = workspace(&[("a.txt", "a\n")]);
    let mut patch = b"*** Begin Patch\n*** Update File: a.txt\n@@\n-missing\n+x\n".to_vec();
    let failing_chunk_ends = patch.len();
    for i in 0..200 {
        patch.extend_from_slice(format!("*** Add File: f{i}.txt\n+{i}\n").as_bytes());
    }
    patch.extend_from_slice(b"*** End Patch\n");
    let mut known_at = None;
    let ws = Workspace::new(dir.path()).unwrap();
    let r = apply_patch_stream(
        StrictParser::default(),
        &patch,
        1,
        ws,
        Policy::Safe,
        |e, at| {
            assert_eq!(e.kind, ErrorKind::LinesNotFound);
            known_at = Some(at);
        },
    );
    assert_eq!(r.unwrap_err().error.kind, ErrorKind::LinesNotFound);
    // The chunk is confirmed when the next line shows it is over (once `*** Add File: ` is
    // recognised), long before the patch ends.
    let at = known_at.unwrap() as usize;
    let marker = "*** Add File: ".len();
    assert!(
        at > failing_chunk_ends && at <= failing_chunk_ends + marker,
        "{at} vs {failing_chunk_ends}"
    );
    assert!(at < patch.len() / 50);
    assert_eq!(
        tree(dir.path()),
        vec![("a.txt".to_owned(), b"a\n".to_vec())]
    );

    // A patch cut off before its end applies nothing, even if every unit so far was fine.
    let ok = b"*** Begin Patch\n*** Add File: n.txt\n+n\n*** Update File: a.txt\n@@\n-a\n+b\n";
    let ws = Workspace::new(dir.path()).unwrap();
    let r = apply_patch_stream(
        StrictParser::default(),
        ok,
        3,
        ws,
        Policy::Codex,
        |_, _| panic!(),
    );
    assert_eq!(r.unwrap_err().error.kind, ErrorKind::Parse);
    assert_eq!(
        tree(dir.path()),
        vec![("a.txt".to_owned(), b"a\n".to_vec())]
    );
}

mod arbitrary {
    //! Nothing panics, whatever the chunks and the file; under safe a failure changes nothing.
    use super::*;
    use proptest::prelude::*;

    fn text() -> impl Strategy<Value = String> {
        prop_oneof!["a", " a", "b\t", "", "\u{2014}", "x\r"].prop_map(String::from)
    }

    fn any_chunk() -> impl Strategy<Value = Chunk> {
        (
            proptest::option::of(text()),
            proptest::collection::vec((0..3u8, text()), 0..5),
            any::<bool>(),
        )
            .prop_map(|(context, lines, end_of_file)| Chunk {
                context,
                lines: lines
                    .into_iter()
                    .map(|(k, t)| match k {
                        0 => ctx(&t),
                        1 => del(&t),
                        _ => add(&t),
                    })
                    .collect(),
                end_of_file,
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn never_panics(
            file in proptest::collection::vec(prop_oneof!["a\n", " a\n", "b\r\n", "\n", "\u{2014}\n", "a"], 0..10),
            chunks in proptest::collection::vec(any_chunk(), 0..4),
            codex in any::<bool>(),
        ) {
            let text: String = file.concat();
            let dir = workspace(&[("f", &text)]);
            let policy = if codex { Policy::Codex } else { Policy::Safe };
            let r = run(&dir, policy, &[update("f", chunks)]);
            if r.is_err() {
                prop_assert_eq!(read(&dir, "f"), text);
            }
        }
    }
}

#[test]
fn deleting_a_link_to_a_directory_removes_the_link_only() {
    for policy in [Policy::Safe, Policy::Codex] {
        let dir = workspace(&[("d/keep", "k\n")]);
        std::os::unix::fs::symlink("d", dir.path().join("ld")).unwrap();
        run(&dir, policy, &[FileOperation::Delete { path: "ld".into() }]).unwrap();
        assert!(
            fs::symlink_metadata(dir.path().join("ld")).is_err(),
            "{policy:?}"
        );
        assert_eq!(read(&dir, "d/keep"), "k\n");
        // The directory itself is still refused.
        let e = run(&dir, policy, &[FileOperation::Delete { path: "d".into() }]).unwrap_err();
        assert_eq!(e.error.kind, ErrorKind::IsDirectory);
    }
}
