#!/usr/bin/env bash
# Builds the fuzz targets (cargo-fuzz: libFuzzer, AddressSanitizer, debug assertions and overflow
# checks on) and runs each for SECONDS, one after another, then prints the executions of each.
#
#   fuzz/run.sh [SECONDS] [TARGET...]     SECONDS defaults to 30; every target when none is named
#
# Seeds: made afresh by examples/fuzz_seeds.rs from the library's writers into
# target/fuzz-seeds/TARGET/ (never committed). Inputs that add coverage collect in
# fuzz/corpus/TARGET/ and are kept between runs (ignored by git). A crash, timeout (10 s for one
# input) or out-of-memory (2 GiB) saves its input in fuzz/artifacts/TARGET/ and fails the run
# once every target has run; `RUSTC_BOOTSTRAP=1 cargo fuzz run -a TARGET FILE` runs a saved input
# again. Logs: target/fuzz-logs/TARGET.log. For the long runs: fuzz/run.sh 600.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-30}
shift || true

command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --version 0.13.2 --locked

cargo run --release --quiet --example fuzz_seeds -- target/fuzz-seeds >/dev/null

# cargo-fuzz builds with -Zsanitizer=address and other unstable flags, which only a nightly
# compiler takes. The machines have the stable toolchain alone, and no other can be fetched;
# RUSTC_BOOTSTRAP=1 makes stable rustc and cargo accept unstable flags. It is set from here on,
# for the fuzz builds only, never for the library's own builds.
export RUSTC_BOOTSTRAP=1
if [ $# -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(cargo fuzz list)
fi

# -a: debug assertions (and with them overflow checks), so that a loader's model is checked a
# second time by Model::from_checked_parts and arithmetic that overflows is a crash.
build_flags=(-a)
if [ $# -gt 0 ]; then
  for t in "${targets[@]}"; do cargo fuzz build "${build_flags[@]}" "$t"; done
else
  cargo fuzz build "${build_flags[@]}"
fi

# Longest input per target: room for files several times the seeds' size, small enough that an
# input runs in microseconds.
max_len() {
  case $1 in
    pose_skin) echo 1024 ;;
    cfp) echo 4096 ;;
    *) echo 16384 ;;
  esac
}

mkdir -p target/fuzz-logs
failed=()
summary=()
for t in "${targets[@]}"; do
  log=target/fuzz-logs/$t.log
  mkdir -p "fuzz/corpus/$t" "target/fuzz-seeds/$t"
  echo "== $t: ${seconds}s"
  status=0
  cargo fuzz run "${build_flags[@]}" "$t" "fuzz/corpus/$t" "target/fuzz-seeds/$t" -- \
    -max_total_time="$seconds" -max_len="$(max_len "$t")" -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 >"$log" 2>&1 || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  corpus=$(find "fuzz/corpus/$t" -type f | wc -l)
  if [ "$status" -eq 0 ]; then
    result=ok
  else
    result="FAILED (exit $status)"
    failed+=("$t")
    grep -E '^(==[0-9]+==ERROR|SUMMARY|thread .* panicked|artifact_prefix|Test unit written)' "$log" | head -8 | sed 's/^/    /' || true
  fi
  summary+=("$(printf '%-16s %12s %9s %7s  %s' "$t" "${execs:-?}" "${rate:-?}" "$corpus" "$result")")
done

echo
printf '%-16s %12s %9s %7s  %s\n' target execs exec/s corpus result
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "failed: ${failed[*]} (inputs in fuzz/artifacts/, logs in target/fuzz-logs/)"
fi
echo "fuzz: $((${#targets[@]} - ${#failed[@]})) passed, ${#failed[@]} failed"
[ ${#failed[@]} -eq 0 ]
