//! Applying unified diffs as `git apply` does.
//!
//! Each hunk must match exactly, context and removed lines, line endings included. The search
//! starts at the line the hunk states (its new-side start, in the file as the earlier hunks left
//! it) and goes outward, one line after, one line before, two after, and so on, through the
//! whole file, never over a line an earlier hunk wrote. A hunk that starts at line 0 or 1 must
//! match at the start of the file, and one with no trailing context at its end. A `recount`
//! hunk without ranges is looked for from the line after the previous hunk, tied to neither
//! end. With a fuzz factor N ≥ 1 hunks are placed as GNU patch's `patch -F N` places them.
//!
//! Files are created, deleted, renamed, copied and given modes as their headers say; git's
//! binary patches are applied in both forms. A [`DiffSession`] takes the units one at a time:
//! [`DiffSession::begin_file`] once a file patch's header is known, [`DiffSession::hunk`] for
//! each hunk as it is confirmed (applied at once to the file's image, so a hunk that does not
//! apply is reported while the diff is still being written), [`DiffSession::file_patch`] when the
//! file patch is complete, then [`DiffSession::commit`]. All or nothing.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::binary::{self, BinaryError};
use super::commit::file_mode;
use super::error::{ApplyError, ErrorKind, FirstFailure};
use super::transaction::{Change, Presence, Transaction};
use super::workspace::Workspace;
use crate::udiff::units::{Binary, FileHeader, FilePatch, Hunk, HunkLine, LineKind};

/// How names are read and how loosely hunks may match. The default is `git apply`'s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiffOptions {
    /// Leading path components removed from the names (`-p N`). `None` is `git apply`'s
    /// default: 1, unless the first traditional (`---`/`+++` only) file patch names its files
    /// without a directory, which means 0 for the whole diff.
    pub strip: Option<usize>,
    /// How many outer context lines a hunk may lose to match (GNU patch's fuzz; 0 is git's
    /// exact behaviour).
    pub fuzz: usize,
}

/// What a file patch does to its file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Create,
    Delete,
    Modify,
    Rename,
    Copy,
}

#[derive(Clone, Copy, Debug)]
struct Span {
    owned: bool,
    /// A line of a hunk's postimage (context included), which no later hunk may match: git's
    /// `LINE_PATCHED` (as `git apply` without `--allow-overlap`).
    patched: bool,
    start: usize,
    end: usize,
}

/// The file's lines as the hunks so far left them: the lines before the last place a hunk
/// touched are in `out` (spans of the original or of `arena`), the rest are the original's
/// from `cursor` on, so that hunks applied in order cost no more than copying spans. Only
/// lines in `out` can be patched.
///
/// It also keeps where the hunks so far went, for placing the next one: `origin` (the line
/// after the last applied hunk, where a hunk without ranges is looked for), and GNU patch's
/// bookkeeping for fuzz, in the original's numbering: `frozen` (its `last_frozen_line`: the
/// original lines up to the last hunk's last change, which no later hunk may change),
/// `in_offset` (the offset the last hunk was found at) and `out_offset` (lines added minus
/// lines removed so far: an original line after `frozen` is that many lines further on in
/// the image).
#[derive(Debug, Default)]
struct Image {
    orig: Vec<u8>,
    lines: Vec<(usize, usize)>,
    arena: Vec<u8>,
    out: Vec<Span>,
    cursor: usize,
    origin: usize,
    frozen: i64,
    in_offset: i64,
    out_offset: i64,
}

