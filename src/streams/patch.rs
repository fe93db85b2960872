//! The input of a custom `apply_patch` call, parsed while it streams.
//!
//! Codex offers `apply_patch` as a freeform tool constrained by the Lark grammar of the
//! apply_patch language, and parses what the model writes with its own lenient rules, so the
//! input goes into frontier's codex-mode parser ([`CodexParser`]) fragment by fragment. Its
//! confirmed events (each chunk, each file operation) are handed on the moment they are
//! confirmed, tagged with the call's id, so that a consumer can check them against a
//! workspace while the model is still writing; a byte the parser refuses makes the patch
//! malformed at once ([`PatchInput::error`]), before the call ends. At the end the patch must
//! be a whole sentence: a cut patch inside a "finished" call is malformed too.

use frontier_core::apply_patch::CodexParser;
#[cfg(test)]
use frontier_core::apply_patch::PatchEvent;
use frontier_core::contract::{PushParser, Verdict};

use super::turn::Event;

/// The parser of one `apply_patch` input.
#[derive(Debug, Default)]
pub struct PatchInput {
    parser: CodexParser,
    /// The input is the diff of one operation (Responses' built-in `apply_patch_call`), framed
    /// here as a whole patch: the header was pushed first, the end line follows at the end.
    framed: bool,
    /// The last byte pushed was a line end (or nothing was pushed).
    at_line_start: bool,
}

impl PatchInput {
    /// A parser for the diff of one operation of Responses' built-in `apply_patch` tool
    /// (`create_file`, `update_file` or `delete_file` of `path`): the `*** Begin Patch` and
    /// operation header lines are pushed now, the `*** End Patch` line by
    /// [`PatchInput::finish`], so the diff's chunks are confirmed as they stream.
    pub fn operation(
        id: &str,
        op: &str,
        path: &str,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<PatchInput, String> {
        let header = match op {
            "create_file" => "Add File",
            "update_file" => "Update File",
            "delete_file" => "Delete File",
            other => {
                return Err(format!(
                    "an apply_patch operation of unknown type {other:?}"
                ))
            }
        };
        let mut input = PatchInput {
            framed: true,
            ..PatchInput::default()
        };
        input.push(
            id,
            format!("*** Begin Patch\n*** {header}: {path}\n").as_bytes(),
            on_event,
        );
        Ok(input)
    }

    /// Pushes the next fragment; confirmed events go to `on_event` with `id`. After a refused
    /// byte nothing more is parsed.
    pub fn push(&mut self, id: &str, fragment: &[u8], on_event: &mut dyn FnMut(Event<'_>)) {
        if self.parser.error().is_none() && !fragment.is_empty() {
            let pushed = self
                .parser
                .push(fragment, &mut |event| on_event(Event::Patch { id, event }));
            self.at_line_start = fragment.ends_with(b"\n");
            if let Err(e) = pushed {
                let message = format!("the patch is malformed: {e}");
                on_event(Event::PatchRefused {
                    id,
                    message: &message,
                });
            }
        }
    }

    /// The refused byte, if the patch is already known to be malformed.
    pub fn error(&self) -> Option<String> {
        self.parser
            .error()
            .map(|e| format!("the patch is malformed: {e}"))
    }

    /// Ends the input: `Ok` for a whole patch, else why not.
    pub fn finish(mut self, id: &str, on_event: &mut dyn FnMut(Event<'_>)) -> Result<(), String> {
        if self.framed {
            let end: &[u8] = if self.at_line_start {
                b"*** End Patch\n"
            } else {
                b"\n*** End Patch\n"
            };
            self.push(id, end, on_event);
        }
        let outcome = self
            .parser
            .finish(&mut |event| on_event(Event::Patch { id, event }));
        match outcome.verdict {
            Verdict::Complete => Ok(()),
            Verdict::Incomplete(unclosed) => Err(format!(
                "the patch is cut off after {} bytes: {unclosed}",
                outcome.consumed
            )),
            Verdict::Error(e) => Err(format!("the patch is malformed: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_confirmed_while_the_input_streams_and_errors_are_known_early() {
        let patch = b"*** Begin Patch\n*** Add File: a.txt\n+hi\n*** Delete File: b.txt\n";
        let mut input = PatchInput::default();
        let mut files = 0;
        for piece in patch.chunks(3) {
            input.push("c1", piece, &mut |e| {
                if let Event::Patch { id, event } = e {
                    assert_eq!(id, "c1");
                    files += usize::from(matches!(event, PatchEvent::FileEnd { .. }));
                }
            });
        }
        // The Add is confirmed by the next header, the Delete by its own line end: both
        // before the patch ends.
        assert_eq!(files, 2);
        assert!(input.error().is_none());
        let cut = input.finish("c1", &mut |_| {}).unwrap_err();
        assert!(cut.contains("cut off"), "{cut}");

        let mut bad = PatchInput::default();
        bad.push("c2", b"*** Begin Patch\n*** Frobnicate: x\n", &mut |_| {});
        assert!(bad.error().unwrap().contains("malformed"));
        let whole = b"*** Begin Patch\n*** Delete File: b.txt\n*** End Patch\n";
        let mut good = PatchInput::default();
        good.push("c3", whole, &mut |_| {});
        assert_eq!(good.finish("c3", &mut |_| {}), Ok(()));
    }

    #[test]
    fn an_operation_diff_is_framed_as_a_whole_patch() {
        let mut chunks = 0;
        let mut count = |e: Event<'_>| {
            chunks += usize::from(matches!(
                e,
                Event::Patch {
                    event: PatchEvent::ChunkEnd,
                    ..
                }
            ));
        };
        let mut input = PatchInput::operation("c", "update_file", "a.txt", &mut count).unwrap();
        input.push("c", b"@@\n-old\n+new", &mut count);
        assert_eq!(input.finish("c", &mut count), Ok(()));
        assert_eq!(chunks, 1);
        assert!(PatchInput::operation("c", "rename", "a", &mut |_| {}).is_err());
    }
}
