//! Reading `FILE` or `-` as it arrives, in constant memory.
//!
//! One mechanism for every command: [`Input`] reads into one block of [`BLOCK`] bytes and hands
//! over whatever each `read` returned, without waiting for the block to fill (a pipe from a
//! model delivers a few bytes at a time, and what they confirm should be printed at once).
//! `--chunk N` does not change the reads: [`pieces`] cuts each read into pieces of at most N
//! bytes, so `--chunk 1` costs one push per byte but still one system call per block.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read};

/// The read block: the most one `read` returns, and so the largest piece a push can get.
pub const BLOCK: usize = 64 * 1024;

/// A file or standard input, read block by block.
pub struct Input {
    reader: Box<dyn Read>,
    block: Vec<u8>,
}

impl Input {
    /// Opens a path, `-` being standard input. A directory is refused here, as Linux lets
    /// it be opened and fails only the first read: by then a command that prints as it reads
    /// (`trace`'s state before the first byte) would have printed.
    pub fn open(path: impl AsRef<OsStr>) -> io::Result<Input> {
        let path = path.as_ref();
        let reader: Box<dyn Read> = if path == "-" {
            Box::new(io::stdin().lock())
        } else {
            let file = File::open(path)?;
            if file.metadata()?.is_dir() {
                return Err(io::Error::from(io::ErrorKind::IsADirectory));
            }
            Box::new(file)
        };
        Ok(Input {
            reader,
            block: vec![0; BLOCK],
        })
    }

    /// What the next `read` returns (at most [`BLOCK`] bytes); `None` at the end of the input.
    pub fn next_read(&mut self) -> io::Result<Option<&[u8]>> {
        loop {
            match self.reader.read(&mut self.block) {
                Ok(0) => return Ok(None),
                Ok(n) => return Ok(Some(&self.block[..n])),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

/// `read` cut into the pieces a parser is fed: at most `chunk` bytes each (`None`: the whole
/// read as one piece).
pub fn pieces(read: &[u8], chunk: Option<usize>) -> std::slice::Chunks<'_, u8> {
    read.chunks(chunk.unwrap_or(BLOCK).max(1))
}

/// Calls `each` with the input as it arrives, cut into [`pieces`]; `each` returns `false` to
/// stop reading.
pub fn for_each_piece(
    path: impl AsRef<OsStr>,
    chunk: Option<usize>,
    mut each: impl FnMut(&[u8]) -> bool,
) -> io::Result<()> {
    let mut input = Input::open(path)?;
    while let Some(read) = input.next_read()? {
        for piece in pieces(read, chunk) {
            if !each(piece) {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Reads the whole input (for `run`'s replay file, which is parsed as one document).
pub fn read_all(path: impl AsRef<OsStr>) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    Input::open(path)?.reader.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Reads the whole input if it holds at most `limit` bytes; `None` if it holds more (of
/// which `limit + 1` bytes were read, and no more).
pub fn read_at_most(path: impl AsRef<OsStr>, limit: u64) -> io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    Input::open(path)?
        .reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}
