// aarch64 kernels for float16 and bfloat16: load a vector of each input,
// widen to float32 (FCVTL for float16, shifts for bfloat16), reduce with
// Advanced SIMD, round back to nearest even, store. One pass over memory, no
// element-at-a-time conversion: gcc 12 at -O2 leaves the portable float16
// and bfloat16 loops scalar on aarch64. Advanced SIMD is part of every
// aarch64 CPU, so there is nothing to detect at run time.
//
// They must give the same bits as the portable kernels (internal/half.h and
// reduce.cc) for every input, NaNs included; tests/arm/reduce_arm_check.cc
// proves it under emulation (scripts/arm-kernels.sh).
#include "collectives/kernels/reduce_kernels.h"

#if defined(__aarch64__) && defined(__ARM_NEON)

#include <arm_neon.h>

#include <cstdint>

#include "collectives/kernels/half.h"

#define WEFT_SIMD_TARGET  // NEON needs no target attribute on aarch64
#include "collectives/kernels/simd_blocks.h"

namespace weft::collectives::internal {
namespace {

constexpr size_t kLanes = 8;  // 16-bit elements of one 128-bit register

// Byte loads and stores: the pointers may be unaligned, which LD1/ST1 of
// bytes allow and which a uint16_t* may not be.
uint32x4_t load32(const unsigned char* p) {
  return vreinterpretq_u32_u8(vld1q_u8(p));
}

// ---- One step of each dtype: dst = op(a, b) over kStep elements.

// float16: 8 elements widened in two halves by FCVTL/FCVTL2, reduced, and
// narrowed by FCVTN/FCVTN2. Under the default FPCR (round to nearest even,
// no flush to zero, no default NaN; the portable path's float arithmetic
// assumes it too) they round as half.h does, keep subnormals, and like
// half.h quiet a NaN and keep the top bits of its payload.
struct Float16Lanes {
  static constexpr size_t kStep = kLanes;
  template <typename Op>
  static void reduce(unsigned char* dst, const unsigned char* x,
                     const unsigned char* y) {
    const float16x8_t a = vreinterpretq_f16_u32(load32(x));
    const float16x8_t b = vreinterpretq_f16_u32(load32(y));
    const float32x4_t low =
        Op::apply(vcvt_f32_f16(vget_low_f16(a)), vcvt_f32_f16(vget_low_f16(b)));
    const float32x4_t high =
        Op::apply(vcvt_high_f32_f16(a), vcvt_high_f32_f16(b));
    vst1q_u8(dst,
             vreinterpretq_u8_f16(vcvt_high_f16_f32(vcvt_f16_f32(low), high)));
  }
};

// bfloat16: 16 elements, two 128-bit vectors. A bfloat16 is the top half of
// a float32, so each 32-bit lane yields two floats without any shuffle: the
// even element shifted up, the odd element with the low half cleared. They
// are reduced apart and recombined by one shift-right-and-insert.
struct BFloat16Lanes {
  static constexpr size_t kStep = 2 * kLanes;
  static constexpr int kShift = kBF16Shift;
  static constexpr uint32_t kHalfUlpMinusOne = (1u << (kShift - 1)) - 1;
  static constexpr uint32_t kHighHalfMask = ~((1u << kShift) - 1);
  static constexpr size_t kVectorBytes = kLanes * kHalfBytes;

  template <typename Op>
  static void reduce(unsigned char* dst, const unsigned char* x,
                     const unsigned char* y) {
    reduce_vector<Op>(dst, x, y);
    reduce_vector<Op>(dst + kVectorBytes, x + kVectorBytes, y + kVectorBytes);
  }

  template <typename Op>
  static void reduce_vector(unsigned char* dst, const unsigned char* x,
                            const unsigned char* y) {
    const uint32x4_t a = load32(x);
    const uint32x4_t b = load32(y);
    const uint32x4_t high = vdupq_n_u32(kHighHalfMask);
    const float32x4_t even =
        Op::apply(vreinterpretq_f32_u32(vshlq_n_u32(a, kShift)),
                  vreinterpretq_f32_u32(vshlq_n_u32(b, kShift)));
    const float32x4_t odd =
        Op::apply(vreinterpretq_f32_u32(vandq_u32(a, high)),
                  vreinterpretq_f32_u32(vandq_u32(b, high)));
    // The odd result keeps its top half; the even one's top half goes below.
    vst1q_u8(dst, vreinterpretq_u8_u32(
                      vsriq_n_u32(round(odd), round(even), kShift)));
  }

  // As float_to_bfloat16 in half.h, leaving the bfloat16 in the top half of
  // each lane: add half an ulp less one plus the lowest kept bit; a NaN keeps
  // its top bits and gets the quiet bit.
  static uint32x4_t round(float32x4_t v) {
    const uint32x4_t bits = vreinterpretq_u32_f32(v);
    const uint32x4_t odd = vandq_u32(vshrq_n_u32(bits, kShift), vdupq_n_u32(1));
    const uint32x4_t rounded =
        vaddq_u32(vaddq_u32(bits, vdupq_n_u32(kHalfUlpMinusOne)), odd);
    const uint32x4_t nan = vorrq_u32(bits, vdupq_n_u32(kF32QuietBit));
    const uint32x4_t is_number = vceqq_f32(v, v);
    return vbslq_u32(is_number, rounded, nan);
  }
};

// ---- The float ops, with the semantics of reduce.cc's FloatMax/FloatMin:
// NaN in acc is kept, NaN in `in` wins otherwise, ties keep acc. FMAX and
// FMAXNM would not do: they pick +0 over -0 and choose NaNs their own way.
// A NaN sum or product is the canonical quiet NaN, as in reduce.cc: which
// NaN FADD or FMUL passes on depends on which operand comes first, and the
// compiler treats + and * as commutative.
inline float32x4_t canonical_if_nan(float32x4_t r) {
  return vbslq_f32(vceqq_f32(r, r), r, vdupq_n_f32(__builtin_nanf("")));
}
struct SumLanes {
  static float32x4_t apply(float32x4_t a, float32x4_t b) {
    return canonical_if_nan(vaddq_f32(a, b));
  }
};
struct ProdLanes {
  static float32x4_t apply(float32x4_t a, float32x4_t b) {
    return canonical_if_nan(vmulq_f32(a, b));
  }
};
struct MaxLanes {
  static float32x4_t apply(float32x4_t a, float32x4_t b) {
    // a >= b, or a is NaN (a != a): ORN of the two masks.
    const uint32x4_t keep_a = vornq_u32(vcgeq_f32(a, b), vceqq_f32(a, a));
    return vbslq_f32(keep_a, a, b);
  }
};
struct MinLanes {
  static float32x4_t apply(float32x4_t a, float32x4_t b) {
    const uint32x4_t keep_a = vornq_u32(vcleq_f32(a, b), vceqq_f32(a, a));
    return vbslq_f32(keep_a, a, b);
  }
};

}  // namespace

SimdReduceKernel simd_reduce_kernel(DType dtype, ReduceOp op) {
  return half_kernel<Float16Lanes, BFloat16Lanes, SumLanes, ProdLanes, MaxLanes,
                     MinLanes>(dtype, op);
}

}  // namespace weft::collectives::internal

#endif  // defined(__aarch64__) && defined(__ARM_NEON)