impl Image {
    fn new(orig: Vec<u8>) -> Image {
        let mut lines = Vec::new();
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', &orig) {
            lines.push((start, nl + 1));
            start = nl + 1;
        }
        if start < orig.len() {
            lines.push((start, orig.len()));
        }
        Image {
            orig,
            lines,
            ..Image::default()
        }
    }

    fn len(&self) -> usize {
        self.out.len() + self.lines.len() - self.cursor
    }

    fn get(&self, i: usize) -> &[u8] {
        if i < self.out.len() {
            let s = self.out[i];
            if s.owned {
                &self.arena[s.start..s.end]
            } else {
                &self.orig[s.start..s.end]
            }
        } else {
            let (s, e) = self.lines[self.cursor + i - self.out.len()];
            &self.orig[s..e]
        }
    }

    fn matches_at(&self, at: usize, pre: &[Vec<u8>]) -> bool {
        at + pre.len() <= self.len() && pre.iter().enumerate().all(|(k, l)| self.get(at + k) == l)
    }

    /// Line `i` of the original file.
    fn original(&self, i: usize) -> &[u8] {
        let (s, e) = self.lines[i];
        &self.orig[s..e]
    }

    /// Some line of `at..at + len` is a line an earlier hunk wrote.
    fn covers_patched(&self, at: usize, len: usize) -> bool {
        let end = (at + len).min(self.out.len());
        self.out
            .get(at..end)
            .is_some_and(|s| s.iter().any(|s| s.patched))
    }

    fn take_original(&mut self, count: usize) {
        let end = self.cursor + count;
        self.out.extend(
            self.lines[self.cursor..end]
                .iter()
                .map(|&(start, end)| Span {
                    owned: false,
                    patched: false,
                    start,
                    end,
                }),
        );
        self.cursor = end;
    }

    fn replace(&mut self, at: usize, old_len: usize, new: &[Vec<u8>]) {
        let mut spans = Vec::with_capacity(new.len());
        for l in new {
            let start = self.arena.len();
            self.arena.extend_from_slice(l);
            spans.push(Span {
                owned: true,
                patched: true,
                start,
                end: self.arena.len(),
            });
        }
        if at >= self.out.len() {
            self.take_original(at - self.out.len());
            self.cursor += old_len;
            self.out.extend(spans);
        } else {
            // A hunk before an earlier one: rare, so simply materialise everything.
            self.take_original(self.lines.len() - self.cursor);
            self.out.splice(at..at + old_len, spans);
        }
    }

    fn finish(&self) -> Vec<u8> {
        let mut data = Vec::with_capacity(self.orig.len() + self.arena.len());
        for i in 0..self.len() {
            data.extend_from_slice(self.get(i));
        }
        data
    }
}

#[derive(Debug)]
struct OpenFile {
    action: Action,
    old_name: String,
    new_name: String,
    old_full: PathBuf,
    new_full: PathBuf,
    image: Image,
    hunks: usize,
    /// A traditional diff's file that is missing, read as a creation as `git apply` reads it:
    /// only while the patch has one hunk and that hunk has no old lines.
    guessed_new: bool,
}

/// Applies the file patches of one diff to a workspace, checking each unit as it arrives.
#[derive(Debug)]
pub struct DiffSession {
    tx: Transaction,
    options: DiffOptions,
    /// `-p`, possibly guessed by the first traditional file patch.
    strip: Strip,
    open: Option<OpenFile>,
    failed: FirstFailure,
    files: usize,
    /// The names deleted or renamed away by the file patches so far.
    removed: HashSet<PathBuf>,
    /// Files a git file patch creates (or renames or copies onto) that exist on disk: allowed,
    /// as `git apply` allows it, only if some file patch of the diff removes them (a swap of
    /// two files by two renames), checked at the commit.
    replaced: Vec<(PathBuf, String)>,
}

/// Removes `n` leading components from a name, as `git apply -p` does (runs of slashes count
/// as one); `None` when it has fewer, or nothing is left.
fn strip_bytes(name: &[u8], n: usize) -> Option<&[u8]> {
    let mut rest = name;
    for _ in 0..n {
        let slash = memchr::memchr(b'/', rest)?;
        rest = &rest[slash + 1..];
        while let [b'/', tail @ ..] = rest {
            rest = tail;
        }
    }
    (!rest.is_empty()).then_some(rest)
}

/// [`strip_bytes`], as a UTF-8 name.
fn strip_name(name: &[u8], n: usize) -> Option<String> {
    String::from_utf8(strip_bytes(name, n)?.to_vec()).ok()
}

/// `-p` as `git apply` keeps it: the default (1) may still be replaced by a guess from the
/// first traditional (`---`/`+++` only) file patch, whose names carry no directory.
#[derive(Clone, Copy, Debug)]
struct Strip {
    value: usize,
    known: bool,
}

impl Strip {
    fn new(given: Option<usize>) -> Strip {
        Strip {
            value: given.unwrap_or(1),
            known: given.is_some(),
        }
    }

    /// git's `guess_p_value` on a traditional file patch's two names: a name without a
    /// slash means `-p 0`; when the sides agree (or one is `/dev/null` and the old side is
    /// the one without a guess), that is the value for the rest of the diff.
    fn guess(&mut self, h: &FileHeader) {
        if self.known || h.git_names.is_some() {
            return;
        }
        let side = |v: &Option<Vec<u8>>| match v.as_deref() {
            Some(n) if !FileHeader::is_dev_null(n) && memchr::memchr(b'/', n).is_none() => Some(0),
            _ => None,
        };
        let q = side(&h.new_path);
        let p = side(&h.old_path).or(q);
        if p.is_some() && p == q {
            self.value = 0;
            self.known = true;
        }
    }
}

