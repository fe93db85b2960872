//! Reading `FILE` or `-` in blocks, so that a stream of any length runs in constant memory.

use std::fs::File;
use std::io::{self, Read};

/// The block size used when `--chunk` is not given.
pub const DEFAULT_BLOCK: usize = 64 * 1024;

/// Opens a path, `-` being standard input.
pub fn open(path: &str) -> io::Result<Box<dyn Read>> {
    if path == "-" {
        Ok(Box::new(io::stdin().lock()))
    } else {
        Ok(Box::new(File::open(path)?))
    }
}

/// Reads the whole input (for commands that need every byte at once, like `trace`).
pub fn read_all(path: &str) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Calls `each` with successive pieces of the input of `chunk` bytes (the last one may be
/// shorter); `each` returns `false` to stop early.
pub fn for_each_chunk(
    path: &str,
    chunk: Option<usize>,
    mut each: impl FnMut(&[u8]) -> bool,
) -> io::Result<()> {
    let size = chunk.unwrap_or(DEFAULT_BLOCK).max(1);
    let mut reader = open(path)?;
    let mut block = vec![0u8; size];
    loop {
        // Fill the block completely so that `--chunk N` means exactly N bytes per push.
        let mut filled = 0;
        while filled < size {
            match reader.read(&mut block[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        if filled == 0 || !each(&block[..filled]) || filled < size {
            return Ok(());
        }
    }
}
