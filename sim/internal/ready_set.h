// ReadySet: the ranks the scheduler must step in its next round: those that
// advanced, whose wake-up came, that got a completion, or whose stall ended.
// A rank is in the set at most once; ranks come out in rank order, so the
// stepping order never depends on the order they were marked in.
#ifndef WEFT_SIM_INTERNAL_READY_SET_H_
#define WEFT_SIM_INTERNAL_READY_SET_H_

#include <algorithm>
#include <cstdint>
#include <vector>

namespace weft::sim::internal {

class ReadySet {
 public:
  explicit ReadySet(uint32_t ranks) : marked_(ranks, 0) {}

  // REQUIRES: rank < the ranks given at construction.
  void mark(uint32_t rank) {
    if (marked_[rank] != 0) return;
    marked_[rank] = 1;
    list_.push_back(rank);
  }
  bool empty() const { return list_.empty(); }

  // Replaces *out with the marked ranks in increasing order and empties the
  // set.
  void take(std::vector<uint32_t>* out) {
    out->clear();
    out->swap(list_);
    std::sort(out->begin(), out->end());
    for (uint32_t rank : *out) marked_[rank] = 0;
  }

 private:
  std::vector<uint8_t> marked_;  // by rank: 1 while in list_
  std::vector<uint32_t> list_;
};

}  // namespace weft::sim::internal

#endif  // WEFT_SIM_INTERNAL_READY_SET_H_