/// The name and action of a traditional file patch (`---`/`+++` without `diff --git`), as
/// git's `parse_traditional_patch` reads them: a `/dev/null` side (or one dated the epoch)
/// makes a creation or a deletion of the other; otherwise the file is the new side's name,
/// unless that cannot lose `strip` components or merely extends the old side's (`x` against
/// `x.new`, `x~`): then the old side's.
fn traditional_names<'h>(
    h: &'h FileHeader,
    strip: usize,
) -> Result<(Action, String, String), ApplyError> {
    fn side(v: &Option<Vec<u8>>) -> Option<&[u8]> {
        v.as_deref().filter(|n| !FileHeader::is_dev_null(n))
    }
    let (old, new) = (side(&h.old_path), side(&h.new_path));
    let stripped = |n: Option<&'h [u8]>| n.and_then(|n| strip_bytes(n, strip));
    let (action, name) = match (h.old_path.is_some() && old.is_none(), new.is_none()) {
        (true, _) => (Action::Create, stripped(new)),
        (false, true) => (Action::Delete, stripped(old)),
        (false, false) => (
            Action::Modify,
            match (stripped(old), stripped(new)) {
                (Some(f), Some(s)) if f.len() < s.len() && s.starts_with(f) => Some(f),
                (_, Some(s)) => Some(s),
                (f, None) => f,
            },
        ),
    };
    let written = new.or(old).unwrap_or_default();
    let name = name.ok_or_else(|| bad_name(written, strip))?;
    let name = String::from_utf8(name.to_vec()).map_err(|_| bad_name(name, 0))?;
    Ok((action, name.clone(), name))
}

fn bad_name(name: &[u8], strip: usize) -> ApplyError {
    ApplyError::new(
        ErrorKind::BadName,
        "patch",
        String::from_utf8_lossy(name),
        format!("the name cannot lose {strip} leading components (or is not UTF-8)"),
    )
}

/// The old and new names of a file patch and what it does.
fn names(h: &FileHeader, strip: usize) -> Result<(Action, String, String), ApplyError> {
    if h.git_names.is_none() {
        return traditional_names(h, strip);
    }
    fn named(v: &Option<Vec<u8>>) -> Option<&[u8]> {
        v.as_deref().filter(|n| !FileHeader::is_dev_null(n))
    }
    let get = |name: &[u8], p: usize| strip_name(name, p).ok_or_else(|| bad_name(name, p));
    // `rename from` and `copy from` carry no `a/` prefix: git strips one component fewer.
    let meta_strip = strip.saturating_sub(1);
    let dev_null_old = h.old_path.as_deref().is_some_and(FileHeader::is_dev_null);
    let dev_null_new = h.new_path.as_deref().is_some_and(FileHeader::is_dev_null);
    let git_old = h.git_names.as_ref().map(|(o, _)| o.as_slice());
    let git_new = h.git_names.as_ref().map(|(_, n)| n.as_slice());
    let old = if let Some(n) = h.rename_from.as_deref().or(h.copy_from.as_deref()) {
        Some(get(n, meta_strip)?)
    } else if let Some(n) = named(&h.old_path).or(git_old) {
        Some(get(n, strip)?)
    } else {
        None
    };
    let new = if let Some(n) = h.rename_to.as_deref().or(h.copy_to.as_deref()) {
        Some(get(n, meta_strip)?)
    } else if let Some(n) = named(&h.new_path).or(git_new) {
        Some(get(n, strip)?)
    } else {
        None
    };
    let none = || {
        ApplyError::new(
            ErrorKind::BadName,
            "patch",
            "",
            "the file patch names no file",
        )
    };
    let action = if h.new_file_mode.is_some() || dev_null_old {
        Action::Create
    } else if h.deleted_file_mode.is_some() || dev_null_new {
        Action::Delete
    } else if h.rename_from.is_some() || h.rename_to.is_some() {
        Action::Rename
    } else if h.copy_from.is_some() || h.copy_to.is_some() {
        Action::Copy
    } else {
        Action::Modify
    };
    let (old, new) = match action {
        Action::Create => {
            let n = new.or(old).ok_or_else(none)?;
            (n.clone(), n)
        }
        Action::Delete => {
            let o = old.or(new).ok_or_else(none)?;
            (o.clone(), o)
        }
        Action::Rename | Action::Copy => (old.ok_or_else(none)?, new.ok_or_else(none)?),
        Action::Modify => {
            let o = old.or(new.clone()).ok_or_else(none)?;
            (o.clone(), new.unwrap_or(o))
        }
    };
    // Two names and no `rename`/`copy` lines (`diff --git a/x b/y`, or `--- a/x` `+++ b/y`
    // under a git header): `git apply` removes the old name and writes the new, a rename.
    let action = match action {
        Action::Modify if old != new => Action::Rename,
        _ => action,
    };
    Ok((action, old, new))
}

