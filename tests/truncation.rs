//! The truncation experiment on the shipped corpus, and the failure it exists to show.

use std::path::Path;

use frontier::truncation::framing::{load_dir, Framed};
use frontier::truncation::runtimes::{JsonHealing, Runtime};
use frontier::truncation::{self, Tally};

fn shipped() -> Vec<Framed> {
    load_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/truncation")).unwrap()
}

fn tally(report: &truncation::Report, name: &str) -> Tally {
    report
        .runtimes
        .iter()
        .find(|r| r.name == name)
        .unwrap()
        .tally
}

/// Calls complete before each cut, summed over every cut of every stream of a framing.
fn intended(corpus: &[Framed], runtime: &str) -> u64 {
    corpus
        .iter()
        .map(|f| {
            let (bytes, ends) = f.stream_for(runtime);
            (0..=bytes.len())
                .map(|cut| ends.iter().filter(|&&e| e <= cut).count() as u64)
                .sum::<u64>()
        })
        .sum()
}

#[test]
fn ctl_never_executes_wrongly_nor_loses_a_call_and_json_does() {
    let corpus = shipped();
    assert!(corpus.len() >= 5);
    assert!(corpus.iter().map(|f| f.calls.len()).sum::<usize>() >= 20);
    let report = truncation::run(&corpus, |_, _| {});

    for (name, framing) in [
        ("ctl", corpus.iter().map(|f| &f.ctl).collect::<Vec<_>>()),
        (
            "ctl_extended",
            corpus.iter().map(|f| &f.ctl_extended).collect(),
        ),
    ] {
        let ctl = tally(&report, name);
        assert_eq!(
            ctl.cut_points,
            framing.iter().map(|s| s.len() as u64 + 1).sum::<u64>(),
            "{name}"
        );
        assert_eq!(
            (ctl.executed_ok, ctl.executed_wrong, ctl.lost),
            (intended(&corpus, name), 0, 0),
            "{name}"
        );
    }

    let healing = tally(&report, "json_healing");
    assert!(
        healing.executed_wrong > 0,
        "healing executes truncated arguments: {healing:?}"
    );
    let eof = tally(&report, "json_eof");
    assert!(eof.lost > 0 && eof.executed_wrong == 0, "{eof:?}");
    // Only the uncut stream executes anything under json_eof.
    assert_eq!(
        eof.executed_ok,
        corpus.iter().map(|f| f.calls.len() as u64).sum::<u64>()
    );
}

#[test]
fn a_healed_number_is_executed_with_the_wrong_value() {
    let corpus = shipped();
    let numbers = corpus
        .iter()
        .find(|f| f.calls.iter().any(|c| c.name == "set_temperature"))
        .unwrap();
    let text = std::str::from_utf8(&numbers.json).unwrap();
    let cut = text.find("123.5").unwrap() + "123.".len();
    let mut healing = JsonHealing::default();
    for &b in &numbers.json[..cut] {
        healing.push(b);
    }
    let executed = healing.executed_at_end();
    let celsius = executed[0]
        .args
        .iter()
        .find(|(k, _)| k == "celsius")
        .unwrap();
    assert_eq!(celsius.1, b"123", "123.5 cut after the dot runs as 123");
    assert_ne!(executed[0], numbers.calls[0]);
}

