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
    weft_tcp_bench) echo "--benchmark_filter=/65536" ;;
    weft_sim_server_bench) echo "--benchmark_filter=." ;;
    weft-bench) echo "-b 1K -e 64K -f 4 -w 1 -n 2" ;;
    *) echo "bench-smoke: no smoke arguments for $1" >&2; return 1 ;;
  esac
}
order=(weft_kernels_bench weft_sim_bench weft_collectives_bench
       weft_fabric_bench weft_tcp_bench weft_sim_server_bench weft-bench)

# run_with_deadline (timeout(1) is GNU-only).
# shellcheck source=scripts/lib/deadline.sh
. scripts/lib/deadline.sh

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
  killed="$log.killed"
  if run_with_deadline "$limit_s" "$killed" "$build_dir/bin/$t" "${args[@]}" >"$log" 2>&1 &&
     ! grep -qE "ERROR OCCURRED|Failed to match any benchmarks" "$log"; then
    echo "bench-smoke: $t ok ($(( $(date +%s) - t0 )) s)"
  else
    cat "$log"
    if [[ -e "$killed" ]]; then
      echo "bench-smoke: still running after ${limit_s} s; killed it" >&2
    fi
    echo "bench-smoke: $t FAILED" >&2
    failed+=("$t")
  fi
  rm -f "$log" "$killed"
done
echo "bench-smoke: ${#targets[@]} binaries in $(( $(date +%s) - start )) s"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "bench-smoke: failed: ${failed[*]}" >&2
  exit 1
fi
