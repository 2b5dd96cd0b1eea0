// The conformance program's inputs and expected results, computed without
// the library: every rank's element i of every dtype is a function of
// (dtype, rank, i), and the expected sum, max or min is a plain loop over
// ranks of those numbers, encoded to bytes by hand (IEEE half and bfloat16
// bits of small integers included). Values are chosen so every result is
// exact whatever order a rank adds in: integers wrap (sums modulo 2^bits,
// the bytes of two's complement), floating-point values are small
// multiples of a power of two, complex64 real parts often tie (max and
// min order by the real part, then the imaginary part), bool sums and max
// are OR, min is AND.
#ifndef WEFT_TESTS_JACCL_CONFORMANCE_EXPECTED_VALUES_H_
#define WEFT_TESTS_JACCL_CONFORMANCE_EXPECTED_VALUES_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace conformance {

enum class Op { kSum, kMax, kMin };

inline const char* op_name(Op op) {
  return op == Op::kSum ? "all_sum" : op == Op::kMax ? "all_max" : "all_min";
}

// JACCL's Dtype values, in order, with their sizes (independent of
// jaccl::dtype_size, which the program checks against this table).
struct DtypeInfo {
  int value;
  const char* name;
  size_t size;
};

inline const std::vector<DtypeInfo>& all_dtypes() {
  static const std::vector<DtypeInfo> kDtypes = {
      {0, "bool", 1},     {1, "int8", 1},       {2, "int16", 2},
      {3, "int32", 4},    {4, "int64", 8},      {5, "uint8", 1},
      {6, "uint16", 2},   {7, "uint32", 4},     {8, "uint64", 8},
      {9, "float16", 2},  {10, "bfloat16", 2},  {11, "float32", 4},
      {12, "float64", 8}, {13, "complex64", 8},
  };
  return kDtypes;
}

enum class Kind { kBool, kSigned, kUnsigned, kHalf, kBHalf, kF32, kF64, kC64 };

inline Kind kind_of(int dtype) {
  if (dtype == 0) return Kind::kBool;
  if (dtype >= 1 && dtype <= 4) return Kind::kSigned;
  if (dtype >= 5 && dtype <= 8) return Kind::kUnsigned;
  if (dtype == 9) return Kind::kHalf;
  if (dtype == 10) return Kind::kBHalf;
  if (dtype == 11) return Kind::kF32;
  if (dtype == 12) return Kind::kF64;
  return Kind::kC64;
}

inline uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

inline uint64_t draw(uint64_t salt, int rank, uint64_t i) {
  return mix(salt * 0x100000001b3ULL ^ mix(uint64_t(rank) << 40 ^ i));
}

// One element as numbers: integers as their low bits (`a`); floating point
// as a numerator `a` over a fixed power of two; complex64 as (a, b) the
// real and imaginary numerators.
struct Num {
  int64_t a = 0;
  int64_t b = 0;
};

inline int bits_of(const DtypeInfo& d) { return int(d.size) * 8; }

inline int64_t sign_extend(uint64_t raw, int bits) {
  if (bits == 64) return int64_t(raw);
  const uint64_t sign = uint64_t(1) << (bits - 1);
  raw &= (sign << 1) - 1;
  return int64_t((raw ^ sign) - sign);
}

// A small signed integer in [-range, range].
inline int64_t small(uint64_t h, int64_t range) {
  return int64_t(h % uint64_t(2 * range + 1)) - range;
}

inline Num element(const DtypeInfo& d, int rank, uint64_t i) {
  const uint64_t h = draw(uint64_t(d.value) + 1, rank, i);
  switch (kind_of(d.value)) {
    case Kind::kBool:
      // Every fifth element is true on every rank, the next false on every
      // rank, so AND and OR both see each answer.
      if (i % 5 == 0) return {1, 0};
      if (i % 5 == 1) return {0, 0};
      return {int64_t(h & 1), 0};
    case Kind::kSigned:
    case Kind::kUnsigned:
      return {int64_t(h), 0};  // every bit pattern of the width
    case Kind::kHalf:
      return {small(h, 8), 0};
    case Kind::kBHalf:
      return {small(h, 16), 0};
    case Kind::kF32:
      return {small(h, 4000), 0};  // over 4
    case Kind::kF64:
      return {small(h, int64_t(1) << 40), 0};  // over 1024
    case Kind::kC64:
      return {small(h, 1), small(h >> 20, 400)};  // re over 1, im over 4
  }
  return {};
}

