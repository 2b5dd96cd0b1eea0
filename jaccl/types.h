// jaccl/types.h: the element types behind JACCL's Dtype values, as JACCL's
// types.h names them: float16_t, bfloat16_t and complex64_t, so programs that
// fill buffers with jaccl::float16_t(x) or read static_cast<float>(b) build
// unchanged. Conversions round to nearest, ties to even (weft's kernels do
// the arithmetic; these types only carry the bits).
//
// On Arm with half-precision arithmetic, float16_t is the compiler's __fp16,
// as it is in JACCL there; elsewhere it is a 16-bit struct.
#ifndef WEFT_JACCL_TYPES_H_
#define WEFT_JACCL_TYPES_H_

#include <complex>
#include <cstddef>
#include <cstdint>

#include "jaccl/group.h"

namespace jaccl {

namespace detail {
// Defined in the jaccl library (weft's conversions, collectives/kernels).
uint16_t float_to_float16_bits(float value);
float float16_bits_to_float(uint16_t bits);
uint16_t float_to_bfloat16_bits(float value);
float bfloat16_bits_to_float(uint16_t bits);
}  // namespace detail

#ifdef __ARM_FEATURE_FP16_SCALAR_ARITHMETIC
using float16_t = __fp16;
#else
// IEEE binary16.
struct float16_t {
  uint16_t bits_;

  float16_t() = default;
  float16_t(const float& x) : bits_(detail::float_to_float16_bits(x)) {}
  operator float() const { return detail::float16_bits_to_float(bits_); }

  bool operator<(float16_t x) const { return float(*this) < float(x); }
  bool operator>(float16_t x) const { return float(*this) > float(x); }
  float16_t operator+(float16_t x) const { return float(*this) + float(x); }
  float16_t& operator+=(float16_t x) { return *this = *this + x; }
};
#endif

// bfloat16: the top half of a float32.
struct bfloat16_t {
  uint16_t bits_;

  bfloat16_t() = default;
  bfloat16_t(const float& x) : bits_(detail::float_to_bfloat16_bits(x)) {}
  operator float() const { return detail::bfloat16_bits_to_float(bits_); }

  bool operator<(bfloat16_t x) const { return float(*this) < float(x); }
  bool operator>(bfloat16_t x) const { return float(*this) > float(x); }
  bfloat16_t operator+(bfloat16_t x) const { return float(*this) + float(x); }
  bfloat16_t& operator+=(bfloat16_t x) { return *this = *this + x; }
};

using complex64_t = std::complex<float>;

static_assert(sizeof(float16_t) == 2 && sizeof(bfloat16_t) == 2 &&
              sizeof(complex64_t) == 8);

// Bytes per element of a Dtype value; 0 for a value outside Dtype.
size_t dtype_size(int dtype);

}  // namespace jaccl

#endif  // WEFT_JACCL_TYPES_H_
