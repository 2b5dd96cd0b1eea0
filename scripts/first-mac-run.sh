#!/usr/bin/env bash
# First run on a Mac: runs, in order, what only two Macs joined by a
# Thunderbolt 5 cable can prove, and writes every command, exit code, output
# and timing, the Mac's details and a PASS / FAIL / SKIPPED summary into one
# text file to attach to a report (docs/verbs-macos.md, "First run on a
# Mac"). --simulate runs every step on Linux over weft's simulated verbs
# provider instead, which is how CI proves this script works.
# Runs under macOS's /bin/bash 3.2 and without GNU tools.
#
# Usage: scripts/first-mac-run.sh --help
set -uo pipefail  # no -e: a failing command is recorded, not fatal

usage() {
  cat <<'EOF'
usage: scripts/first-mac-run.sh [options]

Runs, in order, what only two Macs joined by a Thunderbolt 5 cable can
prove, and writes every command, its exit code, output and time, the Mac's
details (uname, sw_vers, sysctl, SDK version, rdma_ctl status) and a
summary (each step PASS, FAIL or SKIPPED with the reason) into one text
file to attach to a report:

  1  the build and test suite (scripts/test.sh), and whether
     verbs_layout_test, compiled against the SDK's <infiniband/verbs.h>,
     ran (its table) or was skipped, and why
  2  weft-devices doctor first (what a first run needs, one finding a
     line with its fix; a BLOCKS line fails the step), then weft-devices
     (plain, --verbose, --json): devices, port state, GID order, MTU,
     limits, and the diagnosis when not ready
  3  a two-rank weft-bench --fabric=verbs: this Mac is rank 0 and listens
     at --coordinator; the script prints the command for the other Mac
  4  the same group with the cable pulled mid-run: the script says when to
     pull it; the run must end in a typed error naming the peer, with
     #wrong 0, within --hang-after seconds (not hang)

Options:
  --out FILE              the result file (default ./weft-first-mac-run.txt)
  --build-dir DIR         the build whose bin/ holds weft-devices and
                          weft-bench (default: build/default of this
                          checkout, where scripts/test.sh builds)
  --devices FILE          JACCL device JSON of the two Macs (steps 3, 4)
  --coordinator HOST:PORT this Mac's address as the other Mac reaches it,
                          and a free port (steps 3, 4)
  --steps LIST            the steps to run, comma-separated (default 1,2,3,4)
  --hang-after SECONDS    how long a run may go on after the cable is pulled
                          before it counts as a hang (default 90; weft's
                          default deadline is 30 s)
  --simulate              run every step on Linux over weft's simulated
                          verbs provider (libweft_sim_verbs.so); the suite
                          is not rerun, the two ranks share one process and
                          a fault plan pulls the cable
  -h, --help              this text

Exit code: 0 when no step failed, 1 when one did, 2 for bad usage.
EOF
}

bad_usage() {
  echo "first-mac-run: $1" >&2
  echo "first-mac-run: scripts/first-mac-run.sh --help lists the options" >&2
  exit 2
}

