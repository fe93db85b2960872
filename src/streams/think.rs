//! `<think>` … `</think>` in streamed text: reasoning that some models (DeepSeek R1, Qwen 3
//! and their servers without a reasoning parser) write inline instead of in a separate field.
//!
//! The text itself is kept as streamed, tags included; [`ThinkSplitter`] only says which of
//! its bytes are reasoning (inside a block) and which are the answer (outside). A tag may be
//! split across deltas, so up to a tag's length of bytes that could still be the start of one
//! are held back until the next delta decides; a lone `<` costs nothing more. Each delta is
//! scanned once.

const OPEN: &[u8] = b"<think>";
const CLOSE: &[u8] = b"</think>";

/// Which side of a tag a piece of text is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Outside `<think>` blocks: the answer.
    Answer,
    /// Inside a block: reasoning.
    Reasoning,
}

/// The splitter. See the module documentation.
#[derive(Clone, Debug, Default)]
pub struct ThinkSplitter {
    inside: bool,
    /// Bytes of the tag being matched, held back.
    matched: usize,
}

impl ThinkSplitter {
    fn tag(&self) -> &'static [u8] {
        if self.inside {
            CLOSE
        } else {
            OPEN
        }
    }

    fn side(&self) -> Side {
        if self.inside {
            Side::Reasoning
        } else {
            Side::Answer
        }
    }

    /// Splits the next delta: `each` gets its pieces in order, tags left out.
    pub fn split(&mut self, text: &[u8], each: &mut dyn FnMut(Side, &[u8])) {
        let mut rest = text;
        while !rest.is_empty() {
            if self.matched == 0 {
                let Some(lt) = memchr::memchr(b'<', rest) else {
                    each(self.side(), rest);
                    return;
                };
                if lt > 0 {
                    each(self.side(), &rest[..lt]);
                }
                rest = &rest[lt..];
            }
            self.step_tag(&mut rest, each);
        }
    }

    /// Whether the splitter is outside a block with no tag bytes held: the next byte is
    /// answer text unless it is a `<`.
    pub fn in_answer(&self) -> bool {
        !self.inside && self.matched == 0
    }

    /// Reads tags, and what blocks hold, from the start of `text`, and stops before the first
    /// byte of answer text that cannot start a tag (outside a block, nothing held, not a `<`):
    /// the bytes read. A text that is only partly free to hold tags (a CTL stream, whose
    /// frames are CTL whatever they hold) reads its tags with this where they may stand and
    /// hands the rest on itself.
    pub fn split_tags(&mut self, text: &[u8], each: &mut dyn FnMut(Side, &[u8])) -> usize {
        let mut rest = text;
        while let Some(&first) = rest.first() {
            if self.matched == 0 {
                if !self.inside {
                    if first != b'<' {
                        break;
                    }
                } else {
                    let lt = memchr::memchr(b'<', rest).unwrap_or(rest.len());
                    if lt > 0 {
                        each(Side::Reasoning, &rest[..lt]);
                        rest = &rest[lt..];
                        continue;
                    }
                }
            }
            self.step_tag(&mut rest, each);
        }
        text.len() - rest.len()
    }

    /// Extends the tag being matched (`rest` starts with `<` when nothing is held) with as
    /// much of `rest` as the tag still wants.
    fn step_tag(&mut self, rest: &mut &[u8], each: &mut dyn FnMut(Side, &[u8])) {
        let tag = self.tag();
        let want = &tag[self.matched..];
        let n = want.len().min(rest.len());
        if rest[..n] == want[..n] {
            self.matched += n;
            *rest = &rest[n..];
            if self.matched == tag.len() {
                self.inside = !self.inside;
                self.matched = 0;
            }
        } else {
            // Not a tag: what was held is text of the current side. A `<` held first is
            // given back, and the byte that broke the match is read again.
            let held = self.matched;
            self.matched = 0;
            if held > 0 {
                each(self.side(), &tag[..held]);
            } else {
                each(self.side(), &rest[..1]);
                *rest = &rest[1..];
            }
        }
    }

    /// The end of the text: held bytes are text after all.
    pub fn finish(&mut self, each: &mut dyn FnMut(Side, &[u8])) {
        if self.matched > 0 {
            each(self.side(), &self.tag()[..self.matched]);
            self.matched = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(pieces: &[&str]) -> (String, String) {
        let mut splitter = ThinkSplitter::default();
        let (mut answer, mut reasoning) = (Vec::new(), Vec::new());
        let mut each = |side: Side, bytes: &[u8]| match side {
            Side::Answer => answer.extend_from_slice(bytes),
            Side::Reasoning => reasoning.extend_from_slice(bytes),
        };
        for piece in pieces {
            splitter.split(piece.as_bytes(), &mut each);
        }
        splitter.finish(&mut each);
        (
            String::from_utf8(answer).unwrap(),
            String::from_utf8(reasoning).unwrap(),
        )
    }

    #[test]
    fn blocks_are_reasoning_at_every_split() {
        let text = "<think>a < b, <th</think>x<y <thin";
        let expected = ("x<y <thin".to_owned(), "a < b, <th".to_owned());
        assert_eq!(split(&[text]), expected);
        for i in 0..=text.len() {
            for j in i..=text.len() {
                assert_eq!(
                    split(&[&text[..i], &text[i..j], &text[j..]]),
                    expected,
                    "{i} {j}"
                );
            }
        }
        assert_eq!(
            split(&["<<think>r</think>"]),
            ("<".to_owned(), "r".to_owned())
        );
        assert_eq!(split(&["no tags"]), ("no tags".to_owned(), String::new()));
    }
}
