//! Writing a checked transaction to disk: temporary files first, then renames that can be
//! undone.
//!
//! Phase 1 writes every new content to a temporary file `.frontier-<pid>-<n>.tmp` next to its
//! target (making the directories it needs). Nothing visible has changed yet; a failure removes
//! the temporary files and the directories made for them. A target under a path that is a
//! file now (`d/f` where the patch deletes the file `d` first) cannot have its directories
//! yet: its temporary file goes beside that file, and its directories are made in phase 2,
//! right before it is put in place, as steps that are undone like the others.
//!
//! Phase 2 puts the changes in place, in the order they were staged. Under
//! `OnFailure::Undo` (all or nothing) every original is kept until the last step succeeded:
//! before a file is replaced it is hard-linked to `.frontier-<pid>-<n>.orig` in its own
//! directory (renamed there where the filesystem has no hard links), and a deleted file is
//! renamed there instead of being unlinked. If a step fails, the steps already taken are undone
//! in reverse (each original renamed back, each added file removed, the directories made for
//! them removed); a path that cannot be restored is named in [`ApplyError::unrestored`]. Only
//! when every step succeeded are the `.orig` files removed. Under `OnFailure::Keep` (Codex's
//! behaviour) the steps are taken in order with no backup, and a failure keeps what was already
//! done.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::error::ApplyError;
use super::workspace::Workspace;

/// One change to put in place: the path, its name in the patch, and the new content (with
/// the mode to give it) or `None` for a deletion.
pub(super) struct Step<'a> {
    pub(super) full: &'a Path,
    pub(super) display: &'a str,
    pub(super) write: Option<(&'a [u8], Option<u32>)>,
    /// Where a deletion keeps the original until the commit is done, when not in the file's
    /// own directory (a directory a file is about to replace must be left empty).
    pub(super) backup_dir: Option<&'a Path>,
    /// The write replaces a directory whose files earlier steps deleted: the directories left
    /// there are removed first.
    pub(super) replaces_dir: bool,
}

/// What phase 2 does when a step fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum OnFailure {
    /// Undo every step already taken: all or nothing.
    Undo,
    /// Keep the steps already taken.
    Keep,
}

/// Failures injected by the unit tests, by step index.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Faults {
    /// Phase 1 fails after writing this step's temporary file.
    pub(super) prepare: Option<usize>,
    /// Phase 2 fails at this step, after its backup was made and before its rename.
    pub(super) apply: Option<usize>,
    /// Undoing this step fails.
    pub(super) undo: Option<usize>,
}

/// A failed commit: the error (boxed: a failure is rare and the error is large), and how many
/// leading steps stayed in place (always 0 under [`OnFailure::Undo`]).
pub(super) struct Failed {
    pub(super) error: Box<ApplyError>,
    pub(super) kept: usize,
}

/// How to take a step back.
enum Undo {
    /// The file was added: remove it.
    Remove,
    /// The original was kept at this path: rename it back.
    Restore(PathBuf),
    /// The original is still in place, and also linked at this path: remove the link.
    /// (Renaming one hard link over another of the same file does nothing.)
    Unlink(PathBuf),
    /// A directory phase 2 made for a file under it: remove it (it is empty once the file is).
    RemoveDir(PathBuf),
    /// An emptied directory phase 2 removed for a file to take its place: make it again, with
    /// its mode.
    MakeDir(PathBuf, Option<u32>),
}

