#include "harness/plain_arithmetic.h"

#include <cmath>
#include <cstring>
#include <type_traits>

namespace weft::harness {
namespace {

constexpr uint32_t kFloatExponentBias = 127;
constexpr uint32_t kHalfExponentBias = 15;
constexpr uint32_t kFloatMantissaBits = 23;
constexpr uint32_t kHalfMantissaBits = 10;
constexpr uint32_t kDroppedBits = kFloatMantissaBits - kHalfMantissaBits;
constexpr uint16_t kHalfInfinity = 0x7c00;
constexpr uint16_t kHalfQuietNan = 0x7e00;
constexpr int kHalfMaxExponent = 31;
constexpr int kHalfSubnormalShift = 14;  // 1 - (half bias - 1) + dropped

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}
float float_of(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// value >> shift, rounded to nearest, ties to even.
uint32_t shift_round_even(uint32_t value, int shift) {
  const uint32_t kept = value >> shift;
  const uint32_t rest = value & ((uint32_t{1} << shift) - 1);
  const uint32_t half = uint32_t{1} << (shift - 1);
  return kept + ((rest > half || (rest == half && (kept & 1))) ? 1 : 0);
}

template <typename T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
void store(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

template <typename T>
T combine(ReduceOp op, T a, T b) {
  switch (op) {
    case ReduceOp::kSum:
      return static_cast<T>(a + b);
    case ReduceOp::kProd:
      return static_cast<T>(a * b);
    case ReduceOp::kMax:
      return b > a ? b : a;
    case ReduceOp::kMin:
      return b < a ? b : a;
  }
  return a;
}

// Integers: sum and product wrap (computed unsigned), max and min compare
// as the dtype's signedness says.
template <typename T>
void reduce_integers(ReduceOp op, std::byte* acc, const std::byte* x,
                     uint64_t count) {
  using Unsigned = std::make_unsigned_t<T>;
  using Wide = std::conditional_t<(sizeof(Unsigned) < 4), uint32_t, Unsigned>;
  constexpr size_t kSize = sizeof(T);
  const bool ordered = op == ReduceOp::kMax || op == ReduceOp::kMin;
  for (uint64_t i = 0; i < count; ++i) {
    std::byte* a = acc + i * kSize;
    const std::byte* b = x + i * kSize;
    if (ordered) {
      store<T>(a, combine<T>(op, load<T>(a), load<T>(b)));
    } else {
      store<Unsigned>(a, static_cast<Unsigned>(combine<Wide>(
                             op, load<Unsigned>(a), load<Unsigned>(b))));
    }
  }
}

template <typename F>
void reduce_floats(ReduceOp op, std::byte* acc, const std::byte* x,
                   uint64_t count) {
  for (uint64_t i = 0; i < count; ++i) {
    std::byte* a = acc + i * sizeof(F);
    store<F>(a, combine<F>(op, load<F>(a), load<F>(x + i * sizeof(F))));
  }
}

void reduce_halves(bool bfloat, ReduceOp op, std::byte* acc, const std::byte* x,
                   uint64_t count) {
  for (uint64_t i = 0; i < count; ++i) {
    std::byte* a = acc + i * 2;
    const uint16_t ha = load<uint16_t>(a);
    const uint16_t hb = load<uint16_t>(x + i * 2);
    const float fa = bfloat ? bfloat16_to_float(ha) : half_to_float(ha);
    const float fb = bfloat ? bfloat16_to_float(hb) : half_to_float(hb);
    const float r = combine<float>(op, fa, fb);
    store<uint16_t>(a, bfloat ? float_to_bfloat16(r) : float_to_half(r));
  }
}

void reduce_bools(ReduceOp op, std::byte* acc, const std::byte* x,
                  uint64_t count) {
  const bool any = op == ReduceOp::kSum || op == ReduceOp::kMax;
  for (uint64_t i = 0; i < count; ++i) {
    const bool a = acc[i] != std::byte{0};
    const bool b = x[i] != std::byte{0};
    acc[i] = std::byte{static_cast<uint8_t>(any ? (a || b) : (a && b))};
  }
}

void reduce_complex(ReduceOp op, std::byte* acc, const std::byte* x,
                    uint64_t count) {
  constexpr size_t kSize = 2 * sizeof(float);
  for (uint64_t i = 0; i < count; ++i) {
    std::byte* a = acc + i * kSize;
    const std::byte* b = x + i * kSize;
    const float ar = load<float>(a), ai = load<float>(a + 4);
    const float br = load<float>(b), bi = load<float>(b + 4);
    float rr = ar, ri = ai;
    if (op == ReduceOp::kSum) {
      rr = ar + br;
      ri = ai + bi;
    } else if (op == ReduceOp::kProd) {
      rr = ar * br - ai * bi;
      ri = ar * bi + ai * br;
    } else {
      const bool greater = br > ar || (br == ar && bi > ai);
      const bool less = br < ar || (br == ar && bi < ai);
      if (op == ReduceOp::kMax ? greater : less) {
        rr = br;
        ri = bi;
      }
    }
    store<float>(a, rr);
    store<float>(a + 4, ri);
  }
}

}  // namespace

uint16_t float_to_half(float value) {
  const uint32_t x = bits_of(value);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const int exponent = static_cast<int>((x >> kFloatMantissaBits) & 0xffu);
  const uint32_t mantissa = x & ((uint32_t{1} << kFloatMantissaBits) - 1);
  if (exponent == 0xff) {
    return sign | (mantissa != 0 ? kHalfQuietNan : kHalfInfinity);
  }
  const int e = exponent - static_cast<int>(kFloatExponentBias) +
                static_cast<int>(kHalfExponentBias);
  if (e >= kHalfMaxExponent) return sign | kHalfInfinity;
  if (e <= 0) {
    // Subnormal (or zero) in half: shift the full significand.
    const int shift = kHalfSubnormalShift - e;
    if (shift > static_cast<int>(kFloatMantissaBits) + 1) return sign;
    const uint32_t full = mantissa | (uint32_t{1} << kFloatMantissaBits);
    return sign | static_cast<uint16_t>(shift_round_even(full, shift));
  }
  // A carry out of the mantissa correctly bumps the exponent (to infinity
  // at the top).
  const uint32_t joined =
      (static_cast<uint32_t>(e) << kFloatMantissaBits) | mantissa;
  return sign | static_cast<uint16_t>(shift_round_even(joined, kDroppedBits));
}

float half_to_float(uint16_t bits) {
  const uint32_t sign = uint32_t{bits & 0x8000u} << 16;
  const uint32_t exponent = (bits >> kHalfMantissaBits) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) {
    return float_of(sign | 0x7f800000u | (mantissa << kDroppedBits));
  }
  return float_of(sign |
                  ((exponent - kHalfExponentBias + kFloatExponentBias)
                   << kFloatMantissaBits) |
                  (mantissa << kDroppedBits));
}

uint16_t float_to_bfloat16(float value) {
  const uint32_t x = bits_of(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) {
    return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  }
  // Round to nearest even on the 16 dropped bits.
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

float bfloat16_to_float(uint16_t bits) {
  return float_of(static_cast<uint32_t>(bits) << 16);
}

void plain_reduce(DType dtype, ReduceOp op, std::byte* acc, const std::byte* x,
                  uint64_t count) {
  switch (dtype) {
    case DType::kBool:
      return reduce_bools(op, acc, x, count);
    case DType::kInt8:
      return reduce_integers<int8_t>(op, acc, x, count);
    case DType::kUint8:
      return reduce_integers<uint8_t>(op, acc, x, count);
    case DType::kInt16:
      return reduce_integers<int16_t>(op, acc, x, count);
    case DType::kUint16:
      return reduce_integers<uint16_t>(op, acc, x, count);
    case DType::kInt32:
      return reduce_integers<int32_t>(op, acc, x, count);
    case DType::kUint32:
      return reduce_integers<uint32_t>(op, acc, x, count);
    case DType::kInt64:
      return reduce_integers<int64_t>(op, acc, x, count);
    case DType::kUint64:
      return reduce_integers<uint64_t>(op, acc, x, count);
    case DType::kFloat16:
      return reduce_halves(false, op, acc, x, count);
    case DType::kBFloat16:
      return reduce_halves(true, op, acc, x, count);
    case DType::kFloat32:
      return reduce_floats<float>(op, acc, x, count);
    case DType::kFloat64:
      return reduce_floats<double>(op, acc, x, count);
    case DType::kComplex64:
      return reduce_complex(op, acc, x, count);
  }
}

}  // namespace weft::harness
