//! Applying unified diffs as `git apply` does.
//!
//! Each hunk must match exactly, context and removed lines, line endings included. The search
//! starts at the line the hunk states (its new-side start, in the file as the earlier hunks left
//! it) and goes outward, one line after, one line before, two after, and so on, through the
//! whole file. A hunk that starts at line 0 or 1 must match at the start of the file, and one
//! with no trailing context at its end. With a fuzz factor N (as GNU patch), a hunk that does
//! not match may lose up to N leading and N trailing context lines, and is then placed wherever
//! the search finds it.
//!
//! Files are created, deleted, renamed, copied and given modes as their headers say; git's
//! binary patches are applied in both forms. A [`DiffSession`] takes the units one at a time:
//! [`DiffSession::begin_file`] once a file patch's header is known, [`DiffSession::hunk`] for
//! each hunk as it is confirmed (applied at once to the file's image, so a hunk that does not
//! apply is reported while the diff is still being written), [`DiffSession::file_patch`] when the
//! file patch is complete, then [`DiffSession::commit`]. All or nothing.

use std::path::PathBuf;

use super::binary::{self, BinaryError};
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
    start: usize,
    end: usize,
}

/// The file's lines as the hunks so far left them: the lines before the last place a hunk
/// touched are in `out` (spans of the original or of `arena`), the rest are the original's
/// from `cursor` on, so that hunks applied in order cost no more than copying spans.
#[derive(Debug, Default)]
struct Image {
    orig: Vec<u8>,
    lines: Vec<(usize, usize)>,
    arena: Vec<u8>,
    out: Vec<Span>,
    cursor: usize,
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

    fn take_original(&mut self, count: usize) {
        let end = self.cursor + count;
        self.out.extend(
            self.lines[self.cursor..end]
                .iter()
                .map(|&(start, end)| Span {
                    owned: false,
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
    Ok((action, old, new))
}

/// The hunk as written, for error messages.
fn hunk_text(h: &Hunk) -> Vec<String> {
    let mut out = vec![format!(
        "@@ -{},{} +{},{} @@",
        h.old_start, h.old_count, h.new_start, h.new_count
    )];
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

/// The sequence of places to try, outward from `pos`, within `0..=last`.
fn outward(pos: usize, last: usize) -> impl Iterator<Item = usize> {
    let pos = pos.min(last);
    (0..=pos.max(last - pos)).flat_map(move |d| {
        let after = (pos + d <= last).then_some(pos + d);
        let before = (d > 0 && d <= pos).then(|| pos - d);
        after.into_iter().chain(before)
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

    fn open_file(&self, header: &FileHeader) -> Result<OpenFile, ApplyError> {
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
        let exists = |full: &PathBuf, name: &str| -> Result<(), ApplyError> {
            if self.tx.presence(full) != Presence::Missing {
                return Err(ApplyError::new(
                    ErrorKind::FileExists,
                    "patch",
                    name,
                    "already exists in the workspace",
                ));
            }
            Ok(())
        };
        let (action, orig, guessed_new) = match action {
            Action::Create => {
                exists(&new_full, &new_name)?;
                (action, Vec::new(), false)
            }
            _ => {
                if matches!(action, Action::Rename | Action::Copy) && new_full != old_full {
                    exists(&new_full, &new_name)?;
                }
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
                Action::Rename | Action::Copy => self.tx.mode(&open.old_full),
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
                self.tx.delete(open.old_full, &open.old_name);
            }
            Action::Create | Action::Modify | Action::Copy => {
                self.tx.write(open.new_full, &open.new_name, new, mode);
            }
            Action::Rename => {
                let same = self.tx.same_entry(&open.new_full, &open.old_full);
                self.tx.write(open.new_full, &open.new_name, new, mode);
                if !same {
                    self.tx.delete(open.old_full, &open.old_name);
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

fn apply_hunk(open: &mut OpenFile, hunk: &Hunk, fuzz: usize) -> Result<(), ApplyError> {
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
    let match_beginning = hunk.old_start <= 1;
    let match_end = trailing == 0;
    let pos = hunk.new_start.saturating_sub(1) as usize;
    let image = &open.image;
    let find = |pre: &[Vec<u8>], pos: usize, begin: bool, end: bool| -> Option<usize> {
        let m = pre.len();
        let n = image.len();
        if m > n {
            return None;
        }
        let last = n - m;
        if begin {
            return (image.matches_at(0, pre) && (!end || m == n)).then_some(0);
        }
        if end {
            return image.matches_at(last, pre).then_some(last);
        }
        let first = pre.first();
        outward(pos, last).find(|&at| {
            first.is_none_or(|f| image.get(at) == f.as_slice()) && image.matches_at(at, pre)
        })
    };
    if let Some(at) = find(&pre, pos, match_beginning, match_end) {
        open.image.replace(at, pre.len(), &post);
        return Ok(());
    }
    // With fuzz, first drop the anchoring (a model's hunk may lack trailing context in the
    // middle of a file), then up to `fuzz` outer context lines on each side.
    let tries = if fuzz == 0 { 0 } else { fuzz + 1 };
    for f in 0..tries {
        let lead = f.min(leading);
        let trail = f.min(trailing);
        if (f > 0 && lead + trail == 0) || lead + trail > pre.len() {
            continue;
        }
        if f == 0 && !(match_beginning || match_end) {
            continue;
        }
        let p = &pre[lead..pre.len() - trail];
        if let Some(at) = find(p, pos + lead, false, false) {
            let q = &post[lead..post.len() - trail];
            open.image.replace(at, p.len(), q);
            return Ok(());
        }
    }
    Err(ApplyError::new(
        ErrorKind::LinesNotFound,
        "patch",
        &open.old_name,
        format!(
            "hunk #{} does not apply{}",
            open.hunks,
            if fuzz > 0 {
                format!(" (even with fuzz {fuzz})")
            } else {
                String::new()
            }
        ),
    )
    .with_lines(hunk_text(hunk)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outward_goes_after_then_before() {
        assert_eq!(outward(3, 6).collect::<Vec<_>>(), vec![3, 4, 2, 5, 1, 6, 0]);
        assert_eq!(outward(0, 2).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(outward(9, 2).collect::<Vec<_>>(), vec![2, 1, 0]);
        assert_eq!(outward(0, 0).collect::<Vec<_>>(), vec![0]);
    }

    #[test]
    fn strips_components() {
        assert_eq!(strip_name(b"a/b/c", 1).as_deref(), Some("b/c"));
        assert_eq!(strip_name(b"a//b/c", 2).as_deref(), Some("c"));
        assert_eq!(strip_name(b"c", 0).as_deref(), Some("c"));
        assert_eq!(strip_name(b"c", 1), None);
    }
}