// a > b in the dtype's order.
inline bool greater(const DtypeInfo& d, Num x, Num y) {
  switch (kind_of(d.value)) {
    case Kind::kSigned:
      return sign_extend(uint64_t(x.a), bits_of(d)) >
             sign_extend(uint64_t(y.a), bits_of(d));
    case Kind::kUnsigned: {
      const uint64_t mask =
          bits_of(d) == 64 ? ~uint64_t(0) : (uint64_t(1) << bits_of(d)) - 1;
      return (uint64_t(x.a) & mask) > (uint64_t(y.a) & mask);
    }
    case Kind::kC64:
      return x.a != y.a ? x.a > y.a : x.b > y.b;
    default:
      return x.a > y.a;
  }
}

inline Num combine(const DtypeInfo& d, Op op, Num x, Num y) {
  if (op == Op::kMax) return greater(d, y, x) ? y : x;
  if (op == Op::kMin) return greater(d, x, y) ? y : x;
  if (kind_of(d.value) == Kind::kBool) return {x.a | y.a, 0};
  // Integers wrap: unsigned addition is two's complement addition.
  return {int64_t(uint64_t(x.a) + uint64_t(y.a)),
          int64_t(uint64_t(x.b) + uint64_t(y.b))};
}

// IEEE binary16 bits of an integer binary16 holds exactly (|k| < 65536
// with at most 11 significant bits), by hand.
inline uint16_t half_bits(int64_t k) {
  if (k == 0) return 0;
  const uint16_t sign = k < 0 ? 0x8000 : 0;
  uint64_t m = uint64_t(k < 0 ? -k : k);
  int e = 63 - __builtin_clzll(m);
  const uint64_t scaled = e <= 10 ? m << (10 - e) : m >> (e - 10);
  const uint16_t mantissa = uint16_t(scaled & 0x3ff);
  return uint16_t(sign | uint16_t((e + 15) << 10) | mantissa);
}

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

inline void put(uint8_t* p, const void* src, size_t n) {
  std::memcpy(p, src, n);
}

// The element's bytes as the dtype stores it (little-endian host).
inline void encode(const DtypeInfo& d, Num x, uint8_t* out) {
  switch (kind_of(d.value)) {
    case Kind::kBool:
    case Kind::kSigned:
    case Kind::kUnsigned: {
      const uint64_t raw = uint64_t(x.a);
      put(out, &raw, d.size);
      return;
    }
    case Kind::kHalf: {
      const uint16_t h = half_bits(x.a);
      put(out, &h, 2);
      return;
    }
    case Kind::kBHalf: {
      // Small integers are exact in bfloat16: the top half of the float32.
      const uint16_t h = uint16_t(float_bits(float(x.a)) >> 16);
      put(out, &h, 2);
      return;
    }
    case Kind::kF32: {
      const float f = float(x.a) / 4.0f;
      put(out, &f, 4);
      return;
    }
    case Kind::kF64: {
      const double f = double(x.a) / 1024.0;
      put(out, &f, 8);
      return;
    }
    case Kind::kC64: {
      const float parts[2] = {float(x.a), float(x.b) / 4.0f};
      put(out, parts, 8);
      return;
    }
  }
}

// Rank `rank`'s input: elements first..first+count-1 of its sequence.
inline std::vector<uint8_t> input_bytes(const DtypeInfo& d, int rank,
                                        uint64_t first, size_t count) {
  std::vector<uint8_t> bytes(count * d.size);
  for (size_t i = 0; i < count; ++i) {
    encode(d, element(d, rank, first + i), bytes.data() + i * d.size);
  }
  return bytes;
}

// op over ranks 0..size-1 of elements first..first+count-1.
inline std::vector<uint8_t> reduced_bytes(const DtypeInfo& d, Op op, int size,
                                          uint64_t first, size_t count) {
  std::vector<uint8_t> bytes(count * d.size);
  for (size_t i = 0; i < count; ++i) {
    Num acc = element(d, 0, first + i);
    for (int r = 1; r < size; ++r) {
      acc = combine(d, op, acc, element(d, r, first + i));
    }
    encode(d, acc, bytes.data() + i * d.size);
  }
  return bytes;
}

// Byte i of rank `rank`'s untyped data (all_gather, send/recv); `salt`
// tells calls apart.
inline uint8_t pattern_byte(uint64_t salt, int rank, uint64_t i) {
  return uint8_t(draw(salt + 100, rank, i));
}

inline std::vector<uint8_t> pattern(uint64_t salt, int rank, size_t n) {
  std::vector<uint8_t> bytes(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = pattern_byte(salt, rank, i);
  return bytes;
}

}  // namespace conformance

#endif  // WEFT_TESTS_JACCL_CONFORMANCE_EXPECTED_VALUES_H_
