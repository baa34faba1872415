#!/usr/bin/env bash
# Installs ossa with cargo-c into a temporary prefix and builds c_tests/install/app.c against the
# installed files only, three ways: pkg-config against libossa.so, pkg-config --static against
# libossa.a, and CMake through pkg_check_modules; each program runs and checks real values.
# Needs cargo-c (cargo install cargo-c --locked --version 0.10.24), pkg-config and cmake.
# OSSA_INSTALL_PREFIX=DIR installs there (kept) instead of a temporary directory.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

CC=${CC:-gcc}
export OSSA_CORPUS=${OSSA_CORPUS:-$repo/../shared/corpus}
case $OSSA_CORPUS in /*) ;; *) OSSA_CORPUS=$repo/$OSSA_CORPUS ;; esac
for tool in cargo-cinstall pkg-config cmake readelf; do
  command -v "$tool" >/dev/null 2>&1 || { echo "install test: $tool is missing" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=${OSSA_INSTALL_PREFIX:-$work/prefix}

passed=0
failed=0
pass() { echo "PASS  install: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL  install: $1"; failed=$((failed + 1)); }

# Its build goes to target/<triple>/release, apart from cargo build's; the log shows on failure.
cargo cinstall --release --prefix="$prefix" --libdir="$prefix/lib" >"$work/cinstall.log" 2>&1 ||
  { cat "$work/cinstall.log"; exit 1; }

# What was installed: the versioned library and its links, the archive, the header and ossa.pc.
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
lib=$prefix/lib
if [ -f "$lib/libossa.so.$version" ] && [ "$(readlink "$lib/libossa.so")" = "libossa.so.$version" ] &&
  [ "$(readlink "$lib/libossa.so.0")" = "libossa.so.$version" ] && [ -f "$lib/libossa.a" ] &&
  [ -f "$lib/pkgconfig/ossa.pc" ]; then
  pass "libossa.so.$version, its links libossa.so and libossa.so.0, libossa.a, ossa.pc"
else
  fail "installed files"; ls -l "$lib" "$lib/pkgconfig" || true
fi
soname=$(readelf -d "$lib/libossa.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$soname" = libossa.so.0 ]; then pass "SONAME $soname"; else fail "SONAME is '$soname', not libossa.so.0"; fi
if cmp -s include/ossa.h "$prefix/include/ossa/ossa.h"; then
  pass "include/ossa/ossa.h is build.rs's include/ossa.h"
else
  fail "installed header differs from include/ossa.h"
fi

export PKG_CONFIG_PATH=$lib/pkgconfig
cflags=(-std=c99 -Wall -Wextra -Wpedantic -Werror -Ic_tests)
src=(c_tests/install/app.c c_tests/fixture.c)
# run NAME BINARY [ENV...]: the program's own checks decide; its last line says what it checked.
run() {
  local name=$1 bin=$2 output status=0
  shift 2
  output=$(env "$@" "$bin" 2>&1) || status=$?
  if [ "$status" -eq 0 ] && grep -q '^install app: ok' <<<"$output"; then
    pass "$name: $(tail -1 <<<"$output")"
    grep 'skipping' <<<"$output" | sed 's/^/      /' || true
  else
    fail "$name (exit $status)"; sed 's/^/      /' <<<"$output"
  fi
}

# Shared: pkg-config's flags alone; the loader finds libossa.so.0 through LD_LIBRARY_PATH.
read -r -a pc <<<"$(pkg-config --cflags --libs ossa)"
"$CC" "${cflags[@]}" "${src[@]}" "${pc[@]}" -lm -o "$work/app-shared"
if readelf -d "$work/app-shared" | grep -q 'NEEDED.*\[libossa.so.0\]'; then
  pass "shared build needs libossa.so.0"
else
  fail "shared build does not record libossa.so.0"
fi
run "pkg-config, shared" "$work/app-shared" LD_LIBRARY_PATH="$lib"

# Static: --static adds the Rust runtime's system libraries; -l:libossa.a keeps the .so beside
# the archive out of the link (gcc -static cannot be used: there is no static libgcc_s).
read -r -a pc <<<"$(pkg-config --static --cflags --libs ossa)"
pc=("${pc[@]/#-lossa/-l:libossa.a}")
"$CC" "${cflags[@]}" "${src[@]}" "${pc[@]}" -lm -o "$work/app-static"
if readelf -d "$work/app-static" | grep -q 'libossa'; then
  fail "static build still needs a libossa shared object"
else
  pass "static build needs no libossa shared object"
fi
run "pkg-config --static" "$work/app-static"

# CMake: pkg_check_modules(OSSA REQUIRED IMPORTED_TARGET ossa), linked with rpath to the prefix.
cmake -S c_tests/install -B "$work/cmake" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER="$CC" >"$work/cmake.log" 2>&1 &&
  cmake --build "$work/cmake" >>"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; fail "CMake build"; }
[ -x "$work/cmake/app" ] && run "CMake pkg_check_modules" "$work/cmake/app"

echo "install_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
