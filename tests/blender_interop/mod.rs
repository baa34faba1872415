//! Blender's Python module (PyPI `bpy`), for the tests that run Blender's glTF add-on.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Python of `interop/.venv-blender`, which scripts/test-all.sh installs where CPython 3.11
/// is; None, saying that `what` is skipped, without it. With OSSA_REQUIRE_INTEROP set on a
/// machine that has CPython 3.11, its absence is a failure.
pub fn blender_python(what: &str) -> Option<PathBuf> {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("interop/.venv-blender/bin/python");
    if python.is_file() {
        return Some(python);
    }
    let why = "interop/.venv-blender is missing (see interop/requirements-blender.txt)";
    let py311 = Command::new("python3")
        .args([
            "-c",
            "import sys; sys.exit(sys.version_info[:2] != (3, 11))",
        ])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        !(py311 && std::env::var_os("OSSA_REQUIRE_INTEROP").is_some()),
        "OSSA_REQUIRE_INTEROP is set but {why}"
    );
    eprintln!("{why}; skipping {what}");
    None
}
