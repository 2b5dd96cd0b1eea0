#!/usr/bin/env bash
# Quick start 2: install what is missing, build, and run every test.
# Usage: scripts/test.sh [preset]   (default, debug, asan, tsan; default: default)
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-default}"
# The asan preset builds with clang, so a clang-only compile error fails CI
# beside the gcc build of the default preset.
if [ "$preset" = asan ]; then
  scripts/setup.sh --clang
else
  scripts/setup.sh
fi
cmake --workflow --preset "$preset"
