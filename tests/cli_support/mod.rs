//! Running the `frontier` binary from an integration test: arguments in, standard input fed
//! whole, the exit status and both outputs back (as UTF-8, which every format is).

use std::ffi::OsStr;
use std::io::Write;
use std::process::{Command, Stdio};

/// Runs `frontier ARGS` with `stdin`; returns the exit status, standard output and standard
/// error.
pub fn run<I, S>(args: I, stdin: &[u8]) -> (i32, String, String)
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut child = Command::new(env!("CARGO_BIN_EXE_frontier"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}
