#!/usr/bin/env bash
# Builds ossa for JavaScript and tests it:
#   1. what is missing: the wasm32 target (rustup), wasm-bindgen's CLI at the version the crate
#      pins (cargo install --locked), the npm packages (npm ci, from package-lock.json);
#   2. the WebAssembly module (cargo, profile `wasm`) and its JS glue (wasm-bindgen --target web);
#   3. the native programs the tests hold it against: the `ossa` CLI and the repository's
#      examples/native_ref.rs (unless OSSA_CLI and OSSA_NATIVE_REF name built ones);
#   4. the viewer page (esbuild) into web/dist/: open dist/index.html, or serve it;
#   5. the tests, unless --no-test or --serve: npm test (the types, then node --test against
#      the native library), then the viewer's in Chromium (npm run test:browser).
# Each step says how long it took. The corpus is read from $OSSA_CORPUS (default
# ../shared/corpus); without it the corpus tests say so and skip. Build products go to
# $CARGO_TARGET_DIR (default the repository's target/), web/pkg and web/node_modules.
#
#   bash web/build.sh [--no-test]
#   bash web/build.sh --serve [PORT]    builds, then serves the page on http://127.0.0.1:PORT
set -euo pipefail
web=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$web")
cd "$web"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$repo/target}
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}
test_too=1
serve=
case "${1:-}" in
  --no-test) test_too=0 ;;
  --serve) test_too=0 serve=${2:-8080} ;;
esac

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
  # Unoptimised: it builds in about half the time and writes the same bytes in under 2 s.
  CARGO_PROFILE_DEV_DEBUG=0 cargo install wasm-bindgen-cli --version "$bindgen_version" --locked --debug
fi
# npm ci when node_modules is not what package-lock.json says (npm keeps a copy of the lock it
# installed in node_modules/.package-lock.json; optional packages for other platforms are not
# installed).
if ! [ -f node_modules/.package-lock.json ] ||
  ! node -e '
    const lock = require("./package-lock.json").packages, have = require("./node_modules/.package-lock.json").packages;
    const same = Object.entries(lock).every(([k, p]) => !k || (have[k] ? have[k].version === p.version : p.optional));
    process.exit(same && Object.keys(have).every((k) => lock[k]) ? 0 : 1);'; then
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

step "viewer page (esbuild)"
node viewer/build.mjs

if [ -n "$serve" ]; then
  step ""
  exec node viewer/serve.mjs "$serve"
fi

if [ "$test_too" = 1 ]; then
  # scripts/test-all.sh hands over the debug builds its `cargo test` made (OSSA_CLI,
  # OSSA_NATIVE_REF): the same results, without building the library a third time.
  if ! [ -x "${OSSA_CLI:-}" ] || ! [ -x "${OSSA_NATIVE_REF:-}" ]; then
    step "native CLI and native_ref (cargo build --release)"
    (cd "$repo" && cargo build --release --bin ossa --example native_ref --locked)
  fi

  step "tests (npm test)"
  npm test

  step "browser tests (npm run test:browser)"
  npm run test:browser
fi
step ""
