#include "sim/prng.h"

namespace weft::sim {
namespace {

constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ull;
// An odd constant that separates fork() seeds from plain seeds.
constexpr uint64_t kForkSalt = 0xd1b54a32d192ed03ull;

constexpr uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

// The full 128-bit product of a and b as (high, low), in portable 64-bit
// arithmetic (no __int128, which ISO C++ lacks).
void multiply_128(uint64_t a, uint64_t b, uint64_t* high, uint64_t* low) {
  constexpr uint64_t kMask32 = 0xffff'ffffull;
  const uint64_t a_lo = a & kMask32, a_hi = a >> 32;
  const uint64_t b_lo = b & kMask32, b_hi = b >> 32;
  const uint64_t lo_lo = a_lo * b_lo;
  const uint64_t hi_lo = a_hi * b_lo;
  const uint64_t lo_hi = a_lo * b_hi;
  const uint64_t hi_hi = a_hi * b_hi;
  const uint64_t cross = (lo_lo >> 32) + (hi_lo & kMask32) + lo_hi;
  *high = hi_hi + (hi_lo >> 32) + (cross >> 32);
  *low = (cross << 32) | (lo_lo & kMask32);
}

}  // namespace

uint64_t splitmix64_next(uint64_t* state) {
  uint64_t z = (*state += kGolden);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

Prng::Prng(uint64_t seed) {
  uint64_t sm = seed;
  for (uint64_t& word : state_) word = splitmix64_next(&sm);
}

Prng Prng::from_state(const std::array<uint64_t, 4>& state) {
  Prng p;
  p.state_ = state;
  return p;
}

uint64_t Prng::next() {
  const uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

uint64_t Prng::below(uint64_t n) {
  if (n == 0) return 0;
  // Lemire, "Fast Random Integer Generation in an Interval" (2019): the high
  // word of x * n is uniform once products whose low word falls below
  // 2^64 mod n are rejected.
  uint64_t high = 0;
  uint64_t low = 0;
  multiply_128(next(), n, &high, &low);
  if (low < n) {
    const uint64_t threshold = (0 - n) % n;  // 2^64 mod n
    while (low < threshold) multiply_128(next(), n, &high, &low);
  }
  return high;
}

double Prng::unit() {
  constexpr double kTwoPowMinus53 = 1.0 / 9007199254740992.0;
  return static_cast<double>(next() >> 11) * kTwoPowMinus53;
}

bool Prng::chance(double p) {
  if (!(p > 0)) return false;
  return unit() < p;
}

Prng Prng::fork(uint64_t stream) const {
  const uint64_t key = state_[0] ^ rotl(state_[1], 13) ^ rotl(state_[2], 29) ^
                       rotl(state_[3], 47);
  // stream * odd + salt is a bijection of stream, so distinct streams of one
  // parent never share a seed.
  return Prng(key ^ (stream * kGolden + kForkSalt));
}

}  // namespace weft::sim
