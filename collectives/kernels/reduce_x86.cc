// x86-64 kernels for float16 and bfloat16: load a vector of each input,
// widen to float32 (F16C for float16, shifts for bfloat16), reduce with AVX,
// round back to nearest even, store. One pass over memory, no element-at-a-time
// conversion. The build targets baseline x86-64 (no -march), so these are
// compiled with target attributes and chosen at run time from CPUID.
//
// They must give the same bits as the portable kernels (internal/half.h and
// reduce.cc) for every input, NaNs included; the tests compare both.
#include "collectives/kernels/reduce_kernels.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <cpuid.h>
#include <immintrin.h>

#include <cstdint>

#include "collectives/kernels/half.h"

#define WEFT_AVX2 __attribute__((target("avx2,f16c")))
#define WEFT_SIMD_TARGET WEFT_AVX2
#include "collectives/kernels/simd_blocks.h"

namespace weft::collectives::internal {
namespace {

constexpr size_t kLanes = 8;  // float32 lanes of one 256-bit register

bool cpu_has_avx2_f16c() {
  constexpr unsigned kLeafFeatures = 1;
  constexpr unsigned kLeafExtended = 7;
  constexpr unsigned kOsxsaveBit = 1u << 27;  // leaf 1 ECX
  constexpr unsigned kAvxBit = 1u << 28;      // leaf 1 ECX
  constexpr unsigned kF16cBit = 1u << 29;     // leaf 1 ECX
  constexpr unsigned kAvx2Bit = 1u << 5;      // leaf 7 EBX
  constexpr unsigned kYmmStateMask = 0x6;     // XCR0: SSE and AVX state
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(kLeafFeatures, &eax, &ebx, &ecx, &edx) == 0) return false;
  const unsigned needed = kOsxsaveBit | kAvxBit | kF16cBit;
  if ((ecx & needed) != needed) return false;
  unsigned xcr0_low = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  if ((xcr0_low & kYmmStateMask) != kYmmStateMask) return false;
  if (__get_cpuid_count(kLeafExtended, 0, &eax, &ebx, &ecx, &edx) == 0) {
    return false;
  }
  return (ebx & kAvx2Bit) != 0;
}

// ---- One step of each dtype: dst = op(a, b) over kStep elements.

// float16: 8 elements widened by F16C, reduced, rounded back by F16C.
struct Float16Lanes {
  static constexpr size_t kStep = kLanes;
  template <typename Op>
  WEFT_AVX2 static void reduce(unsigned char* dst, const unsigned char* a,
                               const unsigned char* b) {
    const __m256 x = _mm256_cvtph_ps(load128(a));
    const __m256 y = _mm256_cvtph_ps(load128(b));
    // Round to nearest even whatever MXCSR says.
    _mm_storeu_si128(
        reinterpret_cast<__m128i*>(dst),
        _mm256_cvtps_ph(Op::apply(x, y), _MM_FROUND_TO_NEAREST_INT));
  }
  WEFT_AVX2 static __m128i load128(const unsigned char* p) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  }
};

// bfloat16: 16 elements in one 256-bit load. A bfloat16 is the top half of a
// float32, so each 32-bit lane yields two floats without any shuffle: the
// even element shifted up, the odd element with the low half cleared. They
// are reduced apart and recombined the same way.
struct BFloat16Lanes {
  static constexpr size_t kStep = 2 * kLanes;
  static constexpr int kShift = kBF16Shift;
  static constexpr int kHalfUlpMinusOne = (1 << (kShift - 1)) - 1;
  static constexpr int kHighHalfMask = ~((1 << kShift) - 1);

  template <typename Op>
  WEFT_AVX2 static void reduce(unsigned char* dst, const unsigned char* x,
                               const unsigned char* y) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y));
    const __m256i high = _mm256_set1_epi32(kHighHalfMask);
    const __m256 even =
        Op::apply(_mm256_castsi256_ps(_mm256_slli_epi32(a, kShift)),
                  _mm256_castsi256_ps(_mm256_slli_epi32(b, kShift)));
    const __m256 odd =
        Op::apply(_mm256_castsi256_ps(_mm256_and_si256(a, high)),
                  _mm256_castsi256_ps(_mm256_and_si256(b, high)));
    const __m256i result =
        _mm256_or_si256(_mm256_srli_epi32(round(even), kShift),
                        _mm256_and_si256(round(odd), high));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), result);
  }

  // As float_to_bfloat16 in half.h, leaving the bfloat16 in the top half of
  // each lane: add half an ulp less one plus the lowest kept bit; a NaN keeps
  // its top bits and gets the quiet bit.
  WEFT_AVX2 static __m256i round(__m256 v) {
    const __m256i bits = _mm256_castps_si256(v);
    const __m256i odd =
        _mm256_and_si256(_mm256_srli_epi32(bits, kShift), _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_add_epi32(
        _mm256_add_epi32(bits, _mm256_set1_epi32(kHalfUlpMinusOne)), odd);
    const __m256i nan = _mm256_or_si256(bits, _mm256_set1_epi32(kF32QuietBit));
    const __m256 is_nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    return _mm256_castps_si256(_mm256_blendv_ps(
        _mm256_castsi256_ps(rounded), _mm256_castsi256_ps(nan), is_nan));
  }
};

// ---- The float ops, with the semantics of reduce.cc's: a NaN sum or
// product is the canonical quiet NaN; max/min keep a NaN in acc, a NaN in
// `in` wins otherwise, ties keep acc.
WEFT_AVX2 inline __m256 canonical_if_nan(__m256 r) {
  return _mm256_blendv_ps(r, _mm256_set1_ps(__builtin_nanf("")),
                          _mm256_cmp_ps(r, r, _CMP_UNORD_Q));
}
struct SumLanes {
  WEFT_AVX2 static __m256 apply(__m256 a, __m256 b) {
    return canonical_if_nan(_mm256_add_ps(a, b));
  }
};
struct ProdLanes {
  WEFT_AVX2 static __m256 apply(__m256 a, __m256 b) {
    return canonical_if_nan(_mm256_mul_ps(a, b));
  }
};
struct MaxLanes {
  WEFT_AVX2 static __m256 apply(__m256 a, __m256 b) {
    const __m256 keep_a = _mm256_or_ps(_mm256_cmp_ps(a, b, _CMP_GE_OQ),
                                       _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
    return _mm256_blendv_ps(b, a, keep_a);
  }
};
struct MinLanes {
  WEFT_AVX2 static __m256 apply(__m256 a, __m256 b) {
    const __m256 keep_a = _mm256_or_ps(_mm256_cmp_ps(a, b, _CMP_LE_OQ),
                                       _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
    return _mm256_blendv_ps(b, a, keep_a);
  }
};

}  // namespace

SimdReduceKernel simd_reduce_kernel(DType dtype, ReduceOp op) {
  static const bool usable = cpu_has_avx2_f16c();
  if (!usable) return nullptr;
  return half_kernel<Float16Lanes, BFloat16Lanes, SumLanes, ProdLanes, MaxLanes,
                     MinLanes>(dtype, op);
}

}  // namespace weft::collectives::internal

#elif !(defined(__aarch64__) && defined(__ARM_NEON))
// Neither x86-64 nor aarch64 (reduce_arm.cc): the portable kernels do
// everything.

namespace weft::collectives::internal {

SimdReduceKernel simd_reduce_kernel(DType, ReduceOp) { return nullptr; }

}  // namespace weft::collectives::internal

#endif
