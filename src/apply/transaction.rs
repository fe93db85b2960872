//! The transaction: every change of a patch staged in memory, then written all at once.
//!
//! Reads go through the transaction, so a later operation sees what an earlier one staged.
//! [`Transaction::commit`] works in two phases: first every new content is written to a
//! temporary file next to its target (directories created as needed); if any of that fails, the
//! temporary files and the directories made for them are removed and nothing has changed. Then
//! the temporary files are renamed over their targets and the deletions happen: renames within a
//! directory do not fail for want of space, so the window for a partial result is as small as
//! the filesystem allows.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::error::{ApplyError, ErrorKind};
use super::workspace::Workspace;

/// What a committed transaction did to one path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    /// The file did not exist before.
    Added,
    /// The file existed and was rewritten (or only its mode changed).
    Modified,
    /// The file was removed.
    Deleted,
}

impl ChangeKind {
    /// `A`, `M` or `D`, as `git status --short` and Codex print them.
    pub fn letter(self) -> char {
        match self {
            ChangeKind::Added => 'A',
            ChangeKind::Modified => 'M',
            ChangeKind::Deleted => 'D',
        }
    }
}

/// One path a commit changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The path as the patch wrote it.
    pub path: String,
    /// What happened to it.
    pub kind: ChangeKind,
}

#[derive(Clone, Debug)]
enum State {
    Write { data: Vec<u8>, mode: Option<u32> },
    Delete,
}

#[derive(Clone, Debug)]
struct Entry {
    full: PathBuf,
    display: String,
    state: State,
}

/// Staged changes under one workspace.
#[derive(Clone, Debug)]
pub struct Transaction {
    ws: Workspace,
    entries: Vec<Entry>,
    by_path: HashMap<PathBuf, usize>,
    prune_empty_dirs: bool,
    /// Tests: make phase 1 fail at this entry, after the ones before it were prepared.
    #[cfg(test)]
    fail_at: Option<usize>,
}

/// What is at a path, as the transaction sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presence {
    /// Nothing.
    Missing,
    /// A file (or a symbolic link that stays inside the root).
    File,
    /// A directory.
    Directory,
}

impl Transaction {
    /// An empty transaction.
    pub fn new(ws: Workspace) -> Transaction {
        Transaction {
            ws,
            entries: Vec::new(),
            by_path: HashMap::new(),
            prune_empty_dirs: false,
            #[cfg(test)]
            fail_at: None,
        }
    }

    /// After deleting a file, also remove the directories it leaves empty (as `git apply`
    /// does).
    pub fn prune_empty_dirs(mut self, yes: bool) -> Transaction {
        self.prune_empty_dirs = yes;
        self
    }

    /// The workspace.
    pub fn workspace(&self) -> &Workspace {
        &self.ws
    }

    /// Whether nothing is staged.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Resolves a path of the patch, or refuses it.
    pub fn resolve(&self, operation: &'static str, path: &str) -> Result<PathBuf, ApplyError> {
        self.ws
            .resolve(path)
            .map_err(|e| ApplyError::path(operation, e))
    }

    /// What is at `full`, staged changes first.
    pub fn presence(&self, full: &Path) -> Presence {
        if let Some(&i) = self.by_path.get(full) {
            return match self.entries[i].state {
                State::Write { .. } => Presence::File,
                State::Delete => Presence::Missing,
            };
        }
        match fs::metadata(full) {
            Ok(m) if m.is_dir() => Presence::Directory,
            Ok(_) => Presence::File,
            Err(_) => Presence::Missing,
        }
    }

    /// The content of the file at `full`, staged changes first; `None` when there is none.
    pub fn read(
        &self,
        operation: &'static str,
        display: &str,
        full: &Path,
    ) -> Result<Option<Cow<'_, [u8]>>, ApplyError> {
        if let Some(&i) = self.by_path.get(full) {
            return Ok(match &self.entries[i].state {
                State::Write { data, .. } => Some(Cow::Borrowed(data)),
                State::Delete => None,
            });
        }
        match fs::metadata(full) {
            Ok(m) if m.is_dir() => Err(ApplyError::new(
                ErrorKind::IsDirectory,
                operation,
                display,
                "is a directory",
            )),
            Ok(_) => fs::read(full)
                .map(|d| Some(Cow::Owned(d)))
                .map_err(|e| ApplyError::io(operation, display, &e)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(ApplyError::io(operation, display, &e)),
        }
    }

    /// The mode the file at `full` will have, if it is staged with one or exists on disk.
    pub fn mode(&self, full: &Path) -> Option<u32> {
        if let Some(&i) = self.by_path.get(full) {
            if let State::Write { mode: Some(m), .. } = self.entries[i].state {
                return Some(m);
            }
        }
        file_mode(full)
    }

