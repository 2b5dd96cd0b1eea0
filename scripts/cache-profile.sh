#!/usr/bin/env bash
# How much a simulated frame costs in a small world and in a large one,
# counted rather than timed: instructions and cache misses per frame of a
# ring all-sum (512-byte frames at any size) in `World::run`, under
# valgrind's cache simulator. The counts are the same on every run and
# every machine with the same build, so a change to the simulator or the
# engine can be judged on them when wall times move with the machine's
# neighbours (BM_RingScale's rate_ratio moves by 0.1 from one run to the
# next; docs/measurements.md, "Counted, not timed").
#
# The last-level cache is simulated at 1 MiB, one core's L2 on the
# machines weft's CI runs on: what the state the ranks touch between two
# steps of one rank must fit in for that rank's to stay warm. Hardware
# prefetches are not modelled, so the misses are what the code asks for,
# prefetched or not.
#
# Usage: scripts/cache-profile.sh [SMALL_RANKS [LARGE_RANKS]]  (128, 512)
#   WEFT_SIM=<path>  the weft-sim binary (default build/default/bin/weft-sim)
# Prints one row per world: frames, instructions a frame, last-level
# misses a frame, first-level misses a frame, and the large world's
# misses a frame over the small one's. Takes about 1 minute at 128 ranks
# and 5 at 512.
set -euo pipefail

small=${1:-128}
large=${2:-512}
sim=${WEFT_SIM:-build/default/bin/weft-sim}
if [[ ! -x $sim ]]; then
  echo "cache-profile: $sim is not an executable weft-sim; build it (scripts/test.sh) or set WEFT_SIM" >&2
  exit 2
fi
if ! command -v valgrind > /dev/null || ! command -v callgrind_annotate > /dev/null; then
  echo "cache-profile: needs valgrind (Debian: apt-get install valgrind)" >&2
  exit 2
fi
for n in "$small" "$large"; do
  if ! [[ $n =~ ^[0-9]+$ ]] || ((n < 3)); then
    echo "cache-profile: ranks must be whole numbers of at least 3, got '$n'" >&2
    exit 2
  fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One world: prints "ranks frames Ir LLmiss D1miss" for World::run.
profile() {
  local n=$1 out="$work/cg.$1" log="$work/log.$1"
  # 1 KiB a rank: each of the ring's two directions moves 512 bytes a step.
  valgrind --tool=callgrind --cache-sim=yes --LL=1048576,16,64 \
    --callgrind-out-file="$out" \
    "$sim" run --ranks="$n" --topology=ring --bytes=$((n * 1024)) > "$log" 2>&1
  local frames
  frames=$(awk '$1 == "ring" && $2 == "all_sum" { print $(NF - 3) }' "$log")
  if [[ -z $frames ]] || ! grep -q ' correct$' "$log"; then
    echo "cache-profile: the $n-rank run did not end correct:" >&2
    cat "$log" >&2
    exit 1
  fi
  # Inclusive counts of World::run: Ir, D1mr, D1mw, DLmr, DLmw.
  callgrind_annotate --inclusive=yes --show=Ir,D1mr,D1mw,DLmr,DLmw "$out" |
    awk -v n="$n" -v frames="$frames" '
      /sim\/world\.cc:weft::sim::World::run\(/ && !found {
        for (i = 1; i <= 5; i++) { v[i] = $(2 * i - 1); gsub(",", "", v[i]) }
        print n, frames, v[1], v[4] + v[5], v[2] + v[3]
        found = 1
      }'
}

rows=()
for n in "$small" "$large"; do
  row=$(profile "$n")
  if [[ -z $row ]]; then
    echo "cache-profile: found no World::run in the $n-rank profile" >&2
    exit 1
  fi
  rows+=("$row")
done
printf '%s\n' "${rows[@]}" | awk '
  BEGIN { printf "%6s %10s %12s %12s %12s\n", "ranks", "frames", "Ir/frame", "LLmiss/frame", "D1miss/frame" }
  {
    printf "%6d %10d %12.0f %12.1f %12.1f\n", $1, $2, $3 / $2, $4 / $2, $5 / $2
    ll[NR] = $4 / $2
  }
  END { printf "last-level misses a frame, large over small: %.2f\n", ll[2] / ll[1] }'
