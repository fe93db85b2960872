//! The transaction: every change of a patch staged in memory, then written all at once.
//!
//! Reads go through the transaction, so a later operation sees what an earlier one staged.
//! [`Transaction::commit`] checks every path again and hands the staged changes to
//! [`commit`](super::commit), which writes temporary files, then puts them in place keeping
//! every original until the last step succeeded, and undoes what it did if a step fails: all or
//! nothing. [`Transaction::commit_in_order`] is Codex's behaviour: in order, keeping what was
//! done before a failure.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::commit::{file_mode, Faults, OnFailure, Step};
use super::error::{ApplyError, ErrorKind};
use super::workspace::{open_file, FileKind, OpenError, Workspace};

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
    /// Tests: failures to inject into the commit.
    #[cfg(test)]
    faults: Faults,
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
    /// A FIFO, a socket or a device (its name): the engine does not touch it.
    Special(&'static str),
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
            faults: Faults::default(),
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

    /// Resolves a path of the patch, which must name a file, or refuses it.
    pub fn resolve(&self, operation: &'static str, path: &str) -> Result<PathBuf, ApplyError> {
        self.ws
            .resolve_file(path)
            .map_err(|e| ApplyError::path(operation, e))
    }

    /// The key under which the file `full` names is staged: [`entry_of`] (the directories
    /// resolved), or, when nothing is staged there and it is a symbolic link inside the root,
    /// the key of the file it leads to. So every spelling of one file shares one entry, and a
    /// later operation sees what an earlier one staged however either named it.
    fn key(&self, full: &Path) -> PathBuf {
        let own = entry_of(full);
        if self.by_path.contains_key(&own) {
            return own;
        }
        let is_link = fs::symlink_metadata(&own).is_ok_and(|m| m.file_type().is_symlink());
        match is_link.then(|| own.canonicalize()) {
            Some(Ok(target)) if target.starts_with(self.ws.root()) => target,
            _ => own,
        }
    }

    /// Whether `a` and `b` are one directory entry (the same path, or two spellings of it
    /// through symbolic links to directories): removing one removes the other.
    pub fn same_entry(&self, a: &Path, b: &Path) -> bool {
        a == b || entry_of(a) == entry_of(b)
    }

    /// What is at `full`, staged changes first.
    pub fn presence(&self, full: &Path) -> Presence {
        if let Some(&i) = self.by_path.get(&self.key(full)) {
            return match self.entries[i].state {
                State::Write { .. } => Presence::File,
                State::Delete => Presence::Missing,
            };
        }
        match FileKind::at(full) {
            Ok(FileKind::Directory) => Presence::Directory,
            Ok(FileKind::Regular) => Presence::File,
            Ok(FileKind::Special(name)) => Presence::Special(name),
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
        if let Some(&i) = self.by_path.get(&self.key(full)) {
            return Ok(match &self.entries[i].state {
                State::Write { data, .. } => Some(Cow::Borrowed(data)),
                State::Delete => None,
            });
        }
        self.read_original(operation, display, full)
            .map(|d| d.map(Cow::Owned))
    }

    /// The content the file at `full` had before this transaction, whatever is staged for it
    /// (`git apply` reads the source of a rename or a copy so); `None` when there was none.
    pub fn read_original(
        &self,
        operation: &'static str,
        display: &str,
        full: &Path,
    ) -> Result<Option<Vec<u8>>, ApplyError> {
        let (mut file, _) = match open_file(full) {
            Ok(opened) => opened,
            Err(OpenError::NotFound) => return Ok(None),
            Err(e) => return Err(ApplyError::open(operation, display, e)),
        };
        let mut data = Vec::new();
        file.read_to_end(&mut data)
            .map_err(|e| ApplyError::io(operation, display, &e))?;
        Ok(Some(data))
    }

    /// Whether a new content is staged for `full`.
    pub fn is_written(&self, full: &Path) -> bool {
        self.by_path
            .get(&self.key(full))
            .is_some_and(|&i| matches!(self.entries[i].state, State::Write { .. }))
    }

    /// The mode the file at `full` will have, if it is staged with one or exists on disk.
    pub fn mode(&self, full: &Path) -> Option<u32> {
        if let Some(&i) = self.by_path.get(&self.key(full)) {
            if let State::Write { mode: Some(m), .. } = self.entries[i].state {
                return Some(m);
            }
        }
        file_mode(full)
    }

    /// Stages `data` as the new content of `full` (and `mode`, if given). A symbolic link
    /// (which [`Workspace::resolve`] has checked stays inside the root) is written through, to
    /// the file it points to, rather than replaced by a file (unless this transaction deleted
    /// the link: then a file takes its place).
    pub fn write(&mut self, full: PathBuf, display: &str, data: Vec<u8>, mode: Option<u32>) {
        let key = self.key(&full);
        self.stage(key, display, State::Write { data, mode });
    }

    /// Stages the removal of `full` (a symbolic link itself, not the file it leads to).
    pub fn delete(&mut self, full: PathBuf, display: &str) {
        self.stage(entry_of(&full), display, State::Delete);
    }

    /// Stages `state` for `full`, replacing what was staged for it. A write that sets no mode
    /// keeps the mode an earlier staged write set (a `chmod` patch, a created executable, a
    /// rename's or move's mode), as it keeps the mode of the file on disk.
    fn stage(&mut self, full: PathBuf, display: &str, mut state: State) {
        if let Some(&i) = self.by_path.get(&full) {
            if let (
                State::Write { mode: kept, .. },
                State::Write {
                    mode: staged @ Some(_),
                    ..
                },
            ) = (&mut state, &self.entries[i].state)
            {
                if kept.is_none() {
                    *kept = *staged;
                }
            }
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

    /// Writes everything, or nothing: if any step fails, the ones already taken are undone
    /// (see [`commit`](super::commit)); a path that could not be restored is named in the
    /// error's [`unrestored`](ApplyError::unrestored).
    pub fn commit(self) -> Result<Vec<Change>, ApplyError> {
        let (kinds, replaced) = self.check_for_commit(true)?;
        super::commit::commit(
            &self.ws,
            &self.steps(&replaced),
            OnFailure::Undo,
            self.prune_empty_dirs,
            self.faults(),
        )
        .map_err(|failed| *failed.error)?;
        Ok(self.changes(&kinds, self.entries.len()))
    }

    /// Writes the changes in the order they were staged and stops at the first that fails,
    /// keeping the ones before it (Codex's behaviour). Returns what was changed, and the
    /// failure if there was one. A failure before anything was put in place (a path check, a
    /// temporary file) changes nothing.
    pub fn commit_in_order(self) -> (Vec<Change>, Option<ApplyError>) {
        let kinds = match self.check_for_commit(false) {
            Ok((kinds, _)) => kinds,
            Err(e) => return (Vec::new(), Some(e)),
        };
        let result = super::commit::commit(
            &self.ws,
            &self.steps(&[]),
            OnFailure::Keep,
            self.prune_empty_dirs,
            self.faults(),
        );
        match result {
            Ok(()) => (self.changes(&kinds, self.entries.len()), None),
            Err(failed) => (self.changes(&kinds, failed.kept), Some(*failed.error)),
        }
    }

    /// Checks again, on the filesystem as it is now, that every path stays inside and that no
    /// directory is in the way; returns what each entry will do (`None`: the deletion of a file
    /// that is already gone), and the entries that write over a directory. With `replace`, a
    /// directory that holds nothing but files this transaction deletes is not in the way: the
    /// file takes its place (a `git diff` that turns a directory into a file); without it,
    /// every directory is.
    #[allow(clippy::type_complexity)]
    fn check_for_commit(
        &self,
        replace: bool,
    ) -> Result<(Vec<Option<ChangeKind>>, Vec<usize>), ApplyError> {
        for e in &self.entries {
            let mut again = entry_of(&self.resolve("commit", &e.display)?);
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
        let mut kinds = Vec::with_capacity(self.entries.len());
        let mut replaced = Vec::new();
        for (i, e) in self.entries.iter().enumerate() {
            let mut existed = fs::symlink_metadata(&e.full).is_ok();
            if let (State::Write { .. }, Ok(m)) = (&e.state, fs::metadata(&e.full)) {
                if m.is_dir() && replace && self.deletes_everything_in(&e.full) {
                    replaced.push(i);
                    existed = false;
                } else if m.is_dir() {
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
            kinds.push(match (&e.state, existed) {
                (State::Delete, true) => Some(ChangeKind::Deleted),
                (State::Delete, false) => None,
                (State::Write { .. }, true) => Some(ChangeKind::Modified),
                (State::Write { .. }, false) => Some(ChangeKind::Added),
            });
        }
        Ok((kinds, replaced))
    }

    /// Whether `dir` is a directory (not a link to one) in which every file, at any depth, is
    /// staged for deletion.
    fn deletes_everything_in(&self, dir: &Path) -> bool {
        if !fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
            return false;
        }
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            let Ok(listing) = fs::read_dir(&d) else {
                return false;
            };
            for entry in listing {
                let Ok(entry) = entry else { return false };
                let path = entry.path();
                match entry.file_type() {
                    Ok(t) if t.is_dir() => stack.push(path),
                    Ok(_) => {
                        let deleted = self
                            .by_path
                            .get(&path)
                            .is_some_and(|&i| matches!(self.entries[i].state, State::Delete));
                        if !deleted {
                            return false;
                        }
                    }
                    Err(_) => return false,
                }
            }
        }
        true
    }

    /// The steps to take, in the order staged, except that the deletions inside a directory a
    /// file replaces (the entries `replaced`) come first, their originals kept beside that
    /// directory rather than in it, and so do the deletions of files a written file's
    /// directories take the place of.
    fn steps(&self, replaced: &[usize]) -> Vec<Step<'_>> {
        let inside = |e: &Entry| {
            replaced
                .iter()
                .map(|&r| &self.entries[r].full)
                .find(|dir| matches!(e.state, State::Delete) && e.full.starts_with(dir))
        };
        // A deleted file where a written file needs a directory (`k` renamed to `k/g`) goes
        // first too: git makes every deletion before every creation.
        let in_the_way = |e: &Entry| {
            matches!(e.state, State::Delete)
                && self.entries.iter().any(|w| {
                    matches!(w.state, State::Write { .. })
                        && w.full != e.full
                        && w.full.starts_with(&e.full)
                })
        };
        let (first, rest): (Vec<_>, Vec<_>) = self
            .entries
            .iter()
            .enumerate()
            .partition(|(_, e)| inside(e).is_some() || in_the_way(e));
        first
            .into_iter()
            .chain(rest)
            .map(|(i, e)| Step {
                full: &e.full,
                display: &e.display,
                write: match &e.state {
                    State::Write { data, mode } => Some((data.as_slice(), *mode)),
                    State::Delete => None,
                },
                backup_dir: inside(e).and_then(|dir| dir.parent()),
                replaces_dir: replaced.contains(&i),
            })
            .collect()
    }

    /// The changes of the first `taken` entries.
    fn changes(&self, kinds: &[Option<ChangeKind>], taken: usize) -> Vec<Change> {
        self.entries
            .iter()
            .zip(kinds)
            .take(taken)
            .filter_map(|(e, kind)| {
                kind.map(|kind| Change {
                    path: e.display.clone(),
                    kind,
                })
            })
            .collect()
    }

    #[cfg(test)]
    fn faults(&self) -> Faults {
        self.faults
    }

    #[cfg(not(test))]
    fn faults(&self) -> Faults {
        Faults::default()
    }
}

/// The directory entry `full` names, its directories resolved (symbolic links followed, as far
/// as they exist: the rest of the path as written), its last component as written.
fn entry_of(full: &Path) -> PathBuf {
    let (Some(parent), Some(name)) = (full.parent(), full.file_name()) else {
        return full.to_path_buf();
    };
    let mut existing = parent;
    let mut rest = Vec::new();
    loop {
        if let Ok(mut out) = existing.canonicalize() {
            out.extend(rest.iter().rev());
            out.push(name);
            return out;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(up), Some(part)) => {
                rest.push(part);
                existing = up;
            }
            _ => return full.to_path_buf(),
        }
    }
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
        tx.faults.prepare = Some(2);
        assert_eq!(tx.commit().unwrap_err().detail, "injected failure");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.txt")]);
        assert_eq!(fs::read(dir.path().join("a.txt")).unwrap(), b"a\n");
    }

    /// Every path under `root` with its kind, bytes and mode: two equal snapshots mean an
    /// identical tree.
    fn snapshot(root: &Path) -> Vec<(PathBuf, String, Vec<u8>, Option<u32>)> {
        let mut out = Vec::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let meta = fs::symlink_metadata(&path).unwrap();
                let rel = path.strip_prefix(root).unwrap().to_path_buf();
                if meta.is_dir() {
                    stack.push(path.clone());
                    out.push((rel, "dir".into(), Vec::new(), file_mode(&path)));
                } else if meta.file_type().is_symlink() {
                    let target = fs::read_link(&path).unwrap();
                    let target = target.into_os_string().into_encoded_bytes();
                    out.push((rel, "link".into(), target, None));
                } else {
                    out.push((
                        rel,
                        "file".into(),
                        fs::read(&path).unwrap(),
                        file_mode(&path),
                    ));
                }
            }
        }
        out.sort();
        out
    }

    /// A transaction of five steps: update a.txt, add new/deep/n.txt, delete d.txt (leaving
    /// gone/ empty), update through a link, add top.txt with a mode.
    fn five_steps() -> (tempfile::TempDir, Transaction) {
        let (dir, mut tx) = setup();
        let root = dir.path();
        fs::create_dir(root.join("gone")).unwrap();
        fs::write(root.join("gone/d.txt"), "d\n").unwrap();
        fs::write(root.join("b.txt"), "b\n").unwrap();
        std::os::unix::fs::symlink("b.txt", root.join("link")).unwrap();
        let steps: [(&str, Option<&[u8]>); 5] = [
            ("a.txt", Some(b"A\n")),
            ("new/deep/n.txt", Some(b"n\n")),
            ("gone/d.txt", None),
            ("link", Some(b"B\n")),
            ("top.txt", Some(b"t\n")),
        ];
        for (path, data) in steps {
            let full = tx.resolve("op", path).unwrap();
            match data {
                Some(data) => tx.write(full, path, data.to_vec(), Some(0o640)),
                None => tx.delete(full, path),
            }
        }
        (dir, tx.prune_empty_dirs(true))
    }

    #[test]
    fn a_failure_at_any_step_of_the_renames_leaves_the_tree_as_it_was() {
        for at in 0..5 {
            let (dir, mut tx) = five_steps();
            let before = snapshot(dir.path());
            tx.faults.apply = Some(at);
            let err = tx.commit().unwrap_err();
            assert_eq!(err.detail, "injected failure", "step {at}");
            assert!(err.unrestored().is_empty(), "step {at}: {err}");
            assert_eq!(snapshot(dir.path()), before, "step {at}");
        }
        // And with no failure, all five happen.
        let (dir, tx) = five_steps();
        let changes = tx.commit().unwrap();
        let letters: String = changes.iter().map(|c| c.kind.letter()).collect();
        assert_eq!(letters, "MADMA");
        let root = dir.path();
        assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"A\n");
        assert_eq!(fs::read(root.join("b.txt")).unwrap(), b"B\n");
        assert!(!root.join("gone").exists());
        let names: Vec<_> = snapshot(root).into_iter().map(|e| e.0).collect();
        assert!(
            names
                .iter()
                .all(|n| !n.to_string_lossy().contains(".frontier-")),
            "{names:?}"
        );
    }

    /// A file `d` deleted and `d/e/f` written in its place, then `a.txt` updated: the
    /// directories under `d` can only be made once `d` is gone.
    fn file_then_directory() -> (tempfile::TempDir, Transaction) {
        let (dir, mut tx) = setup();
        fs::write(dir.path().join("d"), "file\n").unwrap();
        let d = tx.resolve("delete", "d").unwrap();
        tx.delete(d, "d");
        let f = tx.resolve("add", "d/e/f").unwrap();
        assert_eq!(tx.presence(&f), Presence::Missing);
        tx.write(f, "d/e/f", b"f\n".to_vec(), None);
        let a = tx.resolve("update", "a.txt").unwrap();
        tx.write(a, "a.txt", b"A\n".to_vec(), None);
        (dir, tx)
    }

    #[test]
    fn a_directory_takes_the_place_of_a_file_deleted_before_it() {
        for at in 0..3 {
            let (dir, mut tx) = file_then_directory();
            let before = snapshot(dir.path());
            tx.faults.apply = Some(at);
            let err = tx.commit().unwrap_err();
            assert!(err.unrestored().is_empty(), "step {at}: {err}");
            assert_eq!(snapshot(dir.path()), before, "step {at}");
        }
        let (dir, tx) = file_then_directory();
        let letters: String = tx
            .commit()
            .unwrap()
            .iter()
            .map(|c| c.kind.letter())
            .collect();
        assert_eq!(letters, "DAM");
        let names: Vec<String> = snapshot(dir.path())
            .into_iter()
            .map(|e| e.0.to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a.txt", "d", "d/e", "d/e/f"]);
        assert_eq!(fs::read(dir.path().join("d/e/f")).unwrap(), b"f\n");
        // In order (the codex policy), the same.
        let (dir, tx) = file_then_directory();
        let (written, err) = tx.commit_in_order();
        assert!(err.is_none() && written.len() == 3, "{err:?}");
        assert_eq!(fs::read(dir.path().join("d/e/f")).unwrap(), b"f\n");
        // A file in the way that stays is a failure at its step, with nothing changed.
        let (dir, mut tx) = setup();
        fs::write(dir.path().join("d"), "file\n").unwrap();
        let a = tx.resolve("update", "a.txt").unwrap();
        tx.write(a, "a.txt", b"A\n".to_vec(), None);
        let f = tx.resolve("add", "d/f").unwrap();
        tx.write(f, "d/f", b"f\n".to_vec(), None);
        let before = snapshot(dir.path());
        let err = tx.commit().unwrap_err();
        assert_eq!(
            (err.kind, err.path.as_str()),
            (ErrorKind::Io, "d/f"),
            "{err}"
        );
        assert_eq!(snapshot(dir.path()), before);
    }

    /// The file `x` written, then the files under the directory `x` deleted (`git diff`'s
    /// order), then `a.txt` updated.
    fn directory_then_file() -> (tempfile::TempDir, Transaction) {
        let (dir, mut tx) = setup();
        fs::create_dir_all(dir.path().join("x/deep")).unwrap();
        fs::write(dir.path().join("x/y"), "y\n").unwrap();
        fs::write(dir.path().join("x/deep/z"), "z\n").unwrap();
        let x = tx.resolve("add", "x").unwrap();
        assert_eq!(tx.presence(&x), Presence::Directory);
        tx.write(x, "x", b"file\n".to_vec(), None);
        for path in ["x/y", "x/deep/z"] {
            let full = tx.resolve("delete", path).unwrap();
            tx.delete(full, path);
        }
        let a = tx.resolve("update", "a.txt").unwrap();
        tx.write(a, "a.txt", b"A\n".to_vec(), None);
        (dir, tx.prune_empty_dirs(true))
    }

    #[test]
    fn a_file_takes_the_place_of_a_directory_whose_files_are_deleted() {
        for at in 0..4 {
            let (dir, mut tx) = directory_then_file();
            let before = snapshot(dir.path());
            tx.faults.apply = Some(at);
            let err = tx.commit().unwrap_err();
            assert!(err.unrestored().is_empty(), "step {at}: {err}");
            assert_eq!(snapshot(dir.path()), before, "step {at}");
        }
        let (dir, tx) = directory_then_file();
        let changes = tx.commit().unwrap();
        let listed: Vec<String> = changes
            .iter()
            .map(|c| format!("{} {}", c.kind.letter(), c.path))
            .collect();
        assert_eq!(listed, ["A x", "D x/y", "D x/deep/z", "M a.txt"]);
        let names: Vec<String> = snapshot(dir.path())
            .into_iter()
            .map(|e| e.0.to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a.txt", "x"]);
        assert_eq!(fs::read(dir.path().join("x")).unwrap(), b"file\n");
        // A file left in the directory keeps it in the way; in order (Codex), every directory
        // is.
        let (dir, tx) = directory_then_file();
        fs::write(dir.path().join("x/deep/other"), "o\n").unwrap();
        let before = snapshot(dir.path());
        let err = tx.commit().unwrap_err();
        assert_eq!((err.kind, err.path.as_str()), (ErrorKind::IsDirectory, "x"));
        assert_eq!(snapshot(dir.path()), before);
        let (dir, tx) = directory_then_file();
        let before = snapshot(dir.path());
        let (written, err) = tx.commit_in_order();
        assert!(written.is_empty());
        assert_eq!(err.unwrap().kind, ErrorKind::IsDirectory);
        assert_eq!(snapshot(dir.path()), before);
    }

    #[test]
    fn an_undo_that_fails_names_the_path_it_could_not_restore() {
        let (dir, mut tx) = five_steps();
        tx.faults.apply = Some(4);
        tx.faults.undo = Some(0);
        let err = tx.commit().unwrap_err();
        assert_eq!(err.unrestored().len(), 1, "{err}");
        assert!(
            err.unrestored()[0].starts_with("a.txt (injected failure; the original is kept at ")
        );
        assert!(err
            .to_string()
            .contains("could not be restored:\n  ! a.txt"));
        // Everything else was restored; a.txt has the new content, its original is kept.
        let root = dir.path();
        assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"A\n");
        assert_eq!(fs::read(root.join("b.txt")).unwrap(), b"b\n");
        assert_eq!(fs::read(root.join("gone/d.txt")).unwrap(), b"d\n");
        assert!(!root.join("new").exists() && !root.join("top.txt").exists());
        let kept = err.unrestored()[0].split("kept at ").nth(1).unwrap();
        assert_eq!(fs::read(kept.trim_end_matches(')')).unwrap(), b"a\n");
    }

    #[test]
    fn in_order_keeps_what_was_done_before_a_failure() {
        let (dir, mut tx) = five_steps();
        tx.faults.apply = Some(3);
        let (written, err) = tx.commit_in_order();
        assert_eq!(err.unwrap().path, "link");
        let paths: Vec<_> = written.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["a.txt", "new/deep/n.txt", "gone/d.txt"]);
        let root = dir.path();
        assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"A\n");
        assert_eq!(fs::read(root.join("new/deep/n.txt")).unwrap(), b"n\n");
        assert_eq!(fs::read(root.join("b.txt")).unwrap(), b"b\n");
        assert!(!root.join("top.txt").exists());
        let names: Vec<_> = snapshot(root).into_iter().map(|e| e.0).collect();
        assert!(
            names
                .iter()
                .all(|n| !n.to_string_lossy().contains(".frontier-")),
            "{names:?}"
        );
    }
}