    /// Stages `data` as the new content of `full` (and `mode`, if given). A symbolic link
    /// (which [`Workspace::resolve`] has checked stays inside the root) is written through, to
    /// the file it points to, rather than replaced by a file.
    pub fn write(&mut self, full: PathBuf, display: &str, data: Vec<u8>, mode: Option<u32>) {
        let is_link = fs::symlink_metadata(&full).is_ok_and(|m| m.file_type().is_symlink());
        let full = match is_link.then(|| full.canonicalize()) {
            Some(Ok(target)) if target.starts_with(self.ws.root()) => target,
            _ => full,
        };
        self.stage(full, display, State::Write { data, mode });
    }

    /// Stages the removal of `full`.
    pub fn delete(&mut self, full: PathBuf, display: &str) {
        self.stage(full, display, State::Delete);
    }

    fn stage(&mut self, full: PathBuf, display: &str, state: State) {
        if let Some(&i) = self.by_path.get(&full) {
            self.entries[i].state = state;
            self.entries[i].display = display.to_owned();
            return;
        }
        self.by_path.insert(full.clone(), self.entries.len());
        self.entries.push(Entry {
            full,
            display: display.to_owned(),
            state,
        });
    }

    /// Writes everything, or (if preparing any write fails) nothing.
    pub fn commit(self) -> Result<Vec<Change>, ApplyError> {
        // Check again, on the filesystem as it is now, that every path stays inside.
        for e in &self.entries {
            let mut again = self.resolve("commit", &e.display)?;
            if again != e.full && matches!(e.state, State::Write { .. }) {
                // Written through a link inside the root: the link must still lead there.
                again = again.canonicalize().unwrap_or(again);
            }
            if again != e.full {
                return Err(ApplyError::new(
                    ErrorKind::SymlinkOutsideRoot,
                    "commit",
                    &e.display,
                    "the path changed meaning while the patch was applied",
                ));
            }
        }
        let mut changes = Vec::with_capacity(self.entries.len());
        for e in &self.entries {
            let existed = fs::symlink_metadata(&e.full).is_ok();
            let kind = match (&e.state, existed) {
                (State::Delete, true) => ChangeKind::Deleted,
                (State::Delete, false) => continue,
                (State::Write { .. }, true) => ChangeKind::Modified,
                (State::Write { .. }, false) => ChangeKind::Added,
            };
            if let (State::Write { .. }, Ok(m)) = (&e.state, fs::metadata(&e.full)) {
                if m.is_dir() {
                    return Err(ApplyError::new(
                        ErrorKind::IsDirectory,
                        "commit",
                        &e.display,
                        "a directory is in the way",
                    ));
                }
            }
            if let (State::Delete, Ok(m)) = (&e.state, fs::symlink_metadata(&e.full)) {
                if m.is_dir() {
                    return Err(ApplyError::new(
                        ErrorKind::IsDirectory,
                        "commit",
                        &e.display,
                        "refusing to delete a directory",
                    ));
                }
            }
            changes.push(Change {
                path: e.display.clone(),
                kind,
            });
        }

        // Phase 1: temporary files, nothing visible changes.
        let mut prepared = Prepared::default();
        for (n, e) in self.entries.iter().enumerate() {
            if let State::Write { data, mode } = &e.state {
                let result = prepared.stage(n, &self.ws, &e.full, data, *mode);
                #[cfg(test)]
                let result = result.and_then(|()| match self.fail_at {
                    Some(at) if at == n => Err(io::Error::other("injected failure")),
                    _ => Ok(()),
                });
                if let Err(err) = result {
                    prepared.undo();
                    return Err(ApplyError::io("commit", &e.display, &err));
                }
            }
        }

        // Phase 2: renames and deletions.
        let mut temps = prepared.temps.into_iter().peekable();
        for (n, e) in self.entries.iter().enumerate() {
            let result = match &e.state {
                State::Write { .. } => {
                    let (_, tmp) = temps.next().filter(|(i, _)| *i == n).expect("staged");
                    fs::rename(&tmp, &e.full).inspect_err(|_| {
                        let _ = fs::remove_file(&tmp);
                    })
                }
                State::Delete => match fs::remove_file(&e.full) {
                    Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
                    other => other,
                },
            };
            if let Err(err) = result {
                for (_, tmp) in temps {
                    let _ = fs::remove_file(tmp);
                }
                return Err(ApplyError::io("commit", &e.display, &err));
            }
            if matches!(e.state, State::Delete) && self.prune_empty_dirs {
                let mut dir = e.full.parent();
                while let Some(d) = dir {
                    if d == self.ws.root() || fs::remove_dir(d).is_err() {
                        break;
                    }
                    dir = d.parent();
                }
            }
        }
        Ok(changes)
    }
}

