// jaccl::float16_t, bfloat16_t and dtype_size against bit patterns worked
// out by hand from the formats (binary16: 1 sign, 5 exponent bits biased by
// 15, 10 mantissa bits; bfloat16: the top 16 bits of a float32).
#include "jaccl/types.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace jaccl {
namespace {

TEST(Float16, KnownBitPatterns) {
  EXPECT_EQ(detail::float_to_float16_bits(1.0f), 0x3c00);      // 2^0: exp 15
  EXPECT_EQ(detail::float_to_float16_bits(-2.0f), 0xc000);     // sign, exp 16
  EXPECT_EQ(detail::float_to_float16_bits(0.5f), 0x3800);      // exp 14
  EXPECT_EQ(detail::float_to_float16_bits(1.5f), 0x3e00);      // mantissa 512
  EXPECT_EQ(detail::float_to_float16_bits(65504.0f), 0x7bff);  // largest
  // 65520 is halfway between 65504 and 2^16: ties to even overflow to inf.
  EXPECT_EQ(detail::float_to_float16_bits(65520.0f), 0x7c00);
  EXPECT_EQ(detail::float_to_float16_bits(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(detail::float_to_float16_bits(0.0f), 0x0000);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: to even (1).
  EXPECT_EQ(detail::float_to_float16_bits(1.0f + std::ldexp(1.0f, -11)),
            0x3c00);
}

TEST(Float16, BackToFloat) {
  EXPECT_EQ(detail::float16_bits_to_float(0x3c00), 1.0f);
  EXPECT_EQ(detail::float16_bits_to_float(0xc000), -2.0f);
  EXPECT_EQ(detail::float16_bits_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(detail::float16_bits_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(detail::float16_bits_to_float(0x7c00),
            std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(detail::float16_bits_to_float(0x7e00)));
}

TEST(BFloat16, KnownBitPatterns) {
  EXPECT_EQ(detail::float_to_bfloat16_bits(1.0f), 0x3f80);  // 0x3f800000
  EXPECT_EQ(detail::float_to_bfloat16_bits(3.0f), 0x4040);  // 0x40400000
  EXPECT_EQ(detail::float_to_bfloat16_bits(-1.0f), 0xbf80);
  // 1 + 2^-8 (0x3f808000) is halfway: to even, 0x3f80; 1 + 3 * 2^-8
  // (0x3f818000) is halfway between 0x3f81 and 0x3f82: to even, 0x3f82.
  EXPECT_EQ(detail::float_to_bfloat16_bits(1.0f + std::ldexp(1.0f, -8)),
            0x3f80);
  EXPECT_EQ(detail::float_to_bfloat16_bits(1.0f + 3 * std::ldexp(1.0f, -8)),
            0x3f82);
  EXPECT_EQ(detail::bfloat16_bits_to_float(0x3f80), 1.0f);
  EXPECT_EQ(detail::bfloat16_bits_to_float(0xc040), -3.0f);
}

TEST(Types, RoundTripThroughTheTypes) {
  EXPECT_EQ(static_cast<float>(float16_t(1.5f)), 1.5f);
  EXPECT_EQ(static_cast<float>(bfloat16_t(-3.0f)), -3.0f);
  EXPECT_EQ(static_cast<float>(bfloat16_t(2.0f) + bfloat16_t(1.0f)), 3.0f);
  EXPECT_TRUE(bfloat16_t(1.0f) < bfloat16_t(2.0f));
  const bfloat16_t b(1.0f);
  EXPECT_EQ(b.bits_, 0x3f80);
}

TEST(DtypeSize, EveryDtypeAndOutside) {
  EXPECT_EQ(dtype_size(Bool), 1u);
  EXPECT_EQ(dtype_size(Int8), 1u);
  EXPECT_EQ(dtype_size(Int16), 2u);
  EXPECT_EQ(dtype_size(Int32), 4u);
  EXPECT_EQ(dtype_size(Int64), 8u);
  EXPECT_EQ(dtype_size(UInt8), 1u);
  EXPECT_EQ(dtype_size(UInt16), 2u);
  EXPECT_EQ(dtype_size(UInt32), 4u);
  EXPECT_EQ(dtype_size(UInt64), 8u);
  EXPECT_EQ(dtype_size(Float16), 2u);
  EXPECT_EQ(dtype_size(BFloat16), 2u);
  EXPECT_EQ(dtype_size(Float32), 4u);
  EXPECT_EQ(dtype_size(Float64), 8u);
  EXPECT_EQ(dtype_size(Complex64), 8u);
  EXPECT_EQ(dtype_size(-1), 0u);
  EXPECT_EQ(dtype_size(Complex64 + 1), 0u);
}

}  // namespace
}  // namespace jaccl
