// Reduction kernels: one element-wise loop per dtype and op, written so the
// compiler vectorises it (memcpy loads and stores, branch-free selects);
// float16 and bfloat16 go through float32. reduce_x86.cc adds SIMD kernels
// for the 16-bit floats where the CPU has them.
#include "collectives/kernels/reduce.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "absl/strings/str_format.h"
#include "collectives/kernels/half.h"
#include "collectives/kernels/reduce_kernels.h"

// Complex products must not be contracted into fused multiply-adds: the
// result would then depend on the target (Arm fuses by default, x86 without
// -mfma cannot), and every rank on every platform must get the same bits.
// gcc does not contract in ISO C++ mode (-std=c++20), which the build uses.
#if defined(__clang__)
#pragma clang fp contract(off)
#endif

namespace weft {
namespace {

using Kernel = internal::ReduceKernel;

template <typename T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename T>
void store(unsigned char* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

// acc[i] = Op::apply(acc[i], in[i]) where acc and in do not overlap: restrict
// spares the vectorised loop its run-time overlap checks.
template <typename T, typename Op>
void reduce_run_apart(unsigned char* __restrict acc,
                      const unsigned char* __restrict in, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const size_t at = i * sizeof(T);
    store<T>(acc + at, Op::apply(load<T>(acc + at), load<T>(in + at)));
  }
}

// acc[i] = Op::apply(acc[i], acc[i]), for acc == in.
template <typename T, typename Op>
void reduce_run_same(unsigned char* acc, const unsigned char*, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const size_t at = i * sizeof(T);
    const T x = load<T>(acc + at);
    store<T>(acc + at, Op::apply(x, x));
  }
}

// A run over blocks, each prefetching a later one; a single run for inputs
// too small to prefetch (each run costs an alignment prologue and a tail).
template <typename T,
          void (*kRun)(unsigned char*, const unsigned char*, size_t)>
void reduce_blocks(unsigned char* acc, const unsigned char* in, size_t count) {
  constexpr size_t kBlock = internal::kPrefetchBlockBytes / sizeof(T);
  const size_t total_bytes = count * sizeof(T);
  if (total_bytes < internal::kPrefetchMinBytes) return kRun(acc, in, count);
  size_t done = 0;
  for (; count - done >= kBlock; done += kBlock) {
    const size_t at = done * sizeof(T);
    internal::prefetch_ahead(acc, in, at, total_bytes);
    kRun(acc + at, in + at, kBlock);
  }
  const size_t at = done * sizeof(T);
  kRun(acc + at, in + at, count - done);
}

// The API allows acc == in but no other overlap.
template <typename T, typename Op>
void reduce_elements(unsigned char* acc, const unsigned char* in,
                     size_t count) {
  if (acc == in) {
    reduce_blocks<T, &reduce_run_same<T, Op>>(acc, in, count);
  } else {
    reduce_blocks<T, &reduce_run_apart<T, Op>>(acc, in, count);
  }
}

// ---- Integers: wrap modulo 2^n, computed in unsigned arithmetic wide enough
// that integer promotion cannot make it signed (uint16 * uint16 would
// otherwise overflow int).
template <typename T>
using Unsigned = std::conditional_t<(sizeof(T) < sizeof(uint32_t)), uint32_t,
                                    std::make_unsigned_t<T>>;

template <typename T>
struct WrapSum {
  static T apply(T a, T b) {
    return static_cast<T>(static_cast<Unsigned<T>>(a) +
                          static_cast<Unsigned<T>>(b));
  }
};
template <typename T>
struct WrapProd {
  static T apply(T a, T b) {
    return static_cast<T>(static_cast<Unsigned<T>>(a) *
                          static_cast<Unsigned<T>>(b));
  }
};
template <typename T>
struct IntMax {
  static T apply(T a, T b) { return a < b ? b : a; }
};
template <typename T>
struct IntMin {
  static T apply(T a, T b) { return b < a ? b : a; }
};

// ---- Bool: one byte, any non-zero byte is true, results are 0 or 1.
struct BoolOr {
  static uint8_t apply(uint8_t a, uint8_t b) {
    return static_cast<uint8_t>((a | b) != 0);
  }
};
struct BoolAnd {
  static uint8_t apply(uint8_t a, uint8_t b) {
    return static_cast<uint8_t>((a != 0) & (b != 0));
  }
};

// ---- Floats. max/min propagate NaN (a NaN in acc is kept, a NaN in `in`
// replaces acc); on equal values (including +0 and -0) acc is kept.
template <typename T>
struct FloatSum {
  static T apply(T a, T b) { return a + b; }
};
template <typename T>
struct FloatProd {
  static T apply(T a, T b) { return a * b; }
};
template <typename T>
struct FloatMax {
  static T apply(T a, T b) { return (a >= b || a != a) ? a : b; }
};
template <typename T>
struct FloatMin {
  static T apply(T a, T b) { return (a <= b || a != a) ? a : b; }
};

// ---- complex64: (real, imaginary) float32 pairs. max/min order by the real
// part, then the imaginary part, and pick a whole element; an element with a
// NaN part wins as for floats.
struct Complex64 {
  float re;
  float im;
};
static_assert(sizeof(Complex64) == 2 * sizeof(float));

bool has_nan(Complex64 z) { return z.re != z.re || z.im != z.im; }

Complex64 select(bool take_b, Complex64 a, Complex64 b) {
  return {take_b ? b.re : a.re, take_b ? b.im : a.im};
}

struct ComplexSum {
  static Complex64 apply(Complex64 a, Complex64 b) {
    return {a.re + b.re, a.im + b.im};
  }
};
struct ComplexProd {
  static Complex64 apply(Complex64 a, Complex64 b) {
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  }
};
struct ComplexMax {
  static Complex64 apply(Complex64 a, Complex64 b) {
    const bool b_greater = b.re > a.re || (b.re == a.re && b.im > a.im);
    return select(!has_nan(a) && (has_nan(b) || b_greater), a, b);
  }
};
struct ComplexMin {
  static Complex64 apply(Complex64 a, Complex64 b) {
    const bool b_less = b.re < a.re || (b.re == a.re && b.im < a.im);
    return select(!has_nan(a) && (has_nan(b) || b_less), a, b);
  }
};

// ---- float16 and bfloat16 (stored as uint16_t): widen both to float32,
// apply the float op, round back to nearest even.
struct Float16Codec {
  static float to_float(uint16_t h) { return internal::float16_to_float(h); }
  static uint16_t from_float(float f) { return internal::float_to_float16(f); }
};
struct BFloat16Codec {
  static float to_float(uint16_t h) { return internal::bfloat16_to_float(h); }
  static uint16_t from_float(float f) { return internal::float_to_bfloat16(f); }
};

template <typename Codec, typename Op>
struct Converted {
  static uint16_t apply(uint16_t a, uint16_t b) {
    return Codec::from_float(Op::apply(Codec::to_float(a), Codec::to_float(b)));
  }
};

template <typename T, typename Sum, typename Prod, typename Max, typename Min>
Kernel pick(ReduceOp op) {
  return internal::kernel_for_op<Kernel>(
      op, &reduce_elements<T, Sum>, &reduce_elements<T, Prod>,
      &reduce_elements<T, Max>, &reduce_elements<T, Min>);
}

template <typename T>
Kernel pick_int(ReduceOp op) {
  return pick<T, WrapSum<T>, WrapProd<T>, IntMax<T>, IntMin<T>>(op);
}

template <typename T>
Kernel pick_float(ReduceOp op) {
  return pick<T, FloatSum<T>, FloatProd<T>, FloatMax<T>, FloatMin<T>>(op);
}

template <typename Codec>
Kernel pick_converted(ReduceOp op) {
  return pick<uint16_t, Converted<Codec, FloatSum<float>>,
              Converted<Codec, FloatProd<float>>,
              Converted<Codec, FloatMax<float>>,
              Converted<Codec, FloatMin<float>>>(op);
}

}  // namespace

