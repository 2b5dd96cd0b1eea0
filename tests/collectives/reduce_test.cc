// reduce_into for every dtype and op against references computed here:
// integers in wider arithmetic, float16/bfloat16 through the IEEE reference
// of half_reference.h, complex products on exactly representable values.
// Each check runs both the dispatching reduce_into (which takes the SIMD
// kernels where this CPU has them) and the portable kernels.
#include "collectives/kernels/reduce.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "collectives/kernels/reduce_kernels.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/collectives/half_reference.h"

namespace weft {
namespace {

using ::testing::HasSubstr;
using Bytes = std::vector<unsigned char>;

constexpr ReduceOp kOps[] = {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax,
                             ReduceOp::kMin};

// A fixed-seed generator of our own (splitmix64), so inputs are the same on
// every platform.
class Bits {
 public:
  explicit Bits(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  Bytes bytes(size_t n) {
    Bytes out(n);
    for (unsigned char& b : out) b = static_cast<unsigned char>(next());
    return out;
  }

 private:
  uint64_t state_;
};

template <typename T>
T get(const Bytes& b, size_t i) {
  T v;
  std::memcpy(&v, b.data() + i * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void put(Bytes& b, size_t i, T v) {
  std::memcpy(b.data() + i * sizeof(T), &v, sizeof(T));
}

template <typename T>
Bytes pack(const std::vector<T>& values) {
  Bytes out(values.size() * sizeof(T));
  for (size_t i = 0; i < values.size(); ++i) put(out, i, values[i]);
  return out;
}

// reduce_into and the portable kernel in place (dst == acc), and reduce_to
// and the portable kernel into a third buffer (dst = op(acc, in)).
enum class Path { kDispatch, kPortable, kDispatchTo, kPortableTo };
constexpr Path kPaths[] = {Path::kDispatch, Path::kPortable, Path::kDispatchTo,
                           Path::kPortableTo};

// acc op= in through one path; returns the new acc.
Bytes reduce(Path path, DType dtype, ReduceOp op, Bytes acc, const Bytes& in) {
  const size_t count = acc.size() / dtype_size(dtype);
  // reduce_to writes over what the destination held: garbage first.
  Bytes dst(acc.size(), 0xa5);
  switch (path) {
    case Path::kDispatch:
      EXPECT_TRUE(reduce_into(dtype, op, acc.data(), in.data(), count).ok());
      return acc;
    case Path::kPortable:
      collectives::internal::portable_reduce_to_kernel(dtype, op)(
          acc.data(), acc.data(), in.data(), count);
      return acc;
    case Path::kDispatchTo:
      EXPECT_TRUE(
          reduce_to(dtype, op, dst.data(), acc.data(), in.data(), count).ok());
      return dst;
    case Path::kPortableTo:
      collectives::internal::portable_reduce_to_kernel(dtype, op)(
          dst.data(), acc.data(), in.data(), count);
      return dst;
  }
  return acc;
}

std::string label(Path path, DType dtype, ReduceOp op) {
  const char* names[] = {"dispatch ", "portable ", "dispatch to ",
                         "portable to "};
  return std::string(names[static_cast<int>(path)]) +
         std::string(dtype_name(dtype)) + " " + std::string(reduce_op_name(op));
}

// ---- Integer references: sums and products reduced modulo 2^bits from
// exact 64-bit (or, for 64-bit types, modular uint64) arithmetic.
template <typename T>
T wrap(uint64_t exact_low_bits) {
  using U = std::make_unsigned_t<T>;
  const U low = static_cast<U>(exact_low_bits);  // keeps the low bits
  T out;
  std::memcpy(&out, &low, sizeof out);
  return out;
}

template <typename T>
T integer_reference(ReduceOp op, T a, T b) {
  const uint64_t ua = static_cast<uint64_t>(static_cast<int64_t>(a));
  const uint64_t ub = static_cast<uint64_t>(static_cast<int64_t>(b));
  switch (op) {
    case ReduceOp::kSum:
      return wrap<T>(ua + ub);
    case ReduceOp::kProd:
      return wrap<T>(ua * ub);
    case ReduceOp::kMax:
      return a > b ? a : b;
    case ReduceOp::kMin:
      return a < b ? a : b;
  }
  return T{};
}

template <typename T>
void check_integers(DType dtype) {
  constexpr size_t kCount = 3001;  // several prefetch blocks and a tail
  Bits bits(static_cast<uint64_t>(dtype) + 1);
  Bytes acc = bits.bytes(kCount * sizeof(T));
  Bytes in = bits.bytes(kCount * sizeof(T));
  // Edge values at the front.
  const T lo = std::numeric_limits<T>::min();
  const T hi = std::numeric_limits<T>::max();
  const T edges[][2] = {
      {hi, 1}, {lo, static_cast<T>(-1)}, {hi, hi}, {lo, lo}, {hi, 2}, {lo, 0}};
  for (size_t i = 0; i < std::size(edges); ++i) {
    put(acc, i, edges[i][0]);
    put(in, i, edges[i][1]);
  }
  for (Path path : kPaths) {
    for (ReduceOp op : kOps) {
      const Bytes out = reduce(path, dtype, op, acc, in);
      for (size_t i = 0; i < kCount; ++i) {
        ASSERT_EQ(get<T>(out, i),
                  integer_reference<T>(op, get<T>(acc, i), get<T>(in, i)))
            << label(path, dtype, op) << " element " << i;
      }
    }
  }
}

TEST(ReduceInto, IntegersMatchWideReference) {
  check_integers<int8_t>(DType::kInt8);
  check_integers<int16_t>(DType::kInt16);
  check_integers<int32_t>(DType::kInt32);
  check_integers<int64_t>(DType::kInt64);
  check_integers<uint8_t>(DType::kUint8);
  check_integers<uint16_t>(DType::kUint16);
  check_integers<uint32_t>(DType::kUint32);
  check_integers<uint64_t>(DType::kUint64);
}

TEST(ReduceInto, IntegersWrapModuloTwoToTheN) {
  auto one = [](DType dtype, ReduceOp op, auto a, auto b) {
    using T = decltype(a);
    Bytes acc = pack<T>({a});
    EXPECT_TRUE(
        reduce_into(dtype, op, acc.data(), pack<T>({b}).data(), 1).ok());
    return get<T>(acc, 0);
  };
  EXPECT_EQ(one(DType::kInt8, ReduceOp::kSum, int8_t{100}, int8_t{100}), -56);
  EXPECT_EQ(one(DType::kInt16, ReduceOp::kProd, int16_t{-32768}, int16_t{-1}),
            -32768);
  // 65535^2 = 2^32 - 2^17 + 1: would overflow int after promotion.
  EXPECT_EQ(
      one(DType::kUint16, ReduceOp::kProd, uint16_t{65535}, uint16_t{65535}),
      1);
  EXPECT_EQ(one(DType::kUint8, ReduceOp::kProd, uint8_t{200}, uint8_t{2}), 144);
  EXPECT_EQ(one(DType::kInt32, ReduceOp::kSum, int32_t{2147483647}, int32_t{1}),
            -2147483647 - 1);
  EXPECT_EQ(one(DType::kInt64, ReduceOp::kProd,
                std::numeric_limits<int64_t>::max(), int64_t{2}),
            -2);
  EXPECT_EQ(one(DType::kUint64, ReduceOp::kSum, ~uint64_t{0}, uint64_t{2}), 1u);
  EXPECT_EQ(one(DType::kInt8, ReduceOp::kMax, int8_t{-1}, int8_t{-128}), -1);
  EXPECT_EQ(one(DType::kUint8, ReduceOp::kMin, uint8_t{255}, uint8_t{0}), 0);
}

TEST(ReduceInto, BoolTreatsAnyNonZeroByteAsTrueAndWritesZeroOrOne) {
  const Bytes a = {0, 0, 1, 1, 0x80, 2, 0xff, 0};
  const Bytes b = {0, 1, 0, 1, 0x40, 0, 0xff, 7};
  const Bytes any = {0, 1, 1, 1, 1, 1, 1, 1};
  const Bytes all = {0, 0, 0, 1, 1, 0, 1, 0};
  for (Path path : kPaths) {
    EXPECT_EQ(reduce(path, DType::kBool, ReduceOp::kSum, a, b), any);
    EXPECT_EQ(reduce(path, DType::kBool, ReduceOp::kMax, a, b), any);
    EXPECT_EQ(reduce(path, DType::kBool, ReduceOp::kProd, a, b), all);
    EXPECT_EQ(reduce(path, DType::kBool, ReduceOp::kMin, a, b), all);
  }
}

// ---- Floats.
template <typename T>
void check_float_ops(DType dtype) {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T inf = std::numeric_limits<T>::infinity();
  // acc, in, expected max, expected min (NaN wins; ties keep acc).
  struct Row {
    T a, b, max, min;
  };
  const Row rows[] = {
      {1, 2, 2, 1},
      {-3, -4, -3, -4},
      {inf, -inf, inf, -inf},
      {nan, 1, nan, nan},
      {1, nan, nan, nan},
      {T(0.0), T(-0.0), T(0.0), T(0.0)},
      {T(-0.0), T(0.0), T(-0.0), T(-0.0)},
  };
  std::vector<T> a, b;
  for (const Row& r : rows) {
    a.push_back(r.a);
    b.push_back(r.b);
  }
  // Compared as bytes, so NaN and the sign of zero count.
  std::vector<T> max, min;
  for (const Row& r : rows) {
    max.push_back(r.max);
    min.push_back(r.min);
  }
  for (Path path : kPaths) {
    EXPECT_EQ(reduce(path, dtype, ReduceOp::kMax, pack(a), pack(b)), pack(max))
        << label(path, dtype, ReduceOp::kMax);
    EXPECT_EQ(reduce(path, dtype, ReduceOp::kMin, pack(a), pack(b)), pack(min))
        << label(path, dtype, ReduceOp::kMin);
  }
}

TEST(ReduceInto, FloatMaxMinPropagateNaNAndKeepAccOnTies) {
  check_float_ops<float>(DType::kFloat32);
  check_float_ops<double>(DType::kFloat64);
}

// NaN payloads are part of the bitwise contract: a sum or product that is
// NaN is the canonical quiet NaN (sign clear, no payload) on every path,
// whatever NaNs went in and in whichever order, so no rank's result depends
// on which operand a compiler or CPU let through. Long enough for every
// vectorised loop, at offsets that misalign it.
template <typename T, typename Bits>
void check_canonical_nan(DType dtype, Bits canonical, std::vector<Bits> nans) {
  constexpr size_t kCount = 1000;
  std::vector<Bits> a(kCount), b(kCount);
  for (size_t i = 0; i < kCount; ++i) {
    a[i] = nans[i % nans.size()];
    // Another NaN, a number, or an infinity against the NaN.
    const T others[] = {std::bit_cast<T>(nans[(i / nans.size()) % nans.size()]),
                        T(1.5), -std::numeric_limits<T>::infinity()};
    b[i] = std::bit_cast<Bits>(others[i % 3]);
  }
  for (const bool swap : {false, true}) {
    const Bytes acc = pack(swap ? b : a);
    const Bytes in = pack(swap ? a : b);
    for (Path path : kPaths) {
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProd}) {
        const Bytes out = reduce(path, dtype, op, acc, in);
        for (size_t i = 0; i < out.size() / sizeof(Bits); ++i) {
          ASSERT_EQ(get<Bits>(out, i), canonical)
              << label(path, dtype, op) << " element " << i << std::hex
              << " of " << get<Bits>(acc, i) << " and " << get<Bits>(in, i);
        }
      }
    }
  }
}

TEST(ReduceInto, ANaNSumOrProductIsTheCanonicalQuietNaN) {
  // Quiet and signalling NaNs, either sign, with payloads.
  check_canonical_nan<float, uint32_t>(
      DType::kFloat32, 0x7fc00000u,
      {0x7fc00001u, 0xffc12345u, 0x7fa00000u, 0xff800001u, 0x7fffffffu});
  check_canonical_nan<double, uint64_t>(
      DType::kFloat64, 0x7ff8000000000000ull,
      {0x7ff8000000000001ull, 0xfff8123456789abcull, 0x7ff4000000000000ull,
       0xfff0000000000001ull});
  // complex64: each part canonical on its own. Both parts of every input
  // element are NaNs (the numbers and infinity, read as two floats, put a
  // NaN or a number in each part), so both parts of every result are.
  check_canonical_nan<double, uint64_t>(
      DType::kComplex64, 0x7fc000007fc00000ull,
      {0x7fc000017fc00002ull, 0xffc12345ffa00000ull});
}

TEST(ReduceInto, Float32SumAndProdAreCorrectlyRounded) {
  // float32 results rounded once from the exact double result (double
  // rounding through double is harmless for + and * of floats).
  constexpr size_t kCount = 2049;
  Bits bits(7);
  std::vector<float> a(kCount), b(kCount);
  for (size_t i = 0; i < kCount; ++i) {
    a[i] = std::ldexp(static_cast<float>(bits.next() % 100000) - 50000.0f,
                      static_cast<int>(bits.next() % 40) - 20);
    b[i] = std::ldexp(static_cast<float>(bits.next() % 100000) - 50000.0f,
                      static_cast<int>(bits.next() % 40) - 20);
  }
  for (Path path : kPaths) {
    const Bytes sum =
        reduce(path, DType::kFloat32, ReduceOp::kSum, pack(a), pack(b));
    const Bytes prod =
        reduce(path, DType::kFloat32, ReduceOp::kProd, pack(a), pack(b));
    for (size_t i = 0; i < kCount; ++i) {
      const double x = a[i], y = b[i];
      ASSERT_EQ(get<float>(sum, i), static_cast<float>(x + y)) << i;
      ASSERT_EQ(get<float>(prod, i), static_cast<float>(x * y)) << i;
    }
  }
}

TEST(ReduceInto, Float64SumAndProd) {
  const std::vector<double> a = {1.5, -2.0, 1e308, 0.1, 3.0};
  const std::vector<double> b = {2.25, 0.5, 1e308, 0.2, -0.0};
  const std::vector<double> sum = {3.75, -1.5,
                                   std::numeric_limits<double>::infinity(),
                                   0.30000000000000004, 3.0};
  const std::vector<double> prod = {3.375, -1.0,
                                    std::numeric_limits<double>::infinity(),
                                    0.020000000000000004, -0.0};
  for (Path path : kPaths) {
    EXPECT_EQ(reduce(path, DType::kFloat64, ReduceOp::kSum, pack(a), pack(b)),
              pack(sum));
    EXPECT_EQ(reduce(path, DType::kFloat64, ReduceOp::kProd, pack(a), pack(b)),
              pack(prod));
  }
}

// ---- float16 and bfloat16: every pattern as acc against pseudo-random
// patterns, every op, through the reference conversions. The exact result
// of + and * on two 16-bit floats, rounded once, is what float32 arithmetic
// then rounding to 16 bits gives (float32 has more than 2p + 2 bits).
uint32_t half_reference(reference::Format f, ReduceOp op, uint32_t a,
                        uint32_t b) {
  const bool a_nan = reference::is_nan(f, a);
  const bool b_nan = reference::is_nan(f, b);
  const double x = reference::value(f, a);
  const double y = reference::value(f, b);
  switch (op) {
    case ReduceOp::kSum:  // callers handle NaN results
      return reference::round_to(f, x + y);
    case ReduceOp::kProd:
      return reference::round_to(f, x * y);
    case ReduceOp::kMax:
    case ReduceOp::kMin: {
      const bool take_b =
          !a_nan && (b_nan || (op == ReduceOp::kMax ? y > x : y < x));
      const uint32_t picked = take_b ? b : a;
      return reference::is_nan(f, picked) ? picked | f.quiet_bit() : picked;
    }
  }
  return 0;
}

void check_half_type(DType dtype, reference::Format f) {
  constexpr size_t kCount = 1 << 16;
  std::vector<uint16_t> a(kCount), b(kCount);
  Bits bits(static_cast<uint64_t>(dtype));
  for (size_t i = 0; i < kCount; ++i) {
    a[i] = static_cast<uint16_t>(i);
    // Mostly values near a's magnitude, so sums round; some random patterns.
    const uint64_t r = bits.next();
    b[i] = (r & 3) == 0 ? static_cast<uint16_t>(r >> 8)
                        : static_cast<uint16_t>(i ^ ((r >> 8) & 0x83ff));
  }
  for (Path path : kPaths) {
    for (ReduceOp op : kOps) {
      const Bytes out = reduce(path, dtype, op, pack(a), pack(b));
      for (size_t i = 0; i < kCount; ++i) {
        const uint32_t got = get<uint16_t>(out, i);
        const double x = reference::value(f, a[i]);
        const double y = reference::value(f, b[i]);
        const bool arithmetic = op == ReduceOp::kSum || op == ReduceOp::kProd;
        if (arithmetic && std::isnan(op == ReduceOp::kSum ? x + y : x * y)) {
          ASSERT_EQ(got, f.canonical_nan())
              << label(path, dtype, op) << " " << std::hex << a[i] << " "
              << b[i];
          continue;
        }
        ASSERT_EQ(got, half_reference(f, op, a[i], b[i]))
            << label(path, dtype, op) << " " << std::hex << a[i] << " " << b[i];
      }
    }
  }
}

TEST(ReduceInto, Float16EveryOpMatchesReference) {
  check_half_type(DType::kFloat16, reference::kFloat16);
}

TEST(ReduceInto, BFloat16EveryOpMatchesReference) {
  check_half_type(DType::kBFloat16, reference::kBFloat16);
}

TEST(ReduceInto, SixteenBitFloatsRoundTripThroughAddingNegativeZero) {
  // x + (-0) == x for every x, so the result is the conversion there and
  // back: every pattern survives but NaNs, whose sum is the canonical NaN
  // (a NaN's way through the conversions is max's and min's, above).
  for (auto [dtype, f] : {std::pair{DType::kFloat16, reference::kFloat16},
                          std::pair{DType::kBFloat16, reference::kBFloat16}}) {
    std::vector<uint16_t> acc(1 << 16), minus_zero(1 << 16);
    for (size_t i = 0; i < acc.size(); ++i) {
      acc[i] = static_cast<uint16_t>(i);
      minus_zero[i] = static_cast<uint16_t>(f.sign_bit());
    }
    for (Path path : kPaths) {
      const Bytes out =
          reduce(path, dtype, ReduceOp::kSum, pack(acc), pack(minus_zero));
      for (uint32_t h = 0; h < acc.size(); ++h) {
        const uint32_t expected =
            reference::is_nan(f, h) ? f.canonical_nan() : h;
        ASSERT_EQ(get<uint16_t>(out, h), expected)
            << label(path, dtype, ReduceOp::kSum) << " " << std::hex << h;
      }
    }
  }
}

TEST(ReduceInto, Float16KnownSums) {
  // 1 + 1 = 2; 65504 + 16 = 65520 rounds (tie) to infinity; 2048 + 1 = 2049
  // is a tie between 2048 and 2050 and goes to even 2048; 2^-24 + 2^-24.
  const std::vector<uint16_t> a = {0x3c00, 0x7bff, 0x6800, 0x0001};
  const std::vector<uint16_t> b = {0x3c00, 0x4c00, 0x3c00, 0x0001};
  const std::vector<uint16_t> sum = {0x4000, 0x7c00, 0x6800, 0x0002};
  EXPECT_EQ(reduce(Path::kDispatch, DType::kFloat16, ReduceOp::kSum, pack(a),
                   pack(b)),
            pack(sum));
  // bfloat16: 1 + 1 = 2 (0x3f80 + 0x3f80 = 0x4000).
  EXPECT_EQ(reduce(Path::kDispatch, DType::kBFloat16, ReduceOp::kSum,
                   pack<uint16_t>({0x3f80}), pack<uint16_t>({0x3f80})),
            pack<uint16_t>({0x4000}));
}

// ---- complex64.
struct Complex {
  float re, im;
};
Bytes pack_complex(const std::vector<Complex>& v) {
  Bytes out(v.size() * 8);
  for (size_t i = 0; i < v.size(); ++i) {
    put(out, 2 * i, v[i].re);
    put(out, 2 * i + 1, v[i].im);
  }
  return out;
}

TEST(ReduceInto, Complex64SumAndProdOnExactValues) {
  // Integer parts below 2^11: every product and sum is exact in float32, so
  // the double reference is the answer.
  constexpr size_t kCount = 1000;
  Bits bits(11);
  std::vector<Complex> a(kCount), b(kCount), sum(kCount), prod(kCount);
  auto small = [&] { return static_cast<float>(bits.next() % 2001) - 1000; };
  for (size_t i = 0; i < kCount; ++i) {
    a[i] = {small(), small()};
    b[i] = {small(), small()};
    const double ar = a[i].re, ai = a[i].im, br = b[i].re, bi = b[i].im;
    sum[i] = {static_cast<float>(ar + br), static_cast<float>(ai + bi)};
    prod[i] = {static_cast<float>(ar * br - ai * bi),
               static_cast<float>(ar * bi + ai * br)};
  }
  for (Path path : kPaths) {
    EXPECT_EQ(reduce(path, DType::kComplex64, ReduceOp::kSum, pack_complex(a),
                     pack_complex(b)),
              pack_complex(sum));
    EXPECT_EQ(reduce(path, DType::kComplex64, ReduceOp::kProd, pack_complex(a),
                     pack_complex(b)),
              pack_complex(prod));
  }
  // (1 + 2i)(3 + 4i) = -5 + 10i.
  EXPECT_EQ(reduce(Path::kDispatch, DType::kComplex64, ReduceOp::kProd,
                   pack_complex({{1, 2}}), pack_complex({{3, 4}})),
            pack_complex({{-5, 10}}));
}

TEST(ReduceInto, Complex64MaxMinCompareRealThenImaginaryAndPickWholeElement) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<Complex> a = {{1, 5}, {1, 7},   {2, -100}, {1, 100},
                                  {3, 3}, {nan, 0}, {0, 0}};
  const std::vector<Complex> b = {{1, 7}, {1, 5}, {1, 100}, {2, -100},
                                  {3, 3}, {0, 0}, {0, nan}};
  const std::vector<Complex> max = {{1, 7}, {1, 7},   {2, -100}, {2, -100},
                                    {3, 3}, {nan, 0}, {0, nan}};
  const std::vector<Complex> min = {{1, 5}, {1, 5},   {1, 100}, {1, 100},
                                    {3, 3}, {nan, 0}, {0, nan}};
  for (Path path : kPaths) {
    EXPECT_EQ(reduce(path, DType::kComplex64, ReduceOp::kMax, pack_complex(a),
                     pack_complex(b)),
              pack_complex(max));
    EXPECT_EQ(reduce(path, DType::kComplex64, ReduceOp::kMin, pack_complex(a),
                     pack_complex(b)),
              pack_complex(min));
  }
}

// ---- Layout: unaligned pointers, acc == in, odd counts, empty input.
TEST(ReduceInto, UnalignedPointersGiveTheAlignedResult) {
  constexpr size_t kCount = 777;  // tails for every vector width
  Bits bits(3);
  for (int d = 0; d < kDTypeCount; ++d) {
    const auto dtype = static_cast<DType>(d);
    const size_t bytes = kCount * dtype_size(dtype);
    const Bytes acc = bits.bytes(bytes);
    const Bytes in = bits.bytes(bytes);
    for (ReduceOp op : kOps) {
      const Bytes expected = reduce(Path::kDispatch, dtype, op, acc, in);
      for (size_t offset : {1, 3, 5, 7}) {
        Bytes acc_buf(bytes + offset), in_buf(bytes + 2 * offset);
        std::memcpy(acc_buf.data() + offset, acc.data(), bytes);
        std::memcpy(in_buf.data() + 2 * offset, in.data(), bytes);
        ASSERT_TRUE(reduce_into(dtype, op, acc_buf.data() + offset,
                                in_buf.data() + 2 * offset, kCount)
                        .ok());
        ASSERT_EQ(Bytes(acc_buf.begin() + offset, acc_buf.end()), expected)
            << dtype_name(dtype) << " " << reduce_op_name(op) << " offset "
            << offset;
      }
    }
  }
}

TEST(ReduceInto, AccMayBeTheInput) {
  constexpr size_t kCount = 1030;
  Bits bits(5);
  for (int d = 0; d < kDTypeCount; ++d) {
    const auto dtype = static_cast<DType>(d);
    const Bytes data = bits.bytes(kCount * dtype_size(dtype));
    for (ReduceOp op : kOps) {
      // With both operands the same bits, even NaN results are determined.
      const Bytes expected = reduce(Path::kPortable, dtype, op, data, data);
      Bytes same = data;
      ASSERT_TRUE(
          reduce_into(dtype, op, same.data(), same.data(), kCount).ok());
      ASSERT_EQ(same, expected)
          << dtype_name(dtype) << " " << reduce_op_name(op);
    }
  }
  // A float example that must double every element.
  Bytes twos = pack<float>({1.5f, -2.0f, 0.25f});
  ASSERT_TRUE(
      reduce_into(DType::kFloat32, ReduceOp::kSum, twos.data(), twos.data(), 3)
          .ok());
  EXPECT_EQ(twos, pack<float>({3.0f, -4.0f, 0.5f}));
}

TEST(ReduceInto, EveryCountUpToTwoVectorsOfSixteenBitFloats) {
  // The SIMD kernels stop at whole vectors (8 or 16 elements); the portable
  // loop finishes. Every count checks the seam.
  Bits bits(9);
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    for (size_t count = 1; count <= 40; ++count) {
      std::vector<uint16_t> a(count), b(count);
      for (size_t i = 0; i < count; ++i) {
        a[i] = static_cast<uint16_t>(0x3c00 + (bits.next() & 0x3ff));
        b[i] = static_cast<uint16_t>(0x3c00 + (bits.next() & 0x3ff));
      }
      for (ReduceOp op : kOps) {
        EXPECT_EQ(reduce(Path::kDispatch, dtype, op, pack(a), pack(b)),
                  reduce(Path::kPortable, dtype, op, pack(a), pack(b)))
            << dtype_name(dtype) << " " << reduce_op_name(op) << " count "
            << count;
      }
    }
  }
}

TEST(ReduceInto, ZeroCountAcceptsNullPointers) {
  for (int d = 0; d < kDTypeCount; ++d) {
    for (ReduceOp op : kOps) {
      EXPECT_TRUE(
          reduce_into(static_cast<DType>(d), op, nullptr, nullptr, 0).ok());
    }
  }
}

TEST(ReduceInto, NullBufferWithElementsIsAnError) {
  float x = 1;
  const absl::Status no_acc =
      reduce_into(DType::kFloat32, ReduceOp::kSum, nullptr, &x, 1);
  EXPECT_EQ(no_acc.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(no_acc.message()), HasSubstr("accumulator"));
  const absl::Status no_in =
      reduce_into(DType::kFloat32, ReduceOp::kSum, &x, nullptr, 1);
  EXPECT_EQ(no_in.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(no_in.message()), HasSubstr("input"));
  EXPECT_EQ(x, 1);
}

TEST(ReduceInto, UnknownDTypeOrOpIsNamed) {
  float acc = 1, in = 2;
  const absl::Status bad_dtype =
      reduce_into(static_cast<DType>(99), ReduceOp::kSum, &acc, &in, 1);
  EXPECT_EQ(bad_dtype.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad_dtype.message()), HasSubstr("unknown dtype 99"));
  const absl::Status bad_op =
      reduce_into(DType::kFloat32, static_cast<ReduceOp>(7), &acc, &in, 1);
  EXPECT_EQ(bad_op.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad_op.message()), HasSubstr("unknown reduce op 7"));
  EXPECT_EQ(acc, 1);
}

