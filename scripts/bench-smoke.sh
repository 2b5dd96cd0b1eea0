#!/usr/bin/env bash
# Smoke run of every benchmark (CI): builds the bench targets that exist in
# the default preset (build/default) and runs each for a moment, with tiny
# minimum times and small cases, so it stays well under a minute on a busy
# 2-core machine. Fails if a binary fails, reports an error, or overruns
# its time limit. Not a measurement: docs/benchmarking.md has the real runs.
# Runs under macOS's /bin/bash 3.2 and without GNU tools.
#
# Usage: scripts/bench-smoke.sh
#   WEFT_BENCH_BUILD_DIR=<dir>  use an already configured build dir instead
#                               of the default preset
set -euo pipefail
cd "$(dirname "$0")/.."

min_time=0.01   # seconds per Google Benchmark row
limit_s=120     # most any one binary may take

build_dir="${WEFT_BENCH_BUILD_DIR:-}"
if [[ -z "$build_dir" ]]; then
  build_dir=build/default
  cmake --preset default >/dev/null
fi

# The arguments of one benchmark binary's smoke run.
bench_args() {
  case "$1" in
    weft_kernels_bench) echo "--benchmark_filter=/64KiB" ;;
    weft_sim_bench) echo "--benchmark_filter=BM_SimStream|BM_AllReduceLoop/tb5:0/bytes:65536/|BM_FidelityP2p/bytes:4096/|BM_FidelityStepRing/op:2/ranks:4/bytes:65536/|BM_FidelityGroupRing/op:2/ranks:4/bytes:65536/" ;;
    weft_collectives_bench) echo "--benchmark_filter=memcpy|/64KiB|/1MiB|all_sum/mesh/64MiB" ;;
    weft_fabric_bench) echo "--benchmark_filter=." ;;
    weft-bench) echo "-b 1K -e 64K -f 4 -w 1 -n 2" ;;
    *) echo "bench-smoke: no smoke arguments for $1" >&2; return 1 ;;
  esac
}
order=(weft_kernels_bench weft_sim_bench weft_collectives_bench
       weft_fabric_bench weft-bench)

# Runs "$@" for at most $1 seconds (timeout(1) is GNU-only): a watchdog
# checks once a second that the command still runs and, at the deadline,
# says so on stderr and kills it (TERM, then KILL 5 s later; the command
# only, not processes it started: the benchmarks start none). Returns the
# command's status, 128 + the signal's number when the watchdog killed it.
run_with_deadline() {
  local limit=$1
  shift
  "$@" &
  local pid=$!
  (
    waited=0
    while kill -0 "$pid" 2>/dev/null; do
      if (( waited >= limit )); then
        echo "bench-smoke: still running after ${limit} s; killing it" >&2
        kill -TERM "$pid" 2>/dev/null || exit 0
        sleep 5
        kill -KILL "$pid" 2>/dev/null || true
        exit 0
      fi
      sleep 1
      waited=$(( waited + 1 ))
    done
  ) &
  local watchdog=$!
  local status=0
  wait "$pid" || status=$?
  # The command ended first: stop the watchdog (its last sleep of at most
  # one second ends on its own).
  kill "$watchdog" 2>/dev/null || true
  wait "$watchdog" 2>/dev/null || true
  return "$status"
}

known=$(cmake --build "$build_dir" --target help | sed -n 's/^\([^ :]*\): .*/\1/p')
targets=()
for t in "${order[@]}"; do
  if grep -qx -- "$t" <<<"$known"; then targets+=("$t"); fi
done
if [[ ${#targets[@]} -eq 0 ]]; then
  echo "bench-smoke: no benchmark targets in $build_dir" >&2
  exit 1
fi
cmake --build "$build_dir" --target "${targets[@]}"

failed=()
start=$(date +%s)
for t in "${targets[@]}"; do
  line=$(bench_args "$t")
  read -r -a args <<<"$line"
  if [[ "$t" == weft_*_bench ]]; then args+=("--benchmark_min_time=$min_time"); fi
  log=$(mktemp)
  echo "bench-smoke: $t ${args[*]}"
  t0=$(date +%s)
  if run_with_deadline "$limit_s" "$build_dir/bin/$t" "${args[@]}" >"$log" 2>&1 &&
     ! grep -qE "ERROR OCCURRED|Failed to match any benchmarks" "$log"; then
    echo "bench-smoke: $t ok ($(( $(date +%s) - t0 )) s)"
  else
    cat "$log"
    echo "bench-smoke: $t FAILED" >&2
    failed+=("$t")
  fi
  rm -f "$log"
done
echo "bench-smoke: ${#targets[@]} binaries in $(( $(date +%s) - start )) s"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "bench-smoke: failed: ${failed[*]}" >&2
  exit 1
fi
