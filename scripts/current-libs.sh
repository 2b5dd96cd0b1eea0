#!/usr/bin/env bash
# Builds and tests weft against current Abseil, GoogleTest and Google
# Benchmark: Debian 13 (trixie)'s, the same releases Homebrew ships
# (Abseil 20240722, GoogleTest 1.16.0, Benchmark 1.9.1 when written), while
# scripts/test.sh builds against Debian 12's (Abseil 20220623, GoogleTest
# 1.12, Benchmark 1.7).
#
# Linux with apt-get only (Debian 12 or later). On macOS it says so and
# exits 0: Homebrew's formulae already are the current releases, so
# scripts/test.sh there is this check.
#
# Usage: scripts/current-libs.sh [--libcxx]
#   --libcxx                  the nearest thing to a Mac's toolchain: every
#                             library and weft built with clang 19 and
#                             libc++ 19 (Debian 12's clang-19, libc++-19-dev,
#                             libc++abi-19-dev; Apple clang 17 is LLVM 19
#                             based, and Apple's standard library is libc++),
#                             into their own prefix (prefix-libcxx) and
#                             build/current-libs-libcxx
#   WEFT_DEPS_DIR=<dir>       cache of sources, library builds and the prefix
#                             (default /var/cache/weft-current-libs)
#   WEFT_DEBIAN_MIRROR=<uri>  Debian mirror for trixie's sources (default: the
#                             one this machine's apt sources use for Debian)
#   WEFT_JOBS=<n>             parallel jobs (default 2)
#
# What it does, each phase timed:
#  1. fetch: trixie's source packages abseil, googletest and benchmark, with
#     Debian's patches, through apt-get source. apt runs on a private
#     configuration under $WEFT_DEPS_DIR/apt (a deb-src line for trixie, its
#     own lists and caches): nothing under /etc/apt or /var/lib/apt changes,
#     no trixie binary package becomes installable, and `rm -rf
#     $WEFT_DEPS_DIR` undoes everything. A package whose trixie version has
#     already been fetched is not fetched again.
#  2. one CMake build each, Release, installed into $WEFT_DEPS_DIR/prefix the
#     way Debian 13 ships them: Abseil shared, C++20 (ABSL_PROPAGATE_CXX_STD);
#     GoogleTest static, with gmock; Benchmark shared, without its tests.
#     A library whose stamp (version and flags) is in the prefix is skipped.
#  3. weft in build/current-libs (RelWithDebInfo, Ninja, CMAKE_PREFIX_PATH =
#     the prefix): checks that absl_DIR, GTest_DIR and benchmark_DIR are in
#     the prefix and that no binary loads a system libabsl or libbenchmark,
#     builds everything (ninja -k 0: every compile error is listed), runs
#     ctest.
#  4. weft-sim --seed 5 from this build and from build/default (the system
#     libraries; brought up to date first) must print the same last line,
#     `trace hash: ...`. Without build/default it says so and skips this.
# Exits non-zero if any step fails or the hashes differ (after failed tests
# it still compares the hashes). Last it prints how long each phase took.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

case "$(uname -s)" in
  Darwin)
    echo "current-libs: skipped on macOS: Homebrew's abseil, googletest and google-benchmark are the current releases, so scripts/test.sh already builds against them"
    exit 0
    ;;
  Linux)
    command -v apt-get >/dev/null || {
      echo "current-libs: needs apt-get (Debian) to fetch trixie's sources" >&2
      exit 1
    }
    ;;
  *)
    echo "current-libs: unsupported system $(uname -s)" >&2
    exit 1
    ;;
esac

libcxx=0
for arg in "$@"; do
  case "$arg" in
    --libcxx) libcxx=1 ;;
    *) echo "current-libs: unknown argument $arg (the only one is --libcxx)" >&2; exit 2 ;;
  esac
done

jobs="${WEFT_JOBS:-2}"
deps="${WEFT_DEPS_DIR:-/var/cache/weft-current-libs}"
mkdir -p "$deps"
deps=$(cd "$deps" && pwd)
prefix="$deps/prefix"
build_dir="$root/build/current-libs"
# The compiler every build below uses, and its flags. The C compiler only
# runs CMake's probes (with the same linker flags), so it is left out of the
# libraries' stamps.
toolchain=(-DCMAKE_CXX_COMPILER=c++)
c_compiler=()
compiler=c++
if [ "$libcxx" -eq 1 ]; then
  c_compiler=(-DCMAKE_C_COMPILER=clang-19)
  prefix="$deps/prefix-libcxx"
  build_dir="$root/build/current-libs-libcxx"
  compiler=clang++-19
  toolchain=(-DCMAKE_CXX_COMPILER=clang++-19 -DCMAKE_CXX_FLAGS=-stdlib=libc++
             "-DCMAKE_EXE_LINKER_FLAGS=-stdlib=libc++"
             "-DCMAKE_SHARED_LINKER_FLAGS=-stdlib=libc++")
