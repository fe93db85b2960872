//! The workspace: a root directory, and the one place where a path from a patch or a tool call
//! becomes a path on disk.
//!
//! A path is accepted only if it is relative, does not climb out of the root with `..`, and
//! does not reach outside the root through a symbolic link, checked on the real filesystem.

use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};

/// Why a path was refused.
#[derive(Debug)]
pub enum PathError {
    /// Empty, or not valid UTF-8 where the platform needs it, or holding a NUL byte.
    Invalid(String),
    /// An absolute path (or one with a drive or root prefix).
    Absolute(String),
    /// `..` would leave the root.
    Escapes(String),
    /// A symbolic link on the way leads outside the root.
    SymlinkOutside(String),
    /// The filesystem could not be read while checking.
    Io(String, io::Error),
}

impl PathError {
    /// A stable name for the refusal.
    pub fn kind(&self) -> &'static str {
        match self {
            PathError::Invalid(_) => "invalid_path",
            PathError::Absolute(_) => "absolute_path",
            PathError::Escapes(_) => "path_escapes_root",
            PathError::SymlinkOutside(_) => "symlink_outside_root",
            PathError::Io(..) => "io_error",
        }
    }
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathError::Invalid(p) => write!(f, "invalid path {p:?}"),
            PathError::Absolute(p) => write!(f, "absolute path {p:?} refused"),
            PathError::Escapes(p) => write!(f, "path {p:?} climbs out of the workspace"),
            PathError::SymlinkOutside(p) => {
                write!(
                    f,
                    "path {p:?} leads outside the workspace through a symbolic link"
                )
            }
            PathError::Io(p, e) => write!(f, "cannot check path {p:?}: {e}"),
        }
    }
}

impl std::error::Error for PathError {}

/// A root directory that confines every path.
#[derive(Clone, Debug)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// A workspace rooted at `root`, which must exist.
    pub fn new(root: impl AsRef<Path>) -> io::Result<Workspace> {
        Ok(Workspace {
            root: root.as_ref().canonicalize()?,
        })
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
        Ok(full)
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
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(PathError::Io(original.to_owned(), e)),
            }
        }
        Ok(())
    }
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
}
