//! The workspace: a root directory, and the one place where a path from a patch or a tool call
//! becomes a path on disk.
//!
//! A path is accepted only if it is relative, does not climb out of the root with `..`, and
//! does not reach outside the root through a symbolic link, checked on the real filesystem.
//!
//! A workspace can also hold *protected* paths: files of the runtime itself (the agent loop's
//! transcript) that happen to lie inside the root. A path that resolves to one of them, or to
//! anything under a protected directory, is refused (`protected_path`), however it is spelled:
//! the comparison is made after resolution, on the canonical path (so `x/../run.jsonl` and a
//! symbolic link inside the root count) and on the file's identity (device and inode, so a
//! hard link counts too).
//!
//! It is also the one place that opens what a path names: [`open_file`] and [`open_dir`]
//! refuse anything but a regular file (or a directory) before opening it, because opening a
//! FIFO for reading blocks until a writer comes, and reading a device may never end. The
//! application engine and the agent's `read_file` and `list_dir` open through them.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

/// Why a path was refused.
#[derive(Debug)]
pub enum PathError {
    /// Empty, or not valid UTF-8 where the platform needs it, or holding a NUL byte.
    Invalid(String),
    /// A file was expected, but the path is written as a directory's: it ends with `/`, or
    /// its last component is `.` or `..`.
    DirectoryName(String),
    /// An absolute path (or one with a drive or root prefix).
    Absolute(String),
    /// `..` would leave the root.
    Escapes(String),
    /// A symbolic link on the way leads outside the root.
    SymlinkOutside(String),
    /// The filesystem could not be read while checking.
    Io(String, io::Error),
    /// The path is one of the workspace's protected paths.
    Protected(String),
}

impl PathError {
    /// A stable name for the refusal.
    pub fn kind(&self) -> &'static str {
        match self {
            PathError::Invalid(_) | PathError::DirectoryName(_) => "invalid_path",
            PathError::Absolute(_) => "absolute_path",
            PathError::Escapes(_) => "path_escapes_root",
            PathError::SymlinkOutside(_) => "symlink_outside_root",
            PathError::Io(..) => "io_error",
            PathError::Protected(_) => "protected_path",
        }
    }
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathError::Invalid(p) => write!(f, "invalid path {p:?}"),
            PathError::DirectoryName(p) => {
                write!(f, "path {p:?} names a directory, not a file")
            }
            PathError::Absolute(p) => write!(f, "absolute path {p:?} refused"),
            PathError::Escapes(p) => write!(f, "path {p:?} climbs out of the workspace"),
            PathError::SymlinkOutside(p) => {
                write!(
                    f,
                    "path {p:?} leads outside the workspace through a symbolic link"
                )
            }
            PathError::Io(p, e) => write!(f, "cannot check path {p:?}: {e}"),
            PathError::Protected(p) => write!(
                f,
                "path {p:?} is one of the runtime's own files (such as the transcript), which no \
                 tool may read or change"
            ),
        }
    }
}

impl std::error::Error for PathError {}

/// A root directory that confines every path.
#[derive(Clone, Debug)]
pub struct Workspace {
    root: PathBuf,
    /// Paths no resolution may reach.
    protected: Vec<Protected>,
}

/// One protected path: where it is, and which file it is when it exists.
#[derive(Clone, Debug)]
struct Protected {
    /// Canonical (its parent canonicalised when it does not exist yet).
    path: PathBuf,
    /// Device and inode, when it existed as it was protected.
    file: Option<(u64, u64)>,
}

/// The device and inode of what `path` names, symbolic links followed.
fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// `path` with symbolic links resolved: canonical when it exists, else its parent canonical
/// and its name appended, else as given.
fn canonical(path: &Path) -> PathBuf {
    if let Ok(real) = path.canonicalize() {
        return real;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => parent
            .canonicalize()
            .map(|p| p.join(name))
            .unwrap_or_else(|_| path.to_path_buf()),
        _ => path.to_path_buf(),
    }
}

