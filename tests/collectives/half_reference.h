// Slow reference conversions for float16 and bfloat16, written from the IEEE
// 754 definition of a binary format (sign, biased exponent, mantissa with an
// implicit leading one, subnormals at the minimum exponent) with no bit
// tricks, so the tests do not check the kernels against themselves.
#ifndef WEFT_TESTS_COLLECTIVES_HALF_REFERENCE_H_
#define WEFT_TESTS_COLLECTIVES_HALF_REFERENCE_H_

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace weft::reference {

struct Format {
  int exponent_bits;
  int mantissa_bits;

  int bias() const { return (1 << (exponent_bits - 1)) - 1; }
  uint32_t max_exponent() const { return (1u << exponent_bits) - 1; }
  uint32_t sign_bit() const { return 1u << (exponent_bits + mantissa_bits); }
  uint32_t inf_bits() const { return max_exponent() << mantissa_bits; }
  uint32_t quiet_bit() const { return 1u << (mantissa_bits - 1); }
  // The quiet NaN with no payload and no sign: what a NaN sum or product is.
  uint32_t canonical_nan() const { return inf_bits() | quiet_bit(); }
};

inline constexpr Format kFloat16{5, 10};
inline constexpr Format kBFloat16{8, 7};

// The magnitude of a non-negative, non-NaN pattern; inf_bits() stands for
// 2^(bias + 1), the first power of two past the largest finite value, which
// is where rounding to nearest meets infinity.
inline double magnitude(Format f, uint32_t bits) {
  const uint32_t exponent = bits >> f.mantissa_bits;
  const uint32_t mantissa = bits & ((1u << f.mantissa_bits) - 1);
  if (exponent == 0) {
    return std::ldexp(static_cast<double>(mantissa),
                      1 - f.bias() - f.mantissa_bits);
  }
  return std::ldexp(static_cast<double>(mantissa + (1u << f.mantissa_bits)),
                    static_cast<int>(exponent) - f.bias() - f.mantissa_bits);
}

// The value of a pattern; NaN patterns give a NaN.
inline double value(Format f, uint32_t bits) {
  const bool negative = (bits & f.sign_bit()) != 0;
  const uint32_t abs_bits = bits & (f.sign_bit() - 1);
  if (abs_bits > f.inf_bits()) return std::numeric_limits<double>::quiet_NaN();
  const double m = abs_bits == f.inf_bits()
                       ? std::numeric_limits<double>::infinity()
                       : magnitude(f, abs_bits);
  return negative ? -m : m;
}

// Rounds a non-NaN value to the nearest pattern, ties to the even pattern;
// past the largest finite value by half an ulp or more, infinity.
inline uint32_t round_to(Format f, double x) {
  const uint32_t sign = std::signbit(x) ? f.sign_bit() : 0;
  const double a = std::fabs(x);
  // Largest pattern whose magnitude is <= a (patterns are ordered as values).
  uint32_t lo = 0;
  uint32_t hi = f.inf_bits();
  if (a >= magnitude(f, hi)) return sign | f.inf_bits();
  while (hi - lo > 1) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (magnitude(f, mid) <= a) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  // Both differences are exact in double (Sterbenz) where they can tie.
  const double below = a - magnitude(f, lo);
  const double above = magnitude(f, lo + 1) - a;
  uint32_t nearest = lo;
  if (above < below || (above == below && (lo % 2) == 1)) nearest = lo + 1;
  return sign | nearest;
}

// What converting a NaN keeps: the sign, the mantissa's top bits, and the
// quiet bit set (as x86 F16C and Arm FCVT do).
inline uint32_t narrow_nan(Format f, uint32_t float_bits) {
  const uint32_t sign = (float_bits >> 31) != 0 ? f.sign_bit() : 0;
  const uint32_t top =
      (float_bits >> (23 - f.mantissa_bits)) & ((1u << f.mantissa_bits) - 1);
  return sign | f.inf_bits() | f.quiet_bit() | top;
}

inline uint32_t widen_nan(Format f, uint32_t bits) {
  const uint32_t sign = (bits & f.sign_bit()) != 0 ? 0x80000000u : 0;
  const uint32_t mantissa = bits & ((1u << f.mantissa_bits) - 1);
  return sign | 0x7f800000u | 0x00400000u |
         (mantissa << (23 - f.mantissa_bits));
}

inline bool is_nan(Format f, uint32_t bits) {
  return (bits & (f.sign_bit() - 1)) > f.inf_bits();
}

// float32 bits of a pattern, NaNs quieted.
inline uint32_t to_float_bits(Format f, uint32_t bits) {
  if (is_nan(f, bits)) return widen_nan(f, bits);
  return std::bit_cast<uint32_t>(static_cast<float>(value(f, bits)));
}

// The pattern nearest a float32, NaNs narrowed as above.
inline uint32_t from_float(Format f, float x) {
  if (std::isnan(x)) return narrow_nan(f, std::bit_cast<uint32_t>(x));
  return round_to(f, static_cast<double>(x));
}

}  // namespace weft::reference

#endif  // WEFT_TESTS_COLLECTIVES_HALF_REFERENCE_H_
