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
#ifndef WEFT_SIM_INTERNAL_EVENT_QUEUE_H_
#define WEFT_SIM_INTERNAL_EVENT_QUEUE_H_

#include <algorithm>
#include <array>
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
    const uint64_t sequence = next_sequence_++;
    runs_[run_for(time_ns, sequence)].push_back(Entry{sequence, index, kind});
    ++size_;
  }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  // REQUIRES: !empty().
  TimeNs next_time_ns() const { return heap_[0].time_ns; }
  // REQUIRES: !empty().
  Event pop() {
    const Head head = heap_[0];
    RingQueue<Entry>& run = runs_[head.run];
    const Entry entry = run.front();
    run.pop_front();
    --size_;
    if (run.empty()) retire(head.run);
    return Event{head.time_ns, entry.sequence, entry.index, entry.kind};
  }

 private:
  // Runs open for pushes at a time: a push at any of their times joins it.
  static constexpr size_t kOpenRuns = 4;
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

  std::vector<RingQueue<Entry>> runs_;  // by run number; drained ones reused
  std::vector<uint32_t> free_runs_;
  std::vector<Head> heap_;  // a kArity-ary min-heap of the non-empty runs
  std::array<Open, kOpenRuns> open_{};
  size_t next_open_ = 0;  // the slot the next new run takes
  size_t size_ = 0;
  uint64_t next_sequence_ = 0;
};

}  // namespace weft::sim::internal

#endif  // WEFT_SIM_INTERNAL_EVENT_QUEUE_H_