impl Workspace {
    /// A workspace rooted at `root`, which must be a directory (an error of kind
    /// [`io::ErrorKind::NotADirectory`] otherwise).
    pub fn new(root: impl AsRef<Path>) -> io::Result<Workspace> {
        let root = root.as_ref().canonicalize()?;
        if !fs::metadata(&root)?.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                "not a directory",
            ));
        }
        Ok(Workspace {
            root,
            protected: Vec::new(),
        })
    }

    /// Protects `path` (absolute, or relative to the current directory; a file or a
    /// directory, existing or not): no later [`resolve`](Self::resolve) reaches it or anything
    /// under it. Fails only when the path cannot be made absolute.
    pub fn protect(&mut self, path: impl AsRef<Path>) -> io::Result<()> {
        let path = std::path::absolute(path.as_ref())?;
        self.protected.push(Protected {
            file: identity(&path),
            path: canonical(&path),
        });
        Ok(())
    }

    /// The protected paths, canonical.
    pub fn protected(&self) -> impl Iterator<Item = &Path> {
        self.protected.iter().map(|p| p.path.as_path())
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Turns a path as written in a patch or a tool call into a path under the root, or
    /// refuses it.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, PathError> {
        if path.is_empty() || path.contains('\0') {
            return Err(PathError::Invalid(path.to_owned()));
        }
        let mut relative = PathBuf::new();
        for component in Path::new(path).components() {
            match component {
                Component::Prefix(_) | Component::RootDir => {
                    return Err(PathError::Absolute(path.to_owned()))
                }
                Component::CurDir => {}
                Component::ParentDir => {
                    if !relative.pop() {
                        return Err(PathError::Escapes(path.to_owned()));
                    }
                }
                Component::Normal(part) => relative.push(part),
            }
        }
        if relative.as_os_str().is_empty() {
            return Err(PathError::Invalid(path.to_owned()));
        }
        let full = self.root.join(&relative);
        self.check_links(path, &relative)?;
        self.check_protected(path, &full)?;
        Ok(full)
    }

    /// Refuses a resolved path that is, or lies under, a protected path.
    fn check_protected(&self, original: &str, full: &Path) -> Result<(), PathError> {
        if self.protected.is_empty() {
            return Ok(());
        }
        let target = canonical(full);
        let file = identity(full);
        let hit = self
            .protected
            .iter()
            .any(|p| target.starts_with(&p.path) || (file.is_some() && file == p.file));
        if hit {
            return Err(PathError::Protected(original.to_owned()));
        }
        Ok(())
    }

    /// [`Self::resolve`] for a path that must name a file (what a patch adds, updates, deletes
    /// or moves to): also refuses one written as a directory's, `a.txt/`, `d/.` or `d/x/..`,
    /// which [`Path::components`] would otherwise quietly turn into `a.txt`, `d` or `d`.
    pub fn resolve_file(&self, path: &str) -> Result<PathBuf, PathError> {
        let last = path.rsplit('/').next().unwrap_or(path);
        if path.ends_with('/') || last == "." || last == ".." {
            return Err(PathError::DirectoryName(path.to_owned()));
        }
        self.resolve(path)
    }

    /// Walks the existing part of `relative` and checks that each prefix, symbolic links
    /// followed, stays under the root.
    fn check_links(&self, original: &str, relative: &Path) -> Result<(), PathError> {
        let mut prefix = self.root.clone();
        for part in relative.components() {
            prefix.push(part);
            match std::fs::symlink_metadata(&prefix) {
                Ok(meta) if meta.file_type().is_symlink() => match prefix.canonicalize() {
                    Ok(target) if target.starts_with(&self.root) => {}
                    // A dangling link or one that leads out: writing through it would land
                    // wherever it points.
                    _ => return Err(PathError::SymlinkOutside(original.to_owned())),
                },
                Ok(_) => {}
                // Nothing is under a file (a patch may delete it and make a directory there),
                // so there is no link further on to follow.
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                    ) =>
                {
                    return Ok(())
                }
                Err(e) => return Err(PathError::Io(original.to_owned(), e)),
            }
        }
        Ok(())
    }
}

/// What a path names (symbolic links followed), as far as opening it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file.
    Regular,
    /// A directory.
    Directory,
    /// Anything else: a FIFO, a socket, a device (its name, for messages).
    Special(&'static str),
}

impl FileKind {
    /// The kind of `file_type`.
    pub fn of(file_type: fs::FileType) -> FileKind {
        #[cfg(unix)]
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_file() {
            return FileKind::Regular;
        }
        if file_type.is_dir() {
            return FileKind::Directory;
        }
        #[cfg(unix)]
        {
            if file_type.is_fifo() {
                return FileKind::Special("FIFO");
            }
            if file_type.is_socket() {
                return FileKind::Special("socket");
            }
            if file_type.is_block_device() {
                return FileKind::Special("block device");
            }
            if file_type.is_char_device() {
                return FileKind::Special("character device");
            }
        }
        FileKind::Special("special file")
    }

