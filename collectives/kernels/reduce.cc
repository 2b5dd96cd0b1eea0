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

// The runs: dst[i] = Op::apply(a[i], b[i]) over `count` elements, for each
// way the three may share memory. restrict spares the vectorised loops
// their run-time overlap checks.

// dst == a, b apart (acc op= in).
template <typename T, typename Op>
void reduce_run_apart(unsigned char* __restrict dst, const unsigned char*,
                      const unsigned char* __restrict b, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const size_t at = i * sizeof(T);
    store<T>(dst + at, Op::apply(load<T>(dst + at), load<T>(b + at)));
  }
}

// dst == a == b.
template <typename T, typename Op>
void reduce_run_same(unsigned char* dst, const unsigned char*,
                     const unsigned char*, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const size_t at = i * sizeof(T);
    const T x = load<T>(dst + at);
    store<T>(dst + at, Op::apply(x, x));
  }
}

// dst apart from both inputs (a and b may be one buffer: both are only
// read).
template <typename T, typename Op>
void reduce_run_to(unsigned char* __restrict dst,
                   const unsigned char* __restrict a,
                   const unsigned char* __restrict b, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const size_t at = i * sizeof(T);
    store<T>(dst + at, Op::apply(load<T>(a + at), load<T>(b + at)));
  }
}

using Run = void (*)(unsigned char*, const unsigned char*, const unsigned char*,
                     size_t);

// A run over blocks, each prefetching a later one if the input is large
// enough, then over lines, then the tail. Whole blocks and lines for small
// inputs too: a run of a constant count is what gcc vectorises at -O2 (its
// cheap cost model leaves a loop of a count known only at run time
// scalar; 64 KiB float32 sums went from 7.8 to 22-25 GB/s on x86).
template <typename T, Run kRun>
void reduce_blocks(unsigned char* dst, const unsigned char* a,
                   const unsigned char* b, size_t count) {
  constexpr size_t kBlock =
      collectives::internal::kPrefetchBlockBytes / sizeof(T);
  const size_t total_bytes = count * sizeof(T);
  size_t done = 0;
  for (; count - done >= kBlock; done += kBlock) {
    const size_t at = done * sizeof(T);
    collectives::internal::prefetch_ahead(dst, b, at, total_bytes);
    kRun(dst + at, a + at, b + at, kBlock);
  }
  // The rest a cache line at a time (frames of a few hundred bytes are
  // common), then what is left one element at a time.
  constexpr size_t kLine = collectives::internal::kCacheLineBytes / sizeof(T);
  for (; count - done >= kLine; done += kLine) {
    const size_t at = done * sizeof(T);
    kRun(dst + at, a + at, b + at, kLine);
  }
  const size_t at = done * sizeof(T);
  kRun(dst + at, a + at, b + at, count - done);
}

// acc op= in. The API allows acc == in but no other overlap.
template <typename T, typename Op>
void reduce_elements(unsigned char* acc, const unsigned char* in,
                     size_t count) {
  if (acc == in) {
    reduce_blocks<T, &reduce_run_same<T, Op>>(acc, acc, in, count);
  } else {
    reduce_blocks<T, &reduce_run_apart<T, Op>>(acc, acc, in, count);
  }
}

// dst = op(a, b). The API allows dst == a but no other overlap with dst.
template <typename T, typename Op>
void reduce_elements_to(unsigned char* dst, const unsigned char* a,
                        const unsigned char* b, size_t count) {
  if (dst == a) return reduce_elements<T, Op>(dst, b, count);
  reduce_blocks<T, &reduce_run_to<T, Op>>(dst, a, b, count);
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
// replaces acc); on equal values (including +0 and -0) acc is kept. A sum or
// product that is NaN is the canonical quiet NaN: which operand's payload
// the hardware passes on depends on the operands' order, which a compiler
// may swap (addition commutes) differently in each kernel, and Arm in its
// default-NaN mode passes on none; every rank must get the same bits.
template <typename T>
T canonical_if_nan(T r) {
  return r != r ? std::numeric_limits<T>::quiet_NaN() : r;
}
template <typename T>
struct FloatSum {
  static T apply(T a, T b) { return canonical_if_nan<T>(a + b); }
};
template <typename T>
struct FloatProd {
  static T apply(T a, T b) { return canonical_if_nan<T>(a * b); }
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
    return {canonical_if_nan(a.re + b.re), canonical_if_nan(a.im + b.im)};
  }
};
struct ComplexProd {
  static Complex64 apply(Complex64 a, Complex64 b) {
    return {canonical_if_nan(a.re * b.re - a.im * b.im),
            canonical_if_nan(a.re * b.im + a.im * b.re)};
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
  static float to_float(uint16_t h) {
    return collectives::internal::float16_to_float(h);
  }
  static uint16_t from_float(float f) {
    return collectives::internal::float_to_float16(f);
  }
};
struct BFloat16Codec {
  static float to_float(uint16_t h) {
    return collectives::internal::bfloat16_to_float(h);
  }
  static uint16_t from_float(float f) {
    return collectives::internal::float_to_bfloat16(f);
  }
};

template <typename Codec, typename Op>
struct Converted {
  static uint16_t apply(uint16_t a, uint16_t b) {
    return Codec::from_float(Op::apply(Codec::to_float(a), Codec::to_float(b)));
  }
};

using collectives::internal::ReduceToKernel;

template <typename T, typename Sum, typename Prod, typename Max, typename Min>
ReduceToKernel pick(ReduceOp op) {
  return collectives::internal::kernel_for_op<ReduceToKernel>(
      op, &reduce_elements_to<T, Sum>, &reduce_elements_to<T, Prod>,
      &reduce_elements_to<T, Max>, &reduce_elements_to<T, Min>);
}

template <typename T>
ReduceToKernel pick_int(ReduceOp op) {
  return pick<T, WrapSum<T>, WrapProd<T>, IntMax<T>, IntMin<T>>(op);
}

template <typename T>
ReduceToKernel pick_float(ReduceOp op) {
  return pick<T, FloatSum<T>, FloatProd<T>, FloatMax<T>, FloatMin<T>>(op);
}

template <typename Codec>
ReduceToKernel pick_converted(ReduceOp op) {
  return pick<uint16_t, Converted<Codec, FloatSum<float>>,
              Converted<Codec, FloatProd<float>>,
              Converted<Codec, FloatMax<float>>,
              Converted<Codec, FloatMin<float>>>(op);
}

// The portable kernel for a dtype and op.
ReduceToKernel portable_kernel(DType dtype, ReduceOp op) {
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
      return pick<Complex64, ComplexSum, ComplexProd, ComplexMax,
                  ComplexMin>(op);
  }
  return nullptr;
}

