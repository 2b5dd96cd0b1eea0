// Prng against published test vectors and an independent reimplementation
// (vectors computed outside weft), plus uniformity of below().
#include "sim/prng.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace weft::sim {
namespace {

TEST(Prng, SplitMix64MatchesPublishedVectors) {
  // splitmix64 from state 0 (Vigna's reference, also in many test suites).
  uint64_t state = 0;
  EXPECT_EQ(splitmix64_next(&state), 0xe220a8397b1dcdafull);
  EXPECT_EQ(splitmix64_next(&state), 0x6e789e6aa1b965f4ull);
  EXPECT_EQ(splitmix64_next(&state), 0x06c45d188009454full);
  EXPECT_EQ(splitmix64_next(&state), 0xf88bb8a8724c81ecull);
}

TEST(Prng, Xoshiro256StarStarMatchesReferenceFromState1234) {
  Prng p = Prng::from_state({1, 2, 3, 4});
  EXPECT_EQ(p.next(), 11520u);
  EXPECT_EQ(p.next(), 0u);
  EXPECT_EQ(p.next(), 1509978240u);
  EXPECT_EQ(p.next(), 1215971899390074240u);
}

TEST(Prng, SeedingGoesThroughSplitMix64) {
  // Computed with an independent Python implementation of splitmix64 and
  // xoshiro256**.
  Prng p(42);
  EXPECT_EQ(p.next(), 0x15780b2e0c2ec716ull);
  EXPECT_EQ(p.next(), 0x6104d9866d113a7eull);
  EXPECT_EQ(p.next(), 0xae17533239e499a1ull);
}

TEST(Prng, BelowAPowerOfTwoIsTheTopBits) {
  Prng p(7), twin(7);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(p.below(8), twin.next() >> 61);
}

TEST(Prng, UnitIsTheTop53BitsScaled) {
  Prng p(9), twin(9);
  for (int i = 0; i < 1000; ++i) {
    const double u = p.unit();
    ASSERT_EQ(u, std::ldexp(static_cast<double>(twin.next() >> 11), -53));
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(Prng, BelowIsUniform) {
  // Chi-square over 10 buckets, 100000 draws: 9 degrees of freedom, 27.88 is
  // the 0.999 quantile. Deterministic for this seed.
  constexpr int kBuckets = 10;
  constexpr int kDraws = 100000;
  Prng p(123);
  std::array<int, kBuckets> counts{};
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t v = p.below(kBuckets);
    ASSERT_LT(v, static_cast<uint64_t>(kBuckets));
    ++counts[v];
  }
  double chi2 = 0;
  const double expected = static_cast<double>(kDraws) / kBuckets;
  for (int c : counts) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi2, 27.88);
}

TEST(Prng, BelowLargeBoundsStayInRange) {
  Prng p(5);
  const uint64_t n = (uint64_t{1} << 63) + 12345;  // rejection matters here
  int upper_half = 0;
  for (int i = 0; i < 10000; ++i) {
    const uint64_t v = p.below(n);
    ASSERT_LT(v, n);
    upper_half += v >= n / 2;
  }
  EXPECT_GT(upper_half, 4700);
  EXPECT_LT(upper_half, 5300);
  EXPECT_EQ(p.below(1), 0u);
  EXPECT_EQ(p.below(0), 0u);
}

TEST(Prng, ChanceHonoursItsEdges) {
  Prng p(3), twin(3);
  for (int i = 0; i < 100; ++i) ASSERT_FALSE(p.chance(0.0));
  EXPECT_EQ(p.next(), twin.next());  // zero probability draws nothing
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(p.chance(1.0));
  int hits = 0;
  for (int i = 0; i < 10000; ++i) hits += p.chance(0.25);
  EXPECT_GT(hits, 2300);
  EXPECT_LT(hits, 2700);
}

TEST(Prng, ForksAreIndependentAndReproducible) {
  const Prng parent(11);
  Prng a = parent.fork(1), a_again = parent.fork(1), b = parent.fork(2);
  EXPECT_EQ(parent.state(), Prng(11).state());  // forking does not advance
  std::set<uint64_t> firsts;
  for (uint64_t stream = 0; stream < 1000; ++stream)
    firsts.insert(parent.fork(stream).next());
  EXPECT_EQ(firsts.size(), 1000u);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(a.next(), a_again.next());
  EXPECT_NE(a.next(), b.next());
}

}  // namespace
}  // namespace weft::sim