/// The hunk as written, for error messages.
fn hunk_text(h: &Hunk) -> Vec<String> {
    let header = if h.ranges_stated {
        format!(
            "@@ -{},{} +{},{} @@",
            h.old_start, h.old_count, h.new_start, h.new_count
        )
    } else {
        "@@ ... @@".to_owned()
    };
    let mut out = vec![header];
    for l in &h.lines {
        let prefix = match l.kind {
            LineKind::Context => ' ',
            LineKind::Remove => '-',
            LineKind::Add => '+',
        };
        out.push(format!("{prefix}{}", String::from_utf8_lossy(&l.content)));
        if l.no_newline {
            out.push("\\ No newline at end of file".to_owned());
        }
    }
    out
}

fn with_newline(l: &HunkLine) -> Vec<u8> {
    let mut v = Vec::with_capacity(l.content.len() + 1);
    v.extend_from_slice(&l.content);
    if !l.no_newline {
        v.push(b'\n');
    }
    v
}

/// The error for a file patch whose file is not in the workspace.
fn not_found(name: &str) -> ApplyError {
    ApplyError::new(
        ErrorKind::FileNotFound,
        "patch",
        name,
        "no such file in the workspace",
    )
}

/// The sequence of places to try, outward from `pos` (moved into the range if outside it):
/// `pos`, one after, one before, two after, … within `first..=last` (none if that is empty).
fn outward(pos: usize, first: usize, last: usize) -> impl Iterator<Item = usize> {
    let pos = pos.clamp(first, last.max(first));
    let reach = (first <= last).then(|| (pos - first).max(last - pos));
    reach.into_iter().flat_map(move |r| {
        (0..=r).flat_map(move |d| {
            let after = (pos + d <= last).then_some(pos + d);
            let before = (d > 0 && d <= pos - first).then(|| pos - d);
            after.into_iter().chain(before)
        })
    })
}

impl DiffSession {
    /// A session over `ws`.
    pub fn new(ws: Workspace, options: DiffOptions) -> DiffSession {
        DiffSession {
            tx: Transaction::new(ws).prune_empty_dirs(true),
            options,
            strip: Strip::new(options.strip),
            open: None,
            failed: FirstFailure::default(),
            files: 0,
            removed: HashSet::new(),
            replaced: Vec::new(),
        }
    }

    /// The first failure, if there was one.
    pub fn failure(&self) -> Option<&ApplyError> {
        self.failed.get()
    }

    /// Remembers a failure and drops the file it was working on.
    fn guard<T>(&mut self, r: Result<T, ApplyError>) -> Result<T, ApplyError> {
        if r.is_err() {
            self.open = None;
        }
        self.failed.record(r)
    }

    fn check_open(&self) -> Result<(), ApplyError> {
        self.failed.check()
    }

    /// Starts a file patch once its header is known: checks the names and reads the file.
    pub fn begin_file(&mut self, header: &FileHeader) -> Result<(), ApplyError> {
        self.check_open()?;
        self.strip.guess(header);
        let r = self.open_file(header);
        let open = self.guard(r)?;
        self.open = Some(open);
        Ok(())
    }

    fn open_file(&mut self, header: &FileHeader) -> Result<OpenFile, ApplyError> {
        let (action, old_name, new_name) = names(header, self.strip.value)?;
        let modes = [
            header.old_mode,
            header.new_mode,
            header.new_file_mode,
            header.deleted_file_mode,
            header.index.as_ref().and_then(|i| i.2),
        ];
        if let Some(m) = modes
            .into_iter()
            .flatten()
            .find(|m| m & 0o170000 != 0o100000)
        {
            // A symbolic link could lead outside the workspace; a submodule is another
            // repository. Neither is written as a file.
            return Err(ApplyError::new(
                ErrorKind::Unsupported,
                "patch",
                &new_name,
                format!("mode {m:o} (a symbolic link or a submodule) is not applied"),
            ));
        }
        let old_full = self.tx.resolve("patch", &old_name)?;
        let new_full = self.tx.resolve("patch", &new_name)?;
        let (action, orig, guessed_new) = match action {
            Action::Create => {
                self.may_create(header, &new_full, &new_name)?;
                (action, Vec::new(), false)
            }
            Action::Rename | Action::Copy => {
                if new_full != old_full {
                    self.may_create(header, &new_full, &new_name)?;
                }
                // As `git apply`: the source as it was, whatever the diff did to it before.
                match self.tx.read_original("patch", &old_name, &old_full)? {
                    Some(orig) => (action, orig, false),
                    None => return Err(not_found(&old_name)),
                }
            }
            _ => {
                match self.tx.read("patch", &old_name, &old_full)? {
                    Some(orig) => (action, orig.into_owned(), false),
                    // `--- a/x` `+++ b/x` with no git header, for a file that is not there:
                    // a creation if its one hunk has no old lines (decided at the hunk).
                    None if action == Action::Modify && header.git_names.is_none() => {
                        (Action::Create, Vec::new(), true)
                    }
                    None => return Err(not_found(&old_name)),
                }
            }
        };
        Ok(OpenFile {
            action,
            old_name,
            new_name,
            old_full,
            new_full,
            image: Image::new(orig),
            hunks: 0,
            guessed_new,
        })
    }

