//! git's binary patches: a block is zlib-compressed data, either the whole new file (`literal`)
//! or a delta against the old one (`delta`) in git's delta format. The parser hands over the
//! base85-decoded bytes; [`decode_base85_line`] is here for anyone holding the text.

use std::io::Read;

use crate::udiff::units::{BinaryBlock, BinaryKind};

/// Why a binary block could not be applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BinaryError {
    /// The data does not inflate.
    Inflate(String),
    /// The inflated size is not the size the block states.
    SizeMismatch {
        /// Stated.
        expected: u64,
        /// Found.
        actual: u64,
    },
    /// The delta's source size is not the old file's size.
    SourceMismatch {
        /// Stated in the delta.
        expected: u64,
        /// The old file's size.
        actual: u64,
    },
    /// The delta is malformed (a truncated command, a copy outside the source, a zero opcode).
    BadDelta(&'static str),
    /// A base85 line is malformed.
    BadBase85,
}

impl std::fmt::Display for BinaryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BinaryError::Inflate(e) => write!(f, "binary data does not inflate: {e}"),
            BinaryError::SizeMismatch { expected, actual } => {
                write!(
                    f,
                    "binary data is {actual} bytes, the patch says {expected}"
                )
            }
            BinaryError::SourceMismatch { expected, actual } => write!(
                f,
                "binary delta expects a {expected}-byte file, the file has {actual} bytes"
            ),
            BinaryError::BadDelta(why) => write!(f, "malformed binary delta: {why}"),
            BinaryError::BadBase85 => write!(f, "malformed base85 line"),
        }
    }
}

impl std::error::Error for BinaryError {}

/// Inflates zlib data, refusing anything whose size is not `expected`.
pub fn inflate(data: &[u8], expected: u64) -> Result<Vec<u8>, BinaryError> {
    // The stated size is only a hint for the first allocation: it comes from the patch.
    let mut out = Vec::with_capacity(expected.min(1 << 20) as usize);
    // Read one byte more than expected, so that a stream that is too long is noticed without
    // inflating all of it.
    flate2::read::ZlibDecoder::new(data)
        .take(expected.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| BinaryError::Inflate(e.to_string()))?;
    if out.len() as u64 != expected {
        return Err(BinaryError::SizeMismatch {
            expected,
            actual: out.len() as u64,
        });
    }
    Ok(out)
}

