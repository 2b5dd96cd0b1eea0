#!/usr/bin/env bash
# Quick start 2: install what is missing, build, and run every test.
# Usage: scripts/test.sh [preset]   (default, debug, asan, tsan; default: default)
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-default}"
scripts/setup.sh
cmake --workflow --preset "$preset"
