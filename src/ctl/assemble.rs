//! Whole tool calls from CTL events, for consumers that want values rather than a stream.

use bytes::{Bytes, BytesMut};

use super::CtlEvent;

/// A complete, confirmed tool call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCall {
    /// The call's id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments in the order written. Keys may repeat; judging that is the runtime's job.
    pub args: Vec<(String, Bytes)>,
}

impl ToolCall {
    /// The first argument called `key`.
    pub fn arg(&self, key: &str) -> Option<&Bytes> {
        self.args.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// Builds [`ToolCall`]s from [`CtlEvent`]s. Memory is the call being assembled: its
/// arguments, each at most `max_arg` bytes (the buffer is sized from the confirmed `len`).
#[derive(Clone, Debug, Default)]
pub struct CallAssembler {
    current: Option<ToolCall>,
    key: String,
    body: BytesMut,
}

impl CallAssembler {
    /// Takes one event; returns the call it completes, if any.
    pub fn on_event(&mut self, event: &CtlEvent<'_>) -> Option<ToolCall> {
        match *event {
            CtlEvent::CallStart { id, name } => {
                self.current = Some(ToolCall {
                    id: id.as_str().to_owned(),
                    name: name.as_str().to_owned(),
                    args: Vec::new(),
                });
            }
            CtlEvent::ArgStart { key, len } => {
                self.key.clear();
                self.key.push_str(key.as_str());
                // `len` is already checked against `max_arg` by the parser.
                self.body = BytesMut::with_capacity(len as usize);
            }
            CtlEvent::ArgData(data) => self.body.extend_from_slice(data),
            CtlEvent::ArgEnd => {
                let value = std::mem::take(&mut self.body).freeze();
                if let Some(call) = self.current.as_mut() {
                    call.args.push((std::mem::take(&mut self.key), value));
                }
            }
            CtlEvent::CallEnd => return self.current.take(),
        }
        None
    }

    /// The call being assembled, if a `call` line has been confirmed and its `end` has not.
    pub fn in_progress(&self) -> Option<&ToolCall> {
        self.current.as_ref()
    }
}
