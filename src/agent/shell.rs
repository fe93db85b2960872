//! The `shell` tool's runner: `sh -c COMMAND` in the workspace root, standard input closed,
//! a wall-clock timeout and a cap on the output kept.
//!
//! The command runs in a process group of its own, so that a timeout kills everything it
//! started (a `sleep` behind `sh` would otherwise keep the output pipes open); so does a
//! command whose backgrounded children still hold the output pipes 100 ms after `sh` exited.
//! Background processes that redirected their output elsewhere are left alone. Standard output
//! and standard error are read by two threads, each keeping at most the cap and counting the
//! rest.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The limits of one `shell` call.
#[derive(Clone, Copy, Debug)]
pub struct ShellLimits {
    /// Wall-clock time before the command's process group is killed.
    pub timeout: Duration,
    /// Bytes of output kept, standard output and standard error each.
    pub max_output: usize,
}

impl Default for ShellLimits {
    fn default() -> Self {
        ShellLimits {
            timeout: Duration::from_secs(30),
            max_output: 64 * 1024,
        }
    }
}

/// What a command did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShellOutput {
    /// The exit code; `None` when a signal ended it (the timeout's included).
    pub code: Option<i32>,
    /// Whether the timeout killed it.
    pub timed_out: bool,
    /// Standard output then standard error, each capped, with a note where bytes were dropped.
    pub output: Vec<u8>,
}

impl ShellOutput {
    /// Exit code 0 and no timeout.
    pub fn success(&self) -> bool {
        self.code == Some(0) && !self.timed_out
    }
}

/// Runs `sh -c command` in `root`.
pub fn run(root: &Path, command: &str, limits: ShellLimits) -> std::io::Result<ShellOutput> {
    use std::os::unix::process::CommandExt;
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()?;
    let cap = limits.max_output;
    let stdout = child
        .stdout
        .take()
        .map(|s| std::thread::spawn(move || capped(s, cap)));
    let stderr = child
        .stderr
        .take()
        .map(|s| std::thread::spawn(move || capped(s, cap)));
    let deadline = Instant::now() + limits.timeout;
    let mut timed_out = false;
    let mut pause = Duration::from_micros(200);
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() >= deadline {
            timed_out = true;
            kill_group(child.id());
            let _ = child.kill();
            break child.wait()?;
        }
        // Short commands are the common case: poll fast first, then back off.
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    };
    // Children that outlived `sh` (backgrounded with `&`) and still hold the pipes would keep
    // the readers waiting: give them a moment, then end the group.
    let linger = Instant::now() + Duration::from_millis(100);
    while [&stdout, &stderr]
        .iter()
        .any(|r| r.as_ref().is_some_and(|h| !h.is_finished()))
    {
        if Instant::now() >= linger {
            kill_group(child.id());
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut output = Vec::new();
    for (name, reader) in [("stdout", stdout), ("stderr", stderr)] {
        let Some(reader) = reader else { continue };
        let (kept, dropped) = reader.join().unwrap_or_default();
        if name == "stderr" && !kept.is_empty() && !output.is_empty() && !output.ends_with(b"\n") {
            output.push(b'\n');
        }
        output.extend_from_slice(&kept);
        if dropped > 0 {
            output.extend_from_slice(
                format!("\n[{name} truncated: {dropped} more bytes not kept]\n").as_bytes(),
            );
        }
    }
    if timed_out {
        output.extend_from_slice(
            format!(
                "\n[killed after the {} s timeout]\n",
                limits.timeout.as_secs_f64()
            )
            .as_bytes(),
        );
    }
    Ok(ShellOutput {
        code: status.code(),
        timed_out,
        output,
    })
}

/// Reads a pipe to its end, keeping the first `cap` bytes; returns them and how many more came.
fn capped(mut pipe: impl Read, cap: usize) -> (Vec<u8>, u64) {
    let mut kept = Vec::new();
    let mut dropped = 0u64;
    let mut buf = [0u8; 8192];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = cap.saturating_sub(kept.len()).min(n);
                kept.extend_from_slice(&buf[..room]);
                dropped += (n - room) as u64;
            }
        }
    }
    (kept, dropped)
}

/// Kills the process group led by `pid`, without `unsafe`: through the shell's own `kill`
/// (the `sh` the tool needs anyway; `kill -KILL -PGID` is read the same way by dash and bash,
/// and does not depend on a separate `kill` binary being installed).
fn kill_group(pid: u32) {
    let _ = Command::new("sh")
        .arg("-c")
        .arg(format!("kill -KILL -{pid}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}