fi
packages="abseil googletest benchmark"

script_start=$(date +%s)
phase_start=$script_start
timings=""
# Ends the phase named $1: remembers and prints how long it took.
end_phase() {
  local now
  now=$(date +%s)
  timings="${timings}$(printf '  %-22s %5d s' "$1" $((now - phase_start)))
"
  echo "current-libs: $1 took $((now - phase_start)) s"
  phase_start=$now
}

sudo_if_needed() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# weft's own build dependencies (the system ones; with --libcxx clang 19
# and libc++ 19 too), and dpkg-source.
if [ "$libcxx" -eq 1 ]; then
  scripts/setup.sh --libcxx
else
  scripts/setup.sh
fi
if ! dpkg-query -W -f='${Status}' dpkg-dev 2>/dev/null | grep -q "install ok installed"; then
  echo "current-libs: installing dpkg-dev (apt-get source needs dpkg-source)"
  sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dpkg-dev >/dev/null
fi
end_phase "setup"

# --- 1. fetch ---------------------------------------------------------------

# The Debian mirror this machine's apt sources use (deb822 or one-line).
debian_mirror() {
  if [ -n "${WEFT_DEBIAN_MIRROR:-}" ]; then
    echo "$WEFT_DEBIAN_MIRROR"
    return
  fi
  local f uri
  for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list /etc/apt/sources.list; do
    [ -f "$f" ] || continue
    uri=$(awk '($1 == "URIs:" || $1 == "deb" || $1 == "deb-src") {
                 for (i = 2; i <= NF; i++) if ($i ~ /^[a-z+]+:\/\/.*\/debian\/?$/) { print $i; exit }
               }' "$f")
    if [ -n "$uri" ]; then
      echo "$uri"
      return
    fi
  done
  echo "http://deb.debian.org/debian"
}

mirror=$(debian_mirror)
apt_dir="$deps/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/parts" "$apt_dir/preferences"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main" >"$apt_dir/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list"
          -o "Dir::Etc::SourceParts=$apt_dir/parts"
          -o "Dir::Etc::PreferencesParts=$apt_dir/preferences"
          -o "Dir::State::Lists=$apt_dir/lists"
          -o "Dir::Cache=$apt_dir/cache")

