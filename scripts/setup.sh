#!/usr/bin/env bash
# Installs what weft needs to build and test, without asking: Debian/Ubuntu
# packages through apt-get, or Homebrew formulae on macOS. Safe to run again:
# it installs only what is missing.
#
# Usage: scripts/setup.sh [--optional] [--clang]
#   --optional  also what only the comparisons need (Debian's libgloo-dev,
#               for scripts/compare-gloo.sh; it has no Homebrew formula)
#   --clang     also clang and its sanitizer runtime (Debian), which the asan
#               preset builds with; macOS's Xcode clang already has both
#   --libcxx    also clang 19 and libc++ 19 (Debian), which
#               scripts/current-libs.sh --libcxx builds with
set -euo pipefail

# ibverbs-utils: rdma-core's ibv_devices, ibv_devinfo and ibv_uc_pingpong,
# which the tests run unmodified on weft's drop-in verbs library.
# pkg-config (pkgconf on macOS): the test that builds against weft.pc.
# ccache: a fresh clone recompiles only what changed (cmake/WeftCcache.cmake).
debian_packages=(cmake ninja-build g++ libgtest-dev libgmock-dev libbenchmark-dev
                 libabsl-dev nlohmann-json3-dev libibverbs-dev ibverbs-utils
                 shellcheck pkg-config ccache)
brew_formulae=(cmake ninja googletest google-benchmark abseil nlohmann-json shellcheck
               pkgconf ccache)
optional_debian_packages=(libgloo-dev)
clang_debian_packages=(clang libclang-rt-dev)
libcxx_debian_packages=(clang-19 libc++-19-dev libc++abi-19-dev)
for arg in "$@"; do
  case "$arg" in
    --optional) debian_packages+=("${optional_debian_packages[@]}") ;;
    --clang) debian_packages+=("${clang_debian_packages[@]}") ;;
    --libcxx) debian_packages+=("${libcxx_debian_packages[@]}") ;;
    *)
      echo "weft setup: unknown argument $arg (the arguments are --optional, --clang and --libcxx)" >&2
      exit 2
      ;;
  esac
done

sudo_if_needed() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

case "$(uname -s)" in
  Linux)
    missing=()
    for p in "${debian_packages[@]}"; do
      dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ "${#missing[@]}" -gt 0 ]; then
      echo "weft setup: installing ${missing[*]}"
      sudo_if_needed apt-get update -qq
      sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
    ;;
  Darwin)
    command -v brew >/dev/null || { echo "weft setup: Homebrew is needed (https://brew.sh)" >&2; exit 1; }
    for f in "${brew_formulae[@]}"; do
      brew list --formula "$f" >/dev/null 2>&1 || brew install "$f"
    done
    ;;
  *)
    echo "weft setup: unsupported system $(uname -s); install CMake >= 3.25, Ninja, GoogleTest, Google Benchmark, Abseil and nlohmann-json by hand" >&2
    exit 1
    ;;
esac
