// WakeQueue: each waiting rank's wake-up time (Progress::wake_at_ns), with
// the earliest found in O(log n) instead of a scan over every rank. A
// min-heap with lazy deletion: changing a rank's wake-up leaves its old
// entry behind, recognised as stale by a per-rank generation; the heap is
// rebuilt when stale entries outnumber live ones. So the heap holds exactly
// one live entry, at its wake-up time, for each rank that has one, and at
// most kSlack + 2 * ranks entries in all.
#ifndef WEFT_SIM_INTERNAL_WAKE_QUEUE_H_
#define WEFT_SIM_INTERNAL_WAKE_QUEUE_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "fabric/assert.h"
#include "fabric/clock.h"
#include "sim/internal/check_cadence.h"

namespace weft::sim::internal {

class WakeQueue {
 public:
  explicit WakeQueue(uint32_t ranks)
      : wake_ns_(ranks, kNeverNs), generation_(ranks, 0) {}

  // Sets `rank`'s wake-up; kNeverNs clears it.
  void set(uint32_t rank, TimeNs t_ns) {
    WEFT_ASSERT(rank < wake_ns_.size(), "a wake-up set for no rank");
    if (wake_ns_[rank] == t_ns) return;
    wake_ns_[rank] = t_ns;
    ++generation_[rank];
    if (t_ns != kNeverNs) {
      heap_.push_back(Entry{t_ns, rank, generation_[rank]});
      std::push_heap(heap_.begin(), heap_.end(), Later{});
      if (heap_.size() > kSlack + 2 * wake_ns_.size()) rebuild();
    }
    check_after_mutation();
  }
  void clear(uint32_t rank) { set(rank, kNeverNs); }

  // O(ranks + entries).
  void check_invariants() const {
    WEFT_ASSERT(generation_.size() == wake_ns_.size(),
                "the wake queue keeps another number of generations than "
                "ranks");
    WEFT_ASSERT(heap_.size() <= kSlack + 2 * wake_ns_.size(),
                "the wake queue kept more stale entries than it may");
    WEFT_ASSERT(std::is_heap(heap_.begin(), heap_.end(), Later{}),
                "the wake queue is out of heap order");
    std::vector<uint32_t> live_entries(wake_ns_.size(), 0);
    for (const Entry& e : heap_) {
      WEFT_ASSERT(e.rank < wake_ns_.size(), "a wake-up for no rank");
      if (!live(e)) continue;
      WEFT_ASSERT(e.time_ns == wake_ns_[e.rank] && e.time_ns != kNeverNs,
                  "a live wake-up is not its rank's wake-up time");
      ++live_entries[e.rank];
    }
    for (size_t r = 0; r < wake_ns_.size(); ++r) {
      WEFT_ASSERT(live_entries[r] == (wake_ns_[r] != kNeverNs ? 1u : 0u),
                  "a rank's wake-up is in the wake queue other than once");
    }
  }

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
  // set() runs at every step of a waiting rank: the O(1) checks run each
  // time, the full walk every kFullCheckEvery calls (see CheckCadence).
  static constexpr uint32_t kFullCheckEvery = 64;

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
    check_after_mutation();
  }
  void rebuild() {
    std::erase_if(heap_, [&](const Entry& e) { return !live(e); });
    std::make_heap(heap_.begin(), heap_.end(), Later{});
  }

  std::vector<TimeNs> wake_ns_;       // by rank
  std::vector<uint32_t> generation_;  // by rank: bumped on every change
  // The O(1) invariants: the size bound, and the first entry, once stale
  // ones are dropped, is its rank's wake-up.
  void check_after_mutation() {
    if constexpr (weft::kChecksInvariants) {
      WEFT_ASSERT(heap_.size() <= kSlack + 2 * wake_ns_.size(),
                  "the wake queue kept more stale entries than it may");
      WEFT_ASSERT(heap_.empty() || !live(heap_.front()) ||
                      heap_.front().time_ns == wake_ns_[heap_.front().rank],
                  "the first live wake-up is not its rank's wake-up time");
      if (full_checks_.due()) WEFT_CHECK_INVARIANTS_OF(*this);
    }
  }

  std::vector<Entry> heap_;
  CheckCadence<kFullCheckEvery> full_checks_;
};

}  // namespace weft::sim::internal

#endif  // WEFT_SIM_INTERNAL_WAKE_QUEUE_H_
