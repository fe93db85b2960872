//! `frontier mask`: the token mask before every step of a token sequence, as a decoder would
//! ask for it, with the time each mask took.
//!
//! One JSON line per step `i = 0, 1, …, n` (the mask before token `i`; step `n` is after the
//! last): `{"step":i,"allowed":COUNT,"accepting":BOOL,"sha256":HEX}`, the hash over the mask's
//! `ceil(V/32)` little-endian `u32` words. A token outside its step's mask is an error naming
//! it (exit status 1), after that step's line. The last line is the summary of the times:
//! `{"summary":{"steps":n,"p50_us":…,"p99_us":…,"p999_us":…,"max_us":…}}`: `n` the tokens
//! consumed (the last step's number; at a refused token `i`, `i`), the times those of the
//! `n + 1` masks computed. A refused token's message also says where the text fails: for a
//! token whose bytes the language refuses, the language's own error (its kind, the absolute
//! offset in the text of the token's bytes so far, and the byte), as `frontier check` reports
//! it; for EOS too early, how many bytes the unfinished text has. An id past `u32` is refused
//! as past the vocabulary, like any other. With `--reps R` the whole sequence runs `R` times,
//! each time from a new grammar (an empty mask cache, as a fresh process has), and each step
//! keeps its fastest time: on a loaded machine a few steps of a pass are preempted, and the
//! minimum over passes filters that out without letting a later pass reuse the masks an
//! earlier one cached.

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use sha2::{Digest, Sha256};

use frontier::agent::context::vocab::VocabCounter;
use frontier::context::tokens::TokenCounter;
use frontier::language::ParserSpec;
use frontier::mask::vocab::hf::{self, EosSpec};
use frontier::mask::vocab::tiktoken;
use frontier::mask::{dynamic, MaskError, Vocabulary};

use super::lang::LangArgs;
use super::{display, input};

/// Flags of `mask`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    lang: LangArgs,
    /// `tiktoken:cl100k_base`, `tiktoken:o200k_base`, a `.tiktoken` rank file (a path ending
    /// in `.tiktoken`, or `tiktoken:PATH`), or the path of a Hugging Face `tokenizer.json`.
    #[arg(long)]
    vocab: OsString,
    /// A JSON array of token ids: the sequence a decoder samples; `-` is standard input.
    #[arg(long, conflicts_with = "text", required_unless_present = "text")]
    token_ids: Option<OsString>,
    /// A text file, tokenized with the vocabulary's own tokenizer; `-` is standard input.
    #[arg(long)]
    text: Option<OsString>,
    /// An EOS token id (repeatable); replaces the vocabulary's own EOS tokens.
    #[arg(long = "eos")]
    eos: Vec<u32>,
    /// Run the sequence R times, each from an empty mask cache, and keep each step's fastest
    /// time, 1 to 1000.
    #[arg(long, default_value_t = 1, value_parser = super::bounds::REPS.parser::<u32>())]
    reps: u32,
}

#[derive(Serialize)]
struct Step {
    step: usize,
    allowed: u32,
    accepting: bool,
    sha256: String,
}

#[derive(Serialize)]
struct Summary {
    steps: usize,
    p50_us: f64,
    p99_us: f64,
    p999_us: f64,
    max_us: f64,
}

