#!/usr/bin/env bash
# Every test of ossa: the Rust unit and integration tests, then the C tests against the
# static and the shared library, plain, under AddressSanitizer/UBSan and under valgrind, the
# Python package's, and the WebAssembly package's and viewer's (web/build.sh).
# The fuzz targets run apart: fuzz/run.sh [SECONDS] (.ci/run gives each 15 seconds); so does the
# install test, c_tests/install_test.sh, which needs cargo-c and cmake.
# The corpus of real models is read from $OSSA_CORPUS (default ../shared/corpus); tests that
# need it say so and skip when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."

# The glTF checks read ossa's exports with Khronos' glTF-Validator and three.js under node; their
# packages are pinned in interop/package-lock.json. Without node the Rust test says it skips them.
if command -v npm >/dev/null 2>&1; then
  [ -d interop/node_modules ] || npm ci --prefix interop --no-audit --no-fund --loglevel=error
  node interop/selftest.mjs
fi

# Blender as a Python module (PyPI bpy, pinned in interop/requirements-blender.txt; it runs on
# CPython 3.11 only): tests/gltf_blender_three.rs exports the corpus's .blend scenes with it, and
# after the tests its glTF importer reads the exports tests/gltf_export.rs left in
# target/tmp/gltf-interop.
venv=interop/.venv-blender
blender=0
if python3 -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
  if [ ! -f "$venv/.installed" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --no-cache-dir --disable-pip-version-check -r interop/requirements-blender.txt
    touch "$venv/.installed"
  fi
  blender=1
elif [ -n "${OSSA_REQUIRE_INTEROP:-}" ]; then
  echo "OSSA_REQUIRE_INTEROP is set but CPython 3.11, which Blender's bpy needs, is missing" >&2
  exit 1
else
  echo "skipping the Blender checks: Blender's bpy needs CPython 3.11"
fi

# Debug build: the loaders' results are checked a second time by debug assertions. Among them,
# tests/iqm_gltf_interop.rs has the glTF-Validator and three.js read the corpus IQMs as GLB, and
# tests/iqm_assimp.rs has Assimp (the `assimp` command, Debian's assimp-utils) read the IQMs ossa
# writes; without the command it says it skips.
cargo test --all-targets

if [ "$blender" = 1 ]; then
  "$venv/bin/python" interop/blender_check.py target/tmp/gltf-interop
fi
# README.md's pictures are what `ossa render` draws now; the corpus's models are drawn too, as a
# check (thumbnails into target/tmp, never committed).
bash scripts/pictures.sh --check
corpus=${OSSA_CORPUS:-../shared/corpus}
if [ -d "$corpus" ]; then
  target/debug/ossa render "$corpus/dpm" "$corpus/skm" "$corpus"/gltf/blender/roundtrip/*/*.gltf \
    -o target/tmp/corpus-thumbnails --thumbnail 128 >/dev/null
  echo "corpus thumbnails: drew $(ls target/tmp/corpus-thumbnails | wc -l) pictures"
  # The 1998 prototype's colonel, dressed from his .msh parts and textured.
  target/debug/ossa render "$corpus/sims/proto1998/colonelsuit.CMX" --suit colonel --view front \
    -o target/tmp/colonel-1998.png
else
  echo "skipping the corpus thumbnails: no corpus at $corpus"
fi
cargo build --release --lib
# The header in C89, C99, C11, C++11 and C++17; README.md's C example, compiled and run as written.
bash c_tests/header_std.sh
bash c_tests/readme_example.sh
bash c_tests/run.sh
# The Python package, installed as users install it (pip install ./python), and its pytest suite.
bash python/run_tests.sh
# The WebAssembly build: the npm package's tests against the native library, then the viewer page
# in Chromium (without Chromium they say they skip, unless OSSA_REQUIRE_INTEROP is set).
# (`cargo test` builds examples as tests, under hashed names: native_ref is built as a program here,
# from the same compiled library.)
cargo build --example native_ref
OSSA_CLI=$PWD/target/debug/ossa OSSA_NATIVE_REF=$PWD/target/debug/examples/native_ref bash web/build.sh
