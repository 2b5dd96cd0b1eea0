// EventQueue: the simulator's future, ordered by (virtual time, sequence).
// The sequence number, given at scheduling, breaks ties in scheduling order,
// so the order never depends on the queue's internals.
//
// Events come in runs: a symmetric collective schedules dozens of events
// for one instant (every link's next departure, every frame's arrival)
// before the next. So the queue keeps runs, each a FIFO of events of one
// time pushed one after another, and a min-heap of runs by (time, first
// sequence): most pushes and pops touch a FIFO, not the heap. A push joins
// one of the few most recently opened runs when one has its time, and opens
// a new run otherwise; a run that is no longer among those is closed for
// good. Two runs of one time are then never both open, the older was closed
// before the newer opened, and every event of the older comes first: the
// order is exactly (time, sequence). On the ideal link every event joins
// the run of the instant being processed.
//
// So, checked by check_invariants(): the heap holds each non-empty run once
// and no empty one, in heap order by (time, first sequence); a run's
// sequences increase; runs of one time never interleave; an open run is in
// the heap under its own time, and no two open runs share a time; no event
// is before the last one popped.
#ifndef WEFT_SIM_INTERNAL_EVENT_QUEUE_H_
#define WEFT_SIM_INTERNAL_EVENT_QUEUE_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "fabric/assert.h"
#include "fabric/clock.h"
#include "sim/internal/check_cadence.h"
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
    WEFT_ASSERT(time_ns >= last_popped_ns_,
                "an event scheduled before the last one handled");
    const uint64_t sequence = next_sequence_++;
    runs_[run_for(time_ns, sequence)].push_back(Entry{sequence, index, kind});
    ++size_;
    check_after_mutation();
  }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  // REQUIRES: !empty().
  TimeNs next_time_ns() const {
    WEFT_ASSERT(!empty(), "next_time_ns() of an empty event queue");
    return heap_[0].time_ns;
  }
  // REQUIRES: !empty().
  Event pop() {
    WEFT_ASSERT(!empty(), "pop() of an empty event queue");
    const Head head = heap_[0];
    RingQueue<Entry>& run = runs_[head.run];
    const Entry entry = run.front();
    run.pop_front();
    --size_;
    if (run.empty()) retire(head.run);
    if constexpr (weft::kChecksInvariants) {
      last_popped_ns_ = head.time_ns;
    }
    check_after_mutation();
    return Event{head.time_ns, entry.sequence, entry.index, entry.kind};
  }

  // O(events + runs log runs).
  void check_invariants() const;

 private:
  // Runs open for pushes at a time: a push at any of their times joins it.
  static constexpr size_t kOpenRuns = 4;
  // Every event of a collective is pushed and popped once: the O(1) checks
  // run at each, the full walk every kFullCheckEvery (see CheckCadence).
  static constexpr uint32_t kFullCheckEvery = 256;
  // Children per heap node.
  static constexpr size_t kArity = 4;
  static constexpr uint32_t kNoRun = ~uint32_t{0};

  struct Entry {
    uint64_t sequence;
    uint32_t index;
    EventKind kind;
  };
  // A run in the heap: its time and its first event's sequence.
  struct Head {
    TimeNs time_ns;
    uint64_t sequence;
    uint32_t run;
  };
  struct Open {
    TimeNs time_ns = 0;
    uint32_t run = kNoRun;
  };

  static bool before(const Head& a, const Head& b) {
    return a.time_ns < b.time_ns ||
           (a.time_ns == b.time_ns && a.sequence < b.sequence);
  }

  // The open run of `time_ns`, or a new one starting with `sequence`
  // (closing the oldest open run).
  uint32_t run_for(TimeNs time_ns, uint64_t sequence) {
    for (const Open& o : open_) {
      if (o.run != kNoRun && o.time_ns == time_ns) return o.run;
    }
    uint32_t run;
    if (free_runs_.empty()) {
      run = static_cast<uint32_t>(runs_.size());
      runs_.emplace_back();
    } else {
      run = free_runs_.back();
      free_runs_.pop_back();
    }
    heap_push(Head{time_ns, sequence, run});
    open_[next_open_] = Open{time_ns, run};
    next_open_ = (next_open_ + 1) % kOpenRuns;
    return run;
  }
  // `run`, at the top of the heap, is empty: drops it (and closes it).
  void retire(uint32_t run) {
    heap_pop();
    for (Open& o : open_) {
      if (o.run == run) o.run = kNoRun;
    }
    free_runs_.push_back(run);
  }

  // The heap moves whole entries and keeps the one being placed in
  // registers (std::push_heap and std::pop_heap copy it through memory
  // field by field, and reading it back whole stalls).
  void heap_push(const Head& h) {
    size_t hole = heap_.size();
    heap_.push_back(h);
    while (hole > 0) {
      const size_t parent = (hole - 1) / kArity;
      if (!before(h, heap_[parent])) break;
      heap_[hole] = heap_[parent];
      hole = parent;
    }
    heap_[hole] = h;
  }
  void heap_pop() {
    const Head last = heap_.back();
    heap_.pop_back();
    const size_t n = heap_.size();
    if (n == 0) return;
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
  }

  // The O(1) invariants: the queue is empty exactly when the heap is,
  // every run is in the heap or free, and the first run is not empty and
  // not before the last event popped.
  void check_after_mutation() {
    if constexpr (weft::kChecksInvariants) {
      WEFT_ASSERT((size_ == 0) == heap_.empty(),
                  "the event queue's size disagrees with its heap of runs");
      WEFT_ASSERT(heap_.size() + free_runs_.size() == runs_.size(),
                  "an event queue run is neither in the heap nor free");
      WEFT_ASSERT(heap_.empty() || (!runs_[heap_[0].run].empty() &&
                                    heap_[0].time_ns >= last_popped_ns_),
                  "the event queue's first run is empty or in the past");
      if (full_checks_.due()) WEFT_CHECK_INVARIANTS_OF(*this);
    }
  }

  std::vector<RingQueue<Entry>> runs_;  // by run number; drained ones reused
  std::vector<uint32_t> free_runs_;
  std::vector<Head> heap_;  // a kArity-ary min-heap of the non-empty runs
  std::array<Open, kOpenRuns> open_{};
  size_t next_open_ = 0;  // the slot the next new run takes
  size_t size_ = 0;
  uint64_t next_sequence_ = 0;
  // The time of the last event popped, kept where checks are on.
  TimeNs last_popped_ns_ = 0;
  CheckCadence<kFullCheckEvery> full_checks_;
};

