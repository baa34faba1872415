#!/usr/bin/env bash
# Builds and runs the C tests against the library: every test linked once with libossa.a and once
# with libossa.so, then all of them again under AddressSanitizer + UndefinedBehaviorSanitizer (static),
# and under valgrind's memcheck (static, no sanitizer): no invalid read or write, no use of
# uninitialised memory, no definite or indirect leak.
#
#   c_tests/run.sh                 all tests
#   c_tests/run.sh test_pose ...   only these
#   OSSA_C_CONFIGS="static asan" c_tests/run.sh    only these configurations
#                                  (default: static shared asan valgrind)
#
# Under valgrind the tests get OSSA_TEST_LIGHT=1: those with long loops run fewer iterations.
# Without valgrind installed (apt-get install valgrind) that configuration is skipped, saying so.
# Runs `cargo build --release` first (a no-op when up to date; OSSA_SKIP_CARGO=1 skips it).
# Build outputs and logs go to target/c_tests/. Tests read the corpus from $OSSA_CORPUS
# (default ../shared/corpus from the repo root) and skip those checks when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."

CC=${CC:-gcc}
CXX=${CXX:-g++}
lib=target/release
out=target/c_tests
libdir=$(pwd)/$lib

# Every c_tests/test_*.c and c_tests/*.cpp is a test program.
tests=()
for f in c_tests/test_*.c; do tests+=("$(basename "$f" .c)"); done
cpp_tests=()
for f in c_tests/*.cpp; do cpp_tests+=("$(basename "$f" .cpp)"); done
if [ $# -gt 0 ]; then
  tests=()
  cpp_tests=()
  for t in "$@"; do
    if [ -f "c_tests/$t.cpp" ]; then cpp_tests+=("$t"); else tests+=("$t"); fi
  done
fi

if [ "${OSSA_SKIP_CARGO:-0}" != 1 ]; then
  cargo build --release --quiet
fi
for f in "$lib/libossa.a" "$lib/libossa.so" include/ossa.h; do
  [ -f "$f" ] || { echo "missing $f: run cargo build --release" >&2; exit 1; }
done

cflags=(-std=c99 -Wall -Wextra -Wpedantic -Werror -O1 -g -Iinclude -Ic_tests)
cxxflags=(-std=c++11 -Wall -Wextra -Wpedantic -Werror -O1 -g -Iinclude)
sanitize=(-fsanitize=address,undefined -fno-omit-frame-pointer -g)
# What the Rust staticlib needs from the system (glibc).
syslibs=(-pthread -lpthread -ldl -lm)

export ASAN_OPTIONS=detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export OSSA_CORPUS=${OSSA_CORPUS:-../shared/corpus}

passed=0
failed=0

# build CONFIG NAME: compile and link one test for one configuration; prints the compiler's output
# into the log.
build() {
  local config=$1 name=$2 src compiler flags link extra=()
  local bin=$out/$config/$name
  if [ -f "c_tests/$name.cpp" ]; then
    src=(c_tests/$name.cpp); compiler=$CXX; flags=("${cxxflags[@]}")
  else
    src=(c_tests/$name.c c_tests/fixture.c c_tests/memfs.c); compiler=$CC; flags=("${cflags[@]}")
  fi
  case $config in
    static) link=("$lib/libossa.a" "${syslibs[@]}") ;;
    shared) link=(-L"$lib" -l:libossa.so -Wl,-rpath,"$libdir" -pthread -lm) ;;
    asan)   link=("$lib/libossa.a" "${syslibs[@]}"); extra=("${sanitize[@]}") ;;
    valgrind) link=("$lib/libossa.a" "${syslibs[@]}") ;;
  esac
  "$compiler" "${flags[@]}" "${extra[@]}" "${src[@]}" "${link[@]}" -o "$bin"
}

# run_one CONFIG NAME: build, run, print one line, keep the output in the log.
run_one() {
  local config=$1 name=$2
  local log=$out/$config/$name.log
  local status=0
  if ! build "$config" "$name" >"$log" 2>&1; then
    echo "FAIL  $config/$name (does not build; $log)"
    sed 's/^/      /' "$log" | head -40 || true
    failed=$((failed + 1))
    return
  fi
  if [ "$config" = valgrind ]; then
    OSSA_TEST_LIGHT=1 timeout 900 valgrind "${memcheck[@]}" "$out/$config/$name" >>"$log" 2>&1 || status=$?
  else
    timeout 900 "$out/$config/$name" >>"$log" 2>&1 || status=$?
  fi
  if [ "$status" -eq 0 ]; then
    echo "PASS  $config/$name"
    grep -h 'skipping' "$log" | sed 's/^/      /' || true
    passed=$((passed + 1))
  else
    echo "FAIL  $config/$name (exit $status; $log)"
    sed 's/^/      /' "$log" | head -60 || true
    failed=$((failed + 1))
  fi
}

# Exit status 1 for any error memcheck finds, a definite or indirect leak included; "possibly
# lost" and "still reachable" blocks (the Rust runtime's thread-locals) are not errors.
memcheck=(--tool=memcheck --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect
  --show-leak-kinds=definite,indirect --track-origins=yes)

read -r -a configs <<<"${OSSA_C_CONFIGS:-static shared asan valgrind}"
for config in "${configs[@]}"; do
  if [ "$config" = valgrind ] && ! command -v valgrind >/dev/null 2>&1; then
    echo "SKIP  valgrind/* (valgrind not found: apt-get install valgrind)"
    continue
  fi
  mkdir -p "$out/$config"
  for name in "${tests[@]}" "${cpp_tests[@]}"; do
    run_one "$config" "$name"
  done
done

echo "c_tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
