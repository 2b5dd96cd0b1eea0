#!/usr/bin/env bash
# wait_for_listener.sh PORT SECONDS COMMAND ARGS...: waits until a TCP socket
# listens on PORT (read from /proc/net/tcp and tcp6, without connecting to
# it, since a program such as ibv_uc_pingpong accepts exactly one
# connection), then runs COMMAND. Exits 124 when nothing listens within
# SECONDS. For tests whose second program connects to the first one's port.
set -euo pipefail
port="$1"
seconds="$2"
shift 2
hex=$(printf '%04X' "$port")
deadline=$((SECONDS + seconds))
listening() {
  # Field 2 is local address:port in hex, field 4 the state (0A: LISTEN).
  awk -v p=":$hex" 'NR > 1 && substr($2, length($2) - 4) == p && $4 == "0A" \
    { found = 1 } END { exit !found }' /proc/net/tcp /proc/net/tcp6
}
until listening; do
  if ((SECONDS >= deadline)); then
    echo "wait_for_listener.sh: nothing listens on port $port after" \
      "${seconds}s" >&2
    exit 124
  fi
  sleep 0.05  # the poll interval of a wait with a deadline
done
exec "$@"
