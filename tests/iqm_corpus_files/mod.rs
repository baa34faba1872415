//! The corpus's IQM files, read whole: taken by the tests that read every one of them.

use crate::corpus;

/// Every `.iqm` of the corpus's `iqm` directory, by file name, with its bytes; none (the test
/// saying it skips) without the corpus.
pub fn corpus_iqms(test: &str) -> Vec<(String, Vec<u8>)> {
    let Some(dir) = corpus::corpus_subdir("iqm", test) else {
        return Vec::new();
    };
    corpus::files_ending(&dir, &[".iqm"])
        .into_iter()
        .map(|n| {
            let bytes = std::fs::read(dir.join(&n)).unwrap();
            (n, bytes)
        })
        .collect()
}
