//! Saving a loaded DPM gives back the file it came from, byte for byte: every field the loader
//! reads is kept (header bounds, frame bounds, flags, group ids, unterminated names).

mod corpus;

use corpus::corpus_dir;

use std::path::PathBuf;

use ossa::{LoadOptions, Model, dpm};

#[test]
fn every_corpus_dpm_saves_back_to_its_own_bytes() {
    let dir = corpus_dir().join("dpm");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!(
            "corpus not found at {}; skipping every_corpus_dpm_saves_back_to_its_own_bytes",
            dir.display()
        );
        return;
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("dpm")))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .dpm files in {}", dir.display());
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let model = Model::load(&bytes, &LoadOptions::default()).unwrap();
        let saved = dpm::write(&model).unwrap();
        let first_difference = bytes.iter().zip(&saved).position(|(a, b)| a != b);
        assert_eq!(
            (saved.len(), first_difference),
            (bytes.len(), None),
            "{} does not save back to its own bytes",
            path.display()
        );
    }
}