    /// The kind of what `full` names (links followed).
    pub fn at(full: &Path) -> io::Result<FileKind> {
        fs::metadata(full).map(|m| FileKind::of(m.file_type()))
    }
}

/// Why [`open_file`] or [`open_dir`] did not open a path.
#[derive(Debug)]
pub enum OpenError {
    /// Nothing is there.
    NotFound,
    /// A directory where a file was expected.
    IsDirectory,
    /// A regular file where a directory was expected.
    NotDirectory,
    /// A FIFO, socket or device: never opened.
    Special {
        /// What it is (`FIFO`, `socket`, …).
        found: &'static str,
        /// What was expected (`regular file` or `directory`).
        expected: &'static str,
    },
    /// Checking or opening failed otherwise.
    Io(io::Error),
}

impl OpenError {
    /// A stable name: `file_not_found`, `is_directory`, `not_a_directory`,
    /// `not_regular_file` or `io_error`.
    pub fn kind(&self) -> &'static str {
        match self {
            OpenError::NotFound => "file_not_found",
            OpenError::IsDirectory => "is_directory",
            OpenError::NotDirectory => "not_a_directory",
            OpenError::Special { .. } => "not_regular_file",
            OpenError::Io(_) => "io_error",
        }
    }

    fn from_io(e: io::Error) -> OpenError {
        match e.kind() {
            io::ErrorKind::NotFound => OpenError::NotFound,
            _ => OpenError::Io(e),
        }
    }

    /// The refusal for `found` where `expected` was wanted, `None` when they agree.
    fn kind_mismatch(found: FileKind, expected: FileKind) -> Option<OpenError> {
        let expected_name = match expected {
            FileKind::Directory => "directory",
            _ => "regular file",
        };
        match (found, expected) {
            (f, e) if f == e => None,
            (FileKind::Special(found), _) => Some(OpenError::Special {
                found,
                expected: expected_name,
            }),
            (FileKind::Directory, _) => Some(OpenError::IsDirectory),
            _ => Some(OpenError::NotDirectory),
        }
    }
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenError::NotFound => write!(f, "no such file or directory"),
            OpenError::IsDirectory => write!(f, "is a directory"),
            OpenError::NotDirectory => write!(f, "is not a directory"),
            OpenError::Special { found, expected } => {
                write!(f, "is a {found}, not a {expected}: refused")
            }
            OpenError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for OpenError {}

/// Opens `full` for reading if it is a regular file, and returns it with its metadata. The kind
/// is checked before opening (opening a FIFO would block) and again on the open file (the path
/// may have been replaced in between). A FIFO put in place between the two checks can still
/// make the open wait: std offers no portable non-blocking open without `libc`.
pub fn open_file(full: &Path) -> Result<(fs::File, fs::Metadata), OpenError> {
    let found = FileKind::at(full).map_err(OpenError::from_io)?;
    if let Some(e) = OpenError::kind_mismatch(found, FileKind::Regular) {
        return Err(e);
    }
    let file = fs::File::open(full).map_err(OpenError::from_io)?;
    let meta = file.metadata().map_err(OpenError::Io)?;
    match OpenError::kind_mismatch(FileKind::of(meta.file_type()), FileKind::Regular) {
        Some(e) => Err(e),
        None => Ok((file, meta)),
    }
}