/// Runs `mask`.
pub fn run(args: Args) -> Result<i32, String> {
    let spec = args.lang.spec()?;
    let vocab = Arc::new(load_vocab(&args.vocab, &args.eos)?);
    let tokens = match (&args.token_ids, &args.text) {
        (Some(path), _) => read_token_ids(path)?,
        (None, Some(path)) => {
            let bytes =
                input::read_all(path).map_err(|e| format!("{}: {e}", display::path(path)))?;
            let text = String::from_utf8(bytes)
                .map_err(|e| format!("{}: not UTF-8: {e}", display::path(path)))?;
            if !vocab.has_encoder() {
                return Err(format!(
                    "--text {}: --vocab {} has no tokenizer (a .tiktoken rank file does not say \
                     its split pattern, so its text is not tokenized; only cl100k_base's and \
                     o200k_base's own files are): give the ids with --token-ids",
                    display::path(path),
                    display::path(&args.vocab)
                ));
            }
            let ids = vocab.encode(&text).map_err(|e| {
                format!(
                    "--text {}: {e} (give the ids with --token-ids)",
                    display::path(path)
                )
            })?;
            ids.into_iter().map(|id| Ok(u64::from(id))).collect()
        }
        (None, None) => return Err("give --token-ids FILE or --text FILE".to_owned()),
    };
    let mut times = vec![f64::INFINITY; tokens.len() + 1];
    let mut out = io::BufWriter::new(io::stdout().lock());
    let mut refused = None;
    // The bytes of the tokens taken, for the text's error when a token is refused.
    let mut text = Vec::new();
    for pass in 0..args.reps {
        // Each pass starts cold: a new grammar, so its mask cache is empty.
        let grammar = dynamic::compile(&spec, vocab.clone());
        let mut matcher = grammar.matcher();
        let mut words = vec![0u32; grammar.mask_words()];
        for (step, time) in times.iter_mut().enumerate() {
            let start = Instant::now();
            matcher
                .fill_mask(&mut words)
                .map_err(|e| format!("step {step}: {e}"))?;
            *time = time.min(start.elapsed().as_secs_f64() * 1e6);
            if pass == 0 {
                let line = Step {
                    step,
                    allowed: words.iter().map(|w| w.count_ones()).sum(),
                    accepting: matcher.accepting(),
                    sha256: mask_sha256(&words),
                };
                write_json(&mut out, &line)?;
            }
            let Some(id) = tokens.get(step) else {
                break;
            };
            // An id past `u32` is past every vocabulary.
            let taken = match id.as_ref().map(|&id| (id, u32::try_from(id))) {
                Ok((_, Ok(token))) => matcher
                    .consume(token)
                    .map(|()| token)
                    .map_err(Refusal::Mask),
                Ok((id, Err(_))) => Err(Refusal::PastU32(id.to_string())),
                Err(beyond) => Err(Refusal::PastU32(beyond.clone())),
            };
            match taken {
                Ok(token) if pass == 0 => text.extend_from_slice(vocab.bytes(token)),
                Ok(_) => {}
                Err(e) => {
                    refused = Some((step, e));
                    break;
                }
            }
        }
    }
    let computed = match refused {
        Some((step, _)) => step + 1,
        None => times.len(),
    };
    write_json(
        &mut out,
        &serde_json::json!({ "summary": summary(&mut times[..computed], computed - 1) }),
    )?;
    out.flush().map_err(|e| e.to_string())?;
    match refused {
        Some((step, e)) => {
            eprintln!(
                "frontier: step {step}: {}",
                e.describe(&spec, &vocab, &mut text)
            );
            Ok(1)
        }
        None => Ok(0),
    }
}

/// Why a token of the sequence was not taken.
enum Refusal {
    /// The matcher refused it.
    Mask(MaskError),
    /// An id that is not even a `u32`, as written.
    PastU32(String),
}

impl Refusal {
    /// The message: the matcher's error, then where the text the tokens spell fails (`text`
    /// is the bytes of the tokens taken before the refused one).
    fn describe(&self, spec: &ParserSpec, vocab: &Vocabulary, text: &mut Vec<u8>) -> String {
        let e = match self {
            Refusal::PastU32(id) => {
                return format!(
                    "token_out_of_range: token {id} is past the vocabulary's {} ids",
                    vocab.size()
                )
            }
            Refusal::Mask(e) => *e,
        };
        match e {
            MaskError::TokenRefused { token, offset, .. } => {
                let bytes = vocab.bytes(token);
                text.extend_from_slice(&bytes[..bytes.len().min(offset as usize + 1)]);
                let mut parser = frontier_core::dyn_parser::build(spec);
                match parser.push(text, &mut |_| {}) {
                    Err(error) => format!("{e}; the text: {error}"),
                    Ok(()) => e.to_string(),
                }
            }
            MaskError::EosTooEarly { .. } => {
                format!(
                    "{e}; the text: {}, not a sentence",
                    display::count(text.len() as u64, "bytes")
                )
            }
            _ => e.to_string(),
        }
    }
}

/// The vocabulary `VOCAB` names, with `eos` as its EOS tokens when given: `tiktoken:NAME`
/// for a built-in encoding, `tiktoken:PATH` (a `PATH` that is no built-in name), a path
/// ending in `.tiktoken` or a file whose first line is a rank line (`base64 SP rank`: how
/// tiktoken's own cache keeps the files, named by a hash) for a rank file (its EOS as
/// `tiktoken::from_path` decides it), any other path for a `tokenizer.json`.
pub(super) fn load_vocab(name: &OsString, eos: &[u32]) -> Result<Vocabulary, String> {
    let path = Path::new(name);
    let loaded = match name.to_str().and_then(|n| n.strip_prefix("tiktoken:")) {
        Some(encoding) => tiktoken::from_name_or_path(encoding, eos),
        None if path.extension().is_some_and(|e| e == "tiktoken") || is_rank_file(path) => {
            tiktoken::from_path(path, eos)
        }
        None => {
            let eos: Vec<EosSpec> = eos.iter().map(|&id| EosSpec::Id(id)).collect();
            hf::from_file(path, &eos).map(super::hf_encoder::attach(path))
        }
    };
    loaded.map_err(|e| format!("--vocab {}: {e}", display::path(name)))
}

