//! Where the corpus of real models is: `$OSSA_CORPUS`, or `../shared/corpus` next to the crate.
//! Tests that need it say plainly when it is absent and skip.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub fn corpus_dir() -> PathBuf {
    match std::env::var_os("OSSA_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"),
    }
}

/// The corpus's `kind` directory (`dpm`, `skm`, `sims`), or `None` after saying `test` skips.
pub fn corpus_subdir(kind: &str, test: &str) -> Option<PathBuf> {
    let dir = corpus_dir().join(kind);
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("corpus not found at {}; skipping {test}", dir.display());
        None
    }
}

/// The names of the files in `dir` that end with one of `endings` (ASCII case ignored), sorted.
pub fn files_ending(dir: &Path, endings: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            let l = n.to_ascii_lowercase();
            endings.iter().any(|e| l.ends_with(e))
        })
        .collect();
    v.sort();
    v
}

/// The glTF files Blender's add-on exported in the corpus (`gltf/blender/roundtrip/NAME/NAME.gltf`,
/// three of them), sorted; empty, after saying `test` skips, without the corpus.
pub fn blender_gltf_files(test: &str) -> Vec<PathBuf> {
    let Some(dir) = corpus_subdir("gltf/blender/roundtrip", test) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .map(|d| d.join(format!("{}.gltf", d.file_name().unwrap().to_string_lossy())))
        .collect();
    out.sort();
    assert_eq!(out.len(), 3, "{out:?}");
    out
}
