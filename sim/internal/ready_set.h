// ReadySet: the ranks the scheduler must step in its next round: those that
// advanced, whose wake-up came, that got a completion, or whose stall ended.
// A bitmap by rank: marking is one OR, and ranks come out in rank order
// (so the stepping order never depends on the order they were marked in)
// at the cost of one word per 64 ranks, with no sort.
#ifndef WEFT_SIM_INTERNAL_READY_SET_H_
#define WEFT_SIM_INTERNAL_READY_SET_H_

#include <bit>
#include <cstdint>
#include <vector>

namespace weft::sim::internal {

class ReadySet {
 public:
  explicit ReadySet(uint32_t ranks) : words_((ranks + kBits - 1) / kBits, 0) {}

  // REQUIRES: rank < the ranks given at construction.
  void mark(uint32_t rank) {
    uint64_t& word = words_[rank / kBits];
    const uint64_t bit = uint64_t{1} << (rank % kBits);
    count_ += (word & bit) == 0 ? 1 : 0;
    word |= bit;
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
  }

 private:
  static constexpr uint32_t kBits = 64;

  std::vector<uint64_t> words_;  // bit r % 64 of word r / 64: rank r
  uint32_t count_ = 0;           // bits set
};

}  // namespace weft::sim::internal

#endif  // WEFT_SIM_INTERNAL_READY_SET_H_
