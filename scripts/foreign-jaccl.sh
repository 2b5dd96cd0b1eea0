#!/usr/bin/env bash
# JACCL itself (MLX's library, not weft's jaccl) and its examples, built on
# Linux from a JACCL source tree outside weft, where it is: the CMake project
# cmake/foreign-jaccl (JACCL's sources compiled directly, with weft's
# forced-include shim cmake/foreign-jaccl/jaccl_linux_shim.h; nothing of
# JACCL is copied or edited). With --weft-build, the examples then run under
# that build's `weft-sim launch`, on weft's simulated verbs provider (JACCL
# dlopens librdma.dylib; launch puts the provider under that name first in
# LD_LIBRARY_PATH): minimal_env on 2 ranks, minimal_barrier on 4, and
# allreduce_bench with its check flag (-c) as a mesh on 2 ranks and a ring
# (JACCL_RING=1) on 3. Nothing is downloaded.
#
# Usage: scripts/foreign-jaccl.sh --jaccl-src=DIR [--build-dir=DIR]
#          [--weft-build=DIR] [--json-dir=DIR] [--against=jaccl|weft]
#          [--weft-prefix=DIR] [--jobs=N]
#   --jaccl-src   an MLX checkout, its mlx/distributed/jaccl/lib, or a copy
#                 of that folder
#   --build-dir   where to build (default build/foreign-jaccl; with
#                 --against=weft, build/foreign-jaccl-weft)
#   --weft-build  a configured weft build folder (bin/weft-sim and the
#                 simulated provider are built there first) to run the
#                 examples under
#   --json-dir    the folder holding nlohmann/json's json.hpp (default: the
#                 system's, Debian's nlohmann-json3-dev)
#   --against     jaccl (default): JACCL's examples with JACCL's library;
#                 weft: the same examples with weft's jaccl from the
#                 installed weft at --weft-prefix (for comparisons)
# Prints the binaries' folder (bin/jaccl_<example>) on its last line.
# Exits 1 when the build or a run failed, 2 for bad arguments.
set -euo pipefail
cd "$(dirname "$0")/.."

jaccl_src=""
build_dir=""
weft_build=""
json_dir=""
against=jaccl
weft_prefix=""
jobs=2
for arg in "$@"; do
  case "$arg" in
    --jaccl-src=*) jaccl_src=${arg#*=} ;;
    --build-dir=*) build_dir=${arg#*=} ;;
    --weft-build=*) weft_build=${arg#*=} ;;
    --json-dir=*) json_dir=${arg#*=} ;;
    --against=*) against=${arg#*=} ;;
    --weft-prefix=*) weft_prefix=${arg#*=} ;;
    --jobs=*) jobs=${arg#*=} ;;
    *) echo "foreign-jaccl: unknown argument $arg (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
done
die() { echo "foreign-jaccl: $*" >&2; exit 2; }
[[ -n "$jaccl_src" ]] || die "--jaccl-src=DIR is required (an MLX checkout or its mlx/distributed/jaccl/lib)"
[[ -d "$jaccl_src" ]] || die "--jaccl-src: no folder $jaccl_src"
case "$against" in jaccl|weft) ;; *) die "--against is jaccl or weft, not $against" ;; esac
case "$jobs" in ''|*[!0-9]*) die "--jobs: \"$jobs\" is not a whole number" ;; esac
if [[ "$against" == weft && -z "$weft_prefix" ]]; then
  die "--against=weft needs --weft-prefix=DIR (an installed weft)"
fi
if [[ -z "$build_dir" ]]; then
  build_dir=build/foreign-jaccl
  [[ "$against" == weft ]] && build_dir=build/foreign-jaccl-weft
fi

args=(-S cmake/foreign-jaccl -B "$build_dir" -DCMAKE_BUILD_TYPE=Release
      -DJACCL_SRC="$(cd "$jaccl_src" && pwd)" -DFOREIGN_JACCL_AGAINST="$against")
command -v ninja >/dev/null && args+=(-G Ninja)
command -v ccache >/dev/null && args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
[[ -n "$json_dir" ]] && args+=(-DJACCL_JSON_DIR="$json_dir")
[[ -n "$weft_prefix" ]] && args+=(-DCMAKE_PREFIX_PATH="$(cd "$weft_prefix" && pwd)")
start=$(date +%s)
cmake "${args[@]}" >/dev/null || { echo "foreign-jaccl: configure failed" >&2; exit 1; }
cmake --build "$build_dir" -j "$jobs" >/dev/null ||
  { echo "foreign-jaccl: build failed (cmake --build $build_dir shows why)" >&2; exit 1; }
echo "foreign-jaccl: built JACCL's examples against $against in $(($(date +%s) - start)) s"
bin=$(cd "$build_dir/bin" && pwd)

if [[ -n "$weft_build" ]]; then
  [[ "$(uname -s)" == Linux ]] || die "--weft-build runs weft-sim launch's simulated provider: Linux only"
  cmake --build "$weft_build" -j "$jobs" --target weft-sim weft_sim_verbs >/dev/null
  sim="$weft_build/bin/weft-sim"
  failed=0
  # run NAME COUNT TEXT LAUNCH-ARGS... -- PROGRAM ARGS...: passes when the
  # launch exits 0, COUNT lines hold TEXT and none says FAIL.
  run() {
    local name=$1 count=$2 line=$3 out
    shift 3
    out=$(mktemp "${TMPDIR:-/tmp}/weft-foreign-jaccl.XXXXXX")
    if "$sim" launch --timeout_s=300 "$@" >"$out" 2>&1 &&
       [[ "$(grep -cF "$line" "$out")" == "$count" ]] &&
       ! grep -q FAIL "$out"; then
      echo "foreign-jaccl: $name: passed"
    else
      echo "foreign-jaccl: $name: FAILED; its output:" >&2
      cat "$out" >&2
      failed=1
    fi
    rm -f "$out"
  }
  run "minimal_env, 2 ranks" 2 "Result: 2 4 6 8 10 12 14 16 18 20" \
    --ranks=2 -- "$bin/jaccl_minimal_env"
  run "minimal_barrier, 4 ranks" 4 ": post-barrier all_sum OK (10)" \
    --ranks=4 -- "$bin/jaccl_minimal_barrier"
  run "allreduce_bench -c, mesh, 2 ranks" 1 "# Done." \
    --ranks=2 -- "$bin/jaccl_allreduce_bench" -w 1 -n 2 -b 1K -e 1M -f 4 -c
  JACCL_RING=1 run "allreduce_bench -c, ring (JACCL_RING=1), 3 ranks" 1 "# Done." \
    --ranks=3 --topology=ring -- "$bin/jaccl_allreduce_bench" -w 1 -n 2 -b 1K -e 1M -f 4 -c
  [[ "$failed" == 0 ]] || exit 1
fi
echo "$bin"
