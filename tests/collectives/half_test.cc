// float16 and bfloat16 conversions (collectives/kernels/half.h) against
// known bit patterns and the IEEE reference in half_reference.h.
#include "collectives/kernels/half.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "gtest/gtest.h"
#include "tests/collectives/half_reference.h"

namespace weft {
namespace {

using collectives::internal::bfloat16_to_float;
using collectives::internal::float16_to_float;
using collectives::internal::float_to_bfloat16;
using collectives::internal::float_to_float16;
using reference::kBFloat16;
using reference::kFloat16;

uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }
float float_of(uint32_t bits) { return std::bit_cast<float>(bits); }

TEST(Float16, KnownPatterns) {
  struct Row {
    uint16_t bits;
    float value;
  };
  const float inf = std::numeric_limits<float>::infinity();
  const Row rows[] = {
      {0x3c00, 1.0f},
      {0xc000, -2.0f},
      {0x3555, 0.333251953125f},
      {0x7bff, 65504.0f},                  // largest finite
      {0x0400, std::ldexp(1.0f, -14)},     // smallest normal
      {0x03ff, std::ldexp(1023.0f, -24)},  // largest subnormal
      {0x0001, std::ldexp(1.0f, -24)},     // smallest subnormal
      {0x8001, -std::ldexp(1.0f, -24)},
      {0x7c00, inf},
      {0xfc00, -inf},
      {0x0000, 0.0f},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(bits_of(float16_to_float(r.bits)), bits_of(r.value))
        << std::hex << r.bits;
    EXPECT_EQ(float_to_float16(r.value), r.bits) << r.value;
  }
  EXPECT_EQ(bits_of(float16_to_float(0x8000)), 0x80000000u);  // -0
  EXPECT_EQ(float_to_float16(-0.0f), 0x8000);
}

TEST(Float16, NaNStaysNaNAndIsQuieted) {
  EXPECT_TRUE(std::isnan(float16_to_float(0x7e00)));
  EXPECT_EQ(bits_of(float16_to_float(0x7e00)), 0x7fc00000u);
  EXPECT_EQ(bits_of(float16_to_float(0x7c01)), 0x7fc02000u);  // signalling
  EXPECT_EQ(bits_of(float16_to_float(0xfe00)), 0xffc00000u);
  EXPECT_EQ(float_to_float16(std::numeric_limits<float>::quiet_NaN()), 0x7e00);
  EXPECT_EQ(float_to_float16(float_of(0x7f800001u)), 0x7e00);  // low payload
  EXPECT_EQ(float_to_float16(float_of(0xffffffffu)), 0xffff);
}

TEST(Float16, RoundsToNearestEven) {
  const float one = 1.0f;
  const float ulp = std::ldexp(1.0f, -10);                 // of 1.0
  EXPECT_EQ(float_to_float16(one + ulp / 2), 0x3c00);      // tie to even
  EXPECT_EQ(float_to_float16(one + 3 * ulp / 2), 0x3c02);  // tie to even
  EXPECT_EQ(float_to_float16(std::nextafter(one + ulp / 2, 2.0f)), 0x3c01);
  EXPECT_EQ(float_to_float16(std::nextafter(one + ulp / 2, 0.0f)), 0x3c00);
  EXPECT_EQ(float_to_float16(65519.0f), 0x7bff);
  EXPECT_EQ(float_to_float16(65520.0f), 0x7c00);  // tie goes to "even" inf
  EXPECT_EQ(float_to_float16(-65520.0f), 0xfc00);
  EXPECT_EQ(float_to_float16(1e10f), 0x7c00);
  const float sub = std::ldexp(1.0f, -24);           // smallest subnormal
  EXPECT_EQ(float_to_float16(sub / 2), 0x0000);      // tie to even zero
  EXPECT_EQ(float_to_float16(3 * sub / 2), 0x0002);  // tie to even
  EXPECT_EQ(float_to_float16(std::nextafter(sub / 2, 1.0f)), 0x0001);
  EXPECT_EQ(float_to_float16(std::ldexp(1.0f, -149)), 0x0000);
  EXPECT_EQ(float_to_float16(-std::ldexp(1.0f, -149)), 0x8000);
  // Largest subnormal + half an ulp rounds up into the normal range.
  EXPECT_EQ(float_to_float16(std::ldexp(1023.5f, -24)), 0x0400);
}

TEST(Float16, EveryPatternWidensAsTheReferenceSays) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const uint16_t half = static_cast<uint16_t>(h);
    ASSERT_EQ(bits_of(float16_to_float(half)),
              reference::to_float_bits(kFloat16, half))
        << std::hex << h;
  }
}