# Absolute form of a path given relative to the directory the script was
# started in (readlink -f is GNU-only).
absolute() {
  case "$1" in
    /*) printf '%s\n' "$1" ;;
    *) printf '%s\n' "$start_dir/$1" ;;
  esac
}

start_dir=$(pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)
command_line=$(printf '%q ' "$0" ${1+"$@"})

simulate=0
build_dir=""
out="weft-first-mac-run.txt"
devices=""
coordinator=""
steps="1,2,3,4"
hang_after=90

set_option() {
  [[ -n "$2" && "$2" != -* ]] || bad_usage "$1 needs a value"
  case "$1" in
    --out) out=$2 ;;
    --build-dir) build_dir=$2 ;;
    --devices) devices=$2 ;;
    --coordinator) coordinator=$2 ;;
    --steps) steps=$2 ;;
    --hang-after) hang_after=$2 ;;
  esac
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --simulate) simulate=1 ;;
    --out | --build-dir | --devices | --coordinator | --steps | --hang-after)
      [[ $# -ge 2 ]] || bad_usage "$1 needs a value"
      set_option "$1" "$2"
      shift ;;
    --out=* | --build-dir=* | --devices=* | --coordinator=* | --steps=* | --hang-after=*)
      set_option "${1%%=*}" "${1#*=}" ;;
    *) bad_usage "unknown argument '$1'" ;;
  esac
  shift
done

want_step=(0 0 0 0 0)  # want_step[i]: 1 when step i is in --steps
IFS=, read -r -a step_list <<<"$steps"
[[ ${#step_list[@]} -gt 0 ]] || bad_usage "--steps=$steps names no step"
for s in "${step_list[@]}"; do
  case "$s" in
    1 | 2 | 3 | 4) want_step[s]=1 ;;
    *) bad_usage "--steps=$steps: '$s' is not a step (1, 2, 3 or 4)" ;;
  esac
done
[[ "$hang_after" =~ ^[1-9][0-9]{0,4}$ ]] ||
  bad_usage "--hang-after=$hang_after is not a number of seconds (1..99999)"
if [[ -n "$coordinator" ]]; then
  if [[ ! "$coordinator" =~ ^[^:]+:[0-9]{1,5}$ ]] || (( 10#${coordinator##*:} > 65535 )); then
    bad_usage "--coordinator=$coordinator is not HOST:PORT (this Mac's address and a port, e.g. 192.168.1.20:5000)"
  fi
fi
if [[ -n "$devices" ]]; then
  devices=$(absolute "$devices")
  [[ -r "$devices" ]] || bad_usage "--devices=$devices: no such readable file"
fi

system=$(uname -s)
if (( simulate )); then
  [[ "$system" == Linux ]] ||
    bad_usage "--simulate needs Linux (the simulated verbs provider is Linux only); this is $system"
  [[ -z "$devices$coordinator" ]] ||
    bad_usage "--devices and --coordinator are for two Macs; --simulate makes its own"
elif [[ "$system" != Darwin ]]; then
  bad_usage "this is $system, not a Mac: run it on a Mac (macOS 26.2+), or pass --simulate"
fi

build_dir=$(absolute "${build_dir:-$repo/build/default}")
out=$(absolute "$out")
: >"$out" 2>/dev/null || bad_usage "--out=$out cannot be written"
bin="$build_dir/bin"
provider="$build_dir/sim_verbs/libweft_sim_verbs.so"

cd "$repo" || exit 2
tmp=$(mktemp -d) || exit 1
active_pid=""  # a background run still going, ended on exit

# ---------------------------------------------------------------- recording

rec() { printf '%s\n' "$*" >>"$out"; }              # a line into the file
say() { printf 'first-mac-run: %s\n' "$*"; }         # progress on the terminal
section() { rec ""; rec "== $* =="; say "$*"; }

# Seconds since the epoch, with milliseconds where perl is there (date +%N
# is GNU-only).
now_s() {
  perl -MTime::HiRes=time -e 'printf "%.3f\n", time' 2>/dev/null || date +%s
}
seconds_between() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f\n", b - a }'; }

# A command line as it can be pasted back into a shell.
quoted() {
  local line
  line=$(printf '%q ' "$@")
  printf '%s\n' "${line% }"
}

# The log of a command into the file, indented: whole up to 1000 lines
# (the layout test's table is 400), else its first 20 lines, the lines that say what failed or was skipped, and its
# last 120 lines.
record_output() {
  local log=$1 lines
  lines=$(wc -l <"$log" | tr -d ' ')
  if (( lines <= 1000 )); then
    sed 's/^/  /' "$log" >>"$out"
    return
  fi
  rec "  ($lines lines: the first 20, the lines naming failures, skips and"
  rec "  the layout test, and the last 120)"
  sed -n '1,20s/^/  /p' "$log" >>"$out"
  rec "  ..."
  grep -nE 'FAIL|Failed|\*\*\*|Not Run|SKIPPED|Skipped|skipped|VerbsLayout|verbs_layout|weft: ' \
    "$log" | head -n 200 | sed 's/^/  /' >>"$out"
  rec "  ..."
  tail -n 120 "$log" | sed 's/^/  /' >>"$out"
}

# run_with_deadline LIMIT MARKER COMMAND... (timeout(1) is GNU-only).
# shellcheck source=scripts/lib/deadline.sh
. "$repo/scripts/lib/deadline.sh"

# run_cmd LIMIT LABEL COMMAND...: runs COMMAND from the checkout (stdout and
# stderr into one log; at most LIMIT seconds, 0 for no limit) and records
# its label, command line, exit code, time and output. Sets cmd_rc,
# cmd_secs, cmd_log and cmd_killed (1 when the deadline killed it).
cmd_count=0
run_cmd() {
  local limit=$1 label=$2
  shift 2
  command_begin "$label" "$@"
  if (( limit > 0 )); then
    run_with_deadline "$limit" "$tmp/killed-$cmd_count" "$@" >"$cmd_log" 2>&1
    cmd_rc=$?
    [[ -e "$tmp/killed-$cmd_count" ]] && cmd_killed=1
  else
    "$@" >"$cmd_log" 2>&1
    cmd_rc=$?
  fi
  command_end "$limit"
}

# run_cmd_shown LABEL COMMAND...: run_cmd without a deadline, showing the
# output on the terminal as well (a long build).
run_cmd_shown() {
  local label=$1
  shift
  command_begin "$label" "$@"
  "$@" 2>&1 | tee "$cmd_log"
  cmd_rc=${PIPESTATUS[0]}
  command_end 0
}

# The record of a command's start (command_end records its end).
command_begin() {
  local label=$1
  shift
  cmd_count=$(( cmd_count + 1 ))
  cmd_log="$tmp/command-$cmd_count.log"
  cmd_killed=0
  rec ""
  rec "--- $label"
  rec "\$ $(quoted "$@")"
  say "  $label"
  cmd_t0=$(now_s)
}

# Records the exit code, time and output of the command begun last; $1 its
# deadline.
command_end() {
  cmd_secs=$(seconds_between "$cmd_t0" "$(now_s)")
  if (( cmd_killed )); then
    rec "exit code: $cmd_rc   time: $cmd_secs s   (killed: still running after $1 s)"
  else
    rec "exit code: $cmd_rc   time: $cmd_secs s"
  fi
  rec "output:"
  record_output "$cmd_log"
}

# A system detail: the command, its exit code and output (no step).
detail() {
  rec "\$ $(quoted "$@")"
  if command -v "$1" >/dev/null 2>&1; then
    local o rc
    o=$("$@" 2>&1)
    rc=$?
    [[ -n "$o" ]] && printf '%s\n' "$o" | sed 's/^/  /' >>"$out"
    rec "  (exit code $rc)"
  else
    rec "  ($1: not found)"
  fi
}

step_name=("" "build and test suite" "weft-devices" "two-rank weft-bench"
           "cable pulled mid-run")
step_status=("" "" "" "" "")
step_reason=("" "" "" "" "")
set_step() {
  step_status[$1]=$2
  step_reason[$1]=$3
  rec ""
  rec "result of step $1: $2: $3"
  say "step $1 ($2): $3"
}

summary_written=0
write_summary() {
  summary_written=1
  local i line passed=0 failed=0 skipped=0
  rec ""
  rec "== summary =="
  for i in 1 2 3 4; do
    if [[ -z "${step_status[i]}" ]]; then
      step_status[i]=SKIPPED
      step_reason[i]="not reached (the script was interrupted)"
    fi
    case "${step_status[i]}" in
      PASS) passed=$(( passed + 1 )) ;;
      FAIL) failed=$(( failed + 1 )) ;;
      *) skipped=$(( skipped + 1 )) ;;
    esac
    line=$(printf 'step %d  %-7s  %s: %s' "$i" "${step_status[i]}" \
      "${step_name[i]}" "${step_reason[i]}")
    rec "$line"
    printf '%s\n' "$line"
  done
  line="result: $passed passed, $failed failed, $skipped skipped"
  rec "$line"
  printf '%s\n' "$line"
  say "attach $out to the report"
}

# On exit, however it comes: ends a run still going, completes the summary
# (steps not reached: SKIPPED), removes the scratch files.
# shellcheck disable=SC2317  # called by the EXIT trap
finish() {
  local pid
  for pid in "$active_pid" "$deadline_pid"; do
    [[ -n "$pid" ]] || continue
    kill -TERM "$pid" 2>/dev/null
    sleep 1
    kill -KILL "$pid" 2>/dev/null
  done
  (( summary_written )) || write_summary >/dev/null
  rm -rf "$tmp"
}
trap finish EXIT
trap 'exit 130' INT TERM

# Asks the person at the keyboard to press Enter (at most $1 seconds);
# fails when no one did.
wait_for_enter() {
  local reply
  printf 'first-mac-run: %s ' "$2"
  read -r -t "$1" reply || return 1
  : "$reply"
}

# ---------------------------------------------------------------- checks

# The elements weft-bench counted wrong: the #wrong columns (out of place
# and in place) of its result rows, added up.
wrong_elements() {
  awk '!/^#/ && NF >= 13 {
         if ($9 ~ /^[0-9]+$/) n += $9
         if ($13 ~ /^[0-9]+$/) n += $13
       }
       END { print n + 0 }' "$1"
}

# Judges a weft-bench run that should have measured without error: sets
# verdict (PASS or FAIL) and why.
judge_bench() {
  local log=$1 rc=$2 wrong
  wrong=$(wrong_elements "$log")
  verdict=FAIL
  if (( cmd_killed )); then
    why="still running after its deadline (killed)"
  elif (( rc != 0 )); then
    why="exit code $rc: $(grep -E '^weft-bench: |^# \^' "$log" | head -n 1)"
  elif (( wrong != 0 )); then
    why="#wrong is $wrong"
  elif ! grep -qE '^# #wrong total +: 0 *$' "$log"; then
    why="no '#wrong total : 0' footer"
  else
    verdict=PASS
    why="#wrong 0"
  fi
}

# What a weft-bench table measured: the out-of-place time of its first row
# (the smallest size), the busbw of its last, the average busbw.
bench_figures() {
  awk '!/^#/ && NF >= 13 {
         if (!first) first = sprintf("%s B in %s us", $1, $6)
         last = sprintf("%s B at %s GB/s busbw", $1, $8)
       }
       /^# Avg bus bandwidth/ { avg = $NF }
       END { printf "%s, %s, avg busbw %s GB/s\n", first, last, avg }' "$1"
}

# Judges a run whose cable was pulled: it must end (not be killed at the
# deadline) with exit code 1 and an error naming the peer (rank 1), and
# report no wrong element. $4 says when it ended. Sets verdict and why.
judge_cable_pull() {
  local log=$1 rc=$2 killed=$3 when=$4 wrong error
  wrong=$(wrong_elements "$log")
  error=$(grep -E '^weft-bench: .*peer 1|typed error \(.*peer 1' "$log" | head -n 1)
  verdict=FAIL
  if (( killed )); then
    why="hang: still running $hang_after s after the cable was pulled (killed)"
  elif (( rc == 0 )); then
    why="the run ended without an error (was the cable pulled?)"
  elif (( wrong != 0 )); then
    why="#wrong is $wrong: wrong data was reported as a result"
  elif [[ -z "$error" ]]; then
    why="exit code $rc, but no error names the peer (rank 1): $(grep -E '^weft-bench: ' "$log" | head -n 1)"
  elif (( rc != 1 )); then
    why="exit code $rc (1 expected): $error"
  else
    verdict=PASS
    if (( ${#error} > 200 )); then error="${error:0:200}..."; fi
    why="typed error naming the peer, $when, #wrong 0: $error"
  fi
}

# Judges verbs_layout_test's log: sets verdict and why.
judge_layout() {
  local log=$1 rc=$2 where=$3 items skipped
  items=$(grep -E '^[0-9]+ items, [0-9]+ mismatches' "$log" | tail -n 1)
  skipped=$(grep -E '^\[  SKIPPED \] [A-Za-z].*\(' "$log" | sed 's/^\[  SKIPPED \] //; s/ (.*//' | tr '\n' ' ')
  verdict=FAIL
  if (( rc != 0 )); then
    why="verbs_layout_test ran against $where and failed (exit code $rc): ${items:-no table}"
  elif [[ "$items" != *", 0 mismatches" ]]; then
    why="verbs_layout_test ran against $where but printed no '0 mismatches' line"
  else
    verdict=PASS
    why="verbs_layout_test ran against $where: $items"
    [[ -z "$skipped" ]] || why="$why; skipped: ${skipped% }"
  fi
}

