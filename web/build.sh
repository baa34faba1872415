#!/usr/bin/env bash
# Builds ossa for JavaScript and tests it:
#   1. what is missing: the wasm32 target (rustup), wasm-bindgen's CLI at the version the crate
#      pins (cargo install --locked), the npm packages (npm ci, from package-lock.json);
#   2. the WebAssembly module (cargo, profile `wasm`) and its JS glue (wasm-bindgen --target web);
#   3. the native programs the tests hold it against: the `ossa` CLI and examples/native_ref;
#   4. the tests (npm test: the types, then node --test), unless --no-test.
# Each step says how long it took. The corpus is read from $OSSA_CORPUS (default
# ../shared/corpus); without it the corpus tests say so and skip. Build products go to
# $CARGO_TARGET_DIR (default the repository's target/), web/pkg and web/node_modules.
#
#   bash web/build.sh [--no-test]
set -euo pipefail
web=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$web")
cd "$web"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$repo/target}
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}
test_too=1
[ "${1:-}" = "--no-test" ] && test_too=0

# The wasm-bindgen CLI must be the version of the crate the module is built with: the glue it
# writes and the module's custom section must agree.
bindgen_version=0.2.129
locked=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/[^0-9.]/, ""); print }' Cargo.lock)
if [ "$locked" != "$bindgen_version" ]; then
  echo "web/Cargo.lock has wasm-bindgen $locked, build.sh installs $bindgen_version: make them agree" >&2
  exit 1
fi

step_name=
step_start=$SECONDS
step() {
  [ -n "$step_name" ] && echo "-- $step_name: $((SECONDS - step_start)) s"
  step_name=$1
  step_start=$SECONDS
  [ -n "$1" ] && echo "== $1"
  return 0
}
trap '[ -n "$step_name" ] && echo "-- $step_name: $((SECONDS - step_start)) s"; echo "-- web/build.sh: $SECONDS s in all"' EXIT

step "install what is missing"
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  rustup target add wasm32-unknown-unknown
fi
if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $bindgen_version" ]; then
  cargo install wasm-bindgen-cli --version "$bindgen_version" --locked
fi
# npm ci when node_modules is not what package-lock.json says (npm keeps its own copy of the
# lock it installed in node_modules/.package-lock.json).
if ! [ -f node_modules/.package-lock.json ] ||
  ! node -e '
    const a = require("./package-lock.json").packages, b = require("./node_modules/.package-lock.json").packages;
    const v = (p) => Object.entries(p).filter(([k]) => k).map(([k, x]) => k + "@" + x.version).sort().join();
    process.exit(v(a) === v(b) ? 0 : 1);'; then
  npm ci --no-audit --no-fund --loglevel=error
fi

step "WebAssembly module (cargo build --profile wasm)"
cargo build --profile wasm --target wasm32-unknown-unknown --lib --locked
wasm=$CARGO_TARGET_DIR/wasm32-unknown-unknown/wasm/ossa_web.wasm

step "JS glue (wasm-bindgen --target web)"
rm -rf pkg
wasm-bindgen --target web --out-dir pkg --out-name ossa_web "$wasm"
raw=$(wc -c <pkg/ossa_web_bg.wasm)
gz=$(gzip -9 -c pkg/ossa_web_bg.wasm | wc -c)
echo "pkg/ossa_web_bg.wasm: $raw bytes, $gz gzip -9"

step "native CLI and native_ref (cargo build --release)"
(cd "$repo" && cargo build --release --bin ossa --locked)
cargo build --release --example native_ref --locked

if [ "$test_too" = 1 ]; then
  step "tests (npm test)"
  npm test
fi
step ""
