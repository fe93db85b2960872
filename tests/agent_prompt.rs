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
