#!/usr/bin/env bash
# Builds the libFuzzer targets (preset "fuzz": clang with ASan+UBSan) and runs
# each for SECONDS (default 20) over its corpus in tests/fuzz/corpus/<name>.
# New inputs found go to build/fuzz/corpus/<name>; crashes fail the run.
#
# First checks that clang++ links a one-line fuzz target with
# -fsanitize=fuzzer. On Linux a clang++ without libFuzzer is an error; on
# macOS (Apple's clang has no libFuzzer) the script says so and exits 0
# without fuzzing, unless a clang++ that has it (Homebrew's llvm) comes
# first on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
system=$(uname -s)
scripts/setup.sh

probe_dir=$(mktemp -d)
trap 'rm -rf "$probe_dir"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, decltype(sizeof 0)) { return 0; }' \
  >"$probe_dir/probe.cc"
if ! clang++ -fsanitize=fuzzer "$probe_dir/probe.cc" -o "$probe_dir/probe" \
     >"$probe_dir/log" 2>&1; then
  if [ "$system" = Linux ]; then
    cat "$probe_dir/log" >&2
    echo "fuzz: clang++ -fsanitize=fuzzer does not link a fuzz target (above); install clang" >&2
    exit 1
  fi
  echo "fuzz: skipped: clang++ on $system has no libFuzzer (Apple's clang lacks -fsanitize=fuzzer)"
  exit 0
fi

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target fuzzers
for bin in build/fuzz/bin/fuzz_*; do
  [ -x "$bin" ] || { echo "fuzz: no fuzz targets in build/fuzz/bin" >&2; exit 1; }
  name="${bin##*/fuzz_}"
  mkdir -p "build/fuzz/corpus/$name" "tests/fuzz/corpus/$name"
  echo "fuzz: $name for ${seconds}s"
  # With pipefail the pipeline fails when the fuzzer does, though tail
  # prints only the last two lines.
  if ! "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix="build/fuzz/crash-$name-" \
       "build/fuzz/corpus/$name" "tests/fuzz/corpus/$name" 2>&1 | tail -n 2; then
    echo "fuzz: $name found a crash"
    exit 1
  fi
done
echo "fuzz: no crashes"
