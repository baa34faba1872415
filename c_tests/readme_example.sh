#!/usr/bin/env bash
# README.md's C example is a test: the ```c block after the line "<!-- c-example -->" is compiled
# exactly as written (-std=c99, every warning an error, ASan/UBSan), linked against libossa.a, and
# run on the corpus's xon_zombie.dpm; its output must name the bone it found, where that bone is in
# the blended pose, and the counts of the mesh it skinned. Without the corpus it says it skips.
# Needs target/release/libossa.a (cargo build --release).
set -euo pipefail
cd "$(dirname "$0")/.."

CC=${CC:-gcc}
out=target/c_tests/readme
mkdir -p "$out"
corpus=${OSSA_CORPUS:-../shared/corpus}
[ -f target/release/libossa.a ] || { echo "missing target/release/libossa.a: run cargo build --release" >&2; exit 1; }

# The marker, then a ```c fence on the very next line, then the code up to the closing fence.
awk '
  /^<!-- c-example -->$/ { marker = NR; count++; next }
  marker && NR == marker + 1 { if ($0 != "```c") { print "no ```c fence after the marker" > "/dev/stderr"; exit 1 } inside = 1; next }
  inside && /^```$/ { inside = 0; marker = 0; next }
  inside { print }
  END { if (count != 1) { print "README.md must have exactly one <!-- c-example --> marker, has " count > "/dev/stderr"; exit 1 } }
' README.md >"$out/example.c"
[ -s "$out/example.c" ] || { echo "FAIL  README example: empty code block" >&2; exit 1; }

"$CC" -std=c99 -Wall -Wextra -Wpedantic -Werror -fsanitize=address,undefined -g -Iinclude \
  "$out/example.c" target/release/libossa.a -pthread -ldl -lm -o "$out/example"

passed=0
failed=0
check() { # check NAME ACTUAL EXPECTED
  if [ "$2" = "$3" ]; then
    echo "PASS  README example: $1"
    passed=$((passed + 1))
  else
    printf 'FAIL  README example: %s\n      got:      %s\n      expected: %s\n' "$1" "$2" "$3"
    failed=$((failed + 1))
  fi
}

status=0
usage=$("$out/example" 2>&1) || status=$?
check "without a model it prints its usage and fails" "$status: $usage" "1: usage: example MODEL"

zombie=$corpus/dpm/xon_zombie.dpm
if [ -f "$zombie" ]; then
  status=0
  output=$(ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1 "$out/example" "$zombie" 2>&1) || status=$?
  # Bone 10 is "Bip01 Head" (ossa info lists it); mesh 0 is the skull, 108 vertices, 138 triangles.
  # The places, frames 3 and 4 blended 70/30, are pinned from the first run: a change means posing
  # or skinning changed.
  check "on xon_zombie.dpm" "$status: $output" "0: bone 10 at 16.49 2.73 25.92
mesh 0: 108 vertices, 138 triangles, first at 19.97 5.31 23.64"
else
  echo "skipping README example on xon_zombie.dpm: $zombie is absent (set OSSA_CORPUS)"
fi
echo "readme_example: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