// ---- reduce_to beyond the element-wise references above: inputs large
// enough to be walked in prefetched blocks (and, for the 16-bit floats, in
// pieces), unaligned, dst == a, bad calls.
TEST(ReduceTo, LargeUnalignedInputsGiveReduceIntosBits) {
  Bits bits(11);
  for (int d = 0; d < kDTypeCount; ++d) {
    const auto dtype = static_cast<DType>(d);
    // Past kPrefetchMinBytes and several prefetch blocks, with a tail.
    const size_t count = (600 << 10) / dtype_size(dtype) + 7;
    const size_t bytes = count * dtype_size(dtype);
    const Bytes a = bits.bytes(bytes);
    const Bytes b = bits.bytes(bytes);
    for (ReduceOp op : kOps) {
      Bytes expected = a;
      ASSERT_TRUE(
          reduce_into(dtype, op, expected.data(), b.data(), count).ok());
      for (size_t offset : {0, 1, 3}) {
        Bytes dst(bytes + offset, 0x5a), a_buf(bytes + 2 * offset),
            b_buf(bytes + 3 * offset);
        std::memcpy(a_buf.data() + 2 * offset, a.data(), bytes);
        std::memcpy(b_buf.data() + 3 * offset, b.data(), bytes);
        ASSERT_TRUE(reduce_to(dtype, op, dst.data() + offset,
                              a_buf.data() + 2 * offset,
                              b_buf.data() + 3 * offset, count)
                        .ok());
        ASSERT_EQ(Bytes(dst.begin() + offset, dst.end()), expected)
            << dtype_name(dtype) << " " << reduce_op_name(op) << " offset "
            << offset;
        // The inputs are only read.
        ASSERT_EQ(Bytes(a_buf.begin() + 2 * offset, a_buf.end()), a);
        ASSERT_EQ(Bytes(b_buf.begin() + 3 * offset, b_buf.end()), b);
      }
    }
  }
}

