//! Durability: a run's journal and content store on disk rebuild its store byte for byte;
//! a crash between any two writes (a write that fails, torn, at every index) leaves a run
//! that replays to the last committed state; a journal cut at any byte replays up to the last
//! whole change and says so; a missing or altered payload is reported with its key.

mod context_support;

use std::io;
use std::path::Path;
use std::sync::Arc;

use context_support::call;
use frontier::context::durable::{Durability, RunDir, Storage, JOURNAL_FILE};
use frontier::context::replay::{replay, ReplayError, StopReason};
use frontier::context::tokens::CpatEstimator;
use frontier::context::{Actor, Config, Engine, EngineError, Message};
use serde_json::json;

type Step = fn(&mut Engine) -> Result<(), EngineError>;

/// Applies a patch, which must be accepted unless its reason is "rejected".
fn args(e: &mut Engine, v: serde_json::Value) -> Result<(), EngineError> {
    let r = e.apply_args(&v.to_string(), Actor::Agent)?;
    assert_eq!(r.ok, v["reason"] != "rejected", "{v}: {r:?}");
    Ok(())
}

/// A session: every kind of change, multi-record ones included.
fn steps() -> Vec<Step> {
    vec![
        |e| e.ingest(Message::System { text: "sys".into() }).map(|_| ()),
        |e| {
            e.ingest(Message::User {
                text: "question one".into(),
                origin: None,
            })
            .map(|_| ())
        },
        |e| {
            e.ingest(Message::Assistant {
                text: String::new(),
                tool_calls: vec![call("c1", "read"), call("c2", "read")],
                reasoning: Some("read both".into()),
            })
            .map(|_| ())
        },
        |e| {
            e.ingest(Message::ToolResult {
                tool_call_id: "c1".into(),
                name: "read".into(),
                text: r#"{"rows": [1, 2], "token": "s3cr3t", "n": 1.50}"#.into(),
            })
            .map(|_| ())
        },
        |e| {
            e.ingest(Message::ToolResult {
                tool_call_id: "c2".into(),
                name: "read".into(),
                text: "a long result ".repeat(100),
            })
            .map(|_| ())
        },
        |e| {
            e.ingest(Message::Assistant {
                text: "both read".into(),
                tool_calls: vec![],
                reasoning: None,
            })
            .map(|_| ())
        },
        |e| {
            args(
                e,
                json!({"reason":"secret","operations":[{"op":"redact","ids":["tool_005"],"drop":["token"]}]}),
            )
        },
        |e| {
            args(
                e,
                json!({"reason":"big","operations":[{"op":"payload_offload","ids":["tool_006"],"description":"d","content":"s","retrieval_hint":"h"}]}),
            )
        },
        |e| e.record_llm_call("m", &json!({"prompt_tokens": 300, "completion_tokens": 5})),
        |e| {
            args(
                e,
                json!({"reason":"rejected","operations":[{"op":"restore","ids":["nope"]}]}),
            )
        },
        |e| {
            e.ingest(Message::User {
                text: "question two".into(),
                origin: None,
            })
            .map(|_| ())
        },
        |e| {
            args(
                e,
                json!({"reason":"fold the first turn","operations":[
            {"op":"compact","ids":["assistant_003","tool_005","tool_006"],"description":"reads","content":"rows 1, 2","preserve":["rows"],"drop":["noise"]},
            {"op":"merge","ids":["user_002","assistant_007"],"description":"turn one","content":"q1 answered"}]}),
            )
        },
        |e| {
            args(
                e,
                json!({"reason":"again","operations":[{"op":"restore","ids":["tool_006"]},
            {"op":"replace","ids":["assistant_007"],"content":"both were read"},
            {"op":"payload_offload","ids":["assistant_007"],"description":"d","content":"s","retrieval_hint":"h"}]}),
            )
        },
    ]
}

fn config() -> Config {
    let mut c = Config::default();
    c.options.allow_redact = true;
    c.options.allow_replace = true;
    c
}

fn clock() -> impl FnMut() -> String + Send {
    let mut n = 0;
    move || {
        n += 1;
        format!("2026-01-01T00:00:{:02}.000Z", n % 60)
    }
}

/// Everything a replay must rebuild.
fn state(e: &Engine) -> String {
    let blocks: Vec<_> = e.store().iter().collect();
    json!({"blocks": blocks, "content": e.content().sorted(), "seq": e.seq(),
        "budget": e.budget(), "view": e.view(), "counter": e.store().id_counter()})
    .to_string()
}

