//! The node side of the interop checks (`interop/`: Khronos' glTF-Validator and three.js from
//! the npm registry). Without node or `interop/node_modules` the checks say they skip, unless
//! `OSSA_REQUIRE_INTEROP` is set (as CI sets it), when that is a failure.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `interop/` directory, when node and its packages are there.
pub fn node_ready() -> Option<PathBuf> {
    let interop = Path::new(env!("CARGO_MANIFEST_DIR")).join("interop");
    let ready = interop.join("node_modules").is_dir()
        && Command::new("node").arg("--version").output().is_ok();
    if ready {
        return Some(interop);
    }
    let why = "node or interop/node_modules is missing (run `npm ci --prefix interop`)";
    assert!(
        std::env::var_os("OSSA_REQUIRE_INTEROP").is_none(),
        "OSSA_REQUIRE_INTEROP is set but {why}"
    );
    eprintln!("{why}; skipping the glTF-Validator and three.js check");
    None
}