    /// Whether a file patch may create `full`: nothing is there, or will be once the diff's
    /// deletions are done. As `git apply`: a directory may be in the way (the commit checks
    /// that the diff deletes every file in it), and for a git diff a file another file patch
    /// deletes or renames away, before or after this one (checked at the commit too).
    fn may_create(
        &mut self,
        header: &FileHeader,
        full: &Path,
        name: &str,
    ) -> Result<(), ApplyError> {
        let exists = || {
            ApplyError::new(
                ErrorKind::FileExists,
                "patch",
                name,
                "already exists in the workspace",
            )
        };
        if self.tx.is_written(full) {
            return Err(exists());
        }
        match self.tx.presence(full) {
            Presence::Missing | Presence::Directory => Ok(()),
            Presence::File if header.git_names.is_some() => {
                self.replaced.push((full.to_path_buf(), name.to_owned()));
                Ok(())
            }
            Presence::File | Presence::Special(_) => Err(exists()),
        }
    }

    /// Applies one hunk of the open file patch to the file's image.
    pub fn hunk(&mut self, hunk: &Hunk) -> Result<(), ApplyError> {
        self.check_open()?;
        let fuzz = self.options.fuzz;
        let Some(open) = self.open.as_mut() else {
            return Err(ApplyError::new(
                ErrorKind::SessionClosed,
                "patch",
                "",
                "a hunk arrived with no file patch open",
            ));
        };
        open.hunks += 1;
        let r = if open.guessed_new && (open.hunks > 1 || hunk.old_count > 0) {
            // Old lines, or a second hunk: a change to a file that is not there.
            Err(not_found(&open.old_name))
        } else {
            apply_hunk(open, hunk, fuzz)
        };
        self.guard(r)
    }

    /// Completes a file patch. Hunks not yet given with [`Self::hunk`] are applied first; if no
    /// file patch is open (nothing was streamed), it is opened from the header.
    pub fn file_patch(&mut self, patch: &FilePatch) -> Result<(), ApplyError> {
        self.check_open()?;
        if self.open.is_none() {
            self.begin_file(&patch.header)?;
        }
        let done = self.open.as_ref().map_or(0, |o| o.hunks);
        for hunk in patch.hunks.iter().skip(done) {
            self.hunk(hunk)?;
        }
        let open = self.open.take().expect("opened above");
        self.files += 1;
        let r = self.close_file(open, &patch.header);
        self.guard(r)
    }

    fn close_file(&mut self, open: OpenFile, header: &FileHeader) -> Result<(), ApplyError> {
        let new = match &header.binary {
            None => open.image.finish(),
            Some(Binary::Differ) => {
                return Err(ApplyError::new(
                    ErrorKind::BinaryWithoutData,
                    "patch",
                    &open.new_name,
                    "binary files differ, but the patch does not hold the change \
                     (make it with `git diff --binary`)",
                ))
            }
            Some(Binary::Patch { forward, .. }) => binary::apply_block(&open.image.orig, forward)
                .map_err(|e| {
                let kind = match e {
                    BinaryError::SizeMismatch { .. } | BinaryError::SourceMismatch { .. } => {
                        ErrorKind::BinaryMismatch
                    }
                    _ => ErrorKind::BinaryCorrupt,
                };
                ApplyError::new(kind, "patch", &open.new_name, e.to_string())
            })?,
        };
        let mode = header
            .new_mode
            .or(header.new_file_mode)
            .or_else(|| match open.action {
                Action::Rename | Action::Copy => file_mode(&open.old_full),
                _ => None,
            });
        match open.action {
            Action::Delete => {
                if !new.is_empty() {
                    return Err(ApplyError::new(
                        ErrorKind::DeleteNotEmpty,
                        "patch",
                        &open.old_name,
                        "the deletion patch does not remove the whole file",
                    ));
                }
                self.removed.insert(open.old_full.clone());
                self.tx.delete(open.old_full, &open.old_name);
            }
            Action::Create | Action::Modify | Action::Copy => {
                self.tx.write(open.new_full, &open.new_name, new, mode);
            }
            Action::Rename => {
                let same = self.tx.same_entry(&open.new_full, &open.old_full);
                // A source an earlier file patch wrote keeps what it wrote (the second
                // rename of a swap; git writes every creation after every deletion).
                let rewritten = self.tx.is_written(&open.old_full);
                self.tx.write(open.new_full, &open.new_name, new, mode);
                if !same {
                    self.removed.insert(open.old_full.clone());
                    if !rewritten {
                        self.tx.delete(open.old_full, &open.old_name);
                    }
                }
            }
        }
        Ok(())
    }