// Why a call cannot run, or OK. `fn` names the function in the message.
absl::Status check_call(const char* fn, DType dtype, ReduceOp op,
                        size_t count) {
  if (!is_valid(dtype)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: unknown dtype %d (valid dtypes are 0..%d, bool to "
                        "complex64); pass a weft::DType value",
                        fn, static_cast<int>(dtype), kDTypeCount - 1));
  }
  if (!is_valid(op)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: unknown reduce op %d (valid ops are 0..%d: sum, prod, "
        "max, min); pass a weft::ReduceOp value",
        fn, static_cast<int>(op), kReduceOpCount - 1));
  }
  if (count > std::numeric_limits<size_t>::max() / dtype_size(dtype)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %d %s elements overflow the address space; pass an "
        "element count, not a byte count",
        fn, count, dtype_name(dtype)));
  }
  return absl::OkStatus();
}

}  // namespace

namespace collectives::internal {

ReduceToKernel portable_reduce_to_kernel(DType dtype, ReduceOp op) {
  return portable_kernel(dtype, op);
}

}  // namespace collectives::internal

namespace {

// dst = op(a, b) for a checked call (dst == a for reduce_into): the SIMD
// kernel's whole vectors where this CPU has one, the portable kernel for
// the rest.
void run_kernels(DType dtype, ReduceOp op, unsigned char* dst,
                 const unsigned char* a, const unsigned char* b, size_t count) {
  size_t done = 0;
  if (collectives::internal::SimdReduceKernel simd =
          collectives::internal::simd_reduce_kernel(dtype, op)) {
    done = simd(dst, a, b, count);
  }
  const size_t skip = done * dtype_size(dtype);
  collectives::internal::portable_reduce_to_kernel(dtype, op)(
      dst + skip, a + skip, b + skip, count - done);
}

}  // namespace

absl::Status reduce_into(DType dtype, ReduceOp op, void* acc, const void* in,
                         size_t count) {
  if (absl::Status s = check_call("reduce_into", dtype, op, count); !s.ok()) {
    return s;
  }
  if (count == 0) return absl::OkStatus();
  if (acc == nullptr || in == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reduce_into: %s buffer is null with %d %s elements to reduce; "
        "pass a buffer of at least that many elements",
        acc == nullptr ? "accumulator" : "input", count, dtype_name(dtype)));
  }
  auto* acc_bytes = static_cast<unsigned char*>(acc);
  run_kernels(dtype, op, acc_bytes, acc_bytes,
              static_cast<const unsigned char*>(in), count);
  return absl::OkStatus();
}

absl::Status reduce_to(DType dtype, ReduceOp op, void* dst, const void* a,
                       const void* b, size_t count) {
  if (absl::Status s = check_call("reduce_to", dtype, op, count); !s.ok()) {
    return s;
  }
  if (count == 0) return absl::OkStatus();
  if (dst == nullptr || a == nullptr || b == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reduce_to: %s buffer is null with %d %s elements to reduce; "
        "pass a buffer of at least that many elements",
        dst == nullptr ? "destination"
        : a == nullptr ? "first input"
                       : "second input",
        count, dtype_name(dtype)));
  }
  run_kernels(dtype, op, static_cast<unsigned char*>(dst),
              static_cast<const unsigned char*>(a),
              static_cast<const unsigned char*>(b), count);
  return absl::OkStatus();
}

}  // namespace weft