namespace internal {

ReduceKernel portable_reduce_kernel(DType dtype, ReduceOp op) {
  switch (dtype) {
    case DType::kBool:
      return pick<uint8_t, BoolOr, BoolAnd, BoolOr, BoolAnd>(op);
    case DType::kInt8:
      return pick_int<int8_t>(op);
    case DType::kInt16:
      return pick_int<int16_t>(op);
    case DType::kInt32:
      return pick_int<int32_t>(op);
    case DType::kInt64:
      return pick_int<int64_t>(op);
    case DType::kUint8:
      return pick_int<uint8_t>(op);
    case DType::kUint16:
      return pick_int<uint16_t>(op);
    case DType::kUint32:
      return pick_int<uint32_t>(op);
    case DType::kUint64:
      return pick_int<uint64_t>(op);
    case DType::kFloat16:
      return pick_converted<Float16Codec>(op);
    case DType::kBFloat16:
      return pick_converted<BFloat16Codec>(op);
    case DType::kFloat32:
      return pick_float<float>(op);
    case DType::kFloat64:
      return pick_float<double>(op);
    case DType::kComplex64:
      return pick<Complex64, ComplexSum, ComplexProd, ComplexMax, ComplexMin>(
          op);
  }
  return nullptr;
}

}  // namespace internal

absl::Status reduce_into(DType dtype, ReduceOp op, void* acc, const void* in,
                         size_t count) {
  if (!is_valid(dtype)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reduce_into: unknown dtype %d (valid dtypes are 0..%d, bool to "
        "complex64); pass a weft::DType value",
        static_cast<int>(dtype), kDTypeCount - 1));
  }
  if (!is_valid(op)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reduce_into: unknown reduce op %d (valid ops are 0..%d: sum, prod, "
        "max, min); pass a weft::ReduceOp value",
        static_cast<int>(op), kReduceOpCount - 1));
  }
  if (count == 0) return absl::OkStatus();
  const size_t element_bytes = dtype_size(dtype);
  if (count > std::numeric_limits<size_t>::max() / element_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reduce_into: %d %s elements overflow the address space; pass an "
        "element count, not a byte count",
        count, dtype_name(dtype)));
  }
  if (acc == nullptr || in == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reduce_into: %s buffer is null with %d %s elements to reduce",
        acc == nullptr ? "accumulator" : "input", count, dtype_name(dtype)));
  }
  auto* acc_bytes = static_cast<unsigned char*>(acc);
  const auto* in_bytes = static_cast<const unsigned char*>(in);
  size_t done = 0;
  if (internal::SimdReduceKernel simd =
          internal::simd_reduce_kernel(dtype, op)) {
    done = simd(acc_bytes, in_bytes, count);
  }
  const size_t skip_bytes = done * element_bytes;
  internal::portable_reduce_kernel(dtype, op)(
      acc_bytes + skip_bytes, in_bytes + skip_bytes, count - done);
  return absl::OkStatus();
}

}  // namespace weft
