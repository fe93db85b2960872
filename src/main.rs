//! `frontier`: the command-line front end. Its formats are an interface (see `docs/cli.md`).
#![forbid(unsafe_code)]

mod cli;

fn main() {
    std::process::exit(cli::main());
}
