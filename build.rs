//! Generates `include/ossa.h` from the C boundary (`src/capi/`). The header is committed;
//! it is rewritten only when its text changes, so a build of an up-to-date tree leaves it alone.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=src/capi");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=include/ossa.h");

    let root = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let root = Path::new(&root);
    let config =
        cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml is readable");
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(root.join("src/capi/mod.rs"))
        .generate()
        .expect("src/capi/ yields a header");

    let mut text = Vec::new();
    bindings.write(&mut text);
    let header = root.join("include/ossa.h");
    if std::fs::read(&header).ok().as_deref() != Some(&text[..]) {
        std::fs::create_dir_all(root.join("include")).expect("include/ is creatable");
        std::fs::write(&header, &text).expect("include/ossa.h is writable");
    }
}