TEST(ReduceTo, DstMayBeTheFirstInput) {
  Bytes acc = pack<int32_t>({1, -2, 30});
  const Bytes in = pack<int32_t>({10, 20, -30});
  ASSERT_TRUE(reduce_to(DType::kInt32, ReduceOp::kSum, acc.data(), acc.data(),
                        in.data(), 3)
                  .ok());
  EXPECT_EQ(acc, pack<int32_t>({11, 18, 0}));
}

TEST(ReduceTo, BadCallsAreNamed) {
  float x = 1, y = 2, z = 3;
  struct Case {
    float* dst;
    const float* a;
    const float* b;
    const char* names;
  };
  for (const Case& c : {Case{nullptr, &y, &z, "destination"},
                        Case{&x, nullptr, &z, "first input"},
                        Case{&x, &y, nullptr, "second input"}}) {
    const absl::Status s =
        reduce_to(DType::kFloat32, ReduceOp::kSum, c.dst, c.a, c.b, 1);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.names));
    EXPECT_THAT(std::string(s.message()), HasSubstr("pass a buffer"));
  }
  const absl::Status bad_op =
      reduce_to(DType::kFloat32, static_cast<ReduceOp>(7), &x, &y, &z, 1);
  EXPECT_EQ(bad_op.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad_op.message()),
              HasSubstr("reduce_to: unknown reduce op 7"));
  EXPECT_EQ(x, 1);
  EXPECT_TRUE(
      reduce_to(DType::kFloat32, ReduceOp::kSum, nullptr, nullptr, nullptr, 0)
          .ok());
}

TEST(ReduceInto, ElementCountPastTheAddressSpaceIsAnError) {
  uint64_t acc = 0, in = 0;
  const absl::Status status =
      reduce_into(DType::kUint64, ReduceOp::kSum, &acc, &in,
                  std::numeric_limits<size_t>::max() / 4);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("overflow"));
}

}  // namespace
}  // namespace weft