echo "current-libs: reading trixie's source index from $mirror"
if ! apt-get "${apt_opts[@]}" -qq update; then
  if ls "$apt_dir"/lists/*trixie*Sources* >/dev/null 2>&1; then
    echo "current-libs: warning: trixie's deb-src is unreachable; using the index fetched before" >&2
  else
    echo "current-libs: trixie's deb-src at $mirror is unreachable (set WEFT_DEBIAN_MIRROR?)" >&2
    exit 1
  fi
fi

# Trixie's version of source package $1.
trixie_version() {
  apt-cache "${apt_opts[@]}" showsrc --only-source "$1" 2>/dev/null |
    awk '$1 == "Version:" { print $2; exit }'
}

# Sets pkg_version and pkg_src (the unpacked tree) for source package $1,
# fetching and unpacking it if that version is not there yet.
fetch() {
  local pkg="$1" upstream
  pkg_version=$(trixie_version "$pkg")
  if [ -z "$pkg_version" ]; then
    echo "current-libs: trixie has no source package $pkg" >&2
    exit 1
  fi
  upstream=${pkg_version#*:}
  upstream=${upstream%-*}
  pkg_src="$deps/src/$pkg/$pkg-$upstream"
  if [ -f "$deps/src/$pkg/.fetched-$pkg_version" ] && [ -d "$pkg_src" ]; then
    echo "current-libs: $pkg $pkg_version already fetched"
    return
  fi
  rm -rf "$deps/src/$pkg"
  mkdir -p "$deps/src/$pkg"
  echo "current-libs: fetching $pkg $pkg_version"
  (cd "$deps/src/$pkg" && apt-get "${apt_opts[@]}" -q source "$pkg=$pkg_version" >fetch.log 2>&1) || {
    cat "$deps/src/$pkg/fetch.log" >&2
    echo "current-libs: apt-get source $pkg=$pkg_version failed" >&2
    exit 1
  }
  [ -d "$pkg_src" ] || { echo "current-libs: $pkg_src missing after apt-get source" >&2; exit 1; }
  touch "$deps/src/$pkg/.fetched-$pkg_version"
}

versions=""
for pkg in $packages; do
  fetch "$pkg"
  versions="$versions $pkg=$pkg_version"
done
end_phase "fetch"

# --- 2. the libraries -------------------------------------------------------

# build_lib NAME VERSION SOURCE_DIR CMAKE_ARGS...: configure, build and
# install into the prefix, unless the stamp of this version and these flags
# is already there.
build_lib() {
  local name="$1" version="$2" src="$3" flags stamp
  shift 3
  flags=$(printf '%s\n' "$@" "${toolchain[@]}" "$("$compiler" --version | head -n 1)" | cksum | awk '{ print $1 }')
  stamp="$prefix/.weft-stamps/$name-$version-$flags"
  if [ -f "$stamp" ]; then
    echo "current-libs: $name $version already in $prefix"
    return
  fi
  echo "current-libs: building $name $version"
  rm -rf "$deps/build/$name"
  mkdir -p "$deps/build"
  cmake -S "$src" -B "$deps/build/$name" -G Ninja -Wno-dev \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$prefix" \
    -DCMAKE_INSTALL_LIBDIR=lib \
    -DCMAKE_PREFIX_PATH="$prefix" \
    "${toolchain[@]}" ${c_compiler[@]+"${c_compiler[@]}"} "$@" >"$deps/build/$name.configure.log" 2>&1 || {
    cat "$deps/build/$name.configure.log" >&2
    echo "current-libs: configuring $name failed" >&2
    exit 1
  }
  cmake --build "$deps/build/$name" -j "$jobs" >"$deps/build/$name.build.log" 2>&1 || {
    tail -n 50 "$deps/build/$name.build.log" >&2
    echo "current-libs: building $name failed (log: $deps/build/$name.build.log)" >&2
    exit 1
  }
  cmake --install "$deps/build/$name" >/dev/null
  mkdir -p "$prefix/.weft-stamps"
  rm -f "$prefix/.weft-stamps/$name-"*
  touch "$stamp"
}

for pkg in $packages; do
  fetch "$pkg" >/dev/null   # sets pkg_version and pkg_src; fetches nothing now
  upstream=${pkg_version#*:}
  upstream=${upstream%-*}
  case "$pkg" in
    abseil)
      build_lib abseil "$pkg_version" "$pkg_src" \
        -DCMAKE_CXX_STANDARD=20 -DABSL_PROPAGATE_CXX_STD=ON \
        -DABSL_BUILD_TESTING=OFF -DBUILD_TESTING=OFF -DABSL_ENABLE_INSTALL=ON \
        -DBUILD_SHARED_LIBS=ON
      ;;
    googletest)
      build_lib googletest "$pkg_version" "$pkg_src" \
        -DBUILD_GMOCK=ON -DINSTALL_GTEST=ON -DBUILD_SHARED_LIBS=OFF
      ;;
    benchmark)
      build_lib benchmark "$pkg_version" "$pkg_src" \
        -DGIT_VERSION="$upstream" -DBUILD_SHARED_LIBS=ON \
        -DBENCHMARK_ENABLE_TESTING=OFF -DBENCHMARK_ENABLE_GTEST_TESTS=OFF \
        -DBENCHMARK_USE_BUNDLED_GTEST=OFF -DBENCHMARK_ENABLE_WERROR=OFF \
        -DBENCHMARK_ENABLE_LTO=OFF -DBENCHMARK_INSTALL_DOCS=OFF
      ;;
  esac
  end_phase "$pkg $upstream"
done

# --- 3. weft ----------------------------------------------------------------

# A cache made for another prefix would keep finding that prefix's packages.
if [ -f "$build_dir/CMakeCache.txt" ] &&
   ! grep -qx "CMAKE_PREFIX_PATH:[A-Z]*=$prefix" "$build_dir/CMakeCache.txt"; then
  rm -rf "$build_dir/CMakeCache.txt" "$build_dir/CMakeFiles"
fi
mkdir -p "$build_dir"
cmake -S "$root" -B "$build_dir" -G Ninja "${toolchain[@]}" ${c_compiler[@]+"${c_compiler[@]}"} \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_PREFIX_PATH="$prefix" >"$build_dir/configure.log" 2>&1 || {
  cat "$build_dir/configure.log" >&2
  echo "current-libs: configuring weft failed" >&2
  exit 1
}
sed -n 's/^-- weft: /current-libs: found /p' "$build_dir/configure.log"

status=0
for var in absl_DIR GTest_DIR benchmark_DIR; do
  dir=$(sed -n "s/^$var:[A-Z]*=//p" "$build_dir/CMakeCache.txt")
  echo "current-libs: $var=$dir"
  case "$dir" in
    "$prefix"/*) ;;
    *) echo "current-libs: $var is not under $prefix" >&2; status=1 ;;
  esac
done
[ "$status" -eq 0 ] || exit 1

build_log="$build_dir/build.log"
if ! cmake --build "$build_dir" -j "$jobs" -- -k 0 >"$build_log" 2>&1; then
  echo "current-libs: weft does not build against the current libraries; every compile error:" >&2
  grep -E "error:|undefined reference" "$build_log" | sort -u >&2 || true
  echo "current-libs: full log: $build_log" >&2
  exit 1
fi
echo "current-libs: compiler warnings: $(grep -c "warning:" "$build_log" || true)"

# No binary may load a system copy of a library the prefix holds.
for bin in "$build_dir"/bin/*; do
  if [ ! -f "$bin" ] || [ ! -x "$bin" ]; then continue; fi
  file_kind=$(head -c 4 "$bin" | od -An -c | tr -d ' ')
  [ "$file_kind" = '177ELF' ] || continue
  stray=$(ldd "$bin" | awk -v p="$prefix/" '/lib(absl|gtest|gmock|benchmark)/ && index($3, p) != 1 { print $1 " => " $3 }')
  if [ -n "$stray" ]; then
    echo "current-libs: $(basename "$bin") loads libraries outside $prefix: $stray" >&2
    status=1
  fi
  # Built with libc++, nothing may bring in libstdc++ as well.
  if [ "$libcxx" -eq 1 ] && ldd "$bin" | grep -q 'libstdc++'; then
    echo "current-libs: $(basename "$bin") loads libstdc++ in a libc++ build" >&2
    status=1
  fi
done
[ "$status" -eq 0 ] || exit 1
end_phase "weft build"

ctest_log="$build_dir/ctest.log"
ctest_status=0
# The prefix's shared libraries are off the loader's path: what the tests
# install (weft-sim, the examples) finds them as a user of the prefix would.
LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  ctest --test-dir "$build_dir" -j "$jobs" --output-on-failure >"$ctest_log" 2>&1 || ctest_status=$?
grep -E "tests passed|tests failed" "$ctest_log" | sed 's/^/current-libs: ctest: /'
if [ "$ctest_status" -ne 0 ]; then
  sed -n '/The following tests FAILED/,$p' "$ctest_log" >&2
  echo "current-libs: tests failed (log: $ctest_log); comparing the hashes all the same" >&2
  status=1
fi
end_phase "weft tests"

# --- 4. same simulation, same hash ------------------------------------------

# The last line of `weft-sim --seed 5` run by binary $1 in its build dir (so
# that its trace file lands there); fails if weft-sim does.
sim_hash() {
  local out
  out="$(dirname "$1")/../weft-sim-seed5.txt"
  if ! (cd "$(dirname "$1")/.." && "$1" --seed 5) >"$out" 2>&1; then
    tail -n 5 "$out" >&2
    echo "current-libs: $1 --seed 5 failed" >&2
    return 1
  fi
  tail -n 1 "$out"
}

current=$(sim_hash "$build_dir/bin/weft-sim")
echo "current-libs: current libraries: $current"
if [ -d "$root/build/default" ] && [ -f "$root/build/default/build.ninja" ]; then
  cmake --build "$root/build/default" -j "$jobs" --target weft-sim >/dev/null
  system=$(sim_hash "$root/build/default/bin/weft-sim")
  echo "current-libs: system libraries:  $system"
  case "$current" in
    "trace hash: "*) ;;
    *) echo "current-libs: weft-sim's last line is not its trace hash" >&2; exit 1 ;;
  esac
  if [ "$current" != "$system" ]; then
    echo "current-libs: weft-sim --seed 5 differs between the current and the system libraries" >&2
    status=1
  fi
else
  echo "current-libs: no build/default (scripts/test.sh makes it): trace hash not compared"
fi
end_phase "weft-sim hashes"

echo "current-libs: versions:$versions"
echo "current-libs: time per phase:"
printf '%s' "$timings"
if [ "$status" -eq 0 ]; then
  echo "current-libs: ok in $(($(date +%s) - script_start)) s"
else
  echo "current-libs: FAILED (see above) after $(($(date +%s) - script_start)) s"
fi
exit "$status"
