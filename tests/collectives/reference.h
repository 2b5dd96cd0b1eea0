// Reference data and results for the collectives tests, computed directly
// with plain loops (never by weft's own kernels): inputs whose reductions
// are exact in any order (small dyadic values), inputs whose float sums
// depend on the order, and element-wise reductions in rank order.
#ifndef WEFT_TESTS_COLLECTIVES_REFERENCE_H_
#define WEFT_TESTS_COLLECTIVES_REFERENCE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "collectives/dtype.h"

namespace weft::testing {

using ByteVec = std::vector<std::byte>;

inline uint64_t mix(uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
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

// float32 <-> float16/bfloat16 for values exactly representable in both
// (normal numbers with few significant bits, and zero).
inline uint16_t exact_half(float f, bool bfloat) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  if (bfloat) return static_cast<uint16_t>(b >> 16);
  const uint32_t sign = (b >> 16) & 0x8000u;
  if ((b & 0x7fffffffu) == 0) return static_cast<uint16_t>(sign);
  const int exponent = static_cast<int>((b >> 23) & 0xff) - 127 + 15;
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(exponent) << 10) |
                               ((b >> 13) & 0x3ffu));
}
inline float exact_float(uint16_t h, bool bfloat) {
  uint32_t b;
  if (bfloat) {
    b = uint32_t{h} << 16;
  } else if ((h & 0x7fffu) == 0) {
    b = uint32_t{h & 0x8000u} << 16;
  } else {
    const uint32_t exponent = ((h >> 10) & 0x1fu) - 15 + 127;
    b = (uint32_t{h & 0x8000u} << 16) | (exponent << 23) |
        (uint32_t{h & 0x3ffu} << 13);
  }
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// A value from {-2, -1, -0.5, 0.5, 1, 2}: sums of a few hundred and
// products of a dozen are exact, so every order gives the same bits.
inline float dyadic(uint64_t h) {
  constexpr float kValues[] = {-2.0f, -1.0f, -0.5f, 0.5f, 1.0f, 2.0f};
  return kValues[h % 6];
}

// Input of `count` elements for `rank`, exact under any reduction order.
inline ByteVec exact_input(DType dtype, uint64_t count, uint32_t rank,
                           uint64_t salt) {
  const size_t size = dtype_size(dtype);
  ByteVec out(count * size);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t h = mix(salt * 1'000'003 + rank * 7'919 + i);
    std::byte* p = out.data() + i * size;
    switch (dtype) {
      case DType::kBool:
        store<uint8_t>(p, static_cast<uint8_t>(h & 1));
        break;
      case DType::kFloat16:
        store<uint16_t>(p, exact_half(dyadic(h), false));
        break;
      case DType::kBFloat16:
        store<uint16_t>(p, exact_half(dyadic(h), true));
        break;
      case DType::kFloat32:
        store<float>(p, dyadic(h));
        break;
      case DType::kFloat64:
        store<double>(p, dyadic(h));
        break;
      case DType::kComplex64:
        store<float>(p, dyadic(h));
        store<float>(p + 4, dyadic(h >> 8));
        break;
      default:
        std::memcpy(p, &h, size);
        break;  // integers wrap: any value
    }
  }
  return out;
}

// float32/float64 input whose sums depend on the order of addition.
inline ByteVec sensitive_input(DType dtype, uint64_t count, uint32_t rank,
                               uint64_t salt) {
  const size_t size = dtype_size(dtype);
  ByteVec out(count * size);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t h = mix(salt * 1'000'003 + rank * 7'919 + i);
    const double mantissa = static_cast<double>(h & 0xffffff) / 0x1000000 + 1.0;
    const int exponent = static_cast<int>((h >> 24) % 40) - 20;
    const double v = ((h >> 40) & 1 ? -1 : 1) * std::ldexp(mantissa, exponent);
    if (dtype == DType::kFloat32) {
      store<float>(out.data() + i * size, static_cast<float>(v));
    } else {
      store<double>(out.data() + i * size, v);
    }
  }
  return out;
}

template <typename T>
T apply_plain(ReduceOp op, T a, T b) {
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

// acc = op(acc, x) for one element at `acc` / `x`.
inline void reduce_element(DType dtype, ReduceOp op, std::byte* acc,
                           const std::byte* x) {
  switch (dtype) {
    case DType::kBool: {
      const bool a = load<uint8_t>(acc) != 0, b = load<uint8_t>(x) != 0;
      const bool any = op == ReduceOp::kSum || op == ReduceOp::kMax;
      store<uint8_t>(acc, any ? (a || b) : (a && b));
      return;
    }
    case DType::kInt8:
    case DType::kUint8:
      store<uint8_t>(acc,
                     op == ReduceOp::kMax || op == ReduceOp::kMin
                         ? (dtype == DType::kInt8
                                ? static_cast<uint8_t>(apply_plain<int8_t>(
                                      op, load<int8_t>(acc), load<int8_t>(x)))
                                : apply_plain<uint8_t>(op, load<uint8_t>(acc),
                                                       load<uint8_t>(x)))
                         : static_cast<uint8_t>(apply_plain<uint32_t>(
                               op, load<uint8_t>(acc), load<uint8_t>(x))));
      return;
    case DType::kInt16:
    case DType::kUint16:
      store<uint16_t>(
          acc, op == ReduceOp::kMax || op == ReduceOp::kMin
                   ? (dtype == DType::kInt16
                          ? static_cast<uint16_t>(apply_plain<int16_t>(
                                op, load<int16_t>(acc), load<int16_t>(x)))
                          : apply_plain<uint16_t>(op, load<uint16_t>(acc),
                                                  load<uint16_t>(x)))
                   : static_cast<uint16_t>(apply_plain<uint32_t>(
                         op, load<uint16_t>(acc), load<uint16_t>(x))));
      return;
    case DType::kInt32:
    case DType::kUint32:
      store<uint32_t>(
          acc, op == ReduceOp::kMax || op == ReduceOp::kMin
                   ? (dtype == DType::kInt32
                          ? static_cast<uint32_t>(apply_plain<int32_t>(
                                op, load<int32_t>(acc), load<int32_t>(x)))
                          : apply_plain<uint32_t>(op, load<uint32_t>(acc),
                                                  load<uint32_t>(x)))
                   : apply_plain<uint32_t>(op, load<uint32_t>(acc),
                                           load<uint32_t>(x)));
      return;
    case DType::kInt64:
    case DType::kUint64:
      store<uint64_t>(
          acc, op == ReduceOp::kMax || op == ReduceOp::kMin
                   ? (dtype == DType::kInt64
                          ? static_cast<uint64_t>(apply_plain<int64_t>(
                                op, load<int64_t>(acc), load<int64_t>(x)))
                          : apply_plain<uint64_t>(op, load<uint64_t>(acc),
                                                  load<uint64_t>(x)))
                   : apply_plain<uint64_t>(op, load<uint64_t>(acc),
                                           load<uint64_t>(x)));
      return;
    case DType::kFloat16:
    case DType::kBFloat16: {
      const bool bf = dtype == DType::kBFloat16;
      const float r =
          apply_plain<float>(op, exact_float(load<uint16_t>(acc), bf),
                             exact_float(load<uint16_t>(x), bf));
      store<uint16_t>(acc, exact_half(r, bf));
      return;
    }
    case DType::kFloat32:
      store<float>(acc,
                   apply_plain<float>(op, load<float>(acc), load<float>(x)));
      return;
    case DType::kFloat64:
      store<double>(
          acc, apply_plain<double>(op, load<double>(acc), load<double>(x)));
      return;
    case DType::kComplex64: {
      const float ar = load<float>(acc), ai = load<float>(acc + 4);
      const float br = load<float>(x), bi = load<float>(x + 4);
      float rr = ar, ri = ai;
      if (op == ReduceOp::kSum) {
        rr = ar + br;
        ri = ai + bi;
      } else if (op == ReduceOp::kProd) {
        rr = ar * br - ai * bi;
        ri = ar * bi + ai * br;
      } else {
        const bool b_greater = br > ar || (br == ar && bi > ai);
        const bool b_less = br < ar || (br == ar && bi < ai);
        if (op == ReduceOp::kMax ? b_greater : b_less) rr = br, ri = bi;
      }
      store<float>(acc, rr);
      store<float>(acc + 4, ri);
      return;
    }
  }
}

// Element-wise op over inputs[0], inputs[1], ... in that order.
inline ByteVec reference_reduce(DType dtype, ReduceOp op,
                                const std::vector<ByteVec>& inputs) {
  ByteVec acc = inputs.at(0);
  const size_t size = dtype_size(dtype);
  for (size_t k = 1; k < inputs.size(); ++k) {
    for (size_t at = 0; at < acc.size(); at += size) {
      reduce_element(dtype, op, acc.data() + at, inputs[k].data() + at);
    }
  }
  return acc;
}

}  // namespace weft::testing

#endif  // WEFT_TESTS_COLLECTIVES_REFERENCE_H_
