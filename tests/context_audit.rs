//! Spec-audit cases for the context engine and its commands (`context.md`,
//! `cpat_reference.md`): behaviours the spec states that the other context tests did not pin
//! down, each found by probing the binary and the library.

mod cli_support;

use std::sync::Arc;

use cli_support::run;
use frontier::agent::context::vocab::VocabCounter;
use frontier::context::durable::Durability;
use frontier::context::tokens::TokenCounter;
use frontier::context::{Actor, Config, Engine, Message};
use frontier::mask::vocab::tiktoken::{self, Builtin};
use serde_json::Value;

/// `frontier context replay RUN_DIR` rebuilds any run `frontier run` writes, and a run
/// counted in the model's own tokens (`--vocab`, `run.json` naming `vocab:<VOCAB>`) is
/// rebuilt with that vocabulary, not refused for not being CPAT's estimator.
#[test]
fn replay_rebuilds_a_run_counted_with_a_vocabulary() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let vocab = Arc::new(tiktoken::builtin(Builtin::Cl100kBase).unwrap());
    let counter: Arc<dyn TokenCounter> =
        Arc::new(VocabCounter::new(vocab.clone(), "tiktoken:cl100k_base"));
    let mut engine =
        Engine::create(&run_dir, Config::default(), counter, Durability::Flush).unwrap();
    engine
        .ingest(Message::System {
            text: "You are an agent.".into(),
        })
        .unwrap();
    engine
        .ingest(Message::User {
            text: "Why did the nightly backup fail?".into(),
            origin: None,
        })
        .unwrap();
    engine
        .apply_args(r#"{"reason":"nothing yet","operations":[]}"#, Actor::Agent)
        .unwrap();
    let expected_view = engine.view();
    let expected_budget = engine.budget();
    drop(engine);

    let (code, out, err) = run(
        ["context".as_ref(), "replay".as_ref(), run_dir.as_os_str()],
        b"",
    );
    assert_eq!(code, 0, "{err}");
    let line: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(line["records"], 3);
    assert_eq!(line["stopped"], Value::Null);
    let user = &line["blocks"][1];
    let text = "Why did the nightly backup fail?";
    assert_eq!(user["token_count"], vocab.encode(text).unwrap().len());
    assert_eq!(
        line["view"]["estimated_tokens"],
        expected_view.estimated_tokens
    );
    assert_eq!(
        line["view"]["messages"],
        serde_json::json!(expected_view.messages)
    );
    assert_eq!(line["budget"]["used"], expected_budget.used);
}

/// A run whose vocabulary cannot be loaded any more cannot be rebuilt: exit 1, and the
/// message names the vocabulary.
#[test]
fn replay_of_a_run_with_an_unknown_vocabulary_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let vocab = Arc::new(tiktoken::builtin(Builtin::Cl100kBase).unwrap());
    let counter: Arc<dyn TokenCounter> =
        Arc::new(VocabCounter::new(vocab, "tiktoken:no_such_encoding"));
    let mut engine =
        Engine::create(&run_dir, Config::default(), counter, Durability::Flush).unwrap();
    engine
        .ingest(Message::System {
            text: "You are an agent.".into(),
        })
        .unwrap();
    drop(engine);
    let (code, out, err) = run(
        ["context".as_ref(), "replay".as_ref(), run_dir.as_os_str()],
        b"",
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("no_such_encoding"), "{err}");
}
