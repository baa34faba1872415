//! The files a caller hands over (a model and its sidecars, dropped on a page or read by a
//! program), served to ossa through its [`FileSystem`] route: the same route an engine's pak
//! files take, so that every sidecar rule of the library (the model's directory, paths that
//! never leave it, `max_bytes`) holds as it does for files on disk. The set is the whole
//! filesystem: nothing else can be read.

use std::collections::{BTreeMap, HashMap};

use ossa::Error;
use ossa::io::{FileData, FileSystem, is_contained};

/// Files by path: relative, `/`-separated, no `..` (as every path ossa asks for is).
#[derive(Default)]
pub struct Files {
    files: BTreeMap<String, Vec<u8>>,
    /// Each path by its ASCII lower case, the first in byte order of those equal but for case.
    folded: HashMap<String, String>,
}

/// `path` with empty and `.` components dropped; None when it is not a path inside the set
/// (absolute, `..`, a backslash, a drive letter, NUL), as [`is_contained`] says.
pub fn normal_path(path: &str) -> Option<String> {
    if !is_contained(path) {
        return None;
    }
    let parts: Vec<&str> = path
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    (!parts.is_empty()).then(|| parts.join("/"))
}

impl Files {
    /// Adds a file; a path that could name something outside the set is an invalid argument,
    /// as ossa refuses such a sidecar name.
    pub fn add(&mut self, path: &str, bytes: Vec<u8>) -> Result<(), Error> {
        let Some(path) = normal_path(path) else {
            return Err(Error::invalid_argument(format!(
                "{path:?} is not a relative path inside the files given (absolute paths, drive \
                 letters, backslashes and `..` are refused)"
            )));
        };
        let lower = path.to_ascii_lowercase();
        match self.folded.get_mut(&lower) {
            Some(first) if path < *first => first.clone_from(&path),
            Some(_) => {}
            None => {
                self.folded.insert(lower, path.clone());
            }
        }
        self.files.insert(path, bytes);
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Every path, in byte order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    pub fn get(&self, path: &str) -> Option<&[u8]> {
        self.files.get(path).map(Vec::as_slice)
    }

    /// The directories of the set, each once: `""` for the top, else `dir/` (as ossa writes a
    /// directory before a file name), in byte order.
    pub fn dirs(&self) -> Vec<String> {
        let mut dirs: Vec<String> = self.paths().map(|p| dir_of(p).to_owned()).collect();
        dirs.sort();
        dirs.dedup();
        dirs
    }

    /// The first of `names` (ASCII case ignored, as the Sims' files name each other on
    /// Windows) in `dir` (`""` or `dir/`).
    pub fn find_in(&self, dir: &str, names: &[String]) -> Option<String> {
        names.iter().find_map(|n| {
            let path = format!("{dir}{n}");
            if self.files.contains_key(&path) {
                Some(path)
            } else {
                self.folded.get(&path.to_ascii_lowercase()).cloned()
            }
        })
    }
}

/// The directory part of a path, with its `/` (`""` at the top).
pub fn dir_of(path: &str) -> &str {
    path.rfind('/').map_or("", |slash| &path[..=slash])
}

impl FileSystem for Files {
    fn read(&self, path: &str) -> ossa::Result<FileData<'_>> {
        let found = normal_path(path).and_then(|p| self.files.get(&p));
        match found {
            Some(bytes) => Ok(Box::new(bytes.as_slice())),
            None => Err(Error::not_found(format!(
                "{path}: no such file among the files given"
            ))),
        }
    }

    /// The file of that path ignoring ASCII case in every component; of several, the first in
    /// byte order.
    fn find_ignoring_case(&self, path: &str) -> Option<String> {
        let path = normal_path(path)?;
        if self.files.contains_key(&path) {
            return Some(path);
        }
        self.folded.get(&path.to_ascii_lowercase()).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside_and_are_found_ignoring_case() {
        let mut files = Files::default();
        files
            .add("./sims//Textures/CHeadE.png", b"a".to_vec())
            .unwrap();
        files
            .add("sims/Textures/cheade.PNG", b"b".to_vec())
            .unwrap();
        files.add("model.dpm", b"c".to_vec()).unwrap();
        for bad in ["", "/etc/passwd", "../x", "a/../../b", "a\\b", "C:/x"] {
            assert!(files.add(bad, Vec::new()).is_err(), "{bad:?}");
        }
        assert_eq!(files.len(), 3);
        let read = |p: &str| files.read(p).map(|d| (*d).as_ref().to_vec());
        assert_eq!(read("sims/Textures/CHeadE.png").unwrap(), b"a");
        assert_eq!(read("./model.dpm").unwrap(), b"c");
        assert_eq!(
            read("Model.dpm").unwrap_err().code(),
            ossa::ErrorCode::NotFound
        );
        assert_eq!(
            files
                .find_ignoring_case("sims/textures/CHEADE.png")
                .as_deref(),
            Some("sims/Textures/CHeadE.png")
        );
        assert_eq!(files.find_ignoring_case("../model.dpm"), None);
        assert_eq!(files.dirs(), ["", "sims/Textures/"]);
        assert_eq!(dir_of("a/b/c.cmx"), "a/b/");
        assert_eq!(
            files
                .find_in("", &["nope".into(), "MODEL.DPM".into()])
                .as_deref(),
            Some("model.dpm")
        );
    }
}
