//! The truncation experiment: what each runtime executes when a model's output is cut off.
//!
//! The same tool calls are framed as strict CTL, as extended CTL (by the library's writer) and
//! as a JSON array ([`framing`]). Each framing is cut at every byte offset, as a model's output
//! limit would cut it, and five runtimes ([`runtimes`]) say which calls they would then have
//! executed:
//!
//! - `ctl`: a call runs when its `end` line is confirmed;
//! - `ctl_extended`: the same, over the extended framing (inline and heredoc arguments);
//! - `json_eof`: the seed's JSON buffer, which runs the calls once the whole array parses;
//! - `json_object`: each call object runs as soon as it parses on its own;
//! - `json_healing`: at the cut, open strings, arrays and objects are closed ([`heal`]) and
//!   whatever that yields runs.
//!
//! Per cut, the intended calls are those whose whole encoding came before the cut. An executed
//! call identical (name and arguments) to an intended one is `executed_ok`; any other executed
//! call is `executed_wrong` (a truncated or healed argument: the dangerous outcome); an
//! intended call not executed is `lost`.

pub mod framing;
pub mod heal;
pub mod provider;
pub mod runtimes;
pub mod svg;

use std::collections::HashMap;
use std::time::Instant;

use framing::{Framed, Intent};
use runtimes::{Ctl, JsonEof, JsonHealing, JsonObject, Runtime};

use crate::language::CtlMode;

/// The runtimes, in the order they are reported.
pub const RUNTIMES: [&str; 5] = [
    "ctl",
    "ctl_extended",
    "json_eof",
    "json_object",
    "json_healing",
];

/// The runtimes of the specification's `truncate --json` (`../shared/spec/cli.md`), whose
/// `baselines` object holds exactly these; `ctl_extended` is the project's fifth.
pub const SPEC_RUNTIMES: [&str; 4] = ["ctl", "json_eof", "json_object", "json_healing"];

/// Number of bins of the cut position in the curves.
pub const BINS: usize = 40;

fn runtime(name: &str) -> Box<dyn Runtime> {
    match name {
        "ctl" => Box::new(Ctl::new(CtlMode::Strict)),
        "ctl_extended" => Box::new(Ctl::new(CtlMode::Extended)),
        "json_eof" => Box::<JsonEof>::default(),
        "json_object" => Box::<JsonObject>::default(),
        _ => Box::<JsonHealing>::default(),
    }
}

/// Counts summed over every cut point of every stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Tally {
    /// Cut points examined.
    pub cut_points: u64,
    /// Executed calls identical to an intended one.
    pub executed_ok: u64,
    /// Executed calls that were not intended.
    pub executed_wrong: u64,
    /// Intended calls not executed.
    pub lost: u64,
}

/// Average calls executed correctly and wrongly per cut, by cut position.
#[derive(Clone, Debug, Default)]
pub struct Curve {
    /// Per bin: (cuts, ok, wrong).
    pub bins: Vec<(u64, u64, u64)>,
}

/// The experiment's result for one runtime.
#[derive(Clone, Debug)]
pub struct RuntimeResult {
    /// The runtime's name.
    pub name: &'static str,
    /// Its counts.
    pub tally: Tally,
    /// Its curve.
    pub curve: Curve,
    /// CPU nanoseconds per byte when the stream arrives one byte at a time.
    pub ns_per_byte: f64,
}

/// The whole result.
#[derive(Clone, Debug)]
pub struct Report {
    /// Streams in the corpus.
    pub streams: usize,
    /// Calls in the corpus.
    pub calls: usize,
    /// One result per runtime, in [`RUNTIMES`] order.
    pub runtimes: Vec<RuntimeResult>,
}

/// Compares what ran with what was intended: (ok, wrong, lost).
fn judge(executed: &[Intent], intended: &[Intent]) -> (u64, u64, u64) {
    let mut pending: HashMap<&Intent, u64> = HashMap::new();
    for call in intended {
        *pending.entry(call).or_default() += 1;
    }
    let mut ok = 0;
    for call in executed {
        if let Some(n) = pending.get_mut(call).filter(|n| **n > 0) {
            *n -= 1;
            ok += 1;
        }
    }
    (ok, executed.len() as u64 - ok, intended.len() as u64 - ok)
}

/// Runs one runtime over one stream, cut at every offset.
fn cut_everywhere(name: &str, framed: &Framed, tally: &mut Tally, curve: &mut Curve) {
    let (bytes, ends) = framed.stream_for(name);
    let mut runtime = runtime(name);
    for cut in 0..=bytes.len() {
        let complete = ends.iter().take_while(|&&end| end <= cut).count();
        let (ok, wrong, lost) = judge(&runtime.executed_at_end(), &framed.calls[..complete]);
        tally.cut_points += 1;
        tally.executed_ok += ok;
        tally.executed_wrong += wrong;
        tally.lost += lost;
        let bin = (cut * BINS / (bytes.len() + 1)).min(BINS - 1);
        let entry = &mut curve.bins[bin];
        entry.0 += 1;
        entry.1 += ok;
        entry.2 += wrong;
        if let Some(&byte) = bytes.get(cut) {
            runtime.push(byte);
        }
    }
}

/// CPU cost per byte of a runtime over the whole corpus, one byte at a time.
fn cost_per_byte(name: &str, corpus: &[Framed]) -> f64 {
    let mut bytes = 0usize;
    let start = Instant::now();
    for framed in corpus {
        let (stream, _) = framed.stream_for(name);
        let mut runtime = runtime(name);
        for &byte in stream {
            runtime.push(byte);
        }
        std::hint::black_box(runtime.executed_at_end());
        bytes += stream.len();
    }
    start.elapsed().as_nanos() as f64 / bytes.max(1) as f64
}

/// Runs the experiment; `progress` is called after each (runtime, stream) pair.
pub fn run(corpus: &[Framed], mut progress: impl FnMut(usize, usize)) -> Report {
    let total = RUNTIMES.len() * corpus.len();
    let mut done = 0;
    let runtimes = RUNTIMES
        .iter()
        .map(|&name| {
            let mut tally = Tally::default();
            let mut curve = Curve {
                bins: vec![(0, 0, 0); BINS],
            };
            for framed in corpus {
                cut_everywhere(name, framed, &mut tally, &mut curve);
                done += 1;
                progress(done, total);
            }
            RuntimeResult {
                name,
                tally,
                curve,
                ns_per_byte: cost_per_byte(name, corpus),
            }
        })
        .collect();
    Report {
        streams: corpus.len(),
        calls: corpus.iter().map(|f| f.calls.len()).sum(),
        runtimes,
    }
}
