// EventQueue: the simulator's future, a binary min-heap of small plain
// events ordered by (virtual time, sequence). The sequence number, given at
// scheduling, breaks ties in scheduling order, so the order never depends on
// the heap's internals.
#ifndef WEFT_SIM_INTERNAL_EVENT_QUEUE_H_
#define WEFT_SIM_INTERNAL_EVENT_QUEUE_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "fabric/clock.h"

namespace weft::sim::internal {

enum class EventKind : uint8_t {
  kDepart,      // index: link whose first queued send leaves
  kArrive,      // index: in-flight message (a delayed frame)
  kArriveLink,  // index: link whose first queued frame arrives
  kScripted,    // index: fault plan entry; arg: 0 start, 1 end (stalls)
};

struct Event {
  TimeNs time_ns = 0;
  uint64_t sequence = 0;
  uint64_t arg = 0;
  uint32_t index = 0;
  EventKind kind = EventKind::kDepart;
};

class EventQueue {
 public:
  void push(TimeNs time_ns, EventKind kind, uint32_t index, uint64_t arg = 0) {
    heap_.push_back(Event{time_ns, next_sequence_++, arg, index, kind});
    std::push_heap(heap_.begin(), heap_.end(), Later{});
  }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  // REQUIRES: !empty().
  TimeNs next_time_ns() const { return heap_.front().time_ns; }
  // REQUIRES: !empty().
  Event pop() {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    Event e = heap_.back();
    heap_.pop_back();
    return e;
  }

 private:
  // A function object (not a function pointer) so the heap inlines it.
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time_ns != b.time_ns ? a.time_ns > b.time_ns
                                    : a.sequence > b.sequence;
    }
  };
  std::vector<Event> heap_;
  uint64_t next_sequence_ = 0;
};

}  // namespace weft::sim::internal

#endif  // WEFT_SIM_INTERNAL_EVENT_QUEUE_H_
