// ReadySet: the ranks the scheduler must step in its next round: those that
// advanced, whose wake-up came, that got a completion, or whose stall ended.
// A bitmap by rank: marking is one OR, and ranks come out in rank order
// (so the stepping order never depends on the order they were marked in)
// at the cost of one word per 64 ranks, with no sort. count_ is the number
// of bits set, and no bit is set for a rank past the world's.
#ifndef WEFT_SIM_INTERNAL_READY_SET_H_
#define WEFT_SIM_INTERNAL_READY_SET_H_

#include <bit>
#include <cstdint>
#include <vector>

#include "fabric/assert.h"

namespace weft::sim::internal {

class ReadySet {
 public:
  explicit ReadySet(uint32_t ranks)
      : words_((ranks + kBits - 1) / kBits, 0), ranks_(ranks) {}

  // REQUIRES: rank < the ranks given at construction.
  void mark(uint32_t rank) {
    WEFT_ASSERT(rank < ranks_, "a rank past the world's marked ready");
    uint64_t& word = words_[rank / kBits];
    const uint64_t bit = uint64_t{1} << (rank % kBits);
    count_ += (word & bit) == 0 ? 1 : 0;
    word |= bit;
    // O(ranks / 64) at every mark: at most 16 words in a world of 1024
    // ranks, and mark() runs once per completion, not per event.
    WEFT_CHECK_INVARIANTS_OF(*this);
  }
  bool empty() const { return count_ == 0; }

  // Replaces *out with the marked ranks in increasing order and empties the
  // set.
  void take(std::vector<uint32_t>* out) {
    out->clear();
    for (uint32_t w = 0; count_ > 0 && w < words_.size(); ++w) {
      for (uint64_t bits = words_[w]; bits != 0; bits &= bits - 1) {
        out->push_back(w * kBits +
                       static_cast<uint32_t>(std::countr_zero(bits)));
        --count_;
      }
      words_[w] = 0;
    }
    WEFT_CHECK_INVARIANTS_OF(*this);
  }

  // O(ranks / 64).
  void check_invariants() const {
    uint32_t set = 0;
    for (const uint64_t word : words_) {
      set += static_cast<uint32_t>(std::popcount(word));
    }
    WEFT_ASSERT(set == count_, "the ready set miscounts its marked ranks");
    const uint32_t tail = ranks_ % kBits;
    WEFT_ASSERT(tail == 0 || (words_.back() >> tail) == 0,
                "a rank past the world's is marked ready");
  }

 private:
  static constexpr uint32_t kBits = 64;

  std::vector<uint64_t> words_;  // bit r % 64 of word r / 64: rank r
  uint32_t ranks_;
  uint32_t count_ = 0;  // bits set
};

}  // namespace weft::sim::internal

#endif  // WEFT_SIM_INTERNAL_READY_SET_H_