inline void EventQueue::check_invariants() const {
  std::vector<bool> in_heap(runs_.size(), false);
  size_t events = 0;
  for (size_t i = 0; i < heap_.size(); ++i) {
    const Head& h = heap_[i];
    WEFT_ASSERT(h.run < runs_.size() && !in_heap[h.run],
                "the event heap holds a run twice");
    WEFT_ASSERT(i == 0 || !before(h, heap_[(i - 1) / kArity]),
                "the event heap is out of (time, sequence) order");
    WEFT_ASSERT(h.time_ns >= last_popped_ns_,
                "an event is before the last one popped");
    in_heap[h.run] = true;
    const RingQueue<Entry>& run = runs_[h.run];
    WEFT_ASSERT(!run.empty() && run.front().sequence >= h.sequence &&
                    run.back().sequence < next_sequence_,
                "an event run is empty or holds sequences it cannot");
    for (size_t k = 1; k < run.size(); ++k) {
      WEFT_ASSERT(run[k - 1].sequence < run[k].sequence,
                  "an event run is out of sequence order");
    }
    events += run.size();
  }
  WEFT_ASSERT(events == size_, "the event queue's size miscounts its events");
  for (const uint32_t run : free_runs_) {
    WEFT_ASSERT(run < runs_.size() && !in_heap[run] && runs_[run].empty(),
                "a free event run is in the heap or not empty");
    in_heap[run] = true;  // seen: a second listing fails above
  }
  for (size_t a = 0; a < kOpenRuns; ++a) {
    const Open& o = open_[a];
    if (o.run == kNoRun) continue;
    const bool found =
        std::any_of(heap_.begin(), heap_.end(), [&](const Head& h) {
          return h.run == o.run && h.time_ns == o.time_ns;
        });
    WEFT_ASSERT(found, "an open event run is not in the heap at its time");
    for (size_t b = a + 1; b < kOpenRuns; ++b) {
      WEFT_ASSERT(open_[b].run == kNoRun || open_[b].time_ns != o.time_ns,
                  "two open event runs of one time");
    }
  }
  // Runs of one time, by first sequence: each ends before the next begins,
  // so the order of runs is the order of their events.
  std::vector<Head> by_order(heap_.begin(), heap_.end());
  std::sort(by_order.begin(), by_order.end(), before);
  for (size_t i = 1; i < by_order.size(); ++i) {
    const Head& a = by_order[i - 1];
    const Head& b = by_order[i];
    WEFT_ASSERT(a.time_ns != b.time_ns || runs_[a.run].back().sequence <
                                              runs_[b.run].front().sequence,
                "two event runs of one time interleave");
  }
}

}  // namespace weft::sim::internal

#endif  // WEFT_SIM_INTERNAL_EVENT_QUEUE_H_
