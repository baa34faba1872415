//! How the files a model refers to are read: skeletons (`.skp`), their `.cfg`, DPM
//! `.framegroups`, Sims skills' `.cfp`. An engine with pak files serves them through its own
//! [`FileSystem`]; the default reads the OS filesystem inside one directory and nowhere else.

#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

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

    /// At least the first `len` bytes of the file (all of it when it is shorter), for a reader
    /// that needs no more of it (a glTF buffer is its `byteLength`); the rest may be left
    /// unread. Past `max_bytes` read it is [`Error::Limit`], as for
    /// [`FileSystem::read_at_most`]. The provided version is `read_at_most`, the whole file;
    /// an implementation that can read part of a file should.
    fn read_prefix(&self, path: &str, len: u64, max_bytes: u64) -> Result<FileData<'_>> {
        let _ = len;
        self.read_at_most(path, max_bytes)
    }

    /// The path of a file named as `path` is, ignoring ASCII case in every component, as
    /// Windows (where The Sims ran, and whose files name each other so) would open it; None
    /// when there is none, or the filesystem cannot tell (the provided version). ossa asks only
    /// after `path` itself was not found, for Sims textures.
    fn find_ignoring_case(&self, path: &str) -> Option<String> {
        let _ = path;
        None
    }
}

/// The most entries of one directory looked at for a name that differs only in case: a
/// directory of the game holds a few thousand files.
const MAX_DIR_ENTRIES: usize = 1 << 16;

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

/// Reads `path` through a filesystem after checking that it stays inside (see [`contained`]), if
/// it holds at most `max_bytes` ([`FileSystem::read_at_most`]): every path ossa hands a caller's
/// [`FileSystem`] comes through here.
pub(crate) fn read_contained_at_most<'a>(
    fs: &'a dyn FileSystem,
    path: &str,
    max_bytes: u64,
) -> Result<FileData<'a>> {
    fs.read_at_most(contained(path)?, max_bytes)
}

/// The OS filesystem, restricted to one directory.
///
/// Symbolic links are followed while they stay inside the directory (a pk3dir often links
/// between its own folders); a path whose links lead out of it is refused, before anything
/// outside is looked at. Only regular files are read.
#[derive(Clone, Debug)]
pub struct DirFileSystem {
    root: PathBuf,
    /// Directories listed for [`FileSystem::find_ignoring_case`], each once.
    listings: Arc<Mutex<HashMap<PathBuf, Arc<Listing>>>>,
}

/// A directory's names: each exactly, and the first in byte order for its ASCII lower case.
#[derive(Debug, Default)]
struct Listing {
    exact: HashSet<String>,
    folded: HashMap<String, String>,
}

impl Listing {
    fn read(dir: &Path) -> Listing {
        let mut listing = Listing::default();
        let Ok(entries) = std::fs::read_dir(dir) else {
            return listing;
        };
        for entry in entries.take(MAX_DIR_ENTRIES).flatten() {
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            let folded = listing
                .folded
                .entry(name.to_ascii_lowercase())
                .or_insert_with(|| name.clone());
            if name < *folded {
                folded.clone_from(&name);
            }
            listing.exact.insert(name);
        }
        listing
    }

    fn find(&self, name: &str) -> Option<&str> {
        match self.exact.get(name) {
            Some(exact) => Some(exact),
            None => self
                .folded
                .get(&name.to_ascii_lowercase())
                .map(String::as_str),
        }
    }
}

/// The longest path followed, as Linux's PATH_MAX: longer ones name nothing the OS could open.
const MAX_PATH: usize = 4096;
/// The most symbolic links followed for one path, as Linux's MAXSYMLINKS.
const MAX_LINKS: u32 = 40;

/// One step of a path being resolved.
enum Step {
    Parent,
    Name(OsString),
}

