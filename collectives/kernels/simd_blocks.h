// What the float16/bfloat16 SIMD kernels of every architecture share: the
// loop that walks whole vector steps a prefetch block at a time, and the
// choice of one kernel per reduction op. Each architecture's file
// (reduce_x86.cc, reduce_arm.cc) defines its Lanes (kStep elements per step,
// reduce<Op>(dst, a, b) on one step: dst = op(a, b), dst may be a) and its four
// Op structs, then defines WEFT_SIMD_TARGET (the function attribute its
// intrinsics need, or nothing) before including this header. Only one of the
// two files has code in any build (they are guarded by architecture), so
// the templates are defined once.
#ifndef WEFT_COLLECTIVES_KERNELS_SIMD_BLOCKS_H_
#define WEFT_COLLECTIVES_KERNELS_SIMD_BLOCKS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "collectives/kernels/reduce_kernels.h"

#ifndef WEFT_SIMD_TARGET
#error "define WEFT_SIMD_TARGET (the kernels' target attribute, or nothing)"
#endif

namespace weft::collectives::internal {

// Bytes of one float16 or bfloat16 element.
inline constexpr size_t kHalfBytes = sizeof(uint16_t);

// dst = op(a, b) over the whole steps of `count`, a block at a time, each
// block prefetching a later one (one block if too small to prefetch);
// returns the elements reduced.
template <typename Lanes, typename Op>
WEFT_SIMD_TARGET size_t reduce_lanes(unsigned char* dst, const unsigned char* a,
                                     const unsigned char* b, size_t count) {
  constexpr size_t kStepBytes = Lanes::kStep * kHalfBytes;
  static_assert(kPrefetchBlockBytes % kStepBytes == 0);
  const size_t whole = count - count % Lanes::kStep;
  const size_t whole_bytes = whole * kHalfBytes;
  const size_t block_bytes =
      whole_bytes < kPrefetchMinBytes ? whole_bytes : kPrefetchBlockBytes;
  for (size_t block = 0; block < whole_bytes; block += block_bytes) {
    prefetch_ahead(dst, b, block, whole_bytes);
    const size_t end = std::min(block + block_bytes, whole_bytes);
    for (size_t at = block; at < end; at += kStepBytes) {
      Lanes::template reduce<Op>(dst + at, a + at, b + at);
    }
  }
  return whole;
}

// The kernel of `Lanes` for `op`.
template <typename Lanes, typename Sum, typename Prod, typename Max,
          typename Min>
SimdReduceKernel pick_kernel(ReduceOp op) {
  return kernel_for_op<SimdReduceKernel>(
      op, &reduce_lanes<Lanes, Sum>, &reduce_lanes<Lanes, Prod>,
      &reduce_lanes<Lanes, Max>, &reduce_lanes<Lanes, Min>);
}

// The kernel for `dtype` and `op` from an architecture's float16 and
// bfloat16 Lanes; nullptr for any other dtype.
template <typename Float16Lanes, typename BFloat16Lanes, typename Sum,
          typename Prod, typename Max, typename Min>
SimdReduceKernel half_kernel(DType dtype, ReduceOp op) {
  if (dtype == DType::kFloat16) {
    return pick_kernel<Float16Lanes, Sum, Prod, Max, Min>(op);
  }
  if (dtype == DType::kBFloat16) {
    return pick_kernel<BFloat16Lanes, Sum, Prod, Max, Min>(op);
  }
  return nullptr;
}

}  // namespace weft::collectives::internal

#endif  // WEFT_COLLECTIVES_KERNELS_SIMD_BLOCKS_H_
