//! The system prompt teaches what the loop accepts: its CTL example parses, and names only
//! real tools with exactly their argument keys.

use frontier::agent::runner::SYSTEM_PROMPT;
use frontier::agent::tools::Tool;
use frontier::contract::{PushParser, Verdict};
use frontier::ctl::{CallAssembler, CtlParser};

/// The fenced blocks of the prompt that hold CTL frames.
fn ctl_examples() -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in SYSTEM_PROMPT.lines() {
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
    let examples = ctl_examples();
    assert!(!examples.is_empty(), "the prompt has no CTL example");
    for example in examples {
        let mut parser = CtlParser::default();
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
    for tool in Tool::ALL {
        let keys: Vec<String> = tool.keys().iter().map(|k| format!("`{k}`")).collect();
        let row = format!("| `{}` | {} |", tool.name(), keys.join(", "));
        assert!(SYSTEM_PROMPT.contains(&row), "missing row {row}");
    }
}
