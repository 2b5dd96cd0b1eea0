// Forced include (-include) for compiling MLX's JACCL, unchanged, on Linux:
// what Apple's toolchain gives JACCL and GCC or clang on Linux does not.
// weft's own file; JACCL's sources are never copied or edited
// (cmake/foreign-jaccl/CMakeLists.txt compiles them where they are).
#pragma once

// JACCL's mesh_impl.h and ring_impl.h call std::memcpy without including
// <cstring>; Apple's libc++ reaches it through other headers.
#include <cstring>

// rdma.h chooses JACCL's buffer sizes with Apple clang's
// __builtin_available(macOS 26.3, ...): on macOS 26.3 and later a message
// gets the largest of JACCL's buffer sizes that it fills (4 KiB doubling up
// to 512 KiB, at MLX 846d176), before 26.3 always the smallest (4 KiB).
// Linux has no such OS version: take the 26.3+ branch, the large buffers
// MLX users on a current Mac get.
#if !defined(__APPLE__)
#define __builtin_available(...) 1
#endif