/// The vocabulary `VOCAB` names ([`load_vocab`]) as the token counter of a governed run
/// (`frontier run --vocab`, and `frontier context replay` of such a run): it must have a
/// tokenizer to count text with.
pub(super) fn vocab_counter(name: &OsString) -> Result<Arc<dyn TokenCounter>, String> {
    let vocab = load_vocab(name, &[])?;
    if !vocab.has_encoder() {
        return Err(format!(
            "--vocab {}: no tokenizer to count tokens with",
            display::path(name)
        ));
    }
    Ok(Arc::new(VocabCounter::new(
        Arc::new(vocab),
        &name.to_string_lossy(),
    )))
}

/// Whether the file at `path` starts with a `.tiktoken` rank line, `base64 SP rank` (a
/// `tokenizer.json` starts with `{`). An unreadable file is not one (its loader says why).
fn is_rank_file(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 512];
    let Ok(n) = std::fs::File::open(path).and_then(|mut f| f.read(&mut head)) else {
        return false;
    };
    let line = head[..n].split(|&b| b == b'\n').next().unwrap_or(&[]);
    tiktoken::is_rank_line(line.strip_suffix(b"\r").unwrap_or(line))
}

/// The ids of the file: any JSON array of non-negative integers (an id past the vocabulary,
/// even past `u64`, is the matcher's refusal at its step, not a usage error). An integer past
/// `u64` is `Err` with its value written out (read as the nearest `f64`: no id is that large).
fn read_token_ids(path: &OsString) -> Result<Vec<Result<u64, String>>, String> {
    let bytes = input::read_all(path).map_err(|e| format!("{}: {e}", display::path(path)))?;
    let not_ids = |e: &dyn std::fmt::Display| {
        format!(
            "{}: not a JSON array of token ids: {e}",
            display::path(path)
        )
    };
    let numbers: Vec<serde_json::Number> =
        serde_json::from_slice(&bytes).map_err(|e| not_ids(&e))?;
    // serde_json reads an integer literal past `u64` as a float, as it reads `1.5` and `1e3`:
    // a file with no `.` or exponent holds integers only.
    let floats_written = bytes.iter().any(|b| matches!(b, b'.' | b'e' | b'E'));
    numbers
        .into_iter()
        .map(|n| match n.as_u64() {
            Some(id) => Ok(Ok(id)),
            None if n.is_f64() && !floats_written => {
                Ok(Err(format!("{:.0}", n.as_f64().unwrap_or(f64::INFINITY))))
            }
            None => Err(not_ids(&format!("{n} is not a token id"))),
        })
        .collect()
}

/// SHA-256 of the mask as little-endian `u32` words.
fn mask_sha256(words: &[u32]) -> String {
    let mut hash = Sha256::new();
    for w in words {
        hash.update(w.to_le_bytes());
    }
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The percentiles of the steps' times (nearest rank), in microseconds, after `steps` tokens.
fn summary(times: &mut [f64], steps: usize) -> Summary {
    times.sort_by(f64::total_cmp);
    let at = |q: f64| -> f64 {
        if times.is_empty() {
            return 0.0;
        }
        let rank = ((q * times.len() as f64).ceil() as usize).clamp(1, times.len());
        round3(times[rank - 1])
    };
    Summary {
        steps,
        p50_us: at(0.50),
        p99_us: at(0.99),
        p999_us: at(0.999),
        max_us: at(1.0),
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn write_json(out: &mut impl Write, value: &impl Serialize) -> Result<(), String> {
    serde_json::to_writer(&mut *out, value).map_err(|e| e.to_string())?;
    out.write_all(b"\n").map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let mut times: Vec<f64> = (1..=1000).map(f64::from).collect();
        let s = summary(&mut times, 999);
        assert_eq!(
            (s.steps, s.p50_us, s.p99_us, s.p999_us, s.max_us),
            (999, 500.0, 990.0, 999.0, 1000.0)
        );
        let s = summary(&mut [], 0);
        assert_eq!((s.steps, s.max_us), (0, 0.0));
    }

    #[test]
    fn the_hash_is_over_little_endian_words() {
        // sha256 of the 4 bytes 01 00 00 00.
        assert_eq!(
            mask_sha256(&[1]),
            "67abdd721024f0ff4e0b3f4c2fc13bc5bad42d0b7851d456d88d203d15aaa450"
        );
    }
}
