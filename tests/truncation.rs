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

#[test]
fn ctl_never_executes_wrongly_nor_loses_a_call_and_json_does() {
    let corpus = shipped();
    assert!(corpus.len() >= 5);
    assert!(corpus.iter().map(|f| f.calls.len()).sum::<usize>() >= 20);
    let report = truncation::run(&corpus, |_, _| {});

    let ctl = tally(&report, "ctl");
    let intended: u64 = corpus
        .iter()
        .map(|f| {
            (0..=f.ctl.len())
                .map(|cut| f.ctl_ends.iter().filter(|&&e| e <= cut).count() as u64)
                .sum::<u64>()
        })
        .sum();
    assert_eq!(
        ctl.cut_points,
        corpus.iter().map(|f| f.ctl.len() as u64 + 1).sum::<u64>()
    );
    assert_eq!(
        (ctl.executed_ok, ctl.executed_wrong, ctl.lost),
        (intended, 0, 0)
    );

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

#[test]
fn the_cli_prints_the_stable_json_format() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_frontier"))
        .args(["truncate", "--json"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value["streams"], 6);
    assert_eq!(value["calls"], 26);
    let baselines = value["baselines"].as_object().unwrap();
    let names: Vec<&str> = baselines.keys().map(String::as_str).collect();
    assert_eq!(names.len(), 4);
    for name in ["ctl", "json_eof", "json_object", "json_healing"] {
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
    assert_eq!(value["baselines"]["ctl"]["executed_wrong"], 0);
    assert_eq!(value["baselines"]["ctl"]["lost"], 0);
}

#[test]
fn the_svg_chart_has_a_line_pair_per_runtime() {
    let report = truncation::run(&shipped(), |_, _| {});
    let svg = truncation::svg::render(&report);
    assert!(svg.starts_with("<svg"));
    assert_eq!(svg.matches("<polyline").count(), 8);
    for name in truncation::RUNTIMES {
        assert!(svg.contains(&format!(">{name}</text>")));
    }
}