fn truncate_json(extra: &[&str]) -> serde_json::Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_frontier"))
        .args(["truncate", "--json"])
        .args(extra)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_cli_prints_the_stable_json_format() {
    // Exactly the specification's object: three keys, four baselines in its order.
    let value = truncate_json(&[]);
    let top: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(top, ["streams", "calls", "baselines"]);
    let names: Vec<&str> = value["baselines"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(names, ["ctl", "json_eof", "json_object", "json_healing"]);
    // `--extended` adds the fifth runtime after `ctl`, the others unchanged.
    let extended = truncate_json(&["--extended"]);
    for name in truncation::SPEC_RUNTIMES {
        assert_eq!(
            extended["baselines"][name], value["baselines"][name],
            "{name}"
        );
    }
    let value = extended;
    assert_eq!(value["streams"], 6);
    assert_eq!(value["calls"], 26);
    let baselines = value["baselines"].as_object().unwrap();
    let names: Vec<&str> = baselines.keys().map(String::as_str).collect();
    assert_eq!(names, truncation::RUNTIMES);
    for name in truncation::RUNTIMES {
        let keys: Vec<&str> = baselines[name]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys.len(), 4, "{name}");
        for key in ["cut_points", "executed_ok", "executed_wrong", "lost"] {
            assert!(baselines[name][key].is_u64(), "{name}.{key}");
        }
    }
    for name in ["ctl", "ctl_extended"] {
        assert_eq!(value["baselines"][name]["executed_wrong"], 0, "{name}");
        assert_eq!(value["baselines"][name]["lost"], 0, "{name}");
    }
}

#[test]
fn the_svg_chart_has_a_line_pair_per_runtime() {
    let report = truncation::run(&shipped(), |_, _| {});
    let svg = truncation::svg::render(&report);
    assert!(svg.starts_with("<svg"));
    assert_eq!(
        svg.matches("<polyline").count(),
        2 * truncation::RUNTIMES.len()
    );
    for name in truncation::RUNTIMES {
        assert!(svg.contains(&format!(">{name}</text>")));
    }
}

#[test]
fn the_extended_framing_carries_the_same_calls_without_counting() {
    use frontier::contract::PushParser;
    use frontier::ctl::{CallAssembler, CtlParser, Limits};
    use frontier::language::CtlMode;
    use frontier::truncation::framing::Intent;

    let corpus = shipped();
    let mut inline = 0;
    let mut heredoc = 0;
    for framed in &corpus {
        let text = String::from_utf8_lossy(&framed.ctl_extended);
        inline += text.matches(" = ").count();
        heredoc += text.matches(" <<EOF").count();
        let mut parser = CtlParser::with_mode(Limits::default(), CtlMode::Extended);
        let mut assembler = CallAssembler::default();
        let mut calls = Vec::new();
        parser
            .push(&framed.ctl_extended, &mut |e| {
                calls.extend(assembler.on_event(&e).unwrap().map(|c| Intent::from(&c)))
            })
            .unwrap();
        assert_eq!(calls, framed.calls);
        assert_eq!(framed.ctl_extended_ends.len(), framed.calls.len());
        assert_eq!(
            framed.ctl_extended_ends.last(),
            Some(&framed.ctl_extended.len())
        );
    }
    // The corpus exercises both forms that need no count.
    assert!(
        inline > 10 && heredoc > 3,
        "{inline} inline, {heredoc} heredoc"
    );
}

#[test]
fn a_stream_item_is_one_call_and_an_item_of_several_is_refused() {
    // Each call's JSON ends where its item ends, so an item holding an OpenAI `tool_calls`
    // list (or a nested array) would score its calls as one: it is refused, and the
    // OpenAI shape of a single call is taken.
    let one = serde_json::json!([
        {"id": "a", "function": {"name": "x", "arguments": "{\"k\":1}"}},
        {"id": "b", "name": "y", "arguments": {}}
    ]);
    let framed = frontier::truncation::framing::frame(&one).unwrap();
    assert_eq!(framed.calls.len(), 2);
    assert_eq!(framed.json_ends.len(), 2);
    for several in [
        serde_json::json!([{"tool_calls": [
            {"id": "a", "function": {"name": "x", "arguments": "{}"}},
            {"id": "b", "function": {"name": "y", "arguments": "{}"}}
        ]}]),
        serde_json::json!([[{"id": "a", "name": "x"}, {"id": "b", "name": "y"}]]),
        serde_json::json!([{"tool_calls": []}]),
    ] {
        let e = frontier::truncation::framing::frame(&several).unwrap_err();
        assert!(e.contains("one call each"), "{e}");
    }
}
