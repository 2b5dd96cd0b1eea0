#!/usr/bin/env bash
# weft over TCP against Gloo on this machine, side by side: all-reduce
# float32 sum at 64 KiB..64 MiB (factor 4) for 2 and 4 processes over
# loopback, weft-bench --fabric=tcp under `weft-sim launch --fabric=tcp` and
# Gloo's ring all-reduce (bench/gloo/gloo_allreduce) interleaved for R
# rounds (the order alternating), then a 2-rank 64 MiB send/recv against a
# plain TCP stream (bench/tcp_compare/tcp_sendrecv). Prints each tool's
# median out-of-place busbw per size, the ratio weft/Gloo, and the
# send/recv ratio; targets are reported, not asserted (all-reduce busbw at
# least 1.3x Gloo's idle, 1.0x with --load; send/recv at least 0.70 of
# plain TCP). --load=N runs N busy loops (`yes`) beside every run, for the
# whole comparison, killed at exit: a machine with other work. Exits 1 when a run
# failed, overran its deadline or reported a wrong element, 2 for bad
# arguments or when Gloo is not built (install libgloo-dev:
# scripts/setup.sh --optional). Runs under macOS's /bin/bash 3.2.
#
# Usage: scripts/compare-gloo.sh [--rounds=R] [--ranks="2 4"] [--min=64K]
#          [--max=64M] [--warmup=W] [--iters=N] [--limit=SECONDS]
#          [--load=N] [--json=FILE]
#   WEFT_BENCH_BUILD_DIR=<dir>  an already configured build dir instead of
#                               the default preset's
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=5
ranks_list="2 4"
min=64K
max=64M
warmup=3
iters=10
limit_s=600   # most any one run may take
load=0        # busy loops beside the runs
json=""
for arg in "$@"; do
  case "$arg" in
    --rounds=*) rounds=${arg#*=} ;;
    --ranks=*) ranks_list=${arg#*=} ;;
    --min=*) min=${arg#*=} ;;
    --max=*) max=${arg#*=} ;;
    --warmup=*) warmup=${arg#*=} ;;
    --iters=*) iters=${arg#*=} ;;
    --limit=*) limit_s=${arg#*=} ;;
    --load=*) load=${arg#*=} ;;
    --json=*) json=${arg#*=} ;;
    *) echo "compare-gloo: unknown argument $arg (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
done
for n in "$rounds" "$warmup" "$iters" "$limit_s" "$load" $ranks_list; do
  case "$n" in
    ''|*[!0-9]*) echo "compare-gloo: \"$n\" is not a whole number" >&2; exit 2 ;;
  esac
done

build_dir="${WEFT_BENCH_BUILD_DIR:-}"
if [[ -z "$build_dir" ]]; then
  build_dir=build/default
  cmake --preset default >/dev/null
fi
known=$(cmake --build "$build_dir" --target help | sed -n 's/^\([^ :]*\): .*/\1/p')
if ! grep -qx gloo_allreduce <<<"$known"; then
  echo "compare-gloo: gloo_allreduce is not built in $build_dir: Gloo was not found; install libgloo-dev (scripts/setup.sh --optional) and configure again" >&2
  exit 2
fi
cmake --build "$build_dir" --target weft-sim weft-bench gloo_allreduce tcp_sendrecv >/dev/null
bin="$build_dir/bin"

# shellcheck source=scripts/lib/deadline.sh
. scripts/lib/deadline.sh

work=$(mktemp -d "${TMPDIR:-/tmp}/weft-compare-gloo.XXXXXX")
load_pids=()
# The busy loops (--load) end with the script.
trap 'if (( ${#load_pids[@]} > 0 )); then kill "${load_pids[@]}" 2>/dev/null || true; fi; rm -rf "$work"' EXIT
# Busy loops for the whole comparison, both tools alike.
for (( i = 0; i < load; i++ )); do
  yes >/dev/null &
  load_pids+=($!)
done
# The all-reduce target: 1.3x Gloo's busbw on an idle machine, 1.0x loaded.
if (( load > 0 )); then target=1.0; else target=1.3; fi
failed=0
fail() { echo "compare-gloo: $*" >&2; failed=1; }

# One weft run of N processes: weft-bench's table in $work/weft-N-R.txt.
run_weft() {
  local n=$1 round=$2 out="$work/weft-$1-$2.txt"
  run_with_deadline "$limit_s" "$work/overran" \
    "$bin/weft-sim" launch --fabric=tcp --ranks="$n" -- \
    "$bin/weft-bench" --fabric=tcp --op=all_reduce -b "$min" -e "$max" -f 4 \
    -w "$warmup" -n "$iters" >"$out" 2>"$out.err" ||
    fail "weft, $n processes, round $round failed: $(tail -n 3 "$out.err")"
}

# One Gloo run: N processes meeting in a fresh FileStore directory, rank
# 0's table in $work/gloo-N-R.txt.
run_gloo() {
  local n=$1 round=$2 out="$work/gloo-$1-$2.txt" store="$work/store-$1-$2"
  local sizes="" s
  s=$(( $(to_bytes "$min") ))
  while (( s <= $(to_bytes "$max") )); do sizes="$sizes${sizes:+,}$s"; s=$(( s * 4 )); done
  mkdir -p "$store"
  local pids=() r
  for (( r = 0; r < n; r++ )); do
    run_with_deadline "$limit_s" "$work/overran" \
      "$bin/gloo_allreduce" --rank="$r" --size="$n" --store="$store" \
      --iface=127.0.0.1 --sizes="$sizes" --warmup_iters="$warmup" \
      --iters="$iters" >"$out.$r" 2>"$out.$r.err" &
    pids+=($!)
  done
  for (( r = 0; r < n; r++ )); do
    wait "${pids[$r]}" ||
      fail "Gloo, $n processes, round $round, rank $r failed: $(tail -n 3 "$out.$r.err")"
  done
  mv "$out.0" "$out"
}

