//! The recovery state machine (seed 004, 11.1).
//!
//! Every way the loop goes on to another model request is a named [`Transition`], recorded in
//! the transcript. Each recovery path has its own lock or counter, and only normal progress
//! (a turn that ends at a frame boundary without hitting the output limit) resets them, so no
//! path can loop forever and no path can spend another's budget:
//!
//! ```text
//!               ┌──────── next_turn (resets every lock and counter) ─────────┐
//!               ▼                                                             │
//!          request ──finish stop/tool_calls, calls ran──────────────────────►─┘
//!           │  │ ╲
//!           │  │  ╲─finish length─► escalate_output_limit   (once: lock `output_limit_escalated`)
//!           │  │                 ─► resume_nudge            (up to 3: counter `truncation_retries`)
//!           │  │                 ─► recovery_exhausted      (end, status 1)
//!           │  ├──context overflow─► compact_retry          (once: lock `compact_attempted`)
//!           │  │                  ─► recovery_exhausted     (end, status 1)
//!           │  └──a byte outside CTL─► stream_error_nudge   (up to 3: counter `stream_errors`)
//!           │                     ─► stream_error           (end, status 1)
//!           └──no calls, stop────► done (end, status 0)
//! ```
//!
//! A `length` finish never discards output: what was confirmed stays confirmed (its calls have
//! run), the CTL parser keeps its state, and the next request's output continues the same
//! stream. Escalating the limit and nudging are two different ways of asking for that
//! continuation.
//!
//! A byte outside CTL (prose, a code fence) breaks the stream: the seed's rule is that the
//! output has left the contract, so nothing after that byte runs. The loop can still recover
//! as a user would expect: it tells the model where and why its output stopped being CTL and
//! asks for a new frame, in a fresh stream. What ran before the bad byte stays done.

/// How many resume nudges follow the escalation before the loop gives up.
pub const MAX_TRUNCATION_RETRIES: u8 = 3;

/// How many stream errors in a row are answered with a nudge; the next one ends the run.
pub const MAX_STREAM_ERRORS: u8 = 3;

/// How many turns in a row a native-tools run asks again after the stream broke off (a
/// dropped connection, an error event); the next break ends the run.
pub const MAX_TURN_RETRIES: u8 = 2;

/// Why the loop makes another request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transition {
    /// Normal progress: the turn ended cleanly and its calls ran.
    NextTurn,
    /// The output hit its limit: ask again with the escalated limit (once).
    EscalateOutputLimit,
    /// The output hit its limit again: nudge the model to resume where it was cut.
    ResumeNudge,
    /// The request did not fit the context window: compact and retry (once).
    CompactRetry,
    /// A byte outside CTL broke the stream: tell the model where and why, and ask for a new
    /// frame in a fresh stream.
    StreamErrorNudge,
    /// A native-tools stream broke off (dropped, or an error event): what was confirmed ran,
    /// the rest never will; ask again.
    RetryTurn,
}

impl Transition {
    /// The name recorded in the transcript.
    pub fn name(self) -> &'static str {
        match self {
            Transition::NextTurn => "next_turn",
            Transition::EscalateOutputLimit => "escalate_output_limit",
            Transition::ResumeNudge => "resume_nudge",
            Transition::CompactRetry => "compact_retry",
            Transition::StreamErrorNudge => "stream_error_nudge",
            Transition::RetryTurn => "retry_turn",
        }
    }
}

/// The locks and counters of the recovery paths.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Whether this stretch has already compacted (context overflow).
    pub compact_attempted: bool,
    /// Whether this stretch has already raised the output limit.
    pub output_limit_escalated: bool,
    /// Resume nudges sent in this stretch.
    pub truncation_retries: u8,
    /// Stream errors answered in this stretch.
    pub stream_errors: u8,
    /// Broken-off turns asked again in this stretch.
    pub turn_retries: u8,
}

impl Recovery {
    /// The turn was cut by the output limit. `None`: every path is spent.
    pub fn on_truncated(&mut self) -> Option<Transition> {
        if !self.output_limit_escalated {
            self.output_limit_escalated = true;
            return Some(Transition::EscalateOutputLimit);
        }
        if self.truncation_retries < MAX_TRUNCATION_RETRIES {
            self.truncation_retries += 1;
            return Some(Transition::ResumeNudge);
        }
        None
    }

