// The reduction kernels behind reduce_into(): portable loops for every dtype
// and op, and SIMD kernels for the dtypes the compiler cannot vectorise well
// without help (float16 and bfloat16: reduce_x86.cc, chosen at run time from
// CPUID; reduce_arm.cc, always there on aarch64). Exposed so that tests can
// check each kind against the same reference.
#ifndef WEFT_COLLECTIVES_KERNELS_REDUCE_KERNELS_H_
#define WEFT_COLLECTIVES_KERNELS_REDUCE_KERNELS_H_

#include <cstddef>

#include "collectives/dtype.h"
#include "collectives/kernels/cache_lines.h"

namespace weft::collectives::internal {

// dst[i] = op(a[i], b[i]) for i < count; dst == a is allowed, no other
// overlap with dst.
using ReduceToKernel = void (*)(unsigned char* dst, const unsigned char* a,
                                const unsigned char* b, size_t count);

// Like ReduceToKernel (dst == a for reduce_into), but may stop short of
// `count` (at a multiple of its vector width) and returns how many elements
// it reduced; the portable kernel does the rest.
using SimdReduceKernel = size_t (*)(unsigned char* dst, const unsigned char* a,
                                    const unsigned char* b, size_t count);

// The portable kernel (reduce_into's with dst == a); nullptr for a dtype or
// op outside its enum.
ReduceToKernel portable_reduce_to_kernel(DType dtype, ReduceOp op);

// A SIMD kernel for this dtype and op if this CPU runs one; nullptr otherwise.
// Defined once per architecture: reduce_x86.cc (x86-64, and the nullptr
// fallback elsewhere) or reduce_arm.cc (aarch64).
SimdReduceKernel simd_reduce_kernel(DType dtype, ReduceOp op);

// The kernel of the four for `op`; nullptr for an op outside the enum.
template <typename Kernel>
Kernel kernel_for_op(ReduceOp op, Kernel sum, Kernel prod, Kernel max,
                     Kernel min) {
  switch (op) {
    case ReduceOp::kSum:
      return sum;
    case ReduceOp::kProd:
      return prod;
    case ReduceOp::kMax:
      return max;
    case ReduceOp::kMin:
      return min;
  }
  return nullptr;
}

// The kernels walk their inputs in blocks and, for inputs of at least
// kPrefetchMinBytes, prefetch the block kPrefetchAheadBytes ahead: at 64 MiB
// the hardware prefetchers alone left the kernels a quarter to a half short
// of memory bandwidth, while on cache-resident 64 KiB inputs the prefetches
// cost a fifth of the speed (x86, measured with weft_kernels_bench).
inline constexpr size_t kPrefetchBlockBytes = 1024;
inline constexpr size_t kPrefetchAheadBytes = 4096;
inline constexpr size_t kPrefetchMinBytes = 512 * 1024;

// Prefetches the block kPrefetchAheadBytes past byte `at` of acc and in, if
// the inputs are large enough and that block lies inside both. A kernel
// writing apart from its inputs (reduce_to) prefetches its destination and
// second input only: asking for the first input too made it 15-30% slower
// at 64 MiB (weft_kernels_bench, x86), the hardware prefetcher following
// the third stream better alone.
#if defined(__GNUC__) || defined(__clang__)
// Always inlined: gcc 12 sees a function holding only prefetches as free of
// side effects and deletes calls to it before it would inline it.
__attribute__((always_inline)) inline void prefetch_ahead(
    const unsigned char* acc, const unsigned char* in, size_t at,
    size_t total_bytes) {
  constexpr int kForWrite = 1;
  constexpr int kForRead = 0;
  if (total_bytes < kPrefetchMinBytes ||
      at + kPrefetchAheadBytes + kPrefetchBlockBytes > total_bytes) {
    return;
  }
  const size_t ahead = at + kPrefetchAheadBytes;
  for (size_t line = 0; line < kPrefetchBlockBytes; line += kCacheLineBytes) {
    __builtin_prefetch(acc + ahead + line, kForWrite);
    __builtin_prefetch(in + ahead + line, kForRead);
  }
}
#else
inline void prefetch_ahead(const unsigned char*, const unsigned char*, size_t,
                           size_t) {}
#endif

}  // namespace weft::collectives::internal

#endif  // WEFT_COLLECTIVES_KERNELS_REDUCE_KERNELS_H_