fn create(dir: &Path) -> Engine {
    let mut e = Engine::create(dir, config(), Arc::new(CpatEstimator), Durability::Fsync).unwrap();
    e.set_clock(clock());
    e
}

fn replayed(dir: &Path) -> frontier::context::replay::Replayed {
    replay(dir, Arc::new(CpatEstimator)).unwrap()
}

#[test]
fn a_run_replays_to_the_same_store_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = create(dir.path());
    for step in steps() {
        step(&mut e).unwrap();
    }
    let r = replayed(dir.path());
    assert_eq!(r.stopped, None);
    assert_eq!(state(&r.engine), state(&e));
    // The run goes on after a reopen, and replays again.
    let mut reopened =
        Engine::open(dir.path(), Arc::new(CpatEstimator), Durability::Fsync).unwrap();
    reopened.set_clock(clock());
    reopened
        .ingest(Message::User {
            text: "three".into(),
            origin: None,
        })
        .unwrap();
    assert_eq!(state(&replayed(dir.path()).engine), state(&reopened));
}

/// A storage that fails at its `fail_at`-th write, leaving half of what it was writing.
struct Crashing {
    inner: RunDir,
    writes: usize,
    fail_at: usize,
}

impl Crashing {
    fn tick(&mut self) -> bool {
        self.writes += 1;
        self.writes - 1 == self.fail_at
    }
}

fn crash() -> io::Error {
    io::Error::other("injected crash")
}

impl Storage for Crashing {
    fn put(&mut self, key: &str, payload: &str) -> io::Result<()> {
        if self.tick() {
            let half = payload
                .char_indices()
                .nth(payload.chars().count() / 2)
                .map_or(0, |(i, _)| i);
            self.inner.put(key, &payload[..half])?;
            return Err(crash());
        }
        self.inner.put(key, payload)
    }
    fn sync_puts(&mut self) -> io::Result<()> {
        if self.tick() {
            return Err(crash());
        }
        self.inner.sync_puts()
    }
    fn append(&mut self, lines: &str) -> io::Result<()> {
        if self.tick() {
            let cut = lines.len() * 2 / 3;
            let cut = (0..=cut)
                .rev()
                .find(|&i| lines.is_char_boundary(i))
                .unwrap();
            self.inner.append(&lines[..cut])?;
            return Err(crash());
        }
        self.inner.append(lines)
    }
}

#[test]
fn a_crash_at_any_write_replays_to_the_last_committed_state() {
    let mut k = 0;
    loop {
        let dir = tempfile::tempdir().unwrap();
        let mut e = create(dir.path());
        e.set_storage(Box::new(Crashing {
            inner: RunDir::open(dir.path(), Durability::Flush).unwrap(),
            writes: 0,
            fail_at: k,
        }));
        let mut committed = state(&e);
        let mut crashed = false;
        for step in steps() {
            match step(&mut e) {
                Ok(()) => committed = state(&e),
                Err(EngineError::Storage(_)) => {
                    crashed = true;
                    assert_eq!(
                        state(&e),
                        committed,
                        "write {k}: a failed change is visible"
                    );
                    assert!(matches!(step(&mut e), Err(EngineError::Poisoned)));
                    break;
                }
                Err(other) => panic!("write {k}: {other}"),
            }
        }
        if !crashed {
            assert!(k > 20, "the session makes only {k} writes");
            break;
        }
        let r = replayed(dir.path());
        assert_eq!(state(&r.engine), committed, "write {k}: replay differs");
        // Reopening cuts the torn tail and goes on.
        let mut reopened =
            Engine::open(dir.path(), Arc::new(CpatEstimator), Durability::Flush).unwrap();
        reopened
            .ingest(Message::User {
                text: "after the crash".into(),
                origin: None,
            })
            .unwrap();
        let again = replayed(dir.path());
        assert_eq!(again.stopped, None, "write {k}");
        assert_eq!(state(&again.engine), state(&reopened), "write {k}");
        k += 1;
    }
}