/// Queues the steps of the relative `path` so that its first is popped next. A root or drive
/// prefix in it is a step out of the directory.
fn push_steps(pending: &mut Vec<Step>, path: &Path) -> std::result::Result<(), ()> {
    let mut steps = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(name) => steps.push(Step::Name(name.to_owned())),
            Component::ParentDir => steps.push(Step::Parent),
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return Err(()),
        }
    }
    pending.extend(steps.into_iter().rev());
    Ok(())
}

impl DirFileSystem {
    pub fn new(root: impl Into<PathBuf>) -> DirFileSystem {
        DirFileSystem {
            root: root.into(),
            listings: Arc::default(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the file at `path` (relative to the root) really is: each component is looked at
    /// before it is used, a link is replaced by its target, and a step out of the root (`..`
    /// past it, a link to an absolute path elsewhere) is an invalid argument naming `path`.
    /// Links inside the directory that holds the root are the caller's own and are resolved as
    /// the OS does.
    fn resolve(&self, path: &Path) -> Result<PathBuf> {
        let shown = self.root.join(path);
        let os_err = |e: std::io::Error| os_error(&shown, e);
        let escape = || {
            Error::invalid_argument(format!(
                "{path:?} leads outside the files the model may read through a symbolic link"
            ))
        };
        if path.as_os_str().len() > MAX_PATH {
            return Err(Error::io(
                format!(
                    "{}: cannot read: the path is longer than {MAX_PATH} bytes",
                    shown.display()
                ),
                None,
            ));
        }
        let root = self.root.canonicalize().map_err(os_err)?;
        let mut pending = Vec::new();
        push_steps(&mut pending, path).map_err(|()| escape())?;
        // The real directories under the root walked so far, then the file.
        let mut inside: Vec<OsString> = Vec::new();
        let mut links = 0u32;
        while let Some(step) = pending.pop() {
            let name = match step {
                Step::Parent => {
                    inside.pop().ok_or_else(escape)?;
                    continue;
                }
                Step::Name(name) => name,
            };
            let mut at = root.clone();
            at.extend(&inside);
            at.push(&name);
            let meta = std::fs::symlink_metadata(&at).map_err(os_err)?;
            if !meta.file_type().is_symlink() {
                inside.push(name);
                continue;
            }
            links = links.saturating_add(1);
            if links > MAX_LINKS {
                return Err(Error::io(
                    format!(
                        "{}: cannot read: more than {MAX_LINKS} symbolic links on the way",
                        shown.display()
                    ),
                    None,
                ));
            }
            let target = std::fs::read_link(&at).map_err(os_err)?;
            if target.has_root() || target.is_absolute() {
                // Into the root by its real path, or by the path the caller gave it.
                let rest = target
                    .strip_prefix(&root)
                    .or_else(|_| target.strip_prefix(&self.root))
                    .map_err(|_| escape())?;
                inside.clear();
                push_steps(&mut pending, rest).map_err(|()| escape())?;
            } else {
                push_steps(&mut pending, &target).map_err(|()| escape())?;
            }
        }
        let mut real = root;
        real.extend(&inside);
        Ok(real)
    }

    /// Opens the regular file at `path`, relative to the root, following only the links that
    /// stay inside (see [`DirFileSystem::resolve`]). The last component is opened without
    /// following a link, so one put there after the walk is refused too; a FIFO or device is
    /// refused, not waited on or read without end.
    pub(crate) fn open(&self, path: &Path) -> Result<std::fs::File> {
        let real = self.resolve(path)?;
        let shown = self.root.join(path);
        let mut options = std::fs::OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
        }
        let file = options.open(&real).map_err(|e| os_error(&shown, e))?;
        let meta = file.metadata().map_err(|e| os_error(&shown, e))?;
        if !meta.is_file() {
            return Err(Error::io(
                format!("{}: cannot read: not a regular file", shown.display()),
                None,
            ));
        }
        Ok(file)
    }

    /// The whole file at `path`, relative to the root (see [`DirFileSystem::open`]), if it
    /// holds at most `max_bytes` bytes (else `Limit`, and it is not read).
    pub(crate) fn read_path(&self, path: &Path, max_bytes: u64) -> Result<Vec<u8>> {
        let file = self.open(path)?;
        read_open_file(file, &self.root.join(path), max_bytes)
    }
}

impl FileSystem for DirFileSystem {
    fn read(&self, path: &str) -> Result<FileData<'_>> {
        self.read_at_most(path, u64::MAX)
    }

    fn read_at_most(&self, path: &str, max_bytes: u64) -> Result<FileData<'_>> {
        let path = contained(path)?;
        Ok(Box::new(self.read_path(Path::new(path), max_bytes)?))
    }

