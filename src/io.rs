//! How the files a model refers to are read: skeletons (`.skp`), their `.cfg`, DPM
//! `.framegroups`, Sims skills' `.cfp`. An engine with pak files serves them through its own
//! [`FileSystem`]; the default reads the OS filesystem inside one directory and nowhere else.

#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};

/// Bytes a [`FileSystem`] hands out; released when dropped.
pub type FileData<'a> = Box<dyn AsRef<[u8]> + 'a>;

/// Reads whole files by path. Paths are relative, `/`-separated, and never contain `..`:
/// ossa checks them before asking.
pub trait FileSystem {
    /// The whole file; [`Error::NotFound`](crate::Error::NotFound) when it does not exist.
    fn read(&self, path: &str) -> Result<FileData<'_>>;
}

/// Whether `path` stays inside the directory it is taken relative to: not absolute, no `..`,
/// no drive or root prefix, no backslash separators (which some engines treat as `/`), no NUL.
pub fn is_contained(path: &str) -> bool {
    !path.is_empty()
        && !path.contains('\\')
        && !path.contains('\0')
        && !path.contains(':')
        && Path::new(path)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// Checks a sidecar path before it is read.
pub(crate) fn contained(path: &str) -> Result<&str> {
    if is_contained(path) {
        Ok(path)
    } else {
        Err(Error::invalid_argument(format!(
            "{path:?} points outside the files the model may read (absolute paths, drive letters, backslashes and `..` are not followed)"
        )))
    }
}

/// The OS filesystem, restricted to one directory.
#[derive(Clone, Debug)]
pub struct DirFileSystem {
    root: PathBuf,
}

impl DirFileSystem {
    pub fn new(root: impl Into<PathBuf>) -> DirFileSystem {
        DirFileSystem { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
}

impl FileSystem for DirFileSystem {
    fn read(&self, path: &str) -> Result<FileData<'_>> {
        let path = contained(path)?;
        let full = self.root.join(path);
        Ok(Box::new(read_os_file(&full)?))
    }
}

/// Reads a file of the OS filesystem, telling a missing file from a failing one.
pub(crate) fn read_os_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| {
        let what = format!("{}: cannot read: {e}", path.display());
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::not_found(what)
        } else {
            Error::io(what, Some(e))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_inside_are_contained() {
        for ok in [
            "tris.skp",
            "models/players/monada/tris.skp",
            "./a/b.cfg",
            "a..b.skp",
        ] {
            assert!(is_contained(ok), "{ok}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "../tris.skp",
            "a/../../b",
            "a/..",
            "C:/x.skp",
            "a\\..\\b",
            "a\0b",
        ] {
            assert!(!is_contained(bad), "{bad:?}");
        }
    }
}
