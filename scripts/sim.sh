#!/usr/bin/env bash
# Quick start 1: install what is missing, build, and run weft-sim's default
# study. Extra arguments go to weft-sim.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default --target weft-sim
exec build/default/bin/weft-sim "$@"