    /// Writes everything staged, or nothing.
    pub fn commit(self) -> Result<Vec<Change>, ApplyError> {
        if let Some(e) = self.failed.into_inner() {
            return Err(e);
        }
        if self.open.is_some() {
            return Err(ApplyError::new(
                ErrorKind::SessionClosed,
                "patch",
                "",
                "the last file patch was not completed",
            ));
        }
        if self.files == 0 {
            return Err(ApplyError::new(
                ErrorKind::EmptyPatch,
                "patch",
                "",
                "no file patches",
            ));
        }
        if let Some((_, name)) = self
            .replaced
            .iter()
            .find(|(f, _)| !self.removed.contains(f))
        {
            return Err(ApplyError::new(
                ErrorKind::FileExists,
                "patch",
                name,
                "already exists in the workspace",
            ));
        }
        self.tx.commit()
    }
}

/// Applies a whole parsed diff.
pub fn apply_file_patches(
    ws: Workspace,
    options: DiffOptions,
    patches: &[FilePatch],
) -> Result<Vec<Change>, ApplyError> {
    let mut session = DiffSession::new(ws, options);
    for p in patches {
        session.file_patch(p)?;
    }
    session.commit()
}

/// A hunk as the search sees it: its preimage (context and `-` lines) and postimage (context
/// and `+` lines), and how many context lines it has before its first change and after its
/// last (a hunk of context only counts all of them on both sides).
struct Shape {
    pre: Vec<Vec<u8>>,
    post: Vec<Vec<u8>>,
    leading: usize,
    trailing: usize,
}

impl Shape {
    fn new(hunk: &Hunk) -> Shape {
        let mut pre = Vec::new();
        let mut post = Vec::new();
        for l in &hunk.lines {
            match l.kind {
                LineKind::Context => {
                    pre.push(with_newline(l));
                    post.push(with_newline(l));
                }
                LineKind::Remove => pre.push(with_newline(l)),
                LineKind::Add => post.push(with_newline(l)),
            }
        }
        let leading = hunk
            .lines
            .iter()
            .take_while(|l| l.kind == LineKind::Context)
            .count();
        let trailing = if leading == hunk.lines.len() {
            leading
        } else {
            hunk.lines
                .iter()
                .rev()
                .take_while(|l| l.kind == LineKind::Context)
                .count()
        };
        Shape {
            pre,
            post,
            leading,
            trailing,
        }
    }
}

/// `git apply`'s search (`find_pos`, `match_fragment`): the whole preimage, outward from `pos`,
/// at the start only when `begin`, at the end only when `end`; never over a patched line.
fn git_place(image: &Image, pre: &[Vec<u8>], pos: usize, begin: bool, end: bool) -> Option<usize> {
    let m = pre.len();
    let n = image.len();
    let last = n.checked_sub(m)?;
    let fits = |at: usize| {
        pre.first().is_none_or(|f| image.get(at) == f.as_slice())
            && image.matches_at(at, pre)
            && !image.covers_patched(at, m)
    };
    if begin {
        return (fits(0) && (!end || m == n)).then_some(0);
    }
    if end {
        return fits(last).then_some(last);
    }
    outward(pos, 0, last).find(|&at| fits(at))
}