    /// The request overflowed the context window. `None`: already compacted once.
    pub fn on_context_overflow(&mut self) -> Option<Transition> {
        if self.compact_attempted {
            return None;
        }
        self.compact_attempted = true;
        Some(Transition::CompactRetry)
    }

    /// A byte outside CTL broke the stream. `None`: [`MAX_STREAM_ERRORS`] were already
    /// answered since the last normal progress.
    pub fn on_stream_error(&mut self) -> Option<Transition> {
        if self.stream_errors >= MAX_STREAM_ERRORS {
            return None;
        }
        self.stream_errors += 1;
        Some(Transition::StreamErrorNudge)
    }

    /// A native-tools stream broke off. `None`: [`MAX_TURN_RETRIES`] were already asked again
    /// since the last normal progress.
    pub fn on_broken_off(&mut self) -> Option<Transition> {
        if self.turn_retries >= MAX_TURN_RETRIES {
            return None;
        }
        self.turn_retries += 1;
        Some(Transition::RetryTurn)
    }

    /// Normal progress: the only place the locks and counters are reset.
    pub fn on_progress(&mut self) -> Transition {
        *self = Recovery::default();
        Transition::NextTurn
    }
}

/// The seed's resume nudge, adapted to a stream that continues byte for byte.
pub const RESUME_NUDGE: &str = "Output token limit hit. Resume directly: no apology, no recap. \
Your output continues the same CTL stream from the exact byte where it was cut, so write the \
next byte of that stream first and repeat nothing. Break the remaining work into smaller calls.";

/// What the loop says when it raises the output limit.
pub const CONTINUE_NUDGE: &str = "Your output was cut by the output limit, which is now raised. \
Continue the same CTL stream from the exact byte where it was cut; repeat nothing.";

/// What a valid frame looks like, told to the model after a stream error.
pub const STREAM_ERROR_NUDGE: &str = "Continue with a new frame and nothing else: each call is \
`call <id> <tool>` on its own line, then for each argument a line `arg <key> <nbytes>` followed \
by exactly nbytes bytes of value, then `end` on its own line. No prose, no code fences, no \
blank lines between frames. Repeat a call that was not run if it is still needed.";

/// What a valid frame of extended CTL looks like, told to the model after a stream error.
pub const EXTENDED_STREAM_ERROR_NUDGE: &str = "Continue with a new frame and nothing else: each \
call is `call <id> <tool>` on its own line, then for each argument either `arg <key> = <value>` \
on one line, or `arg <key> <<EOF` followed by the value's lines and a line that is exactly \
`EOF` (or `arg <key> <nbytes>` and exactly nbytes bytes, for a value of several lines that must \
not end with a newline), then `end` on its own line. No prose, no code fences, no blank lines \
between frames. Repeat a call that was not run if it is still needed.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_path_has_its_own_budget() {
        let mut r = Recovery::default();
        assert_eq!(r.on_truncated(), Some(Transition::EscalateOutputLimit));
        for _ in 0..MAX_TRUNCATION_RETRIES {
            assert_eq!(r.on_truncated(), Some(Transition::ResumeNudge));
        }
        assert_eq!(r.on_truncated(), None);
        // Overflow has its own lock, untouched by truncation.
        assert_eq!(r.on_context_overflow(), Some(Transition::CompactRetry));
        assert_eq!(r.on_context_overflow(), None);
        // So do stream errors.
        for _ in 0..MAX_STREAM_ERRORS {
            assert_eq!(r.on_stream_error(), Some(Transition::StreamErrorNudge));
        }
        assert_eq!(r.on_stream_error(), None);
        for _ in 0..MAX_TURN_RETRIES {
            assert_eq!(r.on_broken_off(), Some(Transition::RetryTurn));
        }
        assert_eq!(r.on_broken_off(), None);
        assert_eq!(r.on_progress(), Transition::NextTurn);
        assert_eq!(r, Recovery::default());
        assert_eq!(r.on_truncated(), Some(Transition::EscalateOutputLimit));
    }
}