# The GIDs of each device in table order, from weft-devices --verbose:
# "dev: 0 link-local, 1 IPv4-mapped; dev2: ...".
gid_order() {
  awk '$1 == "library:" || $1 == "device" || $1 == "diagnosis:" { next }
       /^[^ ]/ { dev = $1; next }
       /^    gid\[/ {
         i = $1; sub(/^gid\[/, "", i); sub(/\]$/, "", i)
         k = $0; sub(/.*\(/, "", k); sub(/\).*/, "", k)
         if (!(dev in g)) names[++n] = dev
         g[dev] = g[dev] (g[dev] == "" ? "" : ", ") i " " k
       }
       END {
         for (j = 1; j <= n; j++)
           printf "%s%s: %s", (j > 1 ? "; " : ""), names[j], g[names[j]]
         print ""
       }' "$1"
}

# Device, port state and MTU of each device of weft-devices' table.
device_states() {
  awk '$1 == "device" { table = 1; next }
       $1 == "diagnosis:" { table = 0 }
       table && /^[^ ]/ { printf "%s%s %s MTU %s", (n++ ? ", " : ""), $1, $3, $4 }
       END { print "" }' "$1"
}

# The device names of rank 0's row of a JACCL device JSON (a name or a
# list of names per peer), one a line.
row0_devices() {
  tr -d '\n' <"$1" | awk '{
    for (i = 1; i <= length($0); i++) {
      c = substr($0, i, 1)
      if (in_string) {
        if (c == "\"") { in_string = 0; if (row == 1) print name; name = "" }
        else name = name c
      } else if (c == "\"") in_string = 1
      else if (c == "[") { if (++depth == 2) row++ }
      else if (c == "]") depth--
    }
  }'
}

