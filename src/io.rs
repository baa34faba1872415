//! How the files a model refers to are read: skeletons (`.skp`), their `.cfg`, DPM
//! `.framegroups`, Sims skills' `.cfp`. An engine with pak files serves them through its own
//! [`FileSystem`]; the default reads the OS filesystem inside one directory and nowhere else.

#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};

/// Bytes a [`FileSystem`] hands out; released when dropped.
pub type FileData<'a> = Box<dyn AsRef<[u8]> + 'a>;

/// Reads whole files by path. Paths are relative, `/`-separated, and never contain `..`:
/// ossa checks them before asking.
pub trait FileSystem {
    /// The whole file; [`Error::NotFound`](crate::Error::NotFound) when it does not exist.
    fn read(&self, path: &str) -> Result<FileData<'_>>;

    /// The whole file if it holds at most `max_bytes` bytes, else [`Error::Limit`] naming it, its
    /// size and the limit. ossa reads sidecars through this, with what is left of the load's
    /// memory limit. The provided version reads the file and then checks its length; an
    /// implementation that can tell a file's size first should refuse it before reading it.
    fn read_at_most(&self, path: &str, max_bytes: u64) -> Result<FileData<'_>> {
        let data = self.read(path)?;
        within_limit(path, (*data).as_ref().len() as u64, max_bytes)?;
        Ok(data)
    }
}

/// `Limit` when a file of `size` bytes is more than `max_bytes`.
pub(crate) fn within_limit(path: &str, size: u64, max_bytes: u64) -> Result<()> {
    if size > max_bytes {
        Err(Error::limit(format!(
            "{path} holds {size} bytes, more than the {max_bytes} bytes the memory limit leaves for it"
        )))
    } else {
        Ok(())
    }
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

    /// Opens `path` under the root: the one place this filesystem opens files.
    fn open(&self, path: &str) -> Result<(std::fs::File, PathBuf)> {
        let path = contained(path)?;
        let full = self.root.join(path);
        let file = std::fs::File::open(&full).map_err(|e| os_error(&full, e))?;
        Ok((file, full))
    }
}

impl FileSystem for DirFileSystem {
    fn read(&self, path: &str) -> Result<FileData<'_>> {
        self.read_at_most(path, u64::MAX)
    }

    fn read_at_most(&self, path: &str, max_bytes: u64) -> Result<FileData<'_>> {
        let (file, full) = self.open(path)?;
        Ok(Box::new(read_open_file(file, &full, max_bytes)?))
    }
}

/// Reads a file of the OS filesystem, telling a missing file from a failing one.
pub(crate) fn read_os_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| os_error(path, e))
}

/// An opened OS file's bytes, refused with `Limit` before reading when its size is over
/// `max_bytes`; a file that grows while it is read stops at the limit and is refused too.
pub(crate) fn read_open_file(file: std::fs::File, path: &Path, max_bytes: u64) -> Result<Vec<u8>> {
    let size = file.metadata().map_err(|e| os_error(path, e))?.len();
    let name = path.to_string_lossy();
    within_limit(&name, size, max_bytes)?;
    let mut data = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut data)
        .map_err(|e| os_error(path, e))?;
    within_limit(&name, data.len() as u64, max_bytes)?;
    Ok(data)
}

/// A failed read of an OS file: `NotFound` for a missing one, else `Io`.
fn os_error(path: &Path, e: std::io::Error) -> Error {
    let what = format!("{}: cannot read: {e}", path.display());
    if e.kind() == std::io::ErrorKind::NotFound {
        Error::not_found(what)
    } else {
        Error::io(what, Some(e))
    }
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
