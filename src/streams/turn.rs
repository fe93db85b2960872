//! What every assembler shares: the limits, the turn's text and reasoning, its finish, the
//! calls that ended badly, and the confirmation step that turns a [`Pending`] call into an
//! emitted [`Call`] or a reported malformed one; and the errors they all raise the same way
//! (a missing field, too many open calls, a call over its bound).

use frontier_core::apply_patch::PatchEvent;

use super::call::{Call, PartialCall, Pending};
use super::ctl_text::CtlText;
use super::think::{Side, ThinkSplitter};
use super::usage::Usage;
use super::Api;
use super::{StreamError, StreamErrorKind};
use frontier_core::ctl::CtlMode;

/// The bounds of a reader. Every buffer it holds is under one of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// One line of the body (an SSE line or a JSON line) and one event's data, in bytes
    /// (default 8 MiB: a Responses `response.completed` event repeats the whole output).
    pub max_line: usize,
    /// One call's arguments or input, in bytes (default 8 MiB).
    pub max_call_bytes: usize,
    /// The turn's text, and separately its reasoning, in bytes (default 8 MiB).
    pub max_text: usize,
    /// Calls open at once (default 64): Responses items or Anthropic blocks started and not
    /// ended; Chat has one open call at a time.
    pub max_open_calls: usize,
    /// Incomplete and malformed calls reported, together (default 256).
    pub max_reported: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_line: 8 << 20,
            max_call_bytes: 8 << 20,
            max_text: 8 << 20,
            max_open_calls: 64,
            max_reported: 256,
        }
    }
}

