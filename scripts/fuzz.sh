#!/usr/bin/env bash
# Builds the libFuzzer targets (preset "fuzz": clang with ASan+UBSan) and runs
# each for SECONDS (default 20) over its corpus in tests/fuzz/corpus/<name>.
# New inputs found go to build/fuzz/corpus/<name>; crashes fail the run.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
scripts/setup.sh
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target fuzzers
for bin in build/fuzz/bin/fuzz_*; do
  name="${bin##*/fuzz_}"
  mkdir -p "build/fuzz/corpus/$name" "tests/fuzz/corpus/$name"
  echo "fuzz: $name for ${seconds}s"
  "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="build/fuzz/crash-$name-" \
    "build/fuzz/corpus/$name" "tests/fuzz/corpus/$name" 2>&1 | tail -n 2
  # tail hides the exit status: check it explicitly.
  [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "fuzz: $name found a crash"; exit 1; }
done
echo "fuzz: no crashes"