/// Puts `steps` in place. `prune_empty_dirs`: after a deletion, remove the directories it
/// leaves empty.
pub(super) fn commit(
    ws: &Workspace,
    steps: &[Step<'_>],
    on_failure: OnFailure,
    prune_empty_dirs: bool,
    faults: Faults,
) -> Result<(), Failed> {
    let mut prepared = Prepared::default();
    for (n, step) in steps.iter().enumerate() {
        if let Some((data, mode)) = step.write {
            // A file replacing a directory does not take the directory's mode.
            let mode = match step.replaces_dir {
                true => mode,
                false => mode.or_else(|| file_mode(step.full)),
            };
            let result = prepared
                .stage(n, ws, step.full, data, mode)
                .and_then(|()| injected(faults.prepare, n));
            if let Err(err) = result {
                prepared.discard(0);
                return Err(Failed {
                    error: Box::new(ApplyError::io("commit", step.display, &err)),
                    kept: 0,
                });
            }
        }
    }

    let mut taken: Vec<(usize, Undo)> = Vec::with_capacity(steps.len());
    for (n, step) in steps.iter().enumerate() {
        if let Err(err) = take(n, step, &prepared, on_failure, faults, &mut taken) {
            let error = ApplyError::io("commit", step.display, &err);
            return Err(match on_failure {
                OnFailure::Keep => {
                    prepared.discard(n);
                    Failed {
                        error: Box::new(error),
                        kept: n,
                    }
                }
                OnFailure::Undo => {
                    let unrestored = undo(steps, taken, faults);
                    prepared.discard(0);
                    Failed {
                        error: Box::new(error.with_unrestored(unrestored)),
                        kept: 0,
                    }
                }
            });
        }
    }

    for (_, undo) in taken {
        if let Undo::Restore(backup) | Undo::Unlink(backup) = undo {
            let _ = fs::remove_file(backup);
        }
    }
    if prune_empty_dirs {
        for step in steps.iter().filter(|s| s.write.is_none()) {
            let mut dir = step.full.parent();
            while let Some(d) = dir {
                if d == ws.root() || fs::remove_dir(d).is_err() {
                    break;
                }
                dir = d.parent();
            }
        }
    }
    Ok(())
}

/// Takes step `n`, recording in `taken` how to undo it as soon as there is something to undo.
fn take(
    n: usize,
    step: &Step<'_>,
    prepared: &Prepared,
    on_failure: OnFailure,
    faults: Faults,
    taken: &mut Vec<(usize, Undo)>,
) -> io::Result<()> {
    if step.replaces_dir {
        remove_dirs_undoable(step.full, n, taken)?;
    }
    let exists = fs::symlink_metadata(step.full).is_ok();
    let keep = on_failure == OnFailure::Undo && exists;
    let backup = || backup_path(step.full, step.backup_dir, n);
    match step.write {
        Some(_) => {
            let tmp = prepared
                .temp(n)
                .ok_or_else(|| io::Error::other("no temporary file"))?;
            if let Some(dir) = prepared.deferred_dir(n) {
                make_dirs_undoable(dir, n, taken)?;
            }
            let file_entry = taken.len();
            if keep {
                let backup = backup();
                if fs::hard_link(step.full, &backup).is_ok() {
                    taken.push((n, Undo::Unlink(backup)));
                } else {
                    fs::rename(step.full, &backup)?;
                    taken.push((n, Undo::Restore(backup)));
                }
            }
            injected(faults.apply, n)?;
            fs::rename(tmp, step.full)?;
            match taken.get_mut(file_entry) {
                Some((_, undo)) => {
                    if let Undo::Unlink(backup) = undo {
                        *undo = Undo::Restore(std::mem::take(backup));
                    }
                }
                None => taken.push((n, Undo::Remove)),
            }
        }
        None if !exists => injected(faults.apply, n)?,
        None if keep => {
            let backup = backup();
            injected(faults.apply, n)?;
            fs::rename(step.full, &backup)?;
            taken.push((n, Undo::Restore(backup)));
        }
        None => {
            injected(faults.apply, n)?;
            match fs::remove_file(step.full) {
                Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
                _ => {}
            }
        }
    }
    Ok(())
}

/// Makes `dir` and the directories above it that are missing, each recorded in `taken` as
/// part of step `n`.
fn make_dirs_undoable(dir: &Path, n: usize, taken: &mut Vec<(usize, Undo)>) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        make_dirs_undoable(parent, n, taken)?;
    }
    fs::create_dir(dir)?;
    taken.push((n, Undo::RemoveDir(dir.to_path_buf())));
    Ok(())
}

/// Removes `dir` and the directories in it, which hold no files any more (the steps before
/// deleted them), deepest first, each recorded in `taken` as part of step `n`. A directory that
/// is not empty fails the step.
fn remove_dirs_undoable(dir: &Path, n: usize, taken: &mut Vec<(usize, Undo)>) -> io::Result<()> {
    let mut dirs = vec![dir.to_path_buf()];
    let mut at = 0;
    while let Some(d) = dirs.get(at).cloned() {
        for entry in fs::read_dir(&d)? {
            let entry = entry?;
            if entry.file_type()?.is_dir() {
                dirs.push(entry.path());
            }
        }
        at += 1;
    }
    for d in dirs.into_iter().rev() {
        let mode = file_mode(&d);
        fs::remove_dir(&d)?;
        taken.push((n, Undo::MakeDir(d, mode)));
    }
    Ok(())
}

