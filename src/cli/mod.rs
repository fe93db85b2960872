//! The command line. Each command lives in a module of its own; [`lang`] turns `--lang` and
//! `--mode` into a parser, so that every command works for every language through one generic
//! function. Three modules serve them all: [`input`] reads a file or a pipe as it arrives,
//! [`bounds`] holds the range of every numeric option, [`display`] shows names and messages
//! (lossy UTF-8, control characters escaped, counts in the right number).

mod apply;
mod bounds;
mod calls;
mod check;
mod context;
mod display;
mod events;
mod frame;
mod hf_encoder;
mod input;
mod lang;
mod mask;
mod run;
mod stream;
mod trace;
mod truncate;

use clap::{Parser, Subcommand};

/// Exit status when a command could not run (usage, unreadable file).
pub const EXIT_USAGE: i32 = 2;

#[derive(Parser, Debug)]
#[command(
    name = "frontier",
    version,
    about = "Streaming parsers for model output: confirmed events and next-allowed bytes"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Parse files and report verdict, offsets, error and unit counts.
    Check(check::Args),
    /// Print the allowed set and accepting flag after every prefix.
    Trace(trace::Args),
    /// Print the confirmed events as JSON lines.
    Events(events::Args),
    /// Print the confirmed tool calls of a CTL stream.
    Calls(calls::Args),
    /// Write tool calls given as JSON lines as a CTL stream, strict or extended.
    Frame(frame::Args),
    /// Run the agent loop: a model's CTL output, executed call by confirmed call.
    Run(Box<run::Args>),
    /// Cut the same calls framed as CTL and as JSON at every offset and compare runtimes.
    Truncate(truncate::Args),
    /// Apply an apply_patch or a unified diff under a root directory.
    Apply(apply::Args),
    /// Print the token mask before every step of a token sequence, with its time.
    Mask(mask::Args),
    /// Read a recorded provider stream (OpenAI Chat, Responses, Anthropic): its confirmed calls.
    Stream(stream::Args),
    /// The context engine offline: apply context_update cases, replay a run.
    #[command(subcommand)]
    Context(context::Args),
}

/// Runs the CLI and returns the exit status.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { EXIT_USAGE } else { 0 };
        }
    };
    let result = match cli.command {
        Command::Check(args) => check::run(args),
        Command::Trace(args) => trace::run(args),
        Command::Events(args) => events::run(args),
        Command::Calls(args) => calls::run(args),
        Command::Frame(args) => frame::run(args),
        Command::Run(args) => run::run(*args),
        Command::Truncate(args) => truncate::run(args),
        Command::Apply(args) => apply::run(args),
        Command::Mask(args) => mask::run(args),
        Command::Stream(args) => stream::run(args),
        Command::Context(args) => context::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) if stdout_closed(&e) => EXIT_STDOUT_CLOSED,
        Err(e) => {
            eprintln!("frontier: {}", display::escaped(&e));
            EXIT_USAGE
        }
    }
}

/// Exit status when the reader of standard output went away (`frontier events … | head`):
/// the command stops there, quietly, with the status a shell reports for a process that
/// `SIGPIPE` ended (128 + 13), as other command-line tools end.
pub const EXIT_STDOUT_CLOSED: i32 = 141;

/// Whether a command's error is a write into a closed pipe. Commands report I/O errors as
/// text ending with the error's own message, so this compares that ending.
fn stdout_closed(error: &str) -> bool {
    let epipe = std::io::Error::from_raw_os_error(rustix::io::Errno::PIPE.raw_os_error());
    error.ends_with(&epipe.to_string())
}
