//! The `shell` tool's runner: `sh -c COMMAND` in the workspace root, standard input closed,
//! a wall-clock timeout and a cap on the output kept.
//!
//! # Nothing the command started outlives the call
//!
//! The command runs in a process group of its own (`process_group(0)`: the group's id is the
//! pid of `sh`). When the call ends, however it ends (the command exited, the timeout hit, a
//! read failed), the whole group gets `SIGKILL`, so a background child (`sleep 100 >
//! /dev/null &`) dies with the call instead of outliving it and the run. Children that still
//! hold the output pipes after `sh` exited get [`LINGER`] to finish writing first.
//!
//! `sh` is not reaped until the group has been signalled: it stays a zombie meanwhile
//! (`waitid` with `WNOWAIT` sees that it exited without collecting it), so the group's id
//! cannot be reused by an unrelated process between the check and the kill. Signalling a group
//! is `kill(-pgid)`, done through `rustix`'s safe wrapper (the crate forbids `unsafe`).
//!
//! What this does not reach: a process that leaves the group on purpose (`setsid`, `setpgid`)
//! is not killed. Its hold on the output pipes no longer blocks the call: the pipes are read
//! by one `poll` loop that stops [`LINGER`] after `sh` exits, whoever still holds them.
//!
//! The timeout accepts any [`Duration`]: a deadline past what [`Instant`] can represent
//! means no deadline (checked arithmetic, no overflow).

use std::io::Read;
use std::os::fd::AsFd;
use std::path::Path;
use std::process::{Child, ChildStderr, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::process::{Pid, Signal, WaitId, WaitIdOptions};

/// How long children that outlived `sh` may keep writing to the output pipes before the group
/// is killed.
pub const LINGER: Duration = Duration::from_millis(100);

/// The longest wait between two checks of whether `sh` exited while the pipes stay open.
const MAX_PAUSE: Duration = Duration::from_millis(20);

/// The limits of one `shell` call.
#[derive(Clone, Copy, Debug)]
pub struct ShellLimits {
    /// Wall-clock time before the command's process group is killed (any value: one too
    /// large for the clock means no deadline).
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
    let group = Pid::from_child(&child);
    let collected = collect(&mut child, group, limits);
    // Whatever happened, nothing the command started outlives the call. `sh` is not reaped
    // yet, so `group` still names this command's group.
    let _ = rustix::process::kill_process_group(group, Signal::KILL);
    let status = child.wait()?;
    let (stdout, stderr, timed_out) = collected?;
    let mut output = Vec::new();
    for (name, capture) in [("stdout", stdout), ("stderr", stderr)] {
        if name == "stderr"
            && !capture.kept.is_empty()
            && !output.is_empty()
            && !output.ends_with(b"\n")
        {
            output.push(b'\n');
        }
        output.extend_from_slice(&capture.kept);
        if capture.dropped > 0 {
            output.extend_from_slice(
                format!(
                    "\n[{name} truncated: {} more bytes not kept]\n",
                    capture.dropped
                )
                .as_bytes(),
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

/// One output pipe: the first `cap` bytes kept, the rest counted.
struct Capture {
    kept: Vec<u8>,
    dropped: u64,
    cap: usize,
}

impl Capture {
    fn new(cap: usize) -> Capture {
        Capture {
            kept: Vec::new(),
            dropped: 0,
            cap,
        }
    }

    fn take(&mut self, bytes: &[u8]) {
        let room = self.cap.saturating_sub(self.kept.len()).min(bytes.len());
        self.kept.extend_from_slice(&bytes[..room]);
        self.dropped += (bytes.len() - room) as u64;
    }
}

/// Reads both pipes until they close and `sh` has exited, until [`LINGER`] after `sh` exited,
/// or until the timeout; returns the two captures and whether the timeout hit. Leaves `sh`
/// unreaped (a zombie once it exited) so the caller can still signal its group.
fn collect(
    child: &mut Child,
    group: Pid,
    limits: ShellLimits,
) -> std::io::Result<(Capture, Capture, bool)> {
    let deadline = Instant::now().checked_add(limits.timeout);
    let mut stdout: Option<ChildStdout> = child.stdout.take();
    let mut stderr: Option<ChildStderr> = child.stderr.take();
    let mut out = Capture::new(limits.max_output);
    let mut err = Capture::new(limits.max_output);
    let mut linger_until: Option<Instant> = None;
    // Short commands are the common case: check often first, then back off.
    let mut pause = Duration::from_micros(200);
    let mut buf = [0u8; 8192];
    loop {
        let now = Instant::now();
        if linger_until.is_none() && exited(group)? {
            linger_until = Some(now + LINGER);
        }
        let open = stdout.is_some() || stderr.is_some();
        match linger_until {
            Some(_) if !open => return Ok((out, err, false)),
            Some(until) if now >= until => return Ok((out, err, false)),
            _ => {}
        }
        if deadline.is_some_and(|d| now >= d) {
            return Ok((out, err, true));
        }
        let mut wait = pause;
        if let Some(d) = deadline {
            wait = wait.min(d.saturating_duration_since(now));
        }
        if let Some(until) = linger_until {
            wait = wait.min(until.saturating_duration_since(now));
        }
        pause = (pause * 2).min(MAX_PAUSE);
        let (out_ready, err_ready) = wait_readable(stdout.as_ref(), stderr.as_ref(), wait)?;
        if out_ready {
            drain_once(&mut stdout, &mut out, &mut buf);
        }
        if err_ready {
            drain_once(&mut stderr, &mut err, &mut buf);
        }
    }
}

/// Whether `sh` has exited, without reaping it.
fn exited(pid: Pid) -> std::io::Result<bool> {
    let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
    Ok(rustix::process::waitid(WaitId::Pid(pid), options)?.is_some())
}

/// Waits at most `wait` for either pipe to have data or to close; says which one is ready.
fn wait_readable(
    stdout: Option<&ChildStdout>,
    stderr: Option<&ChildStderr>,
    wait: Duration,
) -> std::io::Result<(bool, bool)> {
    let timeout = Timespec {
        tv_sec: i64::try_from(wait.as_secs()).unwrap_or(i64::MAX),
        tv_nsec: i64::from(wait.subsec_nanos()),
    };
    let mut fds = Vec::with_capacity(2);
    if let Some(pipe) = stdout {
        fds.push(PollFd::new(pipe, PollFlags::IN));
    }
    if let Some(pipe) = stderr {
        fds.push(PollFd::new(pipe, PollFlags::IN));
    }
    match rustix::event::poll(&mut fds, Some(&timeout)) {
        Ok(_) => {}
        Err(rustix::io::Errno::INTR) => return Ok((false, false)),
        Err(e) => return Err(e.into()),
    }
    let mut ready = fds.iter().map(|fd| !fd.revents().is_empty());
    let out_ready = stdout.is_some() && ready.next().unwrap_or(false);
    let err_ready = stderr.is_some() && ready.next().unwrap_or(false);
    Ok((out_ready, err_ready))
}

/// One read from a pipe that `poll` said is ready; closes it at its end or on an error.
fn drain_once<P: Read + AsFd>(pipe: &mut Option<P>, capture: &mut Capture, buf: &mut [u8]) {
    let Some(reader) = pipe.as_mut() else { return };
    match reader.read(buf) {
        Ok(n) if n > 0 => capture.take(&buf[..n]),
        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
        _ => *pipe = None,
    }
}
