//! Generates `include/ossa.h` from the C boundary (`src/capi/`). The header is committed;
//! it is rewritten only when its text changes, so a build of an up-to-date tree leaves it alone.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=src/capi");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=include/ossa.h");
    avx512_cfg();

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
    let text = c89_clean(&String::from_utf8(text).expect("cbindgen writes UTF-8")).into_bytes();
    let header = root.join("include/ossa.h");
    if std::fs::read(&header).ok().as_deref() != Some(&text[..]) {
        std::fs::create_dir_all(root.join("include")).expect("include/ is creatable");
        std::fs::write(&header, &text).expect("include/ossa.h is writable");
    }
}

/// `ossa_avx512` where the compiler has AVX-512's intrinsics and target features (stable since
/// Rust 1.89): the AVX-512 skinning kernel is built then, and older compilers (the crate's
/// `rust-version` is 1.88) build the others.
fn avx512_cfg() {
    println!("cargo::rustc-check-cfg=cfg(ossa_avx512)");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let minor = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|v| {
            // "rustc 1.95.0 (59807616e 2026-04-14)"
            let version = v.split_whitespace().nth(1)?.to_owned();
            let mut parts = version.split('.');
            let major: u32 = parts.next()?.parse().ok()?;
            let minor: u32 = parts.next()?.parse().ok()?;
            Some(if major > 1 { u32::MAX } else { minor })
        });
    if minor.is_some_and(|m| m >= 89) {
        println!("cargo:rustc-cfg=ossa_avx512");
    }
}

/// cbindgen writes `// ...` after `#endif` and `extern "C" {}`'s brace, and a comma after every
/// enumerator, with no option against either; C89 with -pedantic rejects both. Its `#if` tests
/// `__STDC_VERSION__`, which C89 does not define (a -Wundef warning). Rewritten here, line by line,
/// so the committed header stays the build's exact output.
fn c89_clean(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::with_capacity(text.len());
    let mut in_enum = false;
    for (i, line) in lines.iter().enumerate() {
        let mut line = match line.split_once("//") {
            Some((code, comment)) if code.starts_with("#endif") || code.starts_with('}') => {
                format!("{code}/* {} */", comment.trim())
            }
            _ => (*line).to_string(),
        };
        if line.starts_with("#if ") {
            line = line.replace(
                "__STDC_VERSION__ >= 202311L",
                "(defined(__STDC_VERSION__) && __STDC_VERSION__ >= 202311L)",
            );
        }
        if line.starts_with("enum ") {
            in_enum = true;
        } else if in_enum && line.starts_with('}') {
            in_enum = false;
        }
        // The enumerator just before the enum's closing brace loses its comma.
        if in_enum
            && line.ends_with(',')
            && lines.get(i + 1).is_some_and(|next| next.starts_with("};"))
        {
            line.pop();
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}
