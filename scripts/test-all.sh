#!/usr/bin/env bash
# Every test of ossa: the Rust unit and integration tests, then the C tests against the
# static and the shared library, plain, under AddressSanitizer/UBSan and under valgrind.
# The fuzz targets run apart: fuzz/run.sh [SECONDS] (.ci/run gives each 30 seconds).
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

# Debug build: the loaders' results are checked a second time by debug assertions.
cargo test --all-targets
cargo build --release --lib
bash c_tests/run.sh
