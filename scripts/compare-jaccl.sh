#!/usr/bin/env bash
# JACCL against weft's jaccl on the same simulated Macs: MLX's
# allreduce_bench (JACCL's examples/allreduce_bench.cpp, float32 all_sum)
# built once against JACCL itself and once against weft's jaccl
# (scripts/foreign-jaccl.sh --against=jaccl|weft: JACCL is compiled where
# it is, never copied), both run under `weft-sim launch` on the same worlds
# of the tb5 link. Per world and size it prints the virtual time of one
# all-sum for each, the ratio weft/JACCL, and the link model's bound (the
# lowest lower bound over weft's algorithms for that size and world, from
# `weft-bench --model_only`: tools/weft-bench/weft_bench_model.h) with each
# one's distance to it.
#
# One all-sum's time is (T(N iterations) - T(1 iteration)) / (N - 1), T
# being launch's "finished at virtual time" for allreduce_bench -w 0 -n N
# (then -n 1) at that one size: group formation, the side channel and the
# first call's set-up are in both runs and cancel. Virtual times do not
# depend on this machine's load, so one run of each is enough; with
# --repeats=R each is run R times and the median taken, and the script says
# which measurements varied.
#
# Usage: scripts/compare-jaccl.sh --jaccl-src=DIR [--sizes=LIST]
#          [--worlds=LIST] [--iters=N] [--repeats=R] [--quick]
#          [--build-dir=DIR] [--weft-build=DIR] [--json-dir=DIR]
#          [--jobs=N] [--limit=SECONDS]
#   --jaccl-src   an MLX checkout, its mlx/distributed/jaccl/lib, or a copy
#                 of that folder
#   --sizes       bytes, comma-separated, K/M/G suffixes, each a multiple of
#                 4 (default 1K,4K,16K,64K,256K,1M,4M,16M,64M,256M)
#   --worlds      TOPOLOGY:RANKS[:CABLES], comma-separated, TOPOLOGY mesh or
#                 ring (ring worlds run with JACCL_RING=1); default
#                 mesh:2,mesh:4,mesh:8,ring:4,ring:8,mesh:2:2,ring:4:2
#   --iters       N above (default 11)
#   --repeats     runs of each measurement, medians taken (default 1)
#   --quick       sizes 1K,16K,1M and N = 3: a smoke run of every world
#   --build-dir   where the two builds and weft's installation go (default
#                 build/compare-jaccl)
#   --weft-build  a configured weft build folder (default build/default,
#                 configured with the default preset): built, installed
#                 under --build-dir, and its weft-sim and weft-bench run
#   --json-dir    passed to foreign-jaccl.sh (nlohmann/json for JACCL)
#   --jobs        build jobs (default 2)
#   --limit       most seconds one launch may take (default 120 plus one
#                 per MiB of the size); a launch that fails or overruns is
#                 run again, three attempts in all, and the table says so
#
# The 2-cable mesh compares what users get, not like with like: JACCL's
# mesh opens only the first cable of each pair (Config::get_mesh_connectivity
# in JACCL's jaccl.cpp), weft's stripes over both. Exits 1 when a build or
# a run failed, 2 for bad arguments.
set -euo pipefail
caller=$(pwd)
cd "$(dirname "$0")/.."
# A folder named on the command line, relative to where the script was run.
from_caller() { case "$1" in /*|'') echo "$1" ;; *) echo "$caller/$1" ;; esac; }

jaccl_src=""
jaccl_name=""
sizes_arg=""
worlds_arg="mesh:2,mesh:4,mesh:8,ring:4,ring:8,mesh:2:2,ring:4:2"
iters=""
repeats=1
quick=0
build_dir=build/compare-jaccl
weft_build=""
json_dir=""
jobs=2
limit_s=""
for arg in "$@"; do
  case "$arg" in
    --jaccl-src=*) jaccl_src=$(from_caller "${arg#*=}") jaccl_name=${arg#*=} ;;
    --sizes=*) sizes_arg=${arg#*=} ;;
    --worlds=*) worlds_arg=${arg#*=} ;;
    --iters=*) iters=${arg#*=} ;;
    --repeats=*) repeats=${arg#*=} ;;
    --quick) quick=1 ;;
    --build-dir=*) build_dir=$(from_caller "${arg#*=}") ;;
    --weft-build=*) weft_build=$(from_caller "${arg#*=}") ;;
    --json-dir=*) json_dir=$(from_caller "${arg#*=}") ;;
    --jobs=*) jobs=${arg#*=} ;;
    --limit=*) limit_s=${arg#*=} ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "compare-jaccl: unknown argument $arg (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
done
die() { echo "compare-jaccl: $*" >&2; exit 2; }
positive() {  # positive NAME VALUE
  case "$2" in
    ''|*[!0-9]*) die "--$1=$2 is not a positive whole number" ;;
  esac
  (( 10#$2 > 0 )) || die "--$1=$2 is not a positive whole number"
}
if (( quick )); then
  [[ -n "$sizes_arg" ]] || sizes_arg=1K,16K,1M
  [[ -n "$iters" ]] || iters=3
fi
[[ -n "$sizes_arg" ]] || sizes_arg=1K,4K,16K,64K,256K,1M,4M,16M,64M,256M
[[ -n "$iters" ]] || iters=11
positive iters "$iters"
(( iters >= 2 )) || die "--iters=$iters: at least 2 (one all-sum's time is T(N) - T(1) over N - 1)"
positive repeats "$repeats"
positive jobs "$jobs"
[[ -z "$limit_s" ]] || positive limit "$limit_s"

# Sizes in bytes.
sizes=()
IFS=, read -r -a size_words <<<"$sizes_arg"
for w in "${size_words[@]}"; do
  [[ "$w" =~ ^([0-9]{1,9})([KMG]?)$ ]] || die "--sizes: \"$w\" is not a size (bytes, with K, M or G)"
  case "${BASH_REMATCH[2]}" in
    K) b=$(( 10#${BASH_REMATCH[1]} << 10 )) ;;
    M) b=$(( 10#${BASH_REMATCH[1]} << 20 )) ;;
    G) b=$(( 10#${BASH_REMATCH[1]} << 30 )) ;;
    *) b=$(( 10#${BASH_REMATCH[1]} )) ;;
  esac
  (( b > 0 && b % 4 == 0 )) || die "--sizes: $w is not a positive multiple of 4 bytes (float32 elements)"
  sizes+=("$b")
done
(( ${#sizes[@]} > 0 )) || die "--sizes: no size given"

# Worlds: "topology ranks cables" each.
worlds=()
IFS=, read -r -a world_words <<<"$worlds_arg"
for w in "${world_words[@]}"; do
  IFS=: read -r topo ranks cables extra <<<"$w"
  cables=${cables:-1}
  case "$topo" in mesh|ring) ;; *) die "--worlds: \"$w\": the topology is mesh or ring" ;; esac
  case "$ranks$cables" in
    ''|*[!0-9]*) die "--worlds: \"$w\" is not TOPOLOGY:RANKS[:CABLES]" ;;
  esac
  [[ -n "$ranks" && -z "$extra" ]] || die "--worlds: \"$w\" is not TOPOLOGY:RANKS[:CABLES]"
  ranks=$(( 10#$ranks )) cables=$(( 10#$cables ))
  (( ranks >= 2 && ranks <= 8 )) || die "--worlds: \"$w\": 2 to 8 ranks (JACCL's mesh takes at most 8)"
  (( cables >= 1 && cables <= 4 )) || die "--worlds: \"$w\": 1 to 4 cables"
  worlds+=("$topo $ranks $cables")
done
(( ${#worlds[@]} > 0 )) || die "--worlds: no world given"
[[ -n "$jaccl_src" ]] || die "--jaccl-src=DIR is required (an MLX checkout or its mlx/distributed/jaccl/lib)"
[[ -d "$jaccl_src" ]] || die "--jaccl-src: no folder $jaccl_name"
lib_dir=$jaccl_src
[[ -f "$lib_dir/jaccl/jaccl.h" ]] || lib_dir="$jaccl_src/mlx/distributed/jaccl/lib"
[[ -f "$lib_dir/jaccl/jaccl.h" && -f "$lib_dir/examples/allreduce_bench.cpp" ]] ||
  die "--jaccl-src: $jaccl_name holds no jaccl/jaccl.h and examples/allreduce_bench.cpp (nor under mlx/distributed/jaccl/lib)"
[[ "$(uname -s)" == Linux ]] || die "weft-sim launch's simulated provider runs on Linux only"

start=$(date +%s)
if [[ -z "$weft_build" ]]; then
  weft_build=build/default
  cmake --preset default >/dev/null
fi
[[ -f "$weft_build/CMakeCache.txt" ]] || die "--weft-build: $weft_build is not a configured build folder"
mkdir -p "$build_dir"
build_dir=$(cd "$build_dir" && pwd)
prefix="$build_dir/weft-prefix"
echo "compare-jaccl: building and installing weft from $weft_build into $prefix" >&2
{ cmake --build "$weft_build" -j "$jobs" >/dev/null &&
  cmake --install "$weft_build" --prefix "$prefix" >/dev/null; } ||
  { echo "compare-jaccl: building or installing $weft_build failed (cmake --build $weft_build shows why)" >&2; exit 1; }
sim="$weft_build/bin/weft-sim"
bench="$weft_build/bin/weft-bench"

foreign=(scripts/foreign-jaccl.sh --jaccl-src="$jaccl_src" --jobs="$jobs")
[[ -n "$json_dir" ]] && foreign+=(--json-dir="$json_dir")
jaccl_bin=$("${foreign[@]}" --build-dir="$build_dir/jaccl" --against=jaccl | tail -n 1) ||
  { echo "compare-jaccl: building allreduce_bench against JACCL failed" >&2; exit 1; }
weft_bin=$("${foreign[@]}" --build-dir="$build_dir/weft" --against=weft \
             --weft-prefix="$prefix" | tail -n 1) ||
  { echo "compare-jaccl: building allreduce_bench against weft's jaccl failed" >&2; exit 1; }

# shellcheck source=scripts/lib/deadline.sh
. scripts/lib/deadline.sh
work=$(mktemp -d "${TMPDIR:-/tmp}/weft-compare-jaccl.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The launch flags and environment of a world.
launch_flags() {  # TOPOLOGY RANKS CABLES
  echo "--ranks=$2 --cables=$3 --topology=$1 --link=tb5"
}

# virtual_time LIB TOPOLOGY RANKS CABLES BYTES ITERS: launch's virtual time
# in us for allreduce_bench built against LIB (jaccl or weft). A launch
# that fails is run again, up to $attempts times in all (the virtual time
# of a run that finishes does not depend on the attempt), and noted.
attempts=3
virtual_time() {
  local lib=$1 topo=$2 ranks=$3 cables=$4 bytes=$5 n=$6 bin out limit try
  if [[ "$lib" == jaccl ]]; then bin=$jaccl_bin; else bin=$weft_bin; fi
  out="$work/run.txt"
  limit=${limit_s:-$(( 120 + bytes / (1 << 20) ))}
  local ring=()
  [[ "$topo" == ring ]] && ring=(JACCL_RING=1)
  local what="$lib, $topo of $ranks ($cables cables), $bytes B, -n $n"
  for (( try = 1; try <= attempts; try++ )); do
    # shellcheck disable=SC2046  # launch_flags prints separate flags
    if run_with_deadline $(( limit + 30 )) "$work/overran" \
         env -u JACCL_RING -u MLX_JACCL_RING "${ring[@]}" \
         "$sim" launch $(launch_flags "$topo" "$ranks" "$cables") \
         --timeout_s="$limit" -- "$bin/jaccl_allreduce_bench" \
         -w 0 -n "$n" -b "$bytes" -e "$bytes" >"$out" 2>&1 &&
       grep -q '^# Done\.' "$out"; then
      sed -n 's/^weft-sim: finished at virtual time \([0-9.]*\) us.*/\1/p' "$out"
      return 0
    fi
    echo "compare-jaccl: allreduce_bench against $what: attempt $try of $attempts failed; the end of its output:" >&2
    tail -n 12 "$out" >&2
    echo "  $what: attempt $try failed ($(grep -m 1 -E 'what\(\)|weft-sim: ' "$out" | sed 's/^ *//' || echo "no message"))" >>"$work/retried"
  done
  return 1
}

