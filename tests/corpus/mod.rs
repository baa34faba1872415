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