to_bytes() {
  local v=$1
  case "$v" in
    *K) echo $(( ${v%K} << 10 )) ;;
    *M) echo $(( ${v%M} << 20 )) ;;
    *G) echo $(( ${v%G} << 30 )) ;;
    *) echo "$v" ;;
  esac
}

# Median of column COL (6: out-of-place time in us, 8: its busbw) of
# SIZE's rows in FILES.
median_of() {
  local col=$1 size=$2
  shift 2
  awk -v size="$size" -v col="$col" '$1 == size { print $col }' "$@" |
    sort -g | awk '{ v[NR] = $1 } END {
      if (NR == 0) { print "-"; exit }
      if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# The same values, in round order, comma-separated (for the JSON).
raw_busbw() {
  local size=$1
  shift
  awk -v size="$size" '$1 == size { print $8 }' "$@" | paste -sd , -
}
check_wrong() {
  awk '$1 !~ /^#/ && NF >= 13 && ($9 != "0" || $13 != "0") { bad = 1 } END { exit bad }' "$@"
}

echo "# compare-gloo: $rounds rounds, ranks $ranks_list, $min..$max, -w $warmup -n $iters, $load busy loop(s) beside; $(uptime)"
for n in $ranks_list; do
  for (( round = 1; round <= rounds; round++ )); do
    if (( round % 2 )); then run_weft "$n" "$round"; run_gloo "$n" "$round"
    else run_gloo "$n" "$round"; run_weft "$n" "$round"; fi
  done
done
if [[ -e "$work/overran" ]]; then fail "a run overran its ${limit_s} s deadline"; fi

# Send/recv: one run interleaves its own rounds.
run_with_deadline "$limit_s" "$work/overran" \
  "$bin/weft-sim" launch --fabric=tcp --ranks=2 -- \
  "$bin/tcp_sendrecv" --bytes=64M --rounds=$(( rounds * 2 )) \
  >"$work/sendrecv.txt" 2>"$work/sendrecv.err" ||
  fail "send/recv failed: $(tail -n 3 "$work/sendrecv.err")"

# A JSON number, or null for "-".
jnum() { if [[ "$1" == "-" || -z "$1" ]]; then echo null; else echo "$1"; fi; }
# "met" or "missed": is $1 at least $2 (both numbers)?
verdict() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || a == "") print "not measured"; else print (a + 0 >= b + 0 ? "met" : "missed") }'; }

json_rows=""
targets=""
for n in $ranks_list; do
  weft_files=("$work"/weft-"$n"-*.txt)
  gloo_files=("$work"/gloo-"$n"-*.txt)
  check_wrong "${weft_files[@]}" "${gloo_files[@]}" ||
    fail "$n processes: a #wrong column is not 0"
  echo
  echo "# all-reduce float32 sum, $n processes, out of place, medians of $rounds rounds"
  echo "# (weft/Gloo: the ratio of busbw, from the times: Gloo's over weft's)"
  printf "# %10s  %10s  %7s  %10s  %7s  %9s\n" "size" "weft time" "busbw" "Gloo time" "busbw" "weft/Gloo"
  printf "# %10s  %10s  %7s  %10s  %7s  %9s\n" "(B)" "(us)" "(GB/s)" "(us)" "(GB/s)" ""
  s=$(to_bytes "$min")
  while (( s <= $(to_bytes "$max") )); do
    wt=$(median_of 6 "$s" "${weft_files[@]}")
    gt=$(median_of 6 "$s" "${gloo_files[@]}")
    w=$(median_of 8 "$s" "${weft_files[@]}")
    g=$(median_of 8 "$s" "${gloo_files[@]}")
    ratio=$(awk -v w="$wt" -v g="$gt" 'BEGIN { if (w == "-" || g == "-" || w == 0) print "-"; else printf "%.2f", g / w }')
    printf "  %10s  %10s  %7s  %10s  %7s  %9s\n" "$s" "$wt" "$w" "$gt" "$g" "$ratio"
    json_rows="$json_rows${json_rows:+,}{\"ranks\":$n,\"bytes\":$s,\"weft_time_us\":$(jnum "$wt"),\"gloo_time_us\":$(jnum "$gt"),\"weft_busbw_gb_per_s\":$(jnum "$w"),\"gloo_busbw_gb_per_s\":$(jnum "$g"),\"ratio\":$(jnum "$ratio"),\"weft_rounds\":[$(raw_busbw "$s" "${weft_files[@]}")],\"gloo_rounds\":[$(raw_busbw "$s" "${gloo_files[@]}")]}"
    if (( s == 16 << 20 || s == 64 << 20 )); then
      targets="$targets# weft >= ${target}x Gloo at $s B, $n processes: $(verdict "$ratio" "$target") ($ratio)"$'\n'
    fi
    s=$(( s * 4 ))
  done
done
echo
# The launcher's own "rank R (pid P): exited 0" lines are left out.
grep -v '^rank ' "$work/sendrecv.txt" || true
sr=$(awk '/ratio weft\/plain/ { print $NF }' "$work/sendrecv.txt")
echo
printf "%s" "$targets"
echo "# send/recv >= 0.70 of plain TCP: $(verdict "${sr:--}" 0.70) (${sr:--})"
if [[ -n "$json" ]]; then
  printf '{"format_version":2,"tool":"compare-gloo","rounds":%s,"load":%s,"all_reduce":[%s],"sendrecv_ratio":%s}\n' \
    "$rounds" "$load" "$json_rows" "$(jnum "${sr:--}")" >"$json"
fi
exit "$failed"