/// GNU patch's `locate_hunk` at one fuzz level. It works on the original file, as GNU patch
/// does (numbered from 1, its first `frozen` lines already written out). At fuzz `f`, with `pc`
/// leading and `sc` trailing context lines and `c` the larger, the first `f + pc - c` and the
/// last `f + sc - c` context lines are left out; a side where that is negative ties the hunk to
/// the file's start (the leading side, for a hunk at line 1 or before) or its end (the
/// trailing side). Otherwise the search goes outward from `guess` (one line after, one before,
/// two after, …), never starting after the last place the kept lines fit, nor before the first
/// unfrozen line; but when `guess` is before that line GNU patch's loop first tries places
/// below it (its `min_offset`), and that is kept: the caller refuses a hunk found there (GNU's
/// "misordered hunks"). A hunk without ranges is tied to neither end. Returns the line where
/// the whole preimage (left-out lines included) starts and how many lines were left out at
/// each side; never line 0, which is GNU's "not found".
fn gnu_locate(
    image: &Image,
    s: &Shape,
    fuzz: usize,
    guess: i64,
    at_line_1: bool,
    stated: bool,
) -> Option<(i64, usize, usize)> {
    let (pc, sc, p) = (s.leading as i64, s.trailing as i64, s.pre.len() as i64);
    let context = pc.max(sc);
    let mut lead = fuzz as i64 + pc - context;
    let mut trail = fuzz as i64 + sc - context;
    if !stated {
        lead = lead.max(0);
        trail = trail.max(0);
    }
    let input = image.lines.len() as i64;
    let frozen = image.frozen;
    if p == 0 {
        // A range of no lines matches where it says (GNU: "null range matches always").
        return (guess != 0).then_some((guess, 0, 0));
    }
    let (lead_u, trail_u) = (lead.max(0) as usize, trail.max(0) as usize);
    if lead_u + trail_u > s.pre.len() {
        return None;
    }
    // Whether the kept lines match with the preimage starting at `line`: lines outside the file
    // read as empty, as GNU's `ifetch` gives them.
    let fits = |line: i64| {
        s.pre[lead_u..s.pre.len() - trail_u]
            .iter()
            .enumerate()
            .all(|(k, want)| {
                let i = line + lead_u as i64 + k as i64;
                let have = if (1..=input).contains(&i) {
                    image.original(i as usize - 1)
                } else {
                    b""
                };
                have == want.as_slice()
            })
    };
    if lead < 0 && at_line_1 {
        // Only at the start (the trailing side then keeps what it can: `trail` >= 0).
        return (frozen <= pc && p - trail <= input && fits(1)).then_some((1, 0, trail_u));
    }
    let lead = lead.max(0);
    if trail < 0 {
        // Only at the end.
        let line = input - p + 1;
        return (line > frozen && line != 0 && fits(line)).then_some((line, lead_u, 0));
    }
    let max_where = input - (p - trail) + 1;
    let min_where = frozen + 1;
    let max_pos = max_where - guess;
    let max_neg = guess - min_where;
    let max_offset = max_pos.max(max_neg);
    let min_offset = if max_pos < 0 {
        guess - max_where
    } else if max_neg < 0 {
        guess - min_where
    } else {
        0
    };
    // Only offsets that put the kept lines inside the file can match (they are never empty but
    // for a last line with no newline and no content, which is not looked for outside it).
    let kept_empty = lead_u + trail_u == s.pre.len();
    let lo = 1 - lead;
    let intervals = [
        (lo - guess, max_where - guess),
        (guess - max_where, guess - lo),
    ];
    let mut offsets: Vec<(i64, i64)> = intervals
        .into_iter()
        .map(|(a, b)| (a.max(min_offset), b.min(max_offset)))
        .filter(|(a, b)| a <= b)
        .collect();
    if kept_empty {
        offsets = vec![(min_offset, max_offset.min(min_offset.saturating_add(1)))];
    }
    offsets.sort_unstable();
    let mut next = i64::MIN;
    for (a, b) in offsets {
        for offset in a.max(next)..=b {
            if offset <= max_pos && fits(guess + offset) {
                let line = guess + offset;
                return (line != 0).then_some((line, lead_u, trail_u));
            }
            if offset <= max_neg && fits(guess - offset) {
                let line = guess - offset;
                return (line != 0).then_some((line, lead_u, trail_u));
            }
        }
        next = next.max(b + 1);
    }
    None
}

fn not_applied(open: &OpenFile, hunk: &Hunk, fuzz: usize, why: &str) -> ApplyError {
    ApplyError::new(
        ErrorKind::LinesNotFound,
        "patch",
        &open.old_name,
        format!(
            "hunk #{} does not apply{}{why}",
            open.hunks,
            if fuzz > 0 {
                format!(" (even with fuzz {fuzz})")
            } else {
                String::new()
            }
        ),
    )
    .with_lines(hunk_text(hunk))
}

fn apply_hunk(open: &mut OpenFile, hunk: &Hunk, fuzz: usize) -> Result<(), ApplyError> {
    let s = Shape::new(hunk);
    if fuzz > 0 {
        return apply_hunk_fuzzy(open, hunk, &s, fuzz);
    }
    let image = &open.image;
    // As git: a hunk at line 0 or 1 must match at the start, one with no trailing context at
    // the end; the search starts at the new-side start. A hunk without ranges is looked for
    // from the line after the last hunk, and tied to neither end.
    let (begin, end, pos) = if hunk.ranges_stated {
        (
            hunk.old_start <= 1,
            s.trailing == 0,
            hunk.new_start.saturating_sub(1) as usize,
        )
    } else {
        (false, false, image.origin)
    };
    let Some(at) = git_place(image, &s.pre, pos, begin, end) else {
        return Err(not_applied(open, hunk, 0, ""));
    };
    open.image.origin = at + s.post.len();
    open.image.replace(at, s.pre.len(), &s.post);
    Ok(())
}

