// Prng: the simulator's portable pseudo-random generator. xoshiro256**
// seeded through splitmix64, with our own bounded-integer and float
// conversions, so the same seed draws the same numbers with every compiler
// and standard library (std::*_distribution differ between libraries and
// absl::BitGen is randomly seeded on purpose). Not for cryptography.
#ifndef WEFT_SIM_PRNG_H_
#define WEFT_SIM_PRNG_H_

#include <array>
#include <cstdint>

namespace weft::sim {

// One step of splitmix64: advances `*state` and returns the next output.
uint64_t splitmix64_next(uint64_t* state);

class Prng {
 public:
  // The four state words are the first four outputs of splitmix64 started
  // at `seed` (the seeding xoshiro's authors recommend).
  explicit Prng(uint64_t seed = 0);
  // A generator in exactly this state (for test vectors and replays).
  // REQUIRES: not all four words zero.
  static Prng from_state(const std::array<uint64_t, 4>& state);

  // The next 64 uniformly distributed bits.
  uint64_t next();
  // Uniform in [0, n), without modulo bias (Lemire's multiply-and-reject).
  // REQUIRES: n > 0 (returns 0 for n == 0).
  uint64_t below(uint64_t n);
  // Uniform in [0, 1): the top 53 bits of next() scaled by 2^-53.
  double unit();
  // True with probability p. p <= 0 is always false and draws nothing, so a
  // zero fault rate never disturbs the stream.
  bool chance(double p);

  // An independent generator for sub-stream `stream` (one per link, say).
  // Depends only on this generator's current state and `stream`; distinct
  // streams give distinct seeds.
  Prng fork(uint64_t stream) const;

  const std::array<uint64_t, 4>& state() const { return state_; }

 private:
  std::array<uint64_t, 4> state_;
};

}  // namespace weft::sim

#endif  // WEFT_SIM_PRNG_H_