fn varint(data: &[u8], at: &mut usize) -> Result<u64, BinaryError> {
    let mut value = 0u64;
    let mut shift = 0;
    loop {
        let b = *data
            .get(*at)
            .ok_or(BinaryError::BadDelta("truncated size"))?;
        *at += 1;
        if shift > 63 {
            return Err(BinaryError::BadDelta("size too large"));
        }
        value |= ((b & 0x7f) as u64) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
}

/// Applies a delta in git's format to `source`.
pub fn apply_delta(source: &[u8], delta: &[u8]) -> Result<Vec<u8>, BinaryError> {
    let mut at = 0;
    let src_size = varint(delta, &mut at)?;
    if src_size != source.len() as u64 {
        return Err(BinaryError::SourceMismatch {
            expected: src_size,
            actual: source.len() as u64,
        });
    }
    let dst_size = varint(delta, &mut at)?;
    let mut out = Vec::with_capacity(dst_size.min(1 << 20) as usize);
    while at < delta.len() {
        let op = delta[at];
        at += 1;
        if op & 0x80 != 0 {
            let mut fields = [0u64; 7];
            for (bit, field) in fields.iter_mut().enumerate() {
                if op & (1 << bit) != 0 {
                    *field = *delta
                        .get(at)
                        .ok_or(BinaryError::BadDelta("truncated copy"))?
                        as u64;
                    at += 1;
                }
            }
            let offset = fields[0] | fields[1] << 8 | fields[2] << 16 | fields[3] << 24;
            let mut size = fields[4] | fields[5] << 8 | fields[6] << 16;
            if size == 0 {
                size = 0x10000;
            }
            let end = offset
                .checked_add(size)
                .filter(|&e| e <= source.len() as u64)
                .ok_or(BinaryError::BadDelta("copy outside the source"))?;
            out.extend_from_slice(&source[offset as usize..end as usize]);
        } else if op != 0 {
            let end = at + op as usize;
            let bytes = delta
                .get(at..end)
                .ok_or(BinaryError::BadDelta("truncated insert"))?;
            out.extend_from_slice(bytes);
            at = end;
        } else {
            return Err(BinaryError::BadDelta("opcode 0 is reserved"));
        }
        if out.len() as u64 > dst_size {
            return Err(BinaryError::BadDelta("result longer than stated"));
        }
    }
    if out.len() as u64 != dst_size {
        return Err(BinaryError::SizeMismatch {
            expected: dst_size,
            actual: out.len() as u64,
        });
    }
    Ok(out)
}

/// The new content a block gives, from the old content.
pub fn apply_block(old: &[u8], block: &BinaryBlock) -> Result<Vec<u8>, BinaryError> {
    let data = inflate(&block.deflated, block.size)?;
    match block.kind {
        BinaryKind::Literal => Ok(data),
        BinaryKind::Delta => apply_delta(old, &data),
    }
}

const BASE85: &[u8; 85] =
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

fn base85_value(c: u8) -> Option<u32> {
    BASE85.iter().position(|&b| b == c).map(|v| v as u32)
}

/// Decodes one line of a binary block (length letter, then groups of five characters) and
/// appends its bytes to `out`.
pub fn decode_base85_line(line: &[u8], out: &mut Vec<u8>) -> Result<(), BinaryError> {
    let (&len_char, rest) = line.split_first().ok_or(BinaryError::BadBase85)?;
    let len = match len_char {
        b'A'..=b'Z' => (len_char - b'A') as usize + 1,
        b'a'..=b'z' => (len_char - b'a') as usize + 27,
        _ => return Err(BinaryError::BadBase85),
    };
    if rest.len() != len.div_ceil(4) * 5 {
        return Err(BinaryError::BadBase85);
    }
    let mut left = len;
    for group in rest.chunks(5) {
        let mut acc: u64 = 0;
        for &c in group {
            acc = acc * 85 + base85_value(c).ok_or(BinaryError::BadBase85)? as u64;
        }
        if acc > u32::MAX as u64 {
            return Err(BinaryError::BadBase85);
        }
        let bytes = (acc as u32).to_be_bytes();
        let take = left.min(4);
        out.extend_from_slice(&bytes[..take]);
        left -= take;
    }
    Ok(())
}

/// Encodes `data` as the lines of a binary block (each without its LF), as git writes them.
pub fn encode_base85(data: &[u8]) -> Vec<String> {
    data.chunks(52)
        .map(|chunk| {
            let n = chunk.len();
            let mut line = String::with_capacity(1 + n.div_ceil(4) * 5);
            line.push(if n <= 26 {
                (b'A' + n as u8 - 1) as char
            } else {
                (b'a' + n as u8 - 27) as char
            });
            for group in chunk.chunks(4) {
                let mut word = [0u8; 4];
                word[..group.len()].copy_from_slice(group);
                let mut acc = u32::from_be_bytes(word);
                let mut chars = [0u8; 5];
                for c in chars.iter_mut().rev() {
                    *c = BASE85[(acc % 85) as usize];
                    acc /= 85;
                }
                line.extend(chars.iter().map(|&c| c as char));
            }
            line
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn deflate(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn literal_blocks_inflate_and_check_their_size() {
        let block = BinaryBlock {
            kind: BinaryKind::Literal,
            size: 5,
            deflated: deflate(b"\0\x01abc"),
        };
        assert_eq!(apply_block(b"", &block).unwrap(), b"\0\x01abc");
        let wrong = BinaryBlock { size: 4, ..block };
        assert!(matches!(
            apply_block(b"", &wrong),
            Err(BinaryError::SizeMismatch { .. })
        ));
        let junk = BinaryBlock {
            kind: BinaryKind::Literal,
            size: 3,
            deflated: b"not zlib".to_vec(),
        };
        assert!(matches!(
            apply_block(b"", &junk),
            Err(BinaryError::Inflate(_))
        ));
    }

    #[test]
    fn deltas_copy_and_insert() {
        let source = b"0123456789";
        // source 10, target 7: copy offset 2 size 3, insert "xy", copy offset 8 size 2.
        let delta = [10, 7, 0x91, 2, 3, 2, b'x', b'y', 0x91, 8, 2];
        assert_eq!(apply_delta(source, &delta).unwrap(), b"234xy89");
        let block = BinaryBlock {
            kind: BinaryKind::Delta,
            size: delta.len() as u64,
            deflated: deflate(&delta),
        };
        assert_eq!(apply_block(source, &block).unwrap(), b"234xy89");
        assert!(matches!(
            apply_delta(b"short", &delta),
            Err(BinaryError::SourceMismatch { .. })
        ));
        assert!(apply_delta(source, &[10, 1, 0x91, 9, 5]).is_err());
        assert!(apply_delta(source, &[10, 1, 0]).is_err());
        assert!(apply_delta(source, &[10, 3, 5, b'a']).is_err());
        // A size of 0 means 0x10000.
        let big = vec![7u8; 0x10000];
        assert_eq!(
            apply_delta(&big, &[0x80, 0x80, 0x04, 0x80, 0x80, 0x04, 0x80]).unwrap(),
            big
        );
    }

    #[test]
    fn base85_round_trips() {
        for n in [0usize, 1, 3, 4, 5, 26, 27, 52, 53, 200] {
            let data: Vec<u8> = (0..n).map(|i| (i * 37 % 256) as u8).collect();
            let mut back = Vec::new();
            for line in encode_base85(&data) {
                decode_base85_line(line.as_bytes(), &mut back).unwrap();
            }
            assert_eq!(back, data);
        }
        assert!(decode_base85_line(b"A", &mut Vec::new()).is_err());
        assert!(decode_base85_line(b"A\"\"\"\"\"", &mut Vec::new()).is_err());
    }
}
