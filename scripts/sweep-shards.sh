#!/usr/bin/env bash
# Runs `weft-sim sweep` as N shards in parallel on this machine and merges
# their tallies into one table: how a sweep of 100,000 seeds uses every
# core. Each shard's full output (its failing seeds, replay lines, table)
# goes to <out>/shard-<i>.txt and its failing seeds' traces to
# <out>/traces-<i>/. Prints every FAIL line, the summed table, the
# liveness line, the slowest seed cost line and the wall time; exits 0
# when no seed failed an oracle, 1 otherwise. Other machines: run the same
# shards there (docs/faults.md, "Running a sweep on many machines") and
# merge their files with --merge.
#
# Usage: scripts/sweep-shards.sh SEEDS SHARDS [OUT_DIR] [-- sweep flags...]
#        scripts/sweep-shards.sh --merge FILE...
#   WEFT_SIM=<path>  the weft-sim binary (default build/default/bin/weft-sim)
set -euo pipefail

# Sums the tables of shard outputs: "<outcome> <seeds> <pct>%" rows, the
# liveness line and the oracle line.
merge() {
  awk '
    /^FAIL seed / { print; fails++ }
    /^(correct|typed error|hang|time limit|CORRUPT|untyped error|ranks disagree|not live|nondeterministic) +[0-9]+ +[0-9.]+%$/ {
      name = $0; sub(/ +[0-9]+ +[0-9.]+%$/, "", name)
      n = $0; sub(/%$/, "", n); split(n, f, " +"); count[name] += f[length(f) - 1]
      if (!(name in order)) { order[name] = ++rows; names[rows] = name }
    }
    /^total +[0-9]+$/ { total += $2 }
    /^no crash, dead link/ {
      match($0, /: [0-9]+ seeds, [0-9]+ correct/)
      split(substr($0, RSTART + 2, RLENGTH - 2), g, " ")
      nonfatal += g[1]; correct += g[3]
    }
    /^failed an oracle: / { failed += $4 }
    /^seed cost: / { costs[++shards] = $0 }
    END {
      printf "%-18s %10s\n", "outcome", "seeds"
      for (i = 1; i <= rows; i++) printf "%-18s %10d\n", names[i], count[names[i]]
      printf "%-18s %10d\n", "total", total
      printf "no crash, dead link, qp_error or error completion: %d seeds, %d correct\n", nonfatal, correct
      printf "failed an oracle: %d seeds\n", failed
      for (i = 1; i <= shards; i++) printf "shard %d %s\n", i - 1, costs[i]
      exit failed > 0 ? 1 : 0
    }' "$@"
}

if [[ "${1:-}" == "--merge" ]]; then
  shift
  merge "$@"
  exit $?
fi
if [[ $# -lt 2 ]]; then
  echo "usage: $0 SEEDS SHARDS [OUT_DIR] [-- sweep flags...]" >&2
  exit 2
fi
seeds=$1
shards=$2
out=${3:-sweep-shards}
shift $(( $# >= 3 ? 3 : 2 ))
[[ "${1:-}" == "--" ]] && shift
sim=${WEFT_SIM:-build/default/bin/weft-sim}
if [[ ! -x "$sim" ]]; then
  echo "sweep-shards: $sim is not an executable weft-sim; build it (scripts/test.sh) or set WEFT_SIM" >&2
  exit 2
fi
mkdir -p "$out"
start=$(date +%s)
pids=()
for (( i = 0; i < shards; i++ )); do
  "$sim" sweep --seeds="$seeds" --shard="$i/$shards" --out="$out/traces-$i" \
    "$@" > "$out/shard-$i.txt" 2> "$out/shard-$i.err" &
  pids+=($!)
done
for pid in "${pids[@]}"; do
  wait "$pid" || true   # a shard with failing seeds exits 1; merged below
done
status=0
merge "$out"/shard-*.txt || status=$?
echo "wall time: $(( $(date +%s) - start )) s for $seeds seeds in $shards shards"
exit $status
