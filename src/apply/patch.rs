//! Applying apply_patch operations, under the two policies of the spec.
//!
//! A [`PatchSession`] takes the units of a patch one at a time, in the order the parser
//! confirms them: [`PatchSession::begin_update`] and [`PatchSession::chunk`] while an Update is
//! still being written, [`PatchSession::operation`] for each whole operation. Each unit is
//! checked against the workspace at once (the file read, the chunk located, the replacement
//! computed), so the first failure is known while the model is still writing; nothing is
//! written before [`PatchSession::commit`].
//!
//! - [`Policy::Safe`]: all or nothing; a chunk found at more than one place (at the first pass
//!   that finds it at all) with no `@@` context to single one out is an error listing the
//!   candidates; a pure addition goes right after its `@@` context line; a CRLF file keeps CRLF
//!   on the lines written, and context lines keep the file's own text.
//! - [`Policy::Codex`]: Codex's own behaviour: the first match wins; a pure addition goes to
//!   the end of the file; the lines of the matched region are replaced by the patch's text;
//!   the operations before a failing one are written.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use super::error::{ApplyError, ErrorKind, FirstFailure};
use super::seek::{Lines, Pass};
use super::transaction::{Change, Presence, Transaction};
use super::workspace::Workspace;
use crate::apply_patch::units::{ChangeLine, Chunk, FileOperation};

/// How a patch is applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Policy {
    /// All or nothing, ambiguity refused, line endings kept.
    #[default]
    Safe,
    /// Codex's own behaviour, for drop-in use.
    Codex,
}

/// A commit that failed, and what it wrote before failing (only ever non-empty under
/// [`Policy::Codex`], which keeps the operations before the failing one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The first failure (boxed: a failure is rare and the error is large).
    pub error: Box<ApplyError>,
    /// What was written anyway.
    pub written: Vec<Change>,
}

/// One new line of an edited region.
#[derive(Clone, Debug)]
enum Piece {
    /// A line of the file, kept as it is (safe policy: context lines).
    File(usize),
    /// A line of the patch.
    Text(String),
}

#[derive(Clone, Debug)]
struct Edit {
    start: usize,
    old_len: usize,
    new: Vec<Piece>,
}

#[derive(Debug)]
struct OpenUpdate {
    path: String,
    full: PathBuf,
    lines: Lines,
    cursor: usize,
    edits: Vec<Edit>,
    chunks: usize,
}

/// Applies the units of one patch to a workspace, checking each as it arrives.
#[derive(Debug)]
pub struct PatchSession {
    tx: Transaction,
    policy: Policy,
    open: Option<OpenUpdate>,
    failed: FirstFailure,
    operations: usize,
}

impl PatchSession {
    /// A session over `ws`.
    pub fn new(ws: Workspace, policy: Policy) -> PatchSession {
        PatchSession {
            tx: Transaction::new(ws),
            policy,
            open: None,
            failed: FirstFailure::default(),
            operations: 0,
        }
    }