#[test]
fn a_journal_cut_at_any_byte_replays_up_to_the_last_whole_change_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = create(dir.path());
    let journal = dir.path().join(JOURNAL_FILE);
    let mut marks = vec![(0u64, state(&e))];
    for step in steps() {
        step(&mut e).unwrap();
        marks.push((std::fs::metadata(&journal).unwrap().len(), state(&e)));
    }
    let full = std::fs::read(&journal).unwrap();
    let cut_dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(dir.path().join("content")).unwrap() {
        let entry = entry.unwrap();
        std::fs::create_dir_all(cut_dir.path().join("content")).unwrap();
        std::fs::copy(
            entry.path(),
            cut_dir.path().join("content").join(entry.file_name()),
        )
        .unwrap();
    }
    std::fs::copy(dir.path().join("run.json"), cut_dir.path().join("run.json")).unwrap();
    for cut in 0..=full.len() {
        std::fs::write(cut_dir.path().join(JOURNAL_FILE), &full[..cut]).unwrap();
        let r = replayed(cut_dir.path());
        let (end, expected) = marks
            .iter()
            .rev()
            .find(|(end, _)| *end as usize <= cut)
            .unwrap();
        assert_eq!(&state(&r.engine), expected, "cut at {cut}");
        assert_eq!(r.valid_len, *end);
        match &r.stopped {
            None => assert_eq!(*end as usize, cut, "cut at {cut}: not reported"),
            Some(s) => {
                assert_eq!(s.offset, *end, "cut at {cut}");
                let torn = full[..cut].last() != Some(&b'\n');
                let expected = if torn && !full[*end as usize..cut].contains(&b'\n') {
                    StopReason::TornRecord
                } else {
                    StopReason::UnfinishedChange
                };
                assert_eq!(s.reason, expected, "cut at {cut}");
            }
        }
    }
}

#[test]
fn a_missing_or_altered_payload_is_reported_with_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = create(dir.path());
    for step in steps() {
        step(&mut e).unwrap();
    }
    let content = dir.path().join("content");
    // A payload an ingest names, and one a patch stored.
    for key in [
        "tool_006@v1",
        "tool_005@v2",
        "summary_009@v1",
        "assistant_007@v2",
    ] {
        let file = content.join(format!("{key}.txt"));
        let original = std::fs::read(&file).unwrap();
        std::fs::write(&file, b"tampered").unwrap();
        match replay(dir.path(), Arc::new(CpatEstimator)) {
            Err(ReplayError::ContentAltered { key: k }) => assert_eq!(k, key),
            other => panic!("{key}: {other:?}"),
        }
        std::fs::remove_file(&file).unwrap();
        let err = replay(dir.path(), Arc::new(CpatEstimator)).unwrap_err();
        assert!(
            matches!(&err, ReplayError::ContentMissing { key: k } if k == key),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!("content {key}: missing from the content store")
        );
        std::fs::write(&file, original).unwrap();
    }
    assert_eq!(state(&replayed(dir.path()).engine), state(&e));
}

#[test]
fn a_record_altered_in_the_middle_is_an_error_not_a_silent_stop() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = create(dir.path());
    for step in steps() {
        step(&mut e).unwrap();
    }
    let journal = dir.path().join(JOURNAL_FILE);
    let text = std::fs::read_to_string(&journal).unwrap();
    let broken = text.replacen("\"type\":\"ingest\"", "\"type\":\"ingest", 1);
    std::fs::write(&journal, broken).unwrap();
    let err = replay(dir.path(), Arc::new(CpatEstimator)).unwrap_err();
    assert_eq!(err.kind(), "bad_record");
    assert!(err.to_string().starts_with("journal line 1: "), "{err}");
    // A patch whose journaled result no longer matches is reported with its seq.
    let mut seq = 0;
    let diverged: String = text
        .lines()
        .map(|l| {
            let mut r: serde_json::Value = serde_json::from_str(l).unwrap();
            if r["type"] == "patch" && r["result"]["created_block_ids"] != json!([]) {
                seq = r["seq"].as_u64().unwrap();
                r["result"]["freed_tokens"] =
                    json!(r["result"]["freed_tokens"].as_u64().unwrap() + 7);
            }
            r.to_string() + "\n"
        })
        .collect();
    assert!(seq > 0);
    std::fs::write(&journal, diverged).unwrap();
    let err = replay(dir.path(), Arc::new(CpatEstimator)).unwrap_err();
    assert_eq!(err.kind(), "diverged", "{err}");
    assert!(
        err.to_string().starts_with(&format!(
            "journal record {seq}: replays differently: result "
        )),
        "{err}"
    );
}
