// CheckCadence: when a structure on the simulator's hot path runs its full
// check_invariants(). Such a structure checks the O(1) part of its
// invariants after every mutating call and walks the whole structure only
// every kEvery-th call: a collective over the simulator makes millions of
// those calls, and an O(n) walk at each would make Debug runs of the large
// tests quadratic. A broken structure is still caught within kEvery calls
// of breaking. Where checks are off (release builds) due() is constant
// false and nothing is counted.
#ifndef WEFT_SIM_INTERNAL_CHECK_CADENCE_H_
#define WEFT_SIM_INTERNAL_CHECK_CADENCE_H_

#include <cstdint>

#include "fabric/assert.h"

namespace weft::sim::internal {

template <uint32_t kEvery>
class CheckCadence {
 public:
  static_assert(kEvery > 0);

  // True on every kEvery-th call where checks are on.
  bool due() {
    if constexpr (::weft::kChecksInvariants) {
      if (++calls_ == kEvery) {
        calls_ = 0;
        return true;
      }
    }
    return false;
  }

 private:
  uint32_t calls_ = 0;
};

}  // namespace weft::sim::internal

#endif  // WEFT_SIM_INTERNAL_CHECK_CADENCE_H_
