#!/usr/bin/env bash
# Proves the aarch64 reduction kernels (collectives/kernels/reduce_arm.cc) bit-exact
# on an x86 machine: installs a cross compiler and qemu-user, cross-compiles
# tests/arm/reduce_arm_check.cc statically at -O2 with gcc (and clang, when
# it links), runs each under qemu-aarch64, and checks that the float16
# kernels convert with FCVTL/FCVTN on vector registers. Fails on the first
# mismatch. Not a speed measurement: qemu is an emulator.
#
# .ci/run runs it last (it installs packages and takes a minute or more of
# emulation). Linux with apt-get only: on an aarch64 Mac the kernels run
# natively in the test suite (tests/collectives/reduce_test.cc), and elsewhere
# the script says why it skips and exits 0.
# Usage: scripts/arm-kernels.sh
#   WEFT_ARM_OUT=<dir>   where to put the binaries (default build/arm)
set -euo pipefail
cd "$(dirname "$0")/.."

system=$(uname -s)
if [ "$system" = Darwin ]; then
  if [ "$(uname -m)" = arm64 ]; then
    echo "arm-kernels: skipped: native aarch64: the kernels run in the test suite"
  else
    echo "arm-kernels: skipped: the cross compiler and qemu-user come from apt-get on Linux"
  fi
  exit 0
fi

out="${WEFT_ARM_OUT:-build/arm}"
cxx=aarch64-linux-gnu-g++
flags=(-std=c++20 -O2 -Wall -Wextra -Wpedantic -Wno-missing-field-initializers
       -Werror -I.)
# reduce_x86.cc too: it must define nothing on aarch64, or the link fails.
sources=(tests/arm/reduce_arm_check.cc collectives/kernels/reduce_arm.cc
         collectives/kernels/reduce_x86.cc sim/prng.cc)

sudo_if_needed() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

need=()
command -v "$cxx" >/dev/null || need+=(g++-aarch64-linux-gnu)
command -v qemu-aarch64 >/dev/null || need+=(qemu-user)
if ((${#need[@]})); then
  if [ "$system" != Linux ] || ! command -v apt-get >/dev/null; then
    echo "arm-kernels: skipped: ${need[*]} missing and no apt-get on $system to install them"
    exit 0
  fi
  echo "arm-kernels: installing ${need[*]}"
  sudo_if_needed apt-get update -qq
  sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
mkdir -p "$out"

# Runs one build of the check under qemu; any mismatch ends the script.
run_check() {
  local name=$1
  echo "arm-kernels: running $name under qemu-aarch64"
  if ! qemu-aarch64 "$out/$name"; then
    echo "arm-kernels: FAILED: $name found a mismatch (above)" >&2
    exit 1
  fi
}

echo "arm-kernels: building with $cxx -O2 -static"
"$cxx" "${flags[@]}" -static "${sources[@]}" -o "$out/reduce_arm_check_gcc"
run_check reduce_arm_check_gcc

if command -v clang++-14 >/dev/null &&
   clang++-14 --target=aarch64-linux-gnu "${flags[@]}" -static \
     "${sources[@]}" -o "$out/reduce_arm_check_clang" 2>"$out/clang.log"; then
  run_check reduce_arm_check_clang
else
  echo "arm-kernels: clang++-14 --target=aarch64-linux-gnu did not build" \
       "a static binary ($out/clang.log); checked with gcc only"
fi

# The float16 kernels must widen and narrow a vector at a time: count the
# conversions on v-registers in each float16 kernel of gcc's object.
"$cxx" "${flags[@]}" -c collectives/kernels/reduce_arm.cc -o "$out/reduce_arm.o"
aarch64-linux-gnu-objdump -d --no-show-raw-insn -C "$out/reduce_arm.o" |
  awk '
    /^[0-9a-f]+ <.*reduce_lanes<[^,]*::Float16Lanes,/ {
      # The operation is the second template argument, whatever namespace
      # the kernels live in: "...Float16Lanes, <ns>::SumLanes>(...".
      op = $0; sub(/.*Float16Lanes, /, "", op); sub(/Lanes>.*/, "", op)
      sub(/.*::/, "", op)
      in_f16 = 1; widen[op] = 0; narrow[op] = 0; next
    }
    /^[0-9a-f]+ </ { in_f16 = 0 }
    in_f16 && /fcvtl2?[ \t]+v[0-9]+\.4s, v[0-9]+\.(4|8)h/ { widen[op]++ }
    in_f16 && /fcvtn2?[ \t]+v[0-9]+\.(4|8)h, v[0-9]+\.4s/ { narrow[op]++ }
    END {
      n = 0
      for (op in widen) {
        n++
        printf "arm-kernels: float16 %s kernel: %d fcvtl/fcvtl2, %d fcvtn/fcvtn2 on v-registers\n", op, widen[op], narrow[op]
        if (widen[op] < 4 || narrow[op] < 2) bad = 1
      }
      if (n != 4 || bad) { print "arm-kernels: FAILED: a float16 kernel does not convert with FCVTL/FCVTN" > "/dev/stderr"; exit 1 }
    }'
echo "arm-kernels: PASS (bit-exact under qemu; speed is not measured here)"