/// What a reader hands on while it reads, in stream order.
#[derive(Clone, Copy, Debug)]
pub enum Event<'a> {
    /// A confirmed call: finished by its protocol, its arguments whole.
    Call(&'a Call),
    /// A call its protocol finished whose arguments are not whole: never to be executed.
    Malformed(&'a PartialCall),
    /// A piece of the assistant's text.
    Text(&'a str),
    /// A piece of reasoning (`reasoning_content`, `reasoning`, thinking deltas, `<think>`).
    Reasoning(&'a str),
    /// A confirmed event of an `apply_patch` call's patch, while the call streams.
    Patch {
        /// The call's id.
        id: &'a str,
        /// The parser's event.
        event: PatchEvent<'a>,
    },
    /// The patch of an `apply_patch` call is malformed: known the moment its parser refuses
    /// a byte, before the call ends (it will be reported as malformed, never confirmed).
    PatchRefused {
        /// The call's id.
        id: &'a str,
        /// Why.
        message: &'a str,
    },
}

/// How the stream ended: the last line of `frontier stream`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Chat's last `finish_reason`; Responses `completed`, `incomplete:<reason>` or
    /// `failed`; Anthropic's `stop_reason`.
    pub finish_reason: Option<String>,
    /// The protocol's terminal marker arrived and no error did.
    pub ended_cleanly: bool,
    /// Cut by a token limit (`length`, `max_tokens`, `incomplete:max_output_tokens`).
    pub truncated: bool,
    /// Calls started and never finished, with what arrived of each.
    pub incomplete: Vec<PartialCall>,
    /// Calls finished with arguments that are not whole.
    pub malformed: Vec<PartialCall>,
    /// The assistant text as streamed (`<think>` tags kept).
    pub text: String,
    /// The reasoning text: the provider's reasoning fields and the text's `<think>` blocks.
    pub reasoning: String,
    /// The part of [`reasoning`](Self::reasoning) the provider streamed apart from the text
    /// (`reasoning_content` or `reasoning` deltas, thinking, Responses reasoning), without
    /// what the text's `<think>` blocks hold, which stays in the text as streamed: what an
    /// API replays as the reply's own reasoning field.
    pub reasoning_apart: String,
    /// Why reading stopped early: bad input or an error event.
    pub error: Option<StreamError>,
    /// Events of types this reader does not know, skipped.
    pub skipped_events: u64,
    /// The token usage the provider reported, normalised ([`super::usage`]); `None` when
    /// the stream carried none of the right shape.
    pub usage: Option<Usage>,
}

/// The shared state of a turn being read.
#[derive(Debug)]
pub struct Turn {
    /// The reader's bounds.
    pub limits: Limits,
    /// What the summary will say.
    pub summary: Summary,
    /// The protocol's terminal marker arrived (error or not).
    pub terminated: bool,
    /// The offset of the event being read, for errors found in its content.
    pub offset: u64,
    think: ThinkSplitter,
    /// Reused buffers for what the splitter sorts out of one delta.
    split: Split,
    ctl: Option<CtlText>,
}

/// Which of the turn's two kept texts a piece goes to.
#[derive(Clone, Copy, Debug)]
enum Kept {
    Text,
    Reasoning,
}

/// One delta's bytes by side of the `<think>` tags.
#[derive(Debug, Default)]
struct Split {
    answer: Vec<u8>,
    reasoning: Vec<u8>,
}

impl Split {
    fn clear(&mut self) {
        self.answer.clear();
        self.reasoning.clear();
    }

    fn push(&mut self, side: Side, bytes: &[u8]) {
        match side {
            Side::Answer => self.answer.extend_from_slice(bytes),
            Side::Reasoning => self.reasoning.extend_from_slice(bytes),
        }
    }
}

impl Turn {
    /// A turn within `limits`; with `ctl`, the answer text is a CTL stream in that mode.
    pub fn new(limits: Limits, ctl: Option<CtlMode>) -> Turn {
        Turn {
            limits,
            summary: Summary::default(),
            terminated: false,
            offset: 0,
            think: ThinkSplitter::default(),
            split: Split::default(),
            ctl: ctl.map(CtlText::new),
        }
    }

    /// An error at the current event.
    pub fn error(&self, kind: StreamErrorKind, message: impl Into<String>) -> StreamError {
        StreamError {
            kind,
            offset: self.offset,
            message: message.into(),
            ctl: None,
        }
    }

    /// A piece of assistant text: kept, handed on, its `<think>` blocks read as reasoning and
    /// (with `--ctl`) the rest pushed into the CTL parser.
    pub fn text(
        &mut self,
        text: &str,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), StreamError> {
        if text.is_empty() {
            return Ok(());
        }
        self.keep(Kept::Text, text, on_event)?;
        if self.ctl.is_some() {
            return self.ctl_text_and_tags(text.as_bytes(), on_event);
        }
        let mut split = std::mem::take(&mut self.split);
        split.clear();
        self.think
            .split(text.as_bytes(), &mut |side, bytes| split.push(side, bytes));
        let done = self.take_split(&split, on_event);
        self.split = split;
        done
    }

    /// With `--ctl`: a `<think>` block may stand only between CTL frames (where the text so far
    /// is whole frames); inside a frame, a header or a body, `<think>` is CTL like any bytes,
    /// so a body that holds the tag is the body the model wrote. The splitter reads tags at a
    /// `<` between frames; the text up to the next `<` goes to the CTL parser as it is.
    fn ctl_text_and_tags(
        &mut self,
        mut rest: &[u8],
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), StreamError> {
        while let Some(&first) = rest.first() {
            let between = self.ctl.as_ref().is_some_and(CtlText::between_frames);
            if self.think.in_answer() && !(between && first == b'<') {
                let n = memchr::memchr(b'<', &rest[1..]).map_or(rest.len(), |i| i + 1);
                self.ctl_text(&rest[..n], on_event)?;
                rest = &rest[n..];
                continue;
            }
            let mut split = std::mem::take(&mut self.split);
            split.clear();
            let n = self
                .think
                .split_tags(rest, &mut |side, bytes| split.push(side, bytes));
            let done = self.take_split(&split, on_event);
            self.split = split;
            done?;
            rest = &rest[n..];
        }
        Ok(())
    }

    /// Hands on what the splitter sorted: reasoning, and answer text for the CTL parser.
    fn take_split(
        &mut self,
        split: &Split,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), StreamError> {
        // The splitter cuts at ASCII tags, so each side is whole UTF-8.
        if !split.reasoning.is_empty() {
            let inline = String::from_utf8_lossy(&split.reasoning);
            self.keep(Kept::Reasoning, &inline, on_event)?;
        }
        self.ctl_text(&split.answer, on_event)
    }

    fn ctl_text(
        &mut self,
        answer: &[u8],
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), StreamError> {
        let Some(ctl) = &mut self.ctl else {
            return Ok(());
        };
        if answer.is_empty() {
            return Ok(());
        }
        ctl.push(answer, &mut |call| on_event(Event::Call(&call)))
            .map_err(|not_ctl| StreamError {
                kind: StreamErrorKind::NotCtl,
                offset: self.offset,
                message: not_ctl.message,
                ctl: not_ctl.error,
            })
    }

    /// A piece of reasoning the provider streamed in its own field (kept apart too).
    pub fn reasoning(
        &mut self,
        text: &str,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), StreamError> {
        if text.is_empty() {
            return Ok(());
        }
        self.keep(Kept::Reasoning, text, on_event)?;
        self.summary.reasoning_apart.push_str(text);
        Ok(())
    }

    /// Appends `more` to the text or the reasoning kept so far, within
    /// [`Limits::max_text`], and hands it on.
    fn keep(
        &mut self,
        kept: Kept,
        more: &str,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), StreamError> {
        let (held, what, event) = match kept {
            Kept::Text => (&mut self.summary.text, "text", Event::Text(more)),
            Kept::Reasoning => (
                &mut self.summary.reasoning,
                "reasoning",
                Event::Reasoning(more),
            ),
        };
        if held.len() + more.len() > self.limits.max_text {
            return Err(self.error(
                StreamErrorKind::TextTooLong,
                format!("the {what} is longer than {} bytes", self.limits.max_text),
            ));
        }
        held.push_str(more);
        on_event(event);
        Ok(())
    }

    /// A field an event needs: `value`, or a `bad_event` error that reads "`holder` without
    /// its `field`" (`"a delta"`, `"text"`).
    pub fn required<T>(
        &self,
        value: Option<T>,
        holder: &str,
        field: &str,
    ) -> Result<T, StreamError> {
        value.ok_or_else(|| {
            self.error(
                StreamErrorKind::BadEvent,
                format!("{holder} without its {field}"),
            )
        })
    }

    /// Room for one more open call beside the `open` ones (`what` they are called, for the
    /// error), within [`Limits::max_open_calls`].
    pub fn room_for_call(&self, open: usize, what: &str) -> Result<(), StreamError> {
        if open >= self.limits.max_open_calls {
            return Err(self.error(
                StreamErrorKind::TooManyCalls,
                format!(
                    "more than {} {what} open at once",
                    self.limits.max_open_calls
                ),
            ));
        }
        Ok(())
    }

    /// The error of a call whose arguments grew past a bound: `kind` is what
    /// [`Pending::append`] refused with.
    pub fn call_too_long(&self, kind: StreamErrorKind, call: &Pending) -> StreamError {
        self.error(
            kind,
            format!(
                "the arguments of call {:?} are longer than {} bytes",
                call.id, self.limits.max_call_bytes
            ),
        )
    }

    /// A usage object of `api` the stream carried: it replaces the usage read so far, unless
    /// it has the wrong shape (then it is ignored, never an error).
    pub fn usage(&mut self, api: Api, raw: &serde_json::Value) {
        if let Some(usage) = Usage::read(api, raw) {
            self.summary.usage = Some(usage);
        }
    }

    /// An event of a type this reader does not know.
    pub fn skip(&mut self) {
        self.summary.skipped_events += 1;
    }

    /// The protocol finished `call`: emitted when whole, else reported as malformed.
    pub fn confirm(
        &mut self,
        call: Pending,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), StreamError> {
        match call.confirm(on_event) {
            Ok(call) => {
                on_event(Event::Call(&call));
                Ok(())
            }
            Err(malformed) => {
                on_event(Event::Malformed(&malformed));
                self.report(malformed, false)
            }
        }
    }

    /// A call the stream left unfinished.
    pub fn incomplete(&mut self, call: Pending) -> Result<(), StreamError> {
        self.report(call.incomplete(), true)
    }

    fn report(&mut self, call: PartialCall, incomplete: bool) -> Result<(), StreamError> {
        let reported = self.summary.incomplete.len() + self.summary.malformed.len();
        if reported >= self.limits.max_reported {
            return Err(self.error(
                StreamErrorKind::TooManyCalls,
                format!(
                    "more than {} incomplete or malformed calls",
                    self.limits.max_reported
                ),
            ));
        }
        if incomplete {
            self.summary.incomplete.push(call);
        } else {
            self.summary.malformed.push(call);
        }
        Ok(())
    }

    /// The end of the stream: held text flushed, the CTL parser's open call reported.
    pub fn finish(&mut self, on_event: &mut dyn FnMut(Event<'_>)) -> Result<(), StreamError> {
        let mut split = Split::default();
        self.think
            .finish(&mut |side, bytes| split.push(side, bytes));
        self.take_split(&split, on_event)?;
        if let Some(open) = self.ctl.take().and_then(CtlText::finish) {
            self.report(open, true)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reasoning kept apart is what the provider streamed in its own field, whichever
    /// side of the text it came, never what the text's `<think>` blocks hold.
    #[test]
    fn reasoning_apart_is_what_the_think_blocks_do_not_hold() {
        // (text, the field's reasoning, the field first, reasoning apart)
        let cases = [
            ("answer", "", false, ""),
            ("answer", "plan the reads", false, "plan the reads"),
            ("<think>plan</think>answer", "", false, ""),
            (
                "<think>plan</think>answer",
                ", then field",
                false,
                ", then field",
            ),
            (
                "<think>plan</think>answer",
                "field, then ",
                true,
                "field, then ",
            ),
            ("<think>a</think>x<think>b</think>", "", false, ""),
            ("<think>plan</think>", "other", false, "other"),
        ];
        for (text, field, first, apart) in cases {
            let mut turn = Turn::new(Limits::default(), None);
            let mut events = |_: Event<'_>| {};
            if first {
                turn.reasoning(field, &mut events).unwrap();
            }
            turn.text(text, &mut events).unwrap();
            if !first {
                turn.reasoning(field, &mut events).unwrap();
            }
            turn.finish(&mut events).unwrap();
            assert_eq!(turn.summary.reasoning_apart, apart, "{text:?} {field:?}");
            assert_eq!(turn.summary.reasoning.len() - apart.len(), {
                let inline: usize = text
                    .split("<think>")
                    .skip(1)
                    .map(|t| t.split("</think>").next().unwrap().len())
                    .sum();
                inline
            });
        }
    }
}