# per_call LIB WORLD... BYTES: one all-sum's time in us, 3 decimals.
per_call() {
  local t1 tn
  t1=$(virtual_time "$@" 1) && tn=$(virtual_time "$@" "$iters") || return 1
  awk -v a="$t1" -v b="$tn" -v n="$iters" 'BEGIN { printf "%.3f", (b - a) / (n - 1) }'
}

median() {  # numbers, one a line
  sort -g | awk '{ v[NR] = $1 } END {
    if (NR % 2) printf "%.3f", v[(NR + 1) / 2]; else printf "%.3f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# bound TOPOLOGY RANKS CABLES BYTES: "US ALGORITHM", the all-sum's bound
# in that world from weft-bench --model_only (which measures nothing).
bound() {
  # shellcheck disable=SC2046  # launch_flags prints separate flags
  "$bench" --fabric=sim $(launch_flags "$1" "$2" "$3") --op=all_reduce \
    --model_only -b "$4" -e "$4" | awk '$1 !~ /^#/ && $NF == "bound" { print $6, $2 }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
us() { awk -v a="$1" 'BEGIN { printf "%.2f", a }'; }

failed=0
varied=""
above=""
rows=""
for world in "${worlds[@]}"; do
  read -r topo ranks cables <<<"$world"
  name="$ranks ranks, $topo"
  [[ "$topo" == ring ]] && name="$name (JACCL_RING=1)"
  (( cables > 1 )) && name="$name, $cables cables"
  for bytes in "${sizes[@]}"; do
    for lib in jaccl weft; do : >"$work/$lib.times"; done
    for (( r = 1; r <= repeats; r++ )); do
      order="jaccl weft"
      (( r % 2 )) || order="weft jaccl"
      for lib in $order; do
        if t=$(per_call "$lib" "$topo" "$ranks" "$cables" "$bytes"); then
          echo "$t" >>"$work/$lib.times"
        else
          failed=1
        fi
      done
    done
    cells=()
    for lib in jaccl weft; do
      if [[ ! -s "$work/$lib.times" ]]; then cells+=("-"); continue; fi
      cells+=("$(median <"$work/$lib.times")")
      if (( $(sort -u "$work/$lib.times" | wc -l) > 1 )); then
        varied="$varied  $name, $bytes B, $lib: $(paste -sd ' ' "$work/$lib.times")"$'\n'
      fi
    done
    jt=${cells[0]} wt=${cells[1]}
    read -r bound_us bound_alg <<<"$(bound "$topo" "$ranks" "$cables" "$bytes" || echo "- -")"
    [[ -n "$bound_us" ]] || { bound_us=-; bound_alg=-; failed=1; }
    if [[ "$jt" == - || "$wt" == - ]]; then
      r_wj=-
    else
      r_wj=$(ratio "$wt" "$jt")
      if awk -v r="$r_wj" 'BEGIN { exit !(r > 1.00) }'; then
        above="$above  $name, $bytes B: $r_wj ($(us "$wt") vs $(us "$jt") us)"$'\n'
      fi
    fi
    r_wb=- r_jb=-
    if [[ "$bound_us" != - ]]; then
      [[ "$wt" == - ]] || r_wb=$(ratio "$wt" "$bound_us")
      [[ "$jt" == - ]] || r_jb=$(ratio "$jt" "$bound_us")
    fi
    [[ "$jt" == - ]] || jt=$(us "$jt")
    [[ "$wt" == - ]] || wt=$(us "$wt")
    [[ "$bound_us" == - ]] || bound_us=$(us "$bound_us")
    rows="$rows| $name | $bytes | $jt | $wt | $r_wj | $bound_us ($bound_alg) | $r_jb | $r_wb |"$'\n'
  done
done

echo "# allreduce_bench, float32 all_sum, under weft-sim launch (link tb5): JACCL from $jaccl_name against weft's jaccl ($(git rev-parse --short HEAD 2>/dev/null || echo "?"))"
echo "# one all-sum = (T($iters iterations) - T(1 iteration)) / $(( iters - 1 )), virtual us; $repeats run(s) each, medians"
echo "# bound: weft-bench --model_only's, the lowest lower bound over weft's algorithms (docs/benchmarking.md)"
echo
echo "| world | bytes | JACCL (us) | weft (us) | weft/JACCL | bound (us, algorithm) | JACCL/bound | weft/bound |"
echo "|---|---:|---:|---:|---:|---|---:|---:|"
printf "%s" "$rows"
for world in "${worlds[@]}"; do
  read -r topo ranks cables <<<"$world"
  if [[ "$topo" == mesh ]] && (( cables > 1 )); then
    echo
    echo "The $cables-cable mesh compares what users get, not like with like: JACCL's mesh"
    echo "uses only the first cable of each pair, weft's stripes over all $cables."
    break
  fi
done
echo
if [[ -n "$above" ]]; then printf "# weft/JACCL above 1.00:\n%s" "$above"; else echo "# weft/JACCL above 1.00: none"; fi
if [[ -e "$work/retried" ]]; then printf "# launches that failed and were run again:\n%s" "$(cat "$work/retried")"; echo; fi
if (( repeats > 1 )); then
  if [[ -n "$varied" ]]; then printf "# varied between runs:\n%s" "$varied"; else echo "# varied between runs: none"; fi
fi
echo "# compare-jaccl: $(( $(date +%s) - start )) s"
exit "$failed"
