//! `frontier truncate`: the truncation experiment (see `frontier::truncation`).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use frontier::truncation::{self, framing, Report};

/// Flags of `truncate`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A directory of streams: JSON files, each an array of `{"id","name","arguments"}`
    /// calls (default: the shipped `corpora/truncation`).
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Print one JSON object (the stable format: the specification's four baselines)
    /// instead of a table.
    #[arg(long)]
    json: bool,
    /// With `--json`, also print the fifth runtime, `ctl_extended`, in `baselines` (after
    /// `ctl`). The table and the chart always show it.
    #[arg(long, requires = "json", conflicts_with = "providers")]
    extended: bool,
    /// Also write a chart of calls executed correctly and wrongly per cut position.
    #[arg(long)]
    svg: Option<PathBuf>,
    /// Run the experiment in the providers' wire formats instead (OpenAI Chat tool-call
    /// deltas, Anthropic input_json_delta): frontier's reader against accumulate-and-parse,
    /// healing and a server that relabels the limit.
    #[arg(long, conflicts_with = "svg")]
    providers: bool,
}

fn default_corpus() -> PathBuf {
    let local = Path::new("corpora/truncation");
    if local.is_dir() {
        local.to_path_buf()
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/truncation")
    }
}

/// The runtimes of `--json`: the specification's four, and `ctl_extended` when asked for.
struct Baselines<'a> {
    report: &'a Report,
    extended: bool,
}

impl Serialize for Baselines<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let shown = self
            .report
            .runtimes
            .iter()
            .filter(|r| self.extended || truncation::SPEC_RUNTIMES.contains(&r.name));
        let mut map = s.serialize_map(None)?;
        for runtime in shown {
            map.serialize_entry(runtime.name, &runtime.tally)?;
        }
        map.end()
    }
}

#[derive(Serialize)]
struct JsonReport<'a> {
    streams: usize,
    calls: usize,
    baselines: Baselines<'a>,
}

fn table(report: &Report) -> String {
    let mut out = format!(
        "{} streams, {} calls, each framing cut at every byte offset\n\n{:<13} {:>10} {:>12} {:>15} {:>8} {:>22}\n",
        report.streams, report.calls, "runtime", "cut points", "executed ok", "executed wrong", "lost", "CPU ns/byte (1 B/push)"
    );
    for r in &report.runtimes {
        out.push_str(&format!(
            "{:<13} {:>10} {:>12} {:>15} {:>8} {:>22.1}\n",
            r.name,
            r.tally.cut_points,
            r.tally.executed_ok,
            r.tally.executed_wrong,
            r.tally.lost,
            r.ns_per_byte
        ));
    }
    out
}

pub fn run(args: Args) -> Result<i32, String> {
    let dir = args.corpus.unwrap_or_else(default_corpus);
    let corpus = framing::load_dir(&dir)?;
    if args.providers {
        return providers(&corpus, args.json);
    }
    let show_progress = std::io::stderr().is_terminal();
    let report = truncation::run(&corpus, |done, total| {
        if show_progress {
            let width = 30;
            let filled = done * width / total.max(1);
            eprint!(
                "\r[{}{}] {done}/{total}",
                "#".repeat(filled),
                " ".repeat(width - filled)
            );
            if done == total {
                eprintln!();
            }
            let _ = std::io::stderr().flush();
        }
    });
    if let Some(path) = &args.svg {
        std::fs::write(path, truncation::svg::render(&report))
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if args.json {
        let json = JsonReport {
            streams: report.streams,
            calls: report.calls,
            baselines: Baselines {
                report: &report,
                extended: args.extended,
            },
        };
        let line = serde_json::to_string(&json).map_err(|e| e.to_string())?;
        writeln!(std::io::stdout(), "{line}").map_err(|e| e.to_string())?;
    } else {
        write!(std::io::stdout(), "{}", table(&report)).map_err(|e| e.to_string())?;
    }
    Ok(0)
}

/// `--providers`: one object (`--json`) or a table per format.
fn providers(corpus: &[framing::Framed], json: bool) -> Result<i32, String> {
    let results = truncation::provider::run(corpus);
    let calls: usize = corpus.iter().map(|f| f.calls.len()).sum();
    let out = if json {
        let formats: serde_json::Map<String, serde_json::Value> = results
            .iter()
            .map(|r| {
                let tallies = r
                    .tallies
                    .iter()
                    .map(|(name, tally)| (name.to_string(), serde_json::json!(tally)))
                    .collect();
                (r.format.to_owned(), serde_json::Value::Object(tallies))
            })
            .collect();
        let value =
            serde_json::json!({"streams": corpus.len(), "calls": calls, "providers": formats});
        format!("{value}\n")
    } else {
        let mut out = format!(
            "{} streams, {calls} calls, the model's output cut at every byte, streamed in each wire format\n",
            corpus.len()
        );
        for r in &results {
            out.push_str(&format!(
                "\n{}\n{:<20} {:>10} {:>12} {:>15} {:>8}\n",
                r.format, "runtime", "cut points", "executed ok", "executed wrong", "lost"
            ));
            for (name, t) in &r.tallies {
                out.push_str(&format!(
                    "{name:<20} {:>10} {:>12} {:>15} {:>8}\n",
                    t.cut_points, t.executed_ok, t.executed_wrong, t.lost
                ));
            }
        }
        out
    };
    write!(std::io::stdout(), "{out}").map_err(|e| e.to_string())?;
    Ok(0)
}