/// Lists `full` if it is a directory.
pub fn open_dir(full: &Path) -> Result<fs::ReadDir, OpenError> {
    let found = FileKind::at(full).map_err(OpenError::from_io)?;
    if let Some(e) = OpenError::kind_mismatch(found, FileKind::Directory) {
        return Err(e);
    }
    fs::read_dir(full).map_err(OpenError::from_io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confines_paths() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        assert_eq!(ws.resolve("a/b.txt").unwrap(), ws.root().join("a/b.txt"));
        assert_eq!(ws.resolve("a/../b.txt").unwrap(), ws.root().join("b.txt"));
        assert_eq!(ws.resolve("./x").unwrap(), ws.root().join("x"));
        assert_eq!(
            ws.resolve("/etc/passwd").unwrap_err().kind(),
            "absolute_path"
        );
        assert_eq!(ws.resolve("../x").unwrap_err().kind(), "path_escapes_root");
        assert_eq!(
            ws.resolve("a/../../x").unwrap_err().kind(),
            "path_escapes_root"
        );
        assert_eq!(ws.resolve("").unwrap_err().kind(), "invalid_path");
        assert_eq!(ws.resolve(".").unwrap_err().kind(), "invalid_path");
    }

    #[test]
    fn protected_paths_are_refused_however_they_are_spelled() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("x")).unwrap();
        std::fs::write(dir.path().join("run.jsonl"), "{}\n").unwrap();
        std::fs::create_dir(dir.path().join("store")).unwrap();
        std::os::unix::fs::symlink("run.jsonl", dir.path().join("link")).unwrap();
        std::fs::hard_link(dir.path().join("run.jsonl"), dir.path().join("hard")).unwrap();
        let mut ws = Workspace::new(dir.path()).unwrap();
        ws.protect(dir.path().join("run.jsonl")).unwrap();
        ws.protect(dir.path().join("store")).unwrap();
        ws.protect(dir.path().join("journal")).unwrap();
        for path in [
            "run.jsonl",
            "./run.jsonl",
            "x/../run.jsonl",
            "link",
            "hard",
            "store/blob",
            "journal",
        ] {
            let e = ws.resolve(path).unwrap_err();
            assert_eq!(e.kind(), "protected_path", "{path}");
            assert!(e.to_string().contains("runtime's own files"), "{e}");
        }
        for path in ["x/run.jsonl", "run.jsonl.bak", "storex", "x"] {
            assert!(ws.resolve(path).is_ok(), "{path}");
        }
        assert_eq!(ws.protected().count(), 3);
    }

    #[test]
    fn refuses_symlinks_that_lead_out() {
        let outside = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("inner")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("inner"), dir.path().join("in")).unwrap();
        std::os::unix::fs::symlink("/nonexistent/target", dir.path().join("dangling")).unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        assert_eq!(
            ws.resolve("out/x").unwrap_err().kind(),
            "symlink_outside_root"
        );
        assert_eq!(
            ws.resolve("out").unwrap_err().kind(),
            "symlink_outside_root"
        );
        assert_eq!(
            ws.resolve("dangling").unwrap_err().kind(),
            "symlink_outside_root"
        );
        assert!(ws.resolve("in/x").is_ok());
    }

    #[test]
    fn file_paths_written_as_directories_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        for path in ["a.txt/", "d/", "d/.", "d/x/..", ".."] {
            let e = ws.resolve_file(path).unwrap_err();
            assert!(matches!(e, PathError::DirectoryName(_)), "{path}: {e}");
            assert_eq!(e.kind(), "invalid_path");
        }
        assert_eq!(
            ws.resolve_file("d/a.txt").unwrap(),
            ws.root().join("d/a.txt")
        );
        assert_eq!(
            ws.resolve_file("d/./a..b").unwrap(),
            ws.root().join("d/a..b")
        );
        // A directory's name is still fine where a directory is meant.
        assert_eq!(ws.resolve("d/").unwrap(), ws.root().join("d"));
    }

    #[test]
    fn only_regular_files_and_directories_are_opened() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("p");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        std::fs::write(dir.path().join("f"), "x").unwrap();
        let e = open_file(&fifo).unwrap_err();
        assert_eq!(e.kind(), "not_regular_file");
        assert_eq!(e.to_string(), "is a FIFO, not a regular file: refused");
        let e = open_dir(&fifo).unwrap_err();
        assert_eq!(e.to_string(), "is a FIFO, not a directory: refused");
        assert_eq!(open_file(dir.path()).unwrap_err().kind(), "is_directory");
        assert_eq!(
            open_dir(&dir.path().join("f")).unwrap_err().kind(),
            "not_a_directory"
        );
        assert_eq!(
            open_file(&dir.path().join("none")).unwrap_err().kind(),
            "file_not_found"
        );
        let (_, meta) = open_file(&dir.path().join("f")).unwrap();
        assert_eq!(meta.len(), 1);
        assert_eq!(open_dir(dir.path()).unwrap().count(), 2);
        assert_eq!(
            FileKind::at(Path::new("/dev/null")).unwrap(),
            FileKind::Special("character device")
        );
    }

    #[test]
    fn a_root_must_be_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let e = Workspace::new(&file).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotADirectory);
        assert_eq!(e.to_string(), "not a directory");
    }
}
