// EventQueue: the simulator's future, ordered by (virtual time, sequence).
// The sequence number, given at scheduling, breaks ties in scheduling order,
// so the order never depends on the queue's internals.
//
// Two parts: a binary min-heap for the future, and a FIFO for events due at
// the instant being processed (frames on a zero-latency link, departures of
// empty frames). Everything pushed at that instant carries a later sequence
// than what the heap holds for it, so the FIFO is already in order and
// pop() takes the smaller head of the two. On the ideal link every event
// goes through the FIFO, at O(1).
#ifndef WEFT_SIM_INTERNAL_EVENT_QUEUE_H_
#define WEFT_SIM_INTERNAL_EVENT_QUEUE_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "fabric/clock.h"
#include "sim/internal/ring_queue.h"

namespace weft::sim::internal {

enum class EventKind : uint8_t {
  kDepart,      // index: link whose first queued send leaves
  kArrive,      // index: in-flight message (a delayed frame)
  kArriveLink,  // index: link whose first queued frame arrives
  kFaultStart,  // index: fault plan entry (a timed fault)
  kFaultEnd,    // index: fault plan entry (a stall's end)
};

struct Event {
  TimeNs time_ns = 0;
  uint64_t sequence = 0;
  uint32_t index = 0;
  EventKind kind = EventKind::kDepart;
};

class EventQueue {
 public:
  // REQUIRES: time_ns is not before the last popped event's time.
  void push(TimeNs time_ns, EventKind kind, uint32_t index) {
    const Event e{time_ns, next_sequence_++, index, kind};
    if (time_ns == instant_ns_) {
      now_.push_back(e);
      return;
    }
    heap_push(e);
  }
  bool empty() const { return heap_.empty() && now_.empty(); }
  size_t size() const { return heap_.size() + now_.size(); }
  // REQUIRES: !empty().
  TimeNs next_time_ns() const { return next().time_ns; }
  // REQUIRES: !empty().
  Event pop() {
    if (take_heap()) {
      const Event e = heap_pop();
      instant_ns_ = e.time_ns;
      return e;
    }
    const Event e = now_.front();
    now_.pop_front();
    return e;
  }

 private:
  // Children per heap node: a shallower heap than a binary one, whose
  // children share a cache line or two.
  static constexpr size_t kArity = 4;

  static bool before(const Event& a, const Event& b) {
    return a.time_ns < b.time_ns ||
           (a.time_ns == b.time_ns && a.sequence < b.sequence);
  }
  // True when the next event is the heap's.
  bool take_heap() const {
    return now_.empty() || (!heap_.empty() && before(heap_[0], now_.front()));
  }
  const Event& next() const { return take_heap() ? heap_[0] : now_.front(); }

  // The heap moves whole events and keeps the one being placed in
  // registers (std::push_heap and std::pop_heap copy it through memory
  // field by field, and reading it back whole stalls).
  void heap_push(const Event& e) {
    size_t hole = heap_.size();
    heap_.push_back(e);
    while (hole > 0) {
      const size_t parent = (hole - 1) / kArity;
      if (!before(e, heap_[parent])) break;
      heap_[hole] = heap_[parent];
      hole = parent;
    }
    heap_[hole] = e;
  }
  Event heap_pop() {
    const Event top = heap_[0];
    const Event last = heap_.back();
    heap_.pop_back();
    const size_t n = heap_.size();
    if (n == 0) return top;
    size_t hole = 0;
    while (true) {
      const size_t first = kArity * hole + 1;
      if (first >= n) break;
      const size_t end = std::min(first + kArity, n);
      size_t best = first;
      for (size_t c = first + 1; c < end; ++c) {
        if (before(heap_[c], heap_[best])) best = c;
      }
      if (!before(heap_[best], last)) break;
      heap_[hole] = heap_[best];
      hole = best;
    }
    heap_[hole] = last;
    return top;
  }

  std::vector<Event> heap_;  // a kArity-ary min-heap by (time, sequence)
  RingQueue<Event> now_;     // all due at instant_ns_, in sequence order
  TimeNs instant_ns_ = 0;    // time of the last event taken from the heap
  uint64_t next_sequence_ = 0;
};

}  // namespace weft::sim::internal

#endif  // WEFT_SIM_INTERNAL_EVENT_QUEUE_H_
