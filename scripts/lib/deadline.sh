# shellcheck shell=bash
# run_with_deadline LIMIT MARKER COMMAND...: runs COMMAND for at most LIMIT
# seconds without timeout(1), which is GNU-only. A watchdog checks once a
# second that the command still runs and, at the deadline, creates the file
# MARKER and kills the command (TERM, then KILL 5 s later; the command only,
# not processes it started). Returns the command's status (128 + the
# signal's number when the watchdog killed it). While it runs, deadline_pid
# holds the command's pid, so an exit trap can end it. Sourced by
# scripts/bench-smoke.sh and scripts/first-mac-run.sh; bash 3.2 is enough.
# shellcheck disable=SC2034  # read by the scripts that source this file
deadline_pid=""
run_with_deadline() {
  local limit=$1 marker=$2
  shift 2
  "$@" &
  local pid=$!
  deadline_pid=$pid
  (
    waited=0
    while kill -0 "$pid" 2>/dev/null; do
      if (( waited >= limit )); then
        : >"$marker"
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
  deadline_pid=""
  # The command ended first: stop the watchdog (its last sleep of at most
  # one second ends on its own).
  kill "$watchdog" 2>/dev/null || true
  wait "$watchdog" 2>/dev/null || true
  return "$status"
}
