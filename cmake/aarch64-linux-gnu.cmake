# Toolchain file: weft for aarch64-linux-gnu on an x86-64 Debian machine, with
# Debian's cross gcc (g++-aarch64-linux-gnu) and the arm64 builds of weft's
# dependencies (Abseil, GoogleTest/GMock, Google Benchmark, nlohmann-json,
# rdma-core's <infiniband/verbs.h>) unpacked into a sysroot directory with
# `dpkg -x` (scripts/arm64-suite.sh makes it; nothing is installed as an
# arm64 package). Test binaries and tools run under qemu-aarch64 as CTest's
# emulator.
#
#   cmake -S . -B build/aarch64 -G Ninja \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
#     -DWEFT_ARM64_SYSROOT=/var/cache/weft-arm64/sysroot
#
# WEFT_ARM64_SYSROOT (cache variable, or the environment variable of that
# name) is the directory the .deb files were unpacked into; its
# usr/lib/aarch64-linux-gnu holds the libraries and their CMake packages.
# The C library, libstdc++ and the kernel headers come from the cross
# toolchain's own root, /usr/aarch64-linux-gnu, so no CMAKE_SYSROOT is set
# (it would replace that root for the compiler).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

if(NOT WEFT_ARM64_SYSROOT)
  if(DEFINED ENV{WEFT_ARM64_SYSROOT})
    set(WEFT_ARM64_SYSROOT "$ENV{WEFT_ARM64_SYSROOT}")
  else()
    set(WEFT_ARM64_SYSROOT /var/cache/weft-arm64/sysroot)
  endif()
endif()
set(WEFT_ARM64_SYSROOT "${WEFT_ARM64_SYSROOT}" CACHE PATH
    "Directory holding the arm64 .deb files of weft's dependencies, unpacked")
# try_compile projects read this file again: hand them the sysroot.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES WEFT_ARM64_SYSROOT)
set(ENV{WEFT_ARM64_SYSROOT} "${WEFT_ARM64_SYSROOT}")

set(weft_cross_root /usr/aarch64-linux-gnu)
# Debian's packages put libraries in both (libnl in /lib).
set(weft_arm64_libdirs ${WEFT_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu
                       ${WEFT_ARM64_SYSROOT}/lib/aarch64-linux-gnu)
list(JOIN weft_arm64_libdirs : weft_arm64_libpath)

# Headers, libraries and CMake packages only from the two roots; programs
# (the host's tools) only from the host.
set(CMAKE_FIND_ROOT_PATH ${WEFT_ARM64_SYSROOT} ${weft_cross_root})
set(CMAKE_PREFIX_PATH ${WEFT_ARM64_SYSROOT}/usr)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Abseil's shared libraries name each other: the linker finds those in the
# sysroot, not in the host's /usr/lib.
foreach(kind EXE SHARED MODULE)
  set(CMAKE_${kind}_LINKER_FLAGS_INIT "-Wl,-rpath-link,${weft_arm64_libpath}")
endforeach()

# CTest (and gtest_discover_tests) run every target binary through qemu:
# the cross toolchain's root for the C library and the dynamic loader, the
# sysroot's libraries on the search path (also for dlopen("libibverbs.so.1")).
find_program(WEFT_QEMU_AARCH64 qemu-aarch64 REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR ${WEFT_QEMU_AARCH64} -L ${weft_cross_root}
    -E LD_LIBRARY_PATH=${weft_arm64_libpath})
# The page size the tests see (qemu's -p: sysconf(_SC_PAGESIZE) and mmap's
# granularity): 16384 as on Apple silicon; empty for the host's 4096.
set(WEFT_QEMU_PAGE_SIZE "" CACHE STRING
    "Page size qemu-aarch64 gives the test binaries (16384 as on Apple silicon); empty: the host's")
if(WEFT_QEMU_PAGE_SIZE)
  list(APPEND CMAKE_CROSSCOMPILING_EMULATOR -p ${WEFT_QEMU_PAGE_SIZE})
endif()
