//! The lines of a binary block: base85 characters after a length byte.
//!
//! A `literal`/`delta` block is a run of lines, each a length character (`A`-`Z` for 1-26
//! bytes, `a`-`z` for 27-52) and then those bytes in base85, five characters for every four
//! bytes (the last group padded). The line start (`line_start`) reads the length and sets how
//! many characters must follow; this module takes them one by one, so that a line is exactly
//! as long as its length says and every group of five is a 32-bit value: a digit is taken only
//! if the group, padded with zeros, stays within that range ([`group_room`]), so that no
//! digit is allowed that would leave the group no way to end. Decoding is the parser's job.

use crate::udiff::value::BASE85_VALUE;
use crate::udiff::UdiffErrorKind;

use super::{plain, Pos, Step, Stepped, UdiffMachine};

impl UdiffMachine {
    /// A byte of a base85 line.
    pub(super) fn base85(
        &mut self,
        left: u8,
        group: u8,
        acc: u32,
        byte: u8,
    ) -> Result<Stepped, UdiffErrorKind> {
        if left == 0 {
            if byte != b'\n' {
                return Err(UdiffErrorKind::UnexpectedByte);
            }
            self.pos = Pos::Start;
            return Ok(plain(Step::Base85Line));
        }
        let digit = BASE85_VALUE[byte as usize];
        if digit == 255 {
            return Err(UdiffErrorKind::UnexpectedByte);
        }
        if group_room(group, acc).is_none_or(|room| digit as u64 > room) {
            return Err(UdiffErrorKind::UnexpectedByte);
        }
        let value = acc as u64 * 85 + digit as u64;
        let (group, acc) = if group == 4 {
            (0, 0)
        } else {
            (group + 1, value as u32)
        };
        self.line_len += 1;
        self.pos = Pos::Base85 {
            left: left - 1,
            group,
            acc,
        };
        Ok(plain(Step::Held))
    }
}

/// The largest digit that may come at position `group` (0-4) of a base85 group whose digits so
/// far make `acc`: the one that keeps `(acc · 85 + digit) · 85^(4 − group)`, the smallest
/// value the group can still end with, within `u32::MAX` (git refuses a larger group). `None`
/// when no digit does (never reached: every earlier digit was kept within the bound).
pub(super) fn group_room(group: u8, acc: u32) -> Option<u64> {
    let top = u32::MAX as u64 / 85u64.pow(4 - group.min(4) as u32);
    top.checked_sub(acc as u64 * 85)
}