/// With fuzz, as GNU patch's `-F fuzz` places it: fuzz 0, 1, … up to the hunk's longer
/// context side, each with [`gnu_locate`], on the original file.
fn apply_hunk_fuzzy(
    open: &mut OpenFile,
    hunk: &Hunk,
    s: &Shape,
    fuzz: usize,
) -> Result<(), ApplyError> {
    let image = &open.image;
    let stated = hunk.ranges_stated;
    // GNU's `pch_first`: the old start, or the line after it for a hunk with no old lines; its
    // guess is moved by the offset the last hunk was found at. A hunk without ranges: the line
    // after the last hunk.
    let first = hunk.old_start as i64 + i64::from(s.pre.is_empty());
    let guess = if stated {
        first.saturating_add(image.in_offset)
    } else {
        image.origin as i64 - image.out_offset + 1
    };
    let max_fuzz = fuzz.min(s.leading.max(s.trailing));
    let found =
        (0..=max_fuzz).find_map(|f| gnu_locate(image, s, f, guess, stated && first <= 1, stated));
    let Some((line, drop_lead, drop_trail)) = found else {
        return Err(not_applied(open, hunk, fuzz, ""));
    };
    // GNU writes the file out up to the hunk's first change: that must not be before what it
    // has already written ("misordered hunks").
    let frozen = image.frozen;
    let start_line = line - 1; // 0-based
    if frozen > start_line + s.leading as i64 {
        return Err(not_applied(
            open,
            hunk,
            fuzz,
            ": it is found only before the previous hunk's changes",
        ));
    }
    // The kept lines from the first one not yet written out; those before it are context.
    let kept_from = (start_line + drop_lead as i64).max(frozen);
    let skip = ((kept_from - start_line) as usize).min(s.pre.len().min(s.post.len()) - drop_trail);
    let old = &s.pre[skip..s.pre.len() - drop_trail];
    let new = &s.post[skip..s.post.len() - drop_trail];
    let image = &mut open.image;
    let at = ((kept_from + image.out_offset).max(0) as usize).min(image.len());
    let old_len = old.len().min(image.len() - at);
    if stated {
        image.in_offset = line - first;
    }
    image.out_offset += s.post.len() as i64 - s.pre.len() as i64;
    image.frozen = frozen.max(start_line + (s.pre.len() - s.trailing) as i64);
    image.origin = at + new.len();
    image.replace(at, old_len, new);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outward_goes_after_then_before() {
        assert_eq!(
            outward(3, 0, 6).collect::<Vec<_>>(),
            vec![3, 4, 2, 5, 1, 6, 0]
        );
        assert_eq!(outward(0, 0, 2).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(outward(9, 0, 2).collect::<Vec<_>>(), vec![2, 1, 0]);
        assert_eq!(outward(0, 0, 0).collect::<Vec<_>>(), vec![0]);
        // A lower bound: a guess before it searches upward from it.
        assert_eq!(outward(1, 3, 6).collect::<Vec<_>>(), vec![3, 4, 5, 6]);
        assert_eq!(outward(5, 3, 6).collect::<Vec<_>>(), vec![5, 6, 4, 3]);
        assert_eq!(outward(5, 4, 3).count(), 0);
    }

    #[test]
    fn replaced_lines_are_patched() {
        let mut image = Image::new(b"a\nb\nc\nd\n".to_vec());
        image.replace(1, 1, &[b"B\n".to_vec(), b"b2\n".to_vec()]);
        assert_eq!(image.finish(), b"a\nB\nb2\nc\nd\n");
        assert!(!image.covers_patched(0, 1));
        assert!(image.covers_patched(0, 2));
        assert!(image.covers_patched(2, 3));
        assert!(!image.covers_patched(3, 2));
        // A hunk before the last one materialises the image; the flags move with the lines.
        image.replace(0, 1, &[b"A\n".to_vec()]);
        assert_eq!(image.finish(), b"A\nB\nb2\nc\nd\n");
        assert!(image.covers_patched(0, 1));
        assert!(!image.covers_patched(3, 2));
    }

    #[test]
    fn strips_components() {
        assert_eq!(strip_name(b"a/b/c", 1).as_deref(), Some("b/c"));
        assert_eq!(strip_name(b"a//b/c", 2).as_deref(), Some("c"));
        assert_eq!(strip_name(b"c", 0).as_deref(), Some("c"));
        assert_eq!(strip_name(b"c", 1), None);
    }
}