    fn read_prefix(&self, path: &str, len: u64, max_bytes: u64) -> Result<FileData<'_>> {
        let path = Path::new(contained(path)?);
        let file = self.open(path)?;
        let shown = self.root.join(path);
        let size = file.metadata().map_err(|e| os_error(&shown, e))?.len();
        let want = size.min(len);
        within_limit(&shown.to_string_lossy(), want, max_bytes)?;
        let mut data = Vec::with_capacity(usize::try_from(want).unwrap_or(0));
        file.take(want)
            .read_to_end(&mut data)
            .map_err(|e| os_error(&shown, e))?;
        Ok(Box::new(data))
    }

    /// Each component of `path` as the directory spells it: the exact name when there is one,
    /// else the first in byte order that matches ignoring ASCII case. Only directories inside
    /// the root are listed, each once (at most [`MAX_DIR_ENTRIES`] names of it); the path found is
    /// then read as any other, links checked.
    fn find_ignoring_case(&self, path: &str) -> Option<String> {
        let path = contained(path).ok()?;
        let mut found: Vec<String> = Vec::new();
        for wanted in path.split('/').filter(|c| !c.is_empty() && *c != ".") {
            let mut dir = self.root.clone();
            dir.extend(&found);
            let listing = {
                let mut listings = self.listings.lock().ok()?;
                Arc::clone(
                    listings
                        .entry(dir)
                        .or_insert_with_key(|dir| Arc::new(Listing::read(dir))),
                )
            };
            found.push(listing.find(wanted)?.to_owned());
        }
        Some(found.join("/"))
    }
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

/// An OS error reading `path`, telling a missing file from a failing one.
pub(crate) fn os_error(path: &Path, e: std::io::Error) -> Error {
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
    #[allow(clippy::unwrap_used)]
    fn names_are_found_ignoring_case_inside_the_root_only() {
        let root = std::env::temp_dir().join(format!("ossa-case-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("Textures")).unwrap();
        for name in [
            "Textures/CHeadE.png",
            "Textures/cheade.PNG",
            "Textures/x.png",
            "a.png",
        ] {
            std::fs::write(root.join(name), name).unwrap();
        }
        let fs = DirFileSystem::new(&root);
        let find = |p: &str| fs.find_ignoring_case(p);
        // The exact name first, else the first in byte order of those that match.
        assert_eq!(
            find("Textures/cheade.PNG").as_deref(),
            Some("Textures/cheade.PNG")
        );
        assert_eq!(
            find("textures/CheadE.png").as_deref(),
            Some("Textures/CHeadE.png")
        );
        assert_eq!(find("TEXTURES/X.PNG").as_deref(), Some("Textures/x.png"));
        assert_eq!(find("./A.png").as_deref(), Some("a.png"));
        assert_eq!(find("Textures/none.png"), None);
        assert_eq!(find("../a.png"), None);
        assert_eq!(find("/a.png"), None);
        let data = fs.read(&find("textures/cheade.png").unwrap()).unwrap();
        assert_eq!((*data).as_ref(), b"Textures/CHeadE.png");
        std::fs::remove_dir_all(&root).unwrap();
    }

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