TEST(Float16, EveryPatternRoundTrips) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const uint16_t half = static_cast<uint16_t>(h);
    const uint16_t expected =
        reference::is_nan(kFloat16, half)
            ? static_cast<uint16_t>(half | kFloat16.quiet_bit())
            : half;
    ASSERT_EQ(float_to_float16(float16_to_float(half)), expected)
        << std::hex << h;
  }
}

// Every midpoint between neighbouring float16 values, the floats either side
// of it, and a sweep over float32 patterns, against the reference.
void check_narrowing(reference::Format format, uint16_t (*narrow)(float)) {
  const uint32_t limit = format.inf_bits();
  for (uint32_t p = 0; p < limit; ++p) {
    const double lo = reference::magnitude(format, p);
    const double hi = reference::magnitude(format, p + 1);
    const float mid = static_cast<float>((lo + hi) / 2);  // exact in float
    for (float x : {mid, std::nextafter(mid, 0.0f),
                    std::nextafter(mid, std::numeric_limits<float>::max())}) {
      ASSERT_EQ(narrow(x), reference::from_float(format, x)) << x;
      ASSERT_EQ(narrow(-x), reference::from_float(format, -x)) << -x;
    }
  }
  constexpr uint32_t kStride = 4099;  // prime: hits every low-bit pattern
  for (uint64_t b = 0; b <= 0xffffffffu; b += kStride) {
    const float x = float_of(static_cast<uint32_t>(b));
    ASSERT_EQ(narrow(x), reference::from_float(format, x)) << std::hex << b;
  }
}

TEST(Float16, NarrowingMatchesReference) {
  check_narrowing(kFloat16, &float_to_float16);
}

TEST(BFloat16, KnownPatterns) {
  EXPECT_EQ(bits_of(bfloat16_to_float(0x3f80)), bits_of(1.0f));
  EXPECT_EQ(bits_of(bfloat16_to_float(0xc000)), bits_of(-2.0f));
  EXPECT_EQ(bits_of(bfloat16_to_float(0x7f80)),
            bits_of(std::numeric_limits<float>::infinity()));
  EXPECT_EQ(bits_of(bfloat16_to_float(0x0001)), 0x00010000u);  // subnormal
  EXPECT_EQ(float_to_bfloat16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bfloat16(1.0f + std::ldexp(1.0f, -7)), 0x3f81);
  EXPECT_EQ(float_to_bfloat16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);  // tie
  EXPECT_EQ(float_to_bfloat16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(float_to_bfloat16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(float_to_bfloat16(std::ldexp(1.0f, -149)), 0x0000);
  EXPECT_EQ(float_to_bfloat16(std::ldexp(1.0f, -133)), 0x0001);
}

TEST(BFloat16, NaNStaysNaN) {
  // Rounding 0x7fffffff naively would carry into the sign bit.
  EXPECT_EQ(float_to_bfloat16(float_of(0x7fffffffu)), 0x7fff);
  EXPECT_EQ(float_to_bfloat16(float_of(0x7f800001u)), 0x7fc0);
  EXPECT_EQ(float_to_bfloat16(float_of(0xff800001u)), 0xffc0);
  EXPECT_TRUE(std::isnan(bfloat16_to_float(0x7f81)));
}

TEST(BFloat16, EveryPatternWidensAsTheReferenceSays) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const uint16_t bf16 = static_cast<uint16_t>(h);
    const uint32_t expected = reference::is_nan(kBFloat16, bf16)
                                  ? uint32_t{bf16} << 16  // exact, not quieted
                                  : reference::to_float_bits(kBFloat16, bf16);
    ASSERT_EQ(bits_of(bfloat16_to_float(bf16)), expected) << std::hex << h;
  }
}

TEST(BFloat16, NarrowingMatchesReference) {
  check_narrowing(kBFloat16, &float_to_bfloat16);
}

}  // namespace
}  // namespace weft
