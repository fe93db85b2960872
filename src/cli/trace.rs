//! `frontier trace`: the allowed set and accepting flag after every prefix.

use std::io::{BufWriter, Write};

use frontier::contract::PushParser;

use super::check::ErrorReport;
use super::input;
use super::lang::{dispatch, LangArgs, WithParser};

/// Flags of `trace`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    lang: LangArgs,
    /// Print only `{"prefixes":N,"allowed_total":S,"accepting":A}`.
    #[arg(long)]
    summary: bool,
    /// The file to trace; `-` is standard input.
    file: String,
}

/// The line `trace` prints for the refused byte.
#[derive(serde::Serialize)]
struct TraceError {
    at: u64,
    error: ErrorReport,
}

struct Trace<'a> {
    bytes: &'a [u8],
    summary: bool,
}

impl WithParser for Trace<'_> {
    type Output = std::io::Result<()>;

    fn run<P: PushParser>(self, mut parser: P) -> Self::Output {
        let stdout = std::io::stdout();
        let mut out = BufWriter::new(stdout.lock());
        let (mut prefixes, mut allowed_total, mut accepting_count) = (0u64, 0u64, 0u64);
        let mut line = String::new();
        for at in 0..=self.bytes.len() {
            // The state after `at` bytes: query it as a decoder would, then push the next byte.
            let allowed = parser.allowed();
            let accepting = parser.accepting();
            prefixes += 1;
            allowed_total += allowed.len() as u64;
            accepting_count += accepting as u64;
            if !self.summary {
                line.clear();
                line.push_str(&format!(
                    "{{\"at\":{at},\"accepting\":{accepting},\"allowed\":["
                ));
                for (i, (lo, hi)) in allowed.ranges().into_iter().enumerate() {
                    if i > 0 {
                        line.push(',');
                    }
                    line.push_str(&format!("[{lo},{hi}]"));
                }
                line.push_str("]}");
                writeln!(out, "{line}")?;
            }
            let Some(&byte) = self.bytes.get(at) else {
                break;
            };
            if let Err(e) = parser.push(&[byte], &mut |_| {}) {
                if !self.summary {
                    let report = TraceError {
                        at: at as u64,
                        error: ErrorReport::of(&e),
                    };
                    writeln!(out, "{}", serde_json::to_string(&report)?)?;
                }
                break;
            }
        }
        if self.summary {
            writeln!(
                out,
                "{{\"prefixes\":{prefixes},\"allowed_total\":{allowed_total},\"accepting\":{accepting_count}}}"
            )?;
        }
        out.flush()
    }
}

pub fn run(args: Args) -> Result<i32, String> {
    let bytes = input::read_all(&args.file).map_err(|e| format!("{}: {e}", args.file))?;
    dispatch(
        &args.lang,
        Trace {
            bytes: &bytes,
            summary: args.summary,
        },
    )?
    .map_err(|e| e.to_string())?;
    Ok(0)
}
