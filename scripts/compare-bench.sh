#!/usr/bin/env bash
# A benchmark binary at a base revision against the same binary from the
# working tree, side by side on this machine: both built in Release with
# debug info (the default preset's flags), run in interleaved rounds (the
# order alternating, so drift in the machine's load falls on both), every
# round's results merged per side and compared with Google Benchmark's own
# compare.py (Debian's libbenchmark-tools), which prints each benchmark's
# change and, with several rounds, a Mann-Whitney U test of wall and CPU
# time. Run it before landing a change to the engine, the simulator or a
# fabric, and put its table in the change's note.
#
# Usage: scripts/compare-bench.sh [--base=REV] [--target=NAME]
#          [--filter=REGEX] [--rounds=N] [--min_time=SECONDS] [--limit=SECONDS]
#   --base      the revision to compare against (default: main)
#   --target    the benchmark binary (default: weft_sim_bench)
#   --filter    --benchmark_filter for both (default: the simulator's
#               per-event rows, BM_AllReduceLoop and BM_SimStream)
#   --rounds    interleaved rounds (default 5; compare.py's U test needs 3
#               or more per side to say anything)
#   --min_time  --benchmark_min_time per run, in seconds (default 0.2)
#   --limit     most seconds one run of the binary may take (default 600)
#   WEFT_COMPARE_DIR=<dir>  where the base checkout, both builds and the
#                           results go (default build/compare-bench)
#
# The base is checked out as a detached git worktree under WEFT_COMPARE_DIR
# (kept, so a second run rebuilds only what changed; `git worktree remove`
# deletes it). Builds go through ccache when it is installed. Exits 2 for
# bad arguments, an unknown revision or a missing compare.py; 1 when a
# build or a run fails; otherwise 0: the figures are reported, not judged.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

base=main
target=weft_sim_bench
filter='BM_AllReduceLoop|BM_SimStream'
rounds=5
min_time=0.2
limit_s=600
for arg in "$@"; do
  case "$arg" in
    --base=*) base=${arg#*=} ;;
    --target=*) target=${arg#*=} ;;
    --filter=*) filter=${arg#*=} ;;
    --rounds=*) rounds=${arg#*=} ;;
    --min_time=*) min_time=${arg#*=} ;;
    --limit=*) limit_s=${arg#*=} ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "compare-bench: unknown argument $arg (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
done
case "$rounds" in
  ''|*[!0-9]*|0) echo "compare-bench: --rounds=$rounds is not a positive whole number" >&2; exit 2 ;;
esac
case "$limit_s" in
  ''|*[!0-9]*|0) echo "compare-bench: --limit=$limit_s is not a positive number of seconds" >&2; exit 2 ;;
esac
case "$min_time" in
  ''|*[!0-9.]*) echo "compare-bench: --min_time=$min_time is not a number of seconds" >&2; exit 2 ;;
esac

compare_py=/usr/share/benchmark/compare.py
if [ ! -f "$compare_py" ]; then
  echo "compare-bench: $compare_py is missing: install libbenchmark-tools (Debian) and python3-scipy" >&2
  exit 2
fi
python=/usr/bin/python3
[ -x "$python" ] || python=python3
if ! "$python" -c 'import scipy' 2>/dev/null; then
  echo "compare-bench: compare.py needs scipy for $python: install python3-scipy (Debian)" >&2
  exit 2
fi

if ! base_commit=$(git rev-parse --verify --quiet "$base^{commit}"); then
  echo "compare-bench: $base is not a revision of this repository" >&2
  exit 2
fi

dir="${WEFT_COMPARE_DIR:-build/compare-bench}"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
base_src="$dir/base-src"
if [ -e "$base_src/.git" ]; then
  git -C "$base_src" checkout -q --detach "$base_commit"
else
  rm -rf "$base_src"
  git worktree add -q --detach "$base_src" "$base_commit"
fi

# build NAME SOURCE BUILD_DIR: the target, Release with debug info, Ninja.
build() {
  local name="$1" src="$2" out="$3"
  echo "compare-bench: building $target at $name"
  if ! { cmake -S "$src" -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
           -DWEFT_BUILD_TESTS=OFF -DWEFT_BUILD_MOCKS=OFF >"$out.configure.log" 2>&1 &&
         cmake --build "$out" --target "$target" >"$out.build.log" 2>&1; }; then
    tail -n 30 "$out.configure.log" "$out.build.log" 2>/dev/null >&2
    echo "compare-bench: building $target at $name failed (logs: $out.*.log)" >&2
    exit 1
  fi
}
mkdir -p "$dir/base-build" "$dir/head-build"
build "$base ($(git rev-parse --short "$base_commit"))" "$base_src" "$dir/base-build"
build "the working tree" "$root" "$dir/head-build"

# shellcheck source=scripts/lib/deadline.sh
. scripts/lib/deadline.sh
# One run of side $1's binary, its JSON in $2, within --limit seconds.
run_one() {
  local bin="$dir/$1-build/bin/$target"
  rm -f "$dir/overran"
  if ! run_with_deadline "$limit_s" "$dir/overran" "$bin" --benchmark_filter="$filter" \
       --benchmark_min_time="$min_time" --benchmark_format=json \
       --benchmark_out="$2" --benchmark_out_format=json >/dev/null 2>"$2.err"; then
    cat "$2.err" >&2
    if [ -e "$dir/overran" ]; then
      echo "compare-bench: $bin overran its ${limit_s} s deadline (--limit)" >&2
    else
      echo "compare-bench: $bin failed" >&2
    fi
    exit 1
  fi
}

rm -f "$dir"/run-*.json
for ((r = 1; r <= rounds; r++)); do
  echo "compare-bench: round $r of $rounds"
  if (( r % 2 )); then
    run_one base "$dir/run-base-$r.json"; run_one head "$dir/run-head-$r.json"
  else
    run_one head "$dir/run-head-$r.json"; run_one base "$dir/run-base-$r.json"
  fi
done

# Every round's iterations of one side in one file, and each benchmark's
# median over the rounds as an aggregate: compare.py takes entries of the
# same name as repetitions for its U test, and -a shows the medians.
merge() {
  "$python" - "$dir/$1.json" "$dir"/run-"$1"-*.json <<'EOF'
import json, statistics, sys
out, files = sys.argv[1], sys.argv[2:]
merged = None
for f in files:
    with open(f) as fh:
        d = json.load(fh)
    runs = [b for b in d["benchmarks"] if b.get("run_type", "iteration") == "iteration"]
    if merged is None:
        merged = d
        merged["benchmarks"] = runs
    else:
        merged["benchmarks"].extend(runs)
by_name = {}
for b in merged["benchmarks"]:
    by_name.setdefault(b["name"], []).append(b)
for name, runs in by_name.items():
    median = dict(runs[0])
    median.update(name=name + "_median", run_name=name, run_type="aggregate",
                  aggregate_name="median", repetitions=len(runs),
                  real_time=statistics.median(r["real_time"] for r in runs),
                  cpu_time=statistics.median(r["cpu_time"] for r in runs))
    merged["benchmarks"].append(median)
with open(out, "w") as fh:
    json.dump(merged, fh)
EOF
}
merge base
merge head
echo "compare-bench: $target, base $base ($(git rev-parse --short "$base_commit")) against the working tree, $rounds interleaved rounds, filter '$filter'"
"$python" "$compare_py" --no-color -a benchmarks "$dir/base.json" "$dir/head.json"