    /// The policy.
    pub fn policy(&self) -> Policy {
        self.policy
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

    /// Starts an Update of `path`: reads the file, so that chunks can be located as they come.
    pub fn begin_update(&mut self, path: &str) -> Result<(), ApplyError> {
        self.check_open()?;
        let r = self.read_for_update(path);
        let open = self.guard(r)?;
        self.open = Some(open);
        Ok(())
    }

    fn read_for_update(&self, path: &str) -> Result<OpenUpdate, ApplyError> {
        let full = self.tx.resolve("update", path)?;
        let data = self.tx.read("update", path, &full)?.ok_or_else(|| {
            ApplyError::new(
                ErrorKind::FileNotFound,
                "update",
                path,
                "no such file to update",
            )
        })?;
        let text = String::from_utf8(data.into_owned()).map_err(|_| {
            ApplyError::new(
                ErrorKind::NotUtf8,
                "update",
                path,
                "the file is not UTF-8 text",
            )
        })?;
        Ok(OpenUpdate {
            path: path.to_owned(),
            full,
            lines: Lines::new(text, self.policy == Policy::Safe),
            cursor: 0,
            edits: Vec::new(),
            chunks: 0,
        })
    }

    /// Locates one chunk of the open Update.
    pub fn chunk(&mut self, chunk: &Chunk) -> Result<(), ApplyError> {
        self.check_open()?;
        let policy = self.policy;
        let Some(open) = self.open.as_mut() else {
            return Err(ApplyError::new(
                ErrorKind::SessionClosed,
                "update",
                "",
                "a chunk arrived with no Update open",
            ));
        };
        let r = match policy {
            Policy::Safe => locate_safe(open, chunk),
            Policy::Codex => locate_codex(open, chunk),
        };
        open.chunks += 1;
        self.guard(r)
    }

    /// Takes one whole operation. If its chunks were already given with [`Self::begin_update`]
    /// and [`Self::chunk`], only the rest are located.
    pub fn operation(&mut self, op: &FileOperation) -> Result<(), ApplyError> {
        self.check_open()?;
        let r = self.operation_inner(op);
        self.open = None;
        self.operations += 1;
        self.guard(r)
    }

    fn operation_inner(&mut self, op: &FileOperation) -> Result<(), ApplyError> {
        match op {
            FileOperation::Add { path, lines } => {
                let full = self.tx.resolve("add", path)?;
                self.writable("add", path, &full)?;
                let mut data = String::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
                for line in lines {
                    data.push_str(line);
                    data.push('\n');
                }
                self.tx.write(full, path, data.into_bytes(), None);
                Ok(())
            }
            FileOperation::Delete { path } => {
                let full = self.tx.resolve("delete", path)?;
                match self.tx.presence(&full) {
                    Presence::File => {
                        self.tx.delete(full, path);
                        Ok(())
                    }
                    // A link (inside the root) to a directory: the link goes, as Codex's
                    // `remove_file` removes it; the directory stays.
                    Presence::Directory if is_link(&full) => {
                        self.tx.delete(full, path);
                        Ok(())
                    }
                    Presence::Directory => Err(ApplyError::new(
                        ErrorKind::IsDirectory,
                        "delete",
                        path,
                        "refusing to delete a directory",
                    )),
                    Presence::Special(found) => Err(special("delete", path, found)),
                    Presence::Missing => Err(ApplyError::new(
                        ErrorKind::FileNotFound,
                        "delete",
                        path,
                        "no such file to delete",
                    )),
                }
            }
            FileOperation::Update {
                path,
                move_to,
                chunks,
            } => {
                let mut open = match self.open.take() {
                    Some(open) if open.path == *path => open,
                    _ => self.read_for_update(path)?,
                };
                for chunk in &chunks[open.chunks.min(chunks.len())..] {
                    match self.policy {
                        Policy::Safe => locate_safe(&mut open, chunk)?,
                        Policy::Codex => locate_codex(&mut open, chunk)?,
                    }
                    open.chunks += 1;
                }
                let data = match self.policy {
                    // An Update with no chunk (a pure move, in strict mode) keeps the bytes.
                    Policy::Safe if open.edits.is_empty() => open.lines.text().to_owned(),
                    Policy::Safe => render_safe(&open),
                    Policy::Codex => render_codex(&open),
                };
                let dest = match move_to {
                    Some(to) => {
                        let full = self.tx.resolve("move", to)?;
                        self.writable("move", to, &full)?;
                        Some((full, to.as_str()))
                    }
                    None => None,
                };
                match dest {
                    Some((full, to))
                        if !self.tx.same_entry(&full, &open.full)
                            || self.policy == Policy::Codex =>
                    {
                        let mode = self.tx.mode(&open.full);
                        self.tx.write(full, to, data.into_bytes(), mode);
                        // Codex writes the destination, then removes the source, even when
                        // they are the same file.
                        self.tx.delete(open.full, path);
                    }
                    _ => self.tx.write(open.full, path, data.into_bytes(), None),
                }
                Ok(())
            }
        }
    }

    /// Refuses to write over a directory, a FIFO, a socket or a device.
    fn writable(&self, operation: &'static str, path: &str, full: &Path) -> Result<(), ApplyError> {
        match self.tx.presence(full) {
            Presence::Directory => Err(ApplyError::new(
                ErrorKind::IsDirectory,
                operation,
                path,
                "a directory is in the way",
            )),
            Presence::Special(found) => Err(special(operation, path, found)),
            Presence::File | Presence::Missing => Ok(()),
        }
    }

    /// Writes what was staged. Under the safe policy, any failure means nothing is written;
    /// under the codex policy, the operations before the first failure are written, in order,
    /// and a commit that fails part-way keeps what it wrote before (listed in
    /// [`Failure::written`]).
    pub fn commit(self) -> Result<Vec<Change>, Failure> {
        let failed = |error: ApplyError, written: Vec<Change>| Failure {
            error: Box::new(error),
            written,
        };
        match (self.failed.into_inner(), self.policy) {
            (Some(error), Policy::Safe) => Err(failed(error, Vec::new())),
            (Some(error), Policy::Codex) => {
                // A failure while writing comes first in Codex's order: it is the one reported.
                let (written, commit_error) = self.tx.commit_in_order();
                Err(failed(commit_error.unwrap_or(error), written))
            }
            (None, _) if self.operations == 0 => Err(failed(
                ApplyError::new(ErrorKind::EmptyPatch, "patch", "", "no files were modified"),
                Vec::new(),
            )),
            (None, Policy::Safe) => self.tx.commit().map_err(|e| failed(e, Vec::new())),
            (None, Policy::Codex) => match self.tx.commit_in_order() {
                (written, None) => Ok(written),
                (written, Some(error)) => Err(failed(error, written)),
            },
        }
    }
}

/// Whether `full` is itself a symbolic link.
fn is_link(full: &Path) -> bool {
    std::fs::symlink_metadata(full).is_ok_and(|m| m.file_type().is_symlink())
}

/// The refusal of a FIFO, socket or device.
fn special(operation: &'static str, path: &str, found: &str) -> ApplyError {
    ApplyError::new(
        ErrorKind::NotRegularFile,
        operation,
        path,
        format!("is a {found}, not a regular file: refused"),
    )
}

/// Applies a whole parsed patch: each operation, then the commit.
pub fn apply_operations(
    ws: Workspace,
    policy: Policy,
    ops: &[FileOperation],
) -> Result<Vec<Change>, Failure> {
    let mut session = PatchSession::new(ws, policy);
    for op in ops {
        if session.operation(op).is_err() {
            break;
        }
    }
    session.commit()
}

/// The chunk's lines as written in the patch, for error messages.
fn chunk_text(chunk: &Chunk) -> Vec<String> {
    let mut out = Vec::with_capacity(chunk.lines.len() + 1);
    if let Some(c) = &chunk.context {
        out.push(format!("@@ {c}"));
    }
    for l in &chunk.lines {
        out.push(match l {
            ChangeLine::Context(t) => format!(" {t}"),
            ChangeLine::Remove(t) => format!("-{t}"),
            ChangeLine::Add(t) => format!("+{t}"),
        });
    }
    out
}

fn not_found(open: &OpenUpdate, chunk: &Chunk, detail: &str) -> ApplyError {
    ApplyError::new(ErrorKind::LinesNotFound, "update", &open.path, detail)
        .with_lines(chunk_text(chunk))
}

/// Codex's search: the first pass that finds the pattern wins, and its first match.
fn seek_first(lines: &mut Lines, pattern: &[&str], from: usize, at_end: bool) -> Option<usize> {
    if pattern.is_empty() {
        return Some(from);
    }
    Pass::ALL
        .iter()
        .find_map(|&pass| lines.find(pass, pattern, from, at_end, 1).first().copied())
}

fn locate_codex(open: &mut OpenUpdate, chunk: &Chunk) -> Result<(), ApplyError> {
    if let Some(ctx) = &chunk.context {
        match seek_first(&mut open.lines, &[ctx.as_str()], open.cursor, false) {
            Some(i) => open.cursor = i + 1,
            None => {
                return Err(ApplyError::new(
                    ErrorKind::ContextNotFound,
                    "update",
                    &open.path,
                    format!("failed to find context '{ctx}'"),
                )
                .with_lines(vec![format!("@@ {ctx}")]))
            }
        }
    }
    let old: Vec<&str> = chunk.old_lines().collect();
    let mut new: Vec<&str> = chunk.new_lines().collect();
    let n = open.lines.len();
    if old.is_empty() {
        let at = if n > 0 && open.lines.line(n - 1).is_empty() {
            n - 1
        } else {
            n
        };
        open.edits.push(edit_of(at, 0, &new));
        return Ok(());
    }
    let mut pattern: &[&str] = &old;
    let mut found = seek_first(&mut open.lines, pattern, open.cursor, chunk.end_of_file);
    if found.is_none() && pattern.last() == Some(&"") {
        pattern = &pattern[..pattern.len() - 1];
        if new.last() == Some(&"") {
            new.pop();
        }
        found = seek_first(&mut open.lines, pattern, open.cursor, chunk.end_of_file);
    }
    match found {
        Some(start) => {
            open.edits.push(edit_of(start, pattern.len(), &new));
            open.cursor = start + pattern.len();
            Ok(())
        }
        None => Err(not_found(open, chunk, "failed to find the expected lines")),
    }
}

fn edit_of(start: usize, old_len: usize, new: &[&str]) -> Edit {
    Edit {
        start,
        old_len,
        new: new.iter().map(|t| Piece::Text((*t).to_owned())).collect(),
    }
}

/// Codex's rendering: regions replaced from the last to the first, lines joined with LF, one
/// final LF.
fn render_codex(open: &OpenUpdate) -> String {
    let mut lines: Vec<&str> = (0..open.lines.len()).map(|i| open.lines.line(i)).collect();
    let mut edits: Vec<&Edit> = open.edits.iter().collect();
    edits.sort_by_key(|e| e.start);
    for e in edits.iter().rev() {
        let start = e.start.min(lines.len());
        let end = (e.start + e.old_len).min(lines.len());
        let new = e.new.iter().map(|p| match p {
            Piece::Text(t) => t.as_str(),
            Piece::File(i) => open.lines.line(*i),
        });
        lines.splice(start..end, new);
    }
    if lines.last() != Some(&"") {
        lines.push("");
    }
    lines.join("\n")
}

/// All the places the first successful pass finds `pattern`.
fn seek_all(lines: &mut Lines, pattern: &[&str], from: usize, at_end: bool) -> Vec<usize> {
    for pass in Pass::ALL {
        let found = lines.find(pass, pattern, from, at_end, usize::MAX);
        if !found.is_empty() {
            return found;
        }
    }
    Vec::new()
}

fn ambiguous(open: &OpenUpdate, chunk: &Chunk, places: &[usize], what: &str) -> ApplyError {
    ApplyError::new(
        ErrorKind::Ambiguous,
        "update",
        &open.path,
        format!("{what} matches at {} places", places.len()),
    )
    .with_lines(chunk_text(chunk))
    .with_candidates(places.iter().map(|p| p + 1).collect())
}

/// The lines a chunk expects in the file (context and removed lines).
fn old_side(lines: &[ChangeLine]) -> Vec<&str> {
    lines
        .iter()
        .filter_map(|l| match l {
            ChangeLine::Context(t) | ChangeLine::Remove(t) => Some(t.as_str()),
            ChangeLine::Add(_) => None,
        })
        .collect()
}

fn locate_safe(open: &mut OpenUpdate, chunk: &Chunk) -> Result<(), ApplyError> {
    let mut ctx_places = Vec::new();
    if let Some(ctx) = &chunk.context {
        ctx_places = seek_all(&mut open.lines, &[ctx.as_str()], open.cursor, false);
        if ctx_places.is_empty() {
            return Err(ApplyError::new(
                ErrorKind::ContextNotFound,
                "update",
                &open.path,
                format!("failed to find context '{ctx}'"),
            )
            .with_lines(chunk_text(chunk)));
        }
    }
    if old_side(&chunk.lines).is_empty() {
        // A pure addition: after its context line, or at the end.
        let at = match ctx_places.as_slice() {
            [] => open.lines.len(),
            [one] => one + 1,
            many => return Err(ambiguous(open, chunk, many, "the @@ context line")),
        };
        let new = chunk.lines.iter().filter_map(|l| piece(l, 0, 0)).collect();
        open.edits.push(Edit {
            start: at,
            old_len: 0,
            new,
        });
        // The context line is a match and the next search starts after it; an addition at
        // the end matched nothing, so the search stays where it was (as Codex's does).
        if !ctx_places.is_empty() {
            open.cursor = at;
        }
        return Ok(());
    }
    let from = ctx_places.first().map_or(open.cursor, |c| c + 1);
    let mut used: Cow<'_, [ChangeLine]> = Cow::Borrowed(&chunk.lines);
    let mut places = seek_all(&mut open.lines, &old_side(&used), from, chunk.end_of_file);
    if places.is_empty() && old_side(&used).last() == Some(&"") {
        // The patch wrote the file's final newline as an empty line: drop it and retry.
        let last_old = used
            .iter()
            .rposition(|l| !matches!(l, ChangeLine::Add(_)))
            .expect("old lines are not empty");
        used.to_mut().remove(last_old);
        let old = old_side(&used);
        places = if old.is_empty() {
            vec![from]
        } else {
            seek_all(&mut open.lines, &old, from, chunk.end_of_file)
        };
    }
    if places.is_empty() {
        return Err(not_found(open, chunk, "failed to find the expected lines"));
    }
    place_safe(open, chunk, &used, &places, &ctx_places)
}

/// The new line a change line stands for: a context line is the file's own line.
fn piece(line: &ChangeLine, start: usize, old_index: usize) -> Option<Piece> {
    match line {
        ChangeLine::Context(_) => Some(Piece::File(start + old_index)),
        ChangeLine::Add(t) => Some(Piece::Text(t.clone())),
        ChangeLine::Remove(_) => None,
    }
}

/// Chooses among the places a chunk matched and records its edit.
fn place_safe(
    open: &mut OpenUpdate,
    chunk: &Chunk,
    lines: &[ChangeLine],
    places: &[usize],
    ctx_places: &[usize],
) -> Result<(), ApplyError> {
    let old_len = old_side(lines).len();
    let start = if chunk.end_of_file || places.len() == 1 {
        places[0]
    } else if ctx_places.is_empty() {
        return Err(ambiguous(open, chunk, places, "the chunk"));
    } else {
        // The first match after each place the context line occurs.
        let mut picks: Vec<usize> = ctx_places
            .iter()
            .filter_map(|&c| places.get(places.partition_point(|&p| p <= c)).copied())
            .collect();
        picks.dedup();
        match picks.as_slice() {
            [one] => *one,
            _ => {
                return Err(ambiguous(
                    open,
                    chunk,
                    &picks,
                    "the chunk (after its @@ context)",
                ))
            }
        }
    };
    if start < open.cursor {
        return Err(not_found(
            open,
            chunk,
            "the lines are only found before the end of the previous chunk",
        ));
    }
    let mut new = Vec::with_capacity(lines.len());
    let mut oi = 0;
    for l in lines {
        new.extend(piece(l, start, oi));
        if !matches!(l, ChangeLine::Add(_)) {
            oi += 1;
        }
    }
    open.edits.push(Edit {
        start,
        old_len,
        new,
    });
    open.cursor = start + old_len;
    Ok(())
}

/// The safe rendering: untouched and context lines keep their own text and ending; lines from
/// the patch get the file's ending (CRLF when every line of the file has it); the file ends
/// with a line ending.
fn render_safe(open: &OpenUpdate) -> String {
    let lines = &open.lines;
    let eol = if lines.uses_crlf() { "\r\n" } else { "\n" };
    let mut out = String::with_capacity(lines.text().len() + 64);
    let push_file = |out: &mut String, i: usize| {
        let ending = lines.ending(i);
        out.push_str(lines.line(i));
        out.push_str(if ending.is_empty() { eol } else { ending });
    };
    let mut edits: Vec<&Edit> = open.edits.iter().collect();
    edits.sort_by_key(|e| e.start);
    let mut pos = 0;
    for e in edits {
        for i in pos..e.start.max(pos) {
            push_file(&mut out, i);
        }
        for p in &e.new {
            match p {
                Piece::File(i) => push_file(&mut out, *i),
                Piece::Text(t) => {
                    out.push_str(t);
                    out.push_str(eol);
                }
            }
        }
        pos = pos.max(e.start + e.old_len);
    }
    for i in pos..lines.len() {
        push_file(&mut out, i);
    }
    out
}