/// Undoes the steps taken, last first; returns the paths it could not restore, with why.
fn undo(steps: &[Step<'_>], taken: Vec<(usize, Undo)>, faults: Faults) -> Vec<String> {
    let mut unrestored = Vec::new();
    for (n, undo) in taken.into_iter().rev() {
        let step = &steps[n];
        let result = injected(faults.undo, n).and_then(|()| match &undo {
            Undo::Remove => fs::remove_file(step.full),
            Undo::Restore(backup) => fs::rename(backup, step.full),
            Undo::Unlink(backup) => fs::remove_file(backup),
            Undo::RemoveDir(dir) => fs::remove_dir(dir),
            Undo::MakeDir(dir, mode) => {
                fs::create_dir(dir).and_then(|()| mode.map_or(Ok(()), |mode| set_mode(dir, mode)))
            }
        });
        if let Err(err) = result {
            let left = match &undo {
                Undo::Remove => "the new file is still there".to_owned(),
                Undo::Restore(backup) => format!("the original is kept at {}", backup.display()),
                Undo::Unlink(backup) => {
                    format!("the original is also linked at {}", backup.display())
                }
                Undo::RemoveDir(dir) => format!("the directory {} is still there", dir.display()),
                Undo::MakeDir(dir, _) => format!("the directory {} is gone", dir.display()),
            };
            unrestored.push(format!("{} ({err}; {left})", step.display));
        }
    }
    unrestored
}

/// Where step `n` keeps the original of `full`: in `dir`, or beside the file.
fn backup_path(full: &Path, dir: Option<&Path>, n: usize) -> PathBuf {
    let dir = dir.or(full.parent()).unwrap_or(Path::new("."));
    dir.join(format!(".frontier-{}-{n}.orig", std::process::id()))
}

#[cfg(test)]
fn injected(at: Option<usize>, n: usize) -> io::Result<()> {
    match at {
        Some(at) if at == n => Err(io::Error::other("injected failure")),
        _ => Ok(()),
    }
}

#[cfg(not(test))]
fn injected(_at: Option<usize>, _n: usize) -> io::Result<()> {
    Ok(())
}

/// Temporary files written in phase 1, the directories made for them, and the directories
/// left for phase 2 (a file is in their place now).
#[derive(Default)]
struct Prepared {
    temps: Vec<(usize, PathBuf)>,
    made_dirs: Vec<PathBuf>,
    deferred: Vec<(usize, PathBuf)>,
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
        let beside = match file_in_the_way(parent) {
            Some(file) => {
                self.deferred.push((n, parent.to_path_buf()));
                file.parent().unwrap_or(ws.root()).to_path_buf()
            }
            None => {
                self.make_dirs(parent)?;
                parent.to_path_buf()
            }
        };
        let tmp = beside.join(format!(".frontier-{}-{n}.tmp", std::process::id()));
        self.temps.push((n, tmp.clone()));
        fs::write(&tmp, data)?;
        if let Some(mode) = mode {
            set_mode(&tmp, mode)?;
        }
        Ok(())
    }

    /// The directory step `n` needs made in phase 2, if a file stood in its place in phase 1.
    fn deferred_dir(&self, n: usize) -> Option<&Path> {
        self.deferred
            .iter()
            .find(|(i, _)| *i == n)
            .map(|(_, dir)| dir.as_path())
    }

    fn temp(&self, n: usize) -> Option<&Path> {
        self.temps
            .iter()
            .find(|(i, _)| *i == n)
            .map(|(_, tmp)| tmp.as_path())
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

    /// Removes the temporary files of steps `from..` that are still there, then the
    /// directories made for them that are left empty.
    fn discard(&self, from: usize) {
        for (_, tmp) in self.temps.iter().filter(|(i, _)| *i >= from) {
            let _ = fs::remove_file(tmp);
        }
        for dir in self.made_dirs.iter().rev() {
            let _ = fs::remove_dir(dir);
        }
    }
}

/// The nearest existing path at or above `dir` when it is not a directory (a file where a
/// directory is to be made): `None` when it is one, or nothing above `dir` exists.
fn file_in_the_way(dir: &Path) -> Option<&Path> {
    let existing = dir.ancestors().find(|a| fs::symlink_metadata(a).is_ok())?;
    (!existing.is_dir()).then_some(existing)
}

#[cfg(unix)]
pub(super) fn file_mode(full: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(full)
        .ok()
        .map(|m| m.permissions().mode() & 0o7777)
}

#[cfg(not(unix))]
pub(super) fn file_mode(_full: &Path) -> Option<u32> {
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
