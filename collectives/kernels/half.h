// Conversions between float32 and the 16-bit floats of the collectives
// (IEEE binary16 "float16" and bfloat16), used by the reduction kernels.
//
// Every conversion rounds to nearest, ties to even, handles subnormals and
// infinities, and keeps NaN a NaN: the payload's top bits are kept and the
// quiet bit is set, which is what x86 F16C and Arm FCVT do, so the portable
// code and the hardware paths give the same bits for every input.
//
// The functions are branch-free so that loops over them vectorise. The x86
// kernels in reduce_x86.cc (F16C and AVX2) and the aarch64 ones in
// reduce_arm.cc (FCVTL/FCVTN and Advanced SIMD) use the hardware instead and
// must agree with these bit for bit (tests/collectives/reduce_test.cc checks
// x86, tests/arm/reduce_arm_check.cc aarch64 under qemu).
#ifndef WEFT_COLLECTIVES_KERNELS_HALF_H_
#define WEFT_COLLECTIVES_KERNELS_HALF_H_

#include <bit>
#include <cstdint>

namespace weft::collectives::internal {

// float32 fields.
inline constexpr uint32_t kF32SignMask = 0x80000000u;
inline constexpr uint32_t kF32AbsMask = 0x7fffffffu;
inline constexpr uint32_t kF32InfBits = 0x7f800000u;
inline constexpr uint32_t kF32QuietBit = 0x00400000u;
inline constexpr int kF32MantissaBits = 23;
inline constexpr int kF32ExponentBias = 127;

// float16 fields.
inline constexpr uint32_t kF16SignMask = 0x8000u;
inline constexpr uint32_t kF16AbsMask = 0x7fffu;
inline constexpr uint32_t kF16InfBits = 0x7c00u;
inline constexpr uint32_t kF16QuietBit = 0x0200u;
inline constexpr uint32_t kF16MinNormalBits = 0x0400u;
inline constexpr int kF16MantissaBits = 10;
inline constexpr uint32_t kF16MantissaMask = (1u << kF16MantissaBits) - 1;
inline constexpr int kF16ExponentBias = 15;

// Bits dropped from a float32 mantissa to make a float16 or bfloat16 one.
inline constexpr int kF16Shift = kF32MantissaBits - kF16MantissaBits;  // 13
inline constexpr int kBF16Shift = 16;

// `if_true` where `condition`, else `if_false`, with no branch: a bit mask
// rather than ?:, so gcc cannot sink the float arithmetic of one side into a
// branch (which then keeps it from vectorising the loop).
inline uint32_t select_bits(bool condition, uint32_t if_true,
                            uint32_t if_false) {
  const uint32_t mask = 0u - static_cast<uint32_t>(condition);
  return (if_true & mask) | (if_false & ~mask);
}

// float16 -> float32 (exact). Normal numbers move their exponent from bias 15
// to bias 127; infinities and NaNs move once more to the all-ones exponent;
// subnormals are built as 2^-14 * (1 + m/1024) and have 2^-14 subtracted,
// which is exact in float32.
inline float float16_to_float(uint16_t half) {
  constexpr uint32_t kRebias = uint32_t{kF32ExponentBias - kF16ExponentBias}
                               << kF32MantissaBits;
  // Infinity and NaN go further, to the all-ones exponent.
  constexpr uint32_t kSpecialExtra =
      (uint32_t{(kF32InfBits >> kF32MantissaBits) -
                (kF16InfBits >> kF16MantissaBits)}
       << kF32MantissaBits) -
      kRebias;
  constexpr uint32_t kMinNormalF32 = kRebias + (1u << kF32MantissaBits);
  const uint32_t sign = (uint32_t{half} & kF16SignMask) << 16;
  const int32_t magnitude = static_cast<int32_t>(half & kF16AbsMask);
  const uint32_t shifted = static_cast<uint32_t>(magnitude) << kF16Shift;
  const float subnormal = std::bit_cast<float>(shifted + kMinNormalF32) -
                          std::bit_cast<float>(kMinNormalF32);
  const uint32_t is_special =
      static_cast<uint32_t>(magnitude >= static_cast<int32_t>(kF16InfBits));
  const uint32_t is_nan =
      static_cast<uint32_t>(magnitude > static_cast<int32_t>(kF16InfBits));
  // The quiet bit may be set already: or it in, never add it.
  const uint32_t normal = (shifted + kRebias + is_special * kSpecialExtra) |
                          (is_nan * kF32QuietBit);
  const uint32_t bits =
      select_bits(magnitude < static_cast<int32_t>(kF16MinNormalBits),
                  std::bit_cast<uint32_t>(subnormal), normal);
  return std::bit_cast<float>(bits | sign);
}

// float32 -> float16, round to nearest even. Values at or past 65520 become
// infinity; values below the normal range are rounded by adding 0.5, whose
// float32 addition does the subnormal rounding (nearest even) for us.
inline uint16_t float_to_float16(float value) {
  // 2^16: the first float32 that float16 rounds to infinity is 65520, but
  // any at or above 2^16 surely does; between, the rounding carry does it.
  constexpr uint32_t kOverflowBits = uint32_t{kF32ExponentBias + 16}
                                     << kF32MantissaBits;
  // Smallest float32 that is a normal float16 (2^-14).
  constexpr uint32_t kMinNormalBits =
      uint32_t{kF32ExponentBias - kF16ExponentBias + 1} << kF32MantissaBits;
  // 0.5: adding it puts the float16 subnormal grid (2^-24) on the last
  // mantissa bit of the float32 sum.
  constexpr uint32_t kDenormMagicBits =
      uint32_t{kF32ExponentBias - kF16ExponentBias + kF16Shift + 1}
      << kF32MantissaBits;
  constexpr uint32_t kRebias = uint32_t{kF32ExponentBias - kF16ExponentBias}
                               << kF32MantissaBits;
  constexpr uint32_t kHalfUlpMinusOne = (1u << (kF16Shift - 1)) - 1;

  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (bits & kF32SignMask) >> 16;
  const uint32_t magnitude = bits & kF32AbsMask;

  const uint32_t subnormal =
      std::bit_cast<uint32_t>(std::bit_cast<float>(magnitude) +
                              std::bit_cast<float>(kDenormMagicBits)) -
      kDenormMagicBits;
  const uint32_t odd = (magnitude >> kF16Shift) & 1u;
  const uint32_t normal =
      (magnitude - kRebias + kHalfUlpMinusOne + odd) >> kF16Shift;
  const uint32_t nan = kF16InfBits | kF16QuietBit |
                       ((magnitude >> kF16Shift) & kF16MantissaMask);
  const uint32_t special =
      select_bits(magnitude > kF32InfBits, nan, kF16InfBits);
  const uint32_t finite =
      select_bits(magnitude < kMinNormalBits, subnormal, normal);
  const uint32_t result =
      select_bits(magnitude >= kOverflowBits, special, finite);
  return static_cast<uint16_t>(result | sign);
}

// bfloat16 -> float32 (exact): the top half of a float32.
inline float bfloat16_to_float(uint16_t bf16) {
  return std::bit_cast<float>(uint32_t{bf16} << kBF16Shift);
}

// float32 -> bfloat16, round to nearest even; NaN keeps its top bits and
// gets the quiet bit (rounding could otherwise carry a NaN into infinity).
inline uint16_t float_to_bfloat16(float value) {
  constexpr uint32_t kHalfUlpMinusOne = (1u << (kBF16Shift - 1)) - 1;
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint32_t odd = (bits >> kBF16Shift) & 1u;
  const uint32_t rounded = (bits + kHalfUlpMinusOne + odd) >> kBF16Shift;
  const uint32_t nan = (bits | kF32QuietBit) >> kBF16Shift;
  const bool is_nan = (bits & kF32AbsMask) > kF32InfBits;
  return static_cast<uint16_t>(select_bits(is_nan, nan, rounded));
}

}  // namespace weft::collectives::internal

#endif  // WEFT_COLLECTIVES_KERNELS_HALF_H_