# Judges weft-devices: rank 0's devices (row 0 of the device JSON, or any
# device without one) must be ready: port active with an IPv4-mapped GID.
# Other ports (no cable in them) may be down. $1 the table's log, $2 its
# exit code, $3 the --json log. Sets verdict and why.
judge_devices() {
  local log=$1 rc=$2 json=$3 ready needed d missing="" others
  ready=$(awk -F'"' '/"name":/ { name = $4 } /"ready": true/ { print name }' "$json")
  others=$(awk -F'"' '/"name":/ { name = $4 } /"ready": false/ { printf "%s%s", (n++ ? ", " : ""), name }' "$json")
  verdict=FAIL
  if (( rc != 0 && rc != 4 )); then
    why="exit code $rc: $(grep -vE '^(library|device) ' "$log" | head -n 1)"
    return
  fi
  if [[ -n "$devices" ]]; then
    needed=$(row0_devices "$devices")
    for d in $needed; do
      printf '%s\n' "$ready" | grep -qx -- "$d" || missing="$missing $d"
    done
    if [[ -z "$needed" ]]; then
      why="$devices names no device for rank 0"
      return
    elif [[ -n "$missing" ]]; then
      why="rank 0's device(s) in $(basename "$devices") not ready:$missing: $(sed -n 's/^diagnosis: //p' "$log" | head -n 1)"
      return
    fi
  elif [[ -z "$ready" ]]; then
    why="no device is ready: $(sed -n 's/^diagnosis: //p' "$log" | head -n 1)"
    return
  fi
  verdict=PASS
  why="ready: $(printf '%s\n' "$ready" | tr '\n' ' ' | sed 's/ $//')"
  [[ -z "$others" ]] || why="$why; not ready (ports without a cable?): $others"
}

require_bin() {
  local b
  for b in "$@"; do
    [[ -x "$bin/$b" ]] || { missing_bin=$b; return 1; }
  done
}

# ---------------------------------------------------------------- the file

rec "# weft: first run on a Mac"
if (( simulate )); then
  rec "# mode: --simulate (Linux, weft's simulated verbs provider: not a hardware run)"
else
  rec "# mode: Mac"
fi
rec "# started: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
rec "# command: ${command_line% }"
rec "# checkout: $repo"
rec "# build dir: $build_dir"
rec "# result file: $out"

section "system"
detail git -C "$repo" rev-parse HEAD
detail git -C "$repo" status --short --untracked-files=no
detail uname -a
detail sw_vers
detail sysctl hw.model machdep.cpu.brand_string hw.ncpu hw.memsize
detail xcrun --show-sdk-version
detail xcrun --show-sdk-path
detail rdma_ctl status
detail cmake --version
detail c++ --version
rec "WEFT_VERBS_LIBRARY=${WEFT_VERBS_LIBRARY-(unset)}"
if (( ! simulate )) && [[ -n "${WEFT_VERBS_LIBRARY-}" ]]; then
  rec "note: WEFT_VERBS_LIBRARY is set: every step loads it instead of Apple's librdma.dylib"
fi

# The steps set JACCL's variables per command; a leftover one, or an alias,
# would override or contradict them.
unset JACCL_RANK JACCL_IBV_DEVICES JACCL_COORDINATOR JACCL_RING MLX_RANK \
  MLX_IBV_DEVICES MLX_JACCL_COORDINATOR MLX_JACCL_RING OMPI_COMM_WORLD_RANK \
  SLURM_PROCID
