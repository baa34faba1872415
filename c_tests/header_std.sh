#!/usr/bin/env bash
# ossa.h in every dialect a caller may use: c_tests/header/header_tu.c compiled as C89 (with
# -pedantic), C99, C11, C++11 and C++17, every warning an error, then linked against libossa.a and
# run. Needs target/release/libossa.a (cargo build --release).
set -euo pipefail
cd "$(dirname "$0")/.."

CC=${CC:-gcc}
CXX=${CXX:-g++}
out=target/c_tests/header
mkdir -p "$out"
# -Wundef too: a caller may build with it, and C89 has no __STDC_VERSION__.
warn=(-Wall -Wextra -Wpedantic -Wundef -Werror)
syslibs=(-pthread -ldl -lm)
[ -f target/release/libossa.a ] || { echo "missing target/release/libossa.a: run cargo build --release" >&2; exit 1; }

passed=0
failed=0
for std in c89 c99 c11 c++11 c++17; do
  case $std in
    c89) compiler=("$CC" -x c -std=c89 -pedantic) ;;
    c++*) compiler=("$CXX" -x c++ "-std=$std") ;;
    *) compiler=("$CC" -x c "-std=$std") ;;
  esac
  log=$out/$std.log
  if "${compiler[@]}" "${warn[@]}" -Iinclude c_tests/header/header_tu.c -x none target/release/libossa.a \
    "${syslibs[@]}" -o "$out/$std" >"$log" 2>&1 && [ "$("$out/$std")" = OSSA_ERR_TRUNCATED ]; then
    echo "PASS  header as $std"
    passed=$((passed + 1))
  else
    echo "FAIL  header as $std ($log)"
    sed 's/^/      /' "$log" | head -30
    failed=$((failed + 1))
  fi
done
echo "header_std: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
