//! Where the journal and the content store go. The engine writes through [`Storage`] in a
//! fixed order, so that whatever a crash interrupts, the journal never names a payload that
//! is not on disk and nothing is visible before it is journaled:
//!
//! 1. each new payload: [`Storage::put`] (one file per key, `content/<key>.txt`);
//! 2. [`Storage::sync_puts`]: the payloads and the directory entries are on disk;
//! 3. [`Storage::append`]: the change's records, one write, then `fdatasync`;
//! 4. only then the change is made in memory and returned.
//!
//! [`RunDir`] is the on-disk storage of a run directory; [`Memory`] keeps the records for
//! offline use (`frontier context apply`) and tests.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The writes the engine makes.
pub trait Storage: Send {
    /// Writes a new payload under its key.
    fn put(&mut self, key: &str, payload: &str) -> io::Result<()>;
    /// Makes the puts so far durable.
    fn sync_puts(&mut self) -> io::Result<()>;
    /// Appends journal lines (each ending in `\n`) and makes them durable.
    fn append(&mut self, lines: &str) -> io::Result<()>;
}

/// Storage in memory: the journal's lines are kept, the payloads are not (the engine's
/// content store has them).
#[derive(Debug, Default)]
pub struct Memory {
    /// The journal, one record per line.
    pub journal: String,
}

impl Storage for Memory {
    fn put(&mut self, _key: &str, _payload: &str) -> io::Result<()> {
        Ok(())
    }
    fn sync_puts(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn append(&mut self, lines: &str) -> io::Result<()> {
        self.journal.push_str(lines);
        Ok(())
    }
}

/// Shared in-memory storage: the caller keeps one handle to read the journal back.
impl Storage for std::sync::Arc<std::sync::Mutex<Memory>> {
    fn put(&mut self, _key: &str, _payload: &str) -> io::Result<()> {
        Ok(())
    }
    fn sync_puts(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn append(&mut self, lines: &str) -> io::Result<()> {
        self.lock()
            .map_err(|_| io::Error::other("the journal's lock is poisoned"))?
            .journal
            .push_str(lines);
        Ok(())
    }
}

/// How hard a write is pushed to the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Durability {
    /// `fdatasync` the journal after every change and the payloads (and their directory)
    /// before the records that name them: a change survives a power loss once returned.
    #[default]
    Fsync,
    /// Write to the operating system only: a change survives the process dying, not the
    /// machine.
    Flush,
}

/// The journal's file name in a run directory.
pub const JOURNAL_FILE: &str = "journal.jsonl";
/// The content store's directory in a run directory.
pub const CONTENT_DIR: &str = "content";
/// The run's configuration file.
pub const CONFIG_FILE: &str = "run.json";

/// The file name of a content key: CPAT's `encodeKey` (every byte outside
/// `[A-Za-z0-9_@.-]` becomes `_`) and `.txt`.
pub fn content_file_name(key: &str) -> String {
    let mut name: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '@' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    name.push_str(".txt");
    name
}

/// A run directory: `journal.jsonl`, `content/`, `run.json`.
#[derive(Debug)]
pub struct RunDir {
    dir: PathBuf,
    journal: File,
    durability: Durability,
    unsynced: Vec<File>,
}

impl RunDir {
    /// Opens (creating if needed) the run directory for appending.
    pub fn open(dir: &Path, durability: Durability) -> io::Result<RunDir> {
        fs::create_dir_all(dir.join(CONTENT_DIR))?;
        let journal = OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(JOURNAL_FILE))?;
        if durability == Durability::Fsync {
            File::open(dir)?.sync_all()?;
        }
        Ok(RunDir {
            dir: dir.to_owned(),
            journal,
            durability,
            unsynced: Vec::new(),
        })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }
}

impl Storage for RunDir {
    fn put(&mut self, key: &str, payload: &str) -> io::Result<()> {
        let path = self.dir.join(CONTENT_DIR).join(content_file_name(key));
        let mut file = File::create(path)?;
        file.write_all(payload.as_bytes())?;
        if self.durability == Durability::Fsync {
            self.unsynced.push(file);
        }
        Ok(())
    }

    fn sync_puts(&mut self) -> io::Result<()> {
        if self.unsynced.is_empty() {
            return Ok(());
        }
        for file in self.unsynced.drain(..) {
            file.sync_data()?;
        }
        File::open(self.dir.join(CONTENT_DIR))?.sync_all()
    }

    fn append(&mut self, lines: &str) -> io::Result<()> {
        self.journal.write_all(lines.as_bytes())?;
        if self.durability == Durability::Fsync {
            self.journal.sync_data()?;
        }
        Ok(())
    }
}

/// Now, as CPAT's `new Date().toISOString()` prints it (`2026-12-01T12:00:00.000Z`).
pub fn iso_now() -> String {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    iso_time(since.as_millis() as i64)
}

/// Milliseconds since the epoch as ISO 8601 UTC with milliseconds.
pub fn iso_time(millis: i64) -> String {
    let secs = millis.div_euclid(1000);
    let ms = millis.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + (month <= 2) as i64;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_times() {
        assert_eq!(iso_time(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_time(1_798_718_400_123), "2026-12-31T12:00:00.123Z");
        assert_eq!(iso_time(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn content_file_names_are_cpats() {
        assert_eq!(content_file_name("tool_004@v1"), "tool_004@v1.txt");
        assert_eq!(content_file_name("a b/ü@v2"), "a_b__@v2.txt");
    }
}