/// Temporary files written in phase 1, and the directories made for them.
#[derive(Default)]
struct Prepared {
    temps: Vec<(usize, PathBuf)>,
    made_dirs: Vec<PathBuf>,
}

impl Prepared {
    fn stage(
        &mut self,
        n: usize,
        ws: &Workspace,
        full: &Path,
        data: &[u8],
        mode: Option<u32>,
    ) -> io::Result<()> {
        let parent = full.parent().unwrap_or(ws.root());
        self.make_dirs(parent)?;
        let tmp = parent.join(format!(".frontier-{}-{n}.tmp", std::process::id()));
        self.temps.push((n, tmp.clone()));
        fs::write(&tmp, data)?;
        if let Some(mode) = mode.or_else(|| file_mode(full)) {
            set_mode(&tmp, mode)?;
        }
        Ok(())
    }

    fn make_dirs(&mut self, dir: &Path) -> io::Result<()> {
        if dir.is_dir() {
            return Ok(());
        }
        if let Some(parent) = dir.parent() {
            self.make_dirs(parent)?;
        }
        fs::create_dir(dir)?;
        self.made_dirs.push(dir.to_path_buf());
        Ok(())
    }

    fn undo(self) {
        for (_, tmp) in &self.temps {
            let _ = fs::remove_file(tmp);
        }
        for dir in self.made_dirs.iter().rev() {
            let _ = fs::remove_dir(dir);
        }
    }
}

#[cfg(unix)]
fn file_mode(full: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(full)
        .ok()
        .map(|m| m.permissions().mode() & 0o7777)
}

#[cfg(not(unix))]
fn file_mode(_full: &Path) -> Option<u32> {
    None
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode & 0o7777))
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, Transaction) {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        let tx = Transaction::new(Workspace::new(dir.path()).unwrap());
        (dir, tx)
    }

    #[test]
    fn reads_see_staged_changes() {
        let (_dir, mut tx) = setup();
        let a = tx.resolve("update", "a.txt").unwrap();
        assert_eq!(
            tx.read("update", "a.txt", &a).unwrap().unwrap().as_ref(),
            b"a\n"
        );
        tx.write(a.clone(), "a.txt", b"b\n".to_vec(), None);
        assert_eq!(
            tx.read("update", "a.txt", &a).unwrap().unwrap().as_ref(),
            b"b\n"
        );
        tx.delete(a.clone(), "a.txt");
        assert!(tx.read("update", "a.txt", &a).unwrap().is_none());
        assert_eq!(tx.presence(&a), Presence::Missing);
    }

    #[test]
    fn commits_writes_and_deletes_with_new_directories() {
        let (dir, mut tx) = setup();
        let a = tx.resolve("delete", "a.txt").unwrap();
        let n = tx.resolve("add", "x/y/n.txt").unwrap();
        tx.delete(a, "a.txt");
        tx.write(n, "x/y/n.txt", b"n\n".to_vec(), Some(0o755));
        let changes = tx.commit().unwrap();
        assert_eq!(changes.len(), 2);
        assert_eq!(changes[0].kind, ChangeKind::Deleted);
        assert_eq!(changes[1].kind, ChangeKind::Added);
        assert!(!dir.path().join("a.txt").exists());
        assert_eq!(fs::read(dir.path().join("x/y/n.txt")).unwrap(), b"n\n");
        assert_eq!(file_mode(&dir.path().join("x/y/n.txt")), Some(0o755));
    }

    #[test]
    fn links_inside_the_root_are_written_through() {
        let (dir, mut tx) = setup();
        std::os::unix::fs::symlink("a.txt", dir.path().join("link")).unwrap();
        let link = tx.resolve("update", "link").unwrap();
        tx.write(link, "link", b"through\n".to_vec(), None);
        tx.commit().unwrap();
        assert!(fs::symlink_metadata(dir.path().join("link"))
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(dir.path().join("a.txt")).unwrap(), b"through\n");
    }

    #[test]
    fn a_failed_prepare_leaves_nothing() {
        let (dir, mut tx) = setup();
        let x = tx.resolve("add", "x/y/new").unwrap();
        tx.write(x, "x/y/new", b"1\n".to_vec(), None);
        let a = tx.resolve("update", "a.txt").unwrap();
        tx.write(a, "a.txt", b"2\n".to_vec(), None);
        let z = tx.resolve("add", "z").unwrap();
        tx.write(z, "z", b"3\n".to_vec(), None);
        tx.fail_at = Some(2);
        assert_eq!(tx.commit().unwrap_err().detail, "injected failure");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.txt")]);
        assert_eq!(fs::read(dir.path().join("a.txt")).unwrap(), b"a\n");
    }
}
