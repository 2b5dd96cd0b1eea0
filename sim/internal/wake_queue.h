// WakeQueue: each waiting rank's wake-up time (Progress::wake_at_ns), with
// the earliest found in O(log n) instead of a scan over every rank. A
// min-heap with lazy deletion: changing a rank's wake-up leaves its old
// entry behind, recognised as stale by a per-rank generation; the heap is
// rebuilt when stale entries outnumber live ones.
#ifndef WEFT_SIM_INTERNAL_WAKE_QUEUE_H_
#define WEFT_SIM_INTERNAL_WAKE_QUEUE_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "fabric/clock.h"

namespace weft::sim::internal {

class WakeQueue {
 public:
  explicit WakeQueue(uint32_t ranks)
      : wake_ns_(ranks, kNeverNs), generation_(ranks, 0) {}

  // Sets `rank`'s wake-up; kNeverNs clears it.
  void set(uint32_t rank, TimeNs t_ns) {
    if (wake_ns_[rank] == t_ns) return;
    wake_ns_[rank] = t_ns;
    ++generation_[rank];
    if (t_ns == kNeverNs) return;
    heap_.push_back(Entry{t_ns, rank, generation_[rank]});
    std::push_heap(heap_.begin(), heap_.end(), Later{});
    if (heap_.size() > kSlack + 2 * wake_ns_.size()) rebuild();
  }
  void clear(uint32_t rank) { set(rank, kNeverNs); }

  // The earliest wake-up; kNeverNs when there is none.
  TimeNs next_ns() {
    drop_stale();
    return heap_.empty() ? kNeverNs : heap_.front().time_ns;
  }
  // The rank of the earliest wake-up. REQUIRES: next_ns() != kNeverNs.
  uint32_t next_rank() {
    drop_stale();
    return heap_.front().rank;
  }
  // Clears the earliest wake-up and returns its rank.
  // REQUIRES: next_ns() != kNeverNs.
  uint32_t pop() {
    const uint32_t rank = next_rank();
    clear(rank);
    return rank;
  }

 private:
  // Stale entries tolerated beyond twice the ranks before a rebuild.
  static constexpr size_t kSlack = 64;

  struct Entry {
    TimeNs time_ns;
    uint32_t rank;
    uint32_t generation;
  };
  // Ties broken by rank, so the heap's order is a function of its contents.
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      return a.time_ns != b.time_ns ? a.time_ns > b.time_ns : a.rank > b.rank;
    }
  };

  bool live(const Entry& e) const {
    return generation_[e.rank] == e.generation;
  }
  void drop_stale() {
    while (!heap_.empty() && !live(heap_.front())) {
      std::pop_heap(heap_.begin(), heap_.end(), Later{});
      heap_.pop_back();
    }
  }
  void rebuild() {
    std::erase_if(heap_, [&](const Entry& e) { return !live(e); });
    std::make_heap(heap_.begin(), heap_.end(), Later{});
  }

  std::vector<TimeNs> wake_ns_;       // by rank
  std::vector<uint32_t> generation_;  // by rank: bumped on every change
  std::vector<Entry> heap_;
};

}  // namespace weft::sim::internal

#endif  // WEFT_SIM_INTERNAL_WAKE_QUEUE_H_