if (( simulate )); then
  # The provider's world is given per command; none from the caller.
  for v in $(env | sed -n 's/^\(WEFT_SIM_VERBS_[A-Z_]*\)=.*/\1/p'); do
    unset "$v"
  done
fi

# Step 3 and 4's device files (--simulate: the provider's two-rank mesh).
if (( simulate )); then
  devices="$tmp/devices.json"
  printf '[[null, "sim_0_1_0"], ["sim_1_0_0", null]]\n' >"$devices"
  one_rank="$tmp/one-rank.json"
  printf '[[null]]\n' >"$one_rank"
  sim_env=(env "WEFT_VERBS_LIBRARY=$provider" WEFT_SIM_VERBS_RANKS=2
           WEFT_SIM_VERBS_RANK=0)
fi

# The command the other Mac runs for rank 1 (its checkout laid out as
# this one; the device file copied next to it).
other_mac_command() {
  local rel=$bin
  case "$bin" in "$repo"/*) rel=${bin#"$repo"/} ;; esac
  printf 'JACCL_RANK=1 JACCL_IBV_DEVICES=%s JACCL_COORDINATOR=%s %s/weft-bench --fabric=verbs %s\n' \
    "$(basename "$devices")" "$coordinator" "$rel" "$*"
}

# Tells the person what to run on the other Mac, in the file and on the
# terminal.
show_other_mac() {
  local command
  command=$(other_mac_command "$@")
  rec ""
  rec "--- on the other Mac (rank 1), from its weft checkout, with $(basename "$devices") copied there:"
  rec "  $command"
  rec "  $(basename "$devices"):"
  sed 's/^/    /' "$devices" >>"$out"
  printf '\n  on the OTHER Mac (rank 1), from its weft checkout, with %s\n  (the file below) copied there, run:\n\n    %s\n\n' \
    "$(basename "$devices")" "$command"
  sed 's/^/    /' "$devices"
  printf '\n'
}

# ---------------------------------------------------------------- step 1

step1() {
  section "step 1: ${step_name[1]}"
  local cache="$build_dir/CMakeCache.txt" include_dir
  if (( simulate )); then
    if [[ ! -f "$cache" ]]; then
      set_step 1 FAIL "no configured build at $build_dir (cmake --preset default)"
      return
    fi
    include_dir=$(sed -n 's/^WEFT_VERBS_REAL_INCLUDE_DIR:PATH=//p' "$cache")
    rec "the suite is not rerun with --simulate; the build dir exists"
    rec "WEFT_VERBS_REAL_INCLUDE_DIR=$include_dir (CMakeCache.txt)"
    if [[ ! -x "$bin/verbs_layout_test" ]]; then
      set_step 1 FAIL "verbs_layout_test is not built in $build_dir (WEFT_VERBS_REAL_INCLUDE_DIR=$include_dir)"
      return
    fi
    run_cmd 120 "verbs_layout_test: weft's verbs/abi.h against $include_dir/infiniband/verbs.h" \
      "$bin/verbs_layout_test"
    judge_layout "$cmd_log" "$cmd_rc" "$include_dir/infiniband/verbs.h"
    set_step 1 "$verdict" "$why (suite not rerun: --simulate)"
    return
  fi

  local sdk header suite
  sdk=$(xcrun --show-sdk-path 2>/dev/null)
  header="$sdk/usr/include/infiniband/verbs.h"
  if [[ -n "$sdk" && -f "$header" ]]; then
    rec "the SDK's header: $header (present)"
  else
    rec "the SDK's header: ${sdk:-(xcrun found no SDK)}/usr/include/infiniband/verbs.h (absent)"
  fi
  [[ "$build_dir" == "$repo/build/default" ]] ||
    rec "note: scripts/test.sh builds build/default; --build-dir is $build_dir"
  say "  scripts/test.sh builds everything and runs every test: many minutes"
  run_cmd_shown "the build and test suite (installs what is missing with Homebrew)" scripts/test.sh
  suite=$(grep -E 'tests passed|tests failed' "$cmd_log" | tail -n 1)
  if (( cmd_rc != 0 )); then
    set_step 1 FAIL "scripts/test.sh exited $cmd_rc: ${suite:-see its output}"
    return
  fi
  local built="$repo/build/default"
  include_dir=$(sed -n 's/^WEFT_VERBS_REAL_INCLUDE_DIR:PATH=//p' "$built/CMakeCache.txt" 2>/dev/null)
  rec "WEFT_VERBS_REAL_INCLUDE_DIR=$include_dir (build/default/CMakeCache.txt)"
  if [[ -x "$built/bin/verbs_layout_test" ]]; then
    rec "verbs_layout_test was built and ran in the suite; its table:"
    run_cmd 120 "verbs_layout_test against $include_dir/infiniband/verbs.h" \
      "$built/bin/verbs_layout_test"
    judge_layout "$cmd_log" "$cmd_rc" "$include_dir/infiniband/verbs.h"
    set_step 1 "$verdict" "$suite; $why"
    return
  fi
  rec "verbs_layout_test was skipped at configure time: CMake found no <infiniband/verbs.h> (WEFT_VERBS_REAL_INCLUDE_DIR=$include_dir)"
  if [[ -z "$sdk" || ! -f "$header" ]]; then
    set_step 1 FAIL "$suite; verbs_layout_test skipped: the SDK ($(xcrun --show-sdk-version 2>/dev/null || echo none)) has no infiniband/verbs.h (macOS 26.2+ SDK needed)"
    return
  fi
  # docs/verbs-macos.md, "Running the layout test against the macOS SDK".
  run_cmd_shown "configure build/mac with the SDK's header" \
    cmake -S . -B build/mac -G Ninja "-DWEFT_VERBS_REAL_INCLUDE_DIR=$sdk/usr/include"
  (( cmd_rc == 0 )) && run_cmd_shown "build verbs_layout_test" \
    cmake --build build/mac --target verbs_layout_test
  if (( cmd_rc != 0 )); then
    set_step 1 FAIL "$suite; verbs_layout_test was skipped by the suite and did not build in build/mac against $header (exit code $cmd_rc)"
    return
  fi
  run_cmd 120 "verbs_layout_test against $header" build/mac/bin/verbs_layout_test
  judge_layout "$cmd_log" "$cmd_rc" "$header"
  set_step 1 "$verdict" "$suite; skipped by the suite (no header found), then built in build/mac: $why"
}

# ---------------------------------------------------------------- step 2

step2() {
  section "step 2: ${step_name[2]}"
  local missing_bin="" plain_rc plain_log verbose_log gids
  if ! require_bin weft-devices; then
    set_step 2 FAIL "no $bin/$missing_bin (build it)"
    return
  fi
  local run=(env) doctor_blocks
  (( simulate )) && run=("${sim_env[@]}")
  # The doctor first: exit code 1 and its BLOCKS lines when something
  # keeps a first run from working.
  run_cmd 120 "weft-devices doctor (what a first run needs)" "${run[@]}" "$bin/weft-devices" doctor
  doctor_blocks=""
  if (( cmd_rc != 0 )); then
    doctor_blocks=$(grep -m 1 '^BLOCKS ' "$cmd_log")
    doctor_blocks="the doctor exited $cmd_rc: ${doctor_blocks:-see its output}"
  fi
  run_cmd 60 "weft-devices" "${run[@]}" "$bin/weft-devices"
  plain_rc=$cmd_rc
  plain_log=$cmd_log
  run_cmd 60 "weft-devices --verbose (every GID, device limits)" "${run[@]}" "$bin/weft-devices" --verbose
  verbose_log=$cmd_log
  run_cmd 60 "weft-devices --json" "${run[@]}" "$bin/weft-devices" --json
  gids=$(gid_order "$verbose_log")
  rec ""
  rec "devices: $(device_states "$plain_log")"
  rec "GID order: ${gids:-none}"
  judge_devices "$plain_log" "$plain_rc" "$cmd_log"
  local step_verdict=$verdict step_why
  step_why="$why; GIDs ${gids:-none}; $(device_states "$plain_log")"
  if [[ -n "$doctor_blocks" ]]; then
    step_verdict=FAIL
    step_why="$doctor_blocks; $step_why"
  fi
  if (( simulate )) && [[ "$step_verdict" == PASS ]]; then
    # The other Mac; a Mac with a second port and no cable in it (exit
    # code 4, yet rank 0's device is ready); every port down (the cable
    # unplugged).
    run_cmd 60 "weft-devices as rank 1 (the other Mac)" \
      env "WEFT_VERBS_LIBRARY=$provider" WEFT_SIM_VERBS_RANKS=2 WEFT_SIM_VERBS_RANK=1 \
      "$bin/weft-devices"
    (( cmd_rc == 0 )) || { step_verdict=FAIL; step_why="rank 1: exit code $cmd_rc"; }
    run_cmd 60 "weft-devices --json on a Mac with a second port and no cable in it" \
      env "WEFT_VERBS_LIBRARY=$provider" WEFT_SIM_VERBS_RANKS=3 WEFT_SIM_VERBS_PORT=down:sim_0_2_0 \
      "$bin/weft-devices" --json
    judge_devices "$cmd_log" "$cmd_rc" "$cmd_log"
    if (( cmd_rc != 4 )) || [[ "$verdict" != PASS ]]; then
      step_verdict=FAIL
      step_why="a second port without a cable: exit code $cmd_rc, $verdict: $why"
    fi
    run_cmd 60 "weft-devices with every port down (the cable unplugged): exit code 4 and a diagnosis" \
      env "WEFT_VERBS_LIBRARY=$provider" WEFT_SIM_VERBS_RANKS=2 WEFT_SIM_VERBS_PORT=down \
      "$bin/weft-devices"
    if (( cmd_rc != 4 )) || ! grep -q '^diagnosis: .*PORT_DOWN' "$cmd_log"; then
      step_verdict=FAIL
      step_why="every port down: exit code $cmd_rc, not 4 with a PORT_DOWN diagnosis"
    fi
  fi
  set_step 2 "$step_verdict" "$step_why"
}

# ---------------------------------------------------------------- step 3

step3() {
  section "step 3: ${step_name[3]}"
  local missing_bin="" predicted
  if ! require_bin weft-bench; then
    set_step 3 FAIL "no $bin/$missing_bin (build it)"
    return
  fi
  if (( simulate )); then
    if ! require_bin verbs_collectives_test || [[ ! -f "$provider" ]]; then
      set_step 3 FAIL "needs $bin/verbs_collectives_test and $provider (build them)"
      return
    fi
    local sweep=(-b 4K -e 1M -f 4)
    rec "device JSON ($devices):"
    sed 's/^/  /' "$devices" >>"$out"
    run_cmd 300 "what the two Macs should show: the same sweep on weft's simulator (tb5 link)" \
      "$bin/weft-bench" --devices "$devices" "${sweep[@]}"
    local predict_rc=$cmd_rc
    predicted=$(bench_figures "$cmd_log")
    coordinator="127.0.0.1:47000"  # shown only: no second process joins
    show_other_mac "${sweep[*]}" >/dev/null
    rec "  (not run with --simulate: the simulated provider holds every rank of a"
    rec "  world in one process, so a second weft-bench process cannot join this"
    rec "  one's world: its RTR fails with errno 22. Rank 0 runs as a one-rank"
    rec "  group, and two ranks run in one process below.)"
    run_cmd 300 "rank 0 over the simulated provider: a one-rank group from JACCL's environment" \
      "${sim_env[@]}" JACCL_RANK=0 "JACCL_IBV_DEVICES=$one_rank" \
      "$bin/weft-bench" --fabric=verbs "${sweep[@]}" -w 1 -n 2
    judge_bench "$cmd_log" "$cmd_rc"
    if [[ "$verdict" == PASS ]] && ! grep -q 'on verbs' "$cmd_log"; then
      verdict=FAIL
      why="the table does not say it ran on verbs"
    fi
    local one_verdict=$verdict one_why=$why
    run_cmd 300 "two and three ranks over the simulated provider in one process (TCP bootstrap, create_group, all-sum)" \
      "$bin/verbs_collectives_test" '--gtest_filter=VerbsTcpGroup.*:Over/CollectivesMatrix.TwoRanksAuto/*'
    if (( predict_rc != 0 )); then
      set_step 3 FAIL "the simulator's prediction failed (exit code $predict_rc)"
    elif [[ "$one_verdict" != PASS ]]; then
      set_step 3 FAIL "rank 0 over the provider: $one_why"
    elif (( cmd_rc != 0 )) || ! grep -q '^\[  PASSED  \] 2 tests' "$cmd_log"; then
      set_step 3 FAIL "two ranks over the provider in one process: exit code $cmd_rc"
    else
      set_step 3 PASS "rank 0 over the provider (a one-rank group): $one_why; two and three ranks over the provider in one process: 2 tests passed; predicted for two Macs: $predicted"
    fi
    return
  fi

  if [[ -z "$devices" || -z "$coordinator" ]]; then
    set_step 3 SKIPPED "needs --devices FILE and --coordinator HOST:PORT"
    return
  fi
  local sweep=(-b 8 -e 128M -f 2)
  rec "device JSON ($devices):"
  sed 's/^/  /' "$devices" >>"$out"
  run_cmd 600 "what the two Macs should show: the same sweep on weft's simulator (tb5 link)" \
    "$bin/weft-bench" --devices "$devices" "${sweep[@]}"
  predicted=$(bench_figures "$cmd_log")
  show_other_mac "${sweep[*]}"
  if [[ -t 0 ]]; then
    wait_for_enter 3600 "start it there first (it waits up to 60 s for this Mac), then press Enter here:" || true
  fi
  run_cmd 900 "rank 0 (this Mac)" env JACCL_RANK=0 "JACCL_IBV_DEVICES=$devices" \
    "JACCL_COORDINATOR=$coordinator" "$bin/weft-bench" --fabric=verbs "${sweep[@]}"
  judge_bench "$cmd_log" "$cmd_rc"
  if [[ "$verdict" == PASS ]] && ! grep -q 'on verbs' "$cmd_log"; then
    verdict=FAIL
    why="the table does not say it ran on verbs"
  fi
  [[ "$verdict" == PASS ]] && why="$why; measured: $(bench_figures "$cmd_log")"
  set_step 3 "$verdict" "$why; predicted by the simulator: $predicted"
}

# ---------------------------------------------------------------- step 4

step4() {
  section "step 4: ${step_name[4]}"
  local missing_bin=""
  if ! require_bin weft-bench; then
    set_step 4 FAIL "no $bin/$missing_bin (build it)"
    return
  fi
  if (( simulate )); then
    local plan="$tmp/cable-pulled.plan"
    {
      echo "# the cable between rank 0 and rank 1 is pulled 5 ms into each"
      echo "# measurement (virtual time): both directions go dead"
      echo "link_down from=0 to=1 at_ns=5000000"
      echo "link_down from=1 to=0 at_ns=5000000"
    } >"$plan"
    rec "fault plan ($plan):"
    sed 's/^/  /' "$plan" >>"$out"
    say "  --simulate: the fault plan pulls the cable 5 ms in (virtual time)"
    run_cmd "$hang_after" "ranks 0 and 1 on weft's simulator, a 111 ms run whose cable the fault plan pulls" \
      "$bin/weft-bench" --devices "$devices" -b 1M -e 1M -w 1 -n 1000 "--faults=$plan"
    judge_cable_pull "$cmd_log" "$cmd_rc" "$cmd_killed" \
      "the cable pulled 5 ms in (virtual time), the run over after $cmd_secs s (wall)"
    local pull_verdict=$verdict pull_why=$why
    if ! require_bin verbs_collectives_test; then
      set_step 4 FAIL "no $bin/$missing_bin (build it)"
      return
    fi
    run_cmd "$hang_after" "the provider's fault plans (dead links, crashes, qp errors at virtual times) over VerbsFabric: every operation correct or a typed error" \
      "$bin/verbs_collectives_test" '--gtest_filter=Over/CollectivesFaultProperty.*'
    if [[ "$pull_verdict" != PASS ]]; then
      set_step 4 FAIL "$pull_why"
    elif (( cmd_rc != 0 )); then
      set_step 4 FAIL "the provider's fault property failed (exit code $cmd_rc)"
    else
      set_step 4 PASS "$pull_why; the provider's fault plans: every operation correct or typed"
    fi
    return
  fi

  if [[ -z "$devices" || -z "$coordinator" ]]; then
    set_step 4 SKIPPED "needs --devices FILE and --coordinator HOST:PORT"
    return
  fi
  if [[ ! -t 0 ]]; then
    set_step 4 SKIPPED "needs a person at the terminal to pull the cable (stdin is not a terminal)"
    return
  fi
  # 4 MiB all-sums, a million of them: minutes on a tb5 cable.
  local long=(-b 4M -e 4M -n 1000000)
  show_other_mac "${long[*]}"
  wait_for_enter 3600 "start it there first, then press Enter here to start rank 0:" || true
  local log="$tmp/cable-pull.log" t0 t_prompt t_pull="" pid rc=0 killed=0
  local command=(env JACCL_RANK=0 "JACCL_IBV_DEVICES=$devices" "JACCL_COORDINATOR=$coordinator"
                 "$bin/weft-bench" --fabric=verbs "${long[@]}")
  rec ""
  rec "--- rank 0 (this Mac), the cable pulled mid-run"
  rec "\$ $(quoted "${command[@]}")"
  t0=$(now_s)
  "${command[@]}" >"$log" 2>&1 &
  pid=$!
  active_pid=$pid
  say "  rank 0 started; wait 15 s for the group to form and the run to get going"
  sleep 15
  if ! kill -0 "$pid" 2>/dev/null; then
    wait "$pid"
    rc=$?
    active_pid=""
    rec "exit code: $rc   time: $(seconds_between "$t0" "$(now_s)") s"
    rec "output:"
    record_output "$log"
    set_step 4 FAIL "the run ended (exit code $rc) before the cable was pulled: $(grep -E '^weft-bench: ' "$log" | head -n 1)"
    return
  fi
  # The prompt; Enter says the cable is out. The run may end before
  # Enter is pressed (the cable was pulled first).
  t_prompt=$(now_s)
  printf '\a\n'
  printf 'first-mac-run: *** PULL THE THUNDERBOLT CABLE between the two Macs NOW, then press Enter *** '
  local confirmed=0 ended_early=0 waited=0 status reply
  while (( waited < 600 )); do
    read -r -t 1 reply
    status=$?
    if (( status == 0 )); then
      confirmed=1
      break
    fi
    (( status > 128 )) || break  # end of input, not a timeout
    if ! kill -0 "$pid" 2>/dev/null; then
      ended_early=1
      printf '\n'
      break
    fi
    waited=$(( waited + 1 ))
  done
  : "$reply"
  t_pull=$(now_s)
  if (( !confirmed && !ended_early )); then
    kill -TERM "$pid" 2>/dev/null
    wait "$pid"
    active_pid=""
    rec "(no one pressed Enter within 600 s; rank 0 stopped)"
    record_output "$log"
    set_step 4 SKIPPED "no one confirmed pulling the cable within 600 s"
    return
  fi
  waited=0
  while kill -0 "$pid" 2>/dev/null; do
    if (( waited >= hang_after )); then
      killed=1
      kill -TERM "$pid" 2>/dev/null
      sleep 5
      kill -KILL "$pid" 2>/dev/null
      break
    fi
    sleep 1
    waited=$(( waited + 1 ))
  done
  wait "$pid"
  rc=$?
  active_pid=""
  local when
  if (( killed )); then
    when="killed $hang_after s after the pull (Enter pressed $(seconds_between "$t_prompt" "$t_pull") s after the prompt)"
  elif (( ended_early )); then
    when="$(seconds_between "$t_prompt" "$t_pull") s after the prompt to pull the cable, before Enter was pressed"
  else
    when="at most $(seconds_between "$t_pull" "$(now_s)") s after the pull (Enter pressed $(seconds_between "$t_prompt" "$t_pull") s after the prompt)"
  fi
  rec "exit code: $rc   time: $(seconds_between "$t0" "$(now_s)") s in all; prompt to pull the cable $(seconds_between "$t0" "$t_prompt") s in; the run ended $when"
  rec "output:"
  record_output "$log"
  judge_cable_pull "$log" "$rc" "$killed" "$when"
  set_step 4 "$verdict" "$why"

  # How long the port takes to come back (recorded, not judged).
  if wait_for_enter 600 "plug the cable back in, then press Enter (the script times how long the port takes to be ready again):"; then
    local t_plug back=""
    t_plug=$(now_s)
    waited=0
    while (( waited < 180 )); do
      "$bin/weft-devices" --json >"$tmp/replug.json" 2>&1
      judge_devices "$tmp/replug.json" "$?" "$tmp/replug.json"
      if [[ "$verdict" == PASS ]]; then
        back=$(seconds_between "$t_plug" "$(now_s)")
        break
      fi
      sleep 2
      waited=$(( waited + 2 ))
    done
    rec ""
    if [[ -n "$back" ]]; then
      rec "after the cable was plugged back in, rank 0's device was ready after $back s"
    else
      rec "after the cable was plugged back in, rank 0's device was not ready within 180 s"
    fi
    run_cmd 60 "weft-devices after the replug" "$bin/weft-devices"
  fi
}

# ---------------------------------------------------------------- main

for i in 1 2 3 4; do
  if (( want_step[i] )); then
    case $i in
      1) step1 ;;
      2) step2 ;;
      3) step3 ;;
      4) step4 ;;
    esac
  else
    set_step "$i" SKIPPED "not in --steps=$steps"
  fi
done
write_summary
for i in 1 2 3 4; do
  [[ "${step_status[i]}" != FAIL ]] || exit 1
done
exit 0
