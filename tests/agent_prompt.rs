//! The system prompts teach what the loop accepts: each one's CTL example parses in its mode,
//! and names only real tools with exactly their argument keys.

use frontier::agent::runner::{system_prompt, EXTENDED_SYSTEM_PROMPT, SYSTEM_PROMPT};
use frontier::agent::tools::Tool;
use frontier::contract::{PushParser, Verdict};
use frontier::ctl::{CallAssembler, CtlParser, Limits};
use frontier::language::CtlMode;

const MODES: [CtlMode; 2] = [CtlMode::Strict, CtlMode::Extended];

/// The fenced blocks of a prompt that hold CTL frames.
fn ctl_examples(prompt: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in prompt.lines() {
        if line.starts_with("```") {
            match current.take() {
                Some(block) => blocks.push(block),
                None => current = Some(String::new()),
            }
        } else if let Some(block) = current.as_mut() {
            block.push_str(line);
            block.push('\n');
        }
    }
    blocks
        .into_iter()
        .filter(|b| b.starts_with("call c"))
        .collect()
}

#[test]
fn the_prompts_example_is_valid_ctl_for_real_tools() {
    for mode in MODES {
        check_examples(system_prompt(mode), mode);
    }
}

fn check_examples(prompt: &str, mode: CtlMode) {
    let examples = ctl_examples(prompt);
    assert!(!examples.is_empty(), "the prompt has no CTL example");
    for example in examples {
        let mut parser = CtlParser::with_mode(Limits::default(), mode);
        let mut assembler = CallAssembler::default();
        let mut calls = Vec::new();
        parser
            .push(example.as_bytes(), &mut |e| {
                calls.extend(assembler.on_event(&e).unwrap())
            })
            .unwrap_or_else(|e| panic!("{e} in\n{example}"));
        assert_eq!(
            parser.finish(&mut |_| {}).verdict,
            Verdict::Complete,
            "{example}"
        );
        assert!(!calls.is_empty());
        for call in calls {
            let tool = Tool::from_name(&call.name).expect("a real tool");
            let keys: Vec<&str> = call.args.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(keys, tool.keys(), "{}", call.name);
        }
    }
}

#[test]
fn the_prompt_names_every_tool_with_its_keys() {
    for mode in MODES {
        for tool in Tool::ALL {
            let keys: Vec<String> = tool.keys().iter().map(|k| format!("`{k}`")).collect();
            let row = format!("| `{}` | {} |", tool.name(), keys.join(", "));
            assert!(
                system_prompt(mode).contains(&row),
                "{mode:?}: missing row {row}"
            );
        }
    }
}

#[test]
fn the_extended_prompt_shows_the_forms_that_need_no_count_and_strict_does_not() {
    let example = ctl_examples(EXTENDED_SYSTEM_PROMPT).concat();
    assert!(example.contains("\narg path = "), "{example}");
    assert!(
        example.contains(" <<EOF\n") && example.contains("\nEOF\nend\n"),
        "{example}"
    );
    // The strict example is not extended CTL in disguise: it parses in strict mode only
    // because it has no inline or heredoc argument.
    let strict = ctl_examples(SYSTEM_PROMPT).concat();
    assert!(
        !strict.contains(" = ") && !strict.contains("<<"),
        "{strict}"
    );
    // The extended example is not strict CTL.
    let mut parser = CtlParser::default();
    assert!(parser.push(example.as_bytes(), &mut |_| {}).is_err());
}

/// The context tools' prompt lists, for each op it teaches, the fields that op needs: an item
/// with exactly the fields its bullet names (filled with ordinary values) is applied by the
/// engine, so a model that follows the prompt is not refused for a field it was never told of.
#[test]
fn the_context_tools_prompt_names_the_fields_each_op_needs() {
    use frontier::agent::context::CONTEXT_TOOLS_PROMPT;
    use frontier::context::block::{FunctionCall, ToolCall};
    use frontier::context::{Actor, Config, Engine, Message};

    const FIELDS: [&str; 8] = [
        "description",
        "content",
        "retrieval_hint",
        "preserve",
        "drop",
        "resolution",
        "scope_label",
        "visibility",
    ];
    // The ops' bullets: "  - `OP`: ...", continued by more-indented lines.
    let mut bullets: Vec<(String, String)> = Vec::new();
    for line in CONTEXT_TOOLS_PROMPT.lines() {
        if let Some(rest) = line.strip_prefix("  - `") {
            let (op, text) = rest.split_once('`').unwrap();
            bullets.push((op.to_owned(), text.to_owned()));
        } else if line.starts_with("    ") {
            if let Some((_, text)) = bullets.last_mut() {
                text.push_str(line);
            }
        } else if !bullets.is_empty() && !line.trim().is_empty() {
            break;
        }
    }
    let ops: Vec<&str> = bullets.iter().map(|(op, _)| op.as_str()).collect();
    for op in [
        "payload_offload",
        "compact",
        "merge",
        "fold",
        "set_visibility",
        "restore",
    ] {
        assert!(ops.contains(&op), "the prompt does not teach {op}: {ops:?}");
    }

    for (op, text) in &bullets {
        let mut item = serde_json::json!({ "op": op });
        for field in FIELDS {
            if !text.contains(&format!("`{field}`")) {
                continue;
            }
            item[field] = match field {
                "preserve" | "drop" => serde_json::json!(["the file's first line"]),
                "resolution" => "update".into(),
                "visibility" => "archived".into(),
                _ => "the config file, read in full".into(),
            };
        }
        // A chain (a reply with one call and its result), then a plain reply and the question.
        let mut engine = Engine::in_memory(Config::default());
        engine
            .ingest(Message::System {
                text: "You are an agent.".into(),
            })
            .unwrap();
        engine
            .ingest(Message::User {
                text: "What does the config say?".into(),
                origin: None,
            })
            .unwrap();
        let call = ToolCall {
            id: "c1".into(),
            kind: "function".into(),
            function: FunctionCall {
                name: "read_file".into(),
                arguments: r#"{"path":"config.toml"}"#.into(),
            },
        };
        let head = engine
            .ingest(Message::Assistant {
                text: String::new(),
                tool_calls: vec![call],
                reasoning: None,
            })
            .unwrap()
            .remove(0);
        let result = engine
            .ingest(Message::ToolResult {
                tool_call_id: "c1".into(),
                name: "read_file".into(),
                text: "[server]\nport = 8080\n".repeat(20),
            })
            .unwrap()
            .remove(0);
        let reply = engine
            .ingest(Message::Assistant {
                text: "It sets the port to 8080.".into(),
                tool_calls: Vec::new(),
                reasoning: None,
            })
            .unwrap()
            .remove(0);
        engine
            .ingest(Message::User {
                text: "Thanks. And the log level?".into(),
                origin: None,
            })
            .unwrap();
        let mut items = Vec::new();
        item["ids"] = match op.as_str() {
            "payload_offload" => serde_json::json!([result]),
            "set_visibility" => serde_json::json!([reply]),
            "restore" => {
                // An offload first, so that there is a payload to bring back.
                items.push(serde_json::json!({"op":"payload_offload","ids":[result],
                    "description":"d","content":"c","retrieval_hint":"h"}));
                serde_json::json!([result])
            }
            _ => serde_json::json!([head, result]),
        };
        items.push(item);
        let args = serde_json::json!({"reason": "keep the window small", "operations": items});
        let outcome = engine.apply_args(&args.to_string(), Actor::Agent).unwrap();
        assert!(
            outcome.ok && outcome.rejections.is_empty(),
            "{op} with the fields the prompt names ({args}): {:?}",
            outcome.rejections
        );
    }
}
