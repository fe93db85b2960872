//! Arbitrary `context_update` arguments (as the raw text a model sends) applied to a stored
//! session of `corpora/context`: no panic, and a patch that is not applied writes nothing
//! (no payload stored, no patch journaled) and leaves the blocks as they were.
#![no_main]

use std::sync::OnceLock;

use frontier::context::case;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

const CASE: &str = include_str!("../../corpora/context/compact_turn.json");

/// The case's output for `args` (the raw text a model sends).
fn apply(args: &str) -> Value {
    let mut case: Value = serde_json::from_str(CASE).expect("the seed case is JSON");
    case["args"] = Value::String(args.to_owned());
    case::run("fuzz", &case.to_string(), 16_000).expect("the case itself is valid")
}

/// The store's blocks as an explicit no-op leaves them: what a refused patch must leave.
fn unchanged() -> &'static Value {
    static BLOCKS: OnceLock<Value> = OnceLock::new();
    BLOCKS.get_or_init(|| apply(r#"{"reason":"none","operations":[]}"#)["blocks"].clone())
}

fuzz_target!(|args: &str| {
    let out = apply(args);
    if out["ok"] != Value::Bool(true) {
        assert_eq!(
            out["content_puts"],
            serde_json::json!({}),
            "a refused patch stored a payload"
        );
        assert_eq!(
            &out["blocks"],
            unchanged(),
            "a refused patch changed the blocks"
        );
    }
});
