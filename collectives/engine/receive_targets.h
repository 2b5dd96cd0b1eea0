// ReceiveTargets: which of a lane's receives are posted straight into
// registered user memory, and for which data frame (docs/architecture.md,
// "Registered user memory").
//
// The running operation names where some of its data frames' payloads go
// (set()): frame first_seq + i into frames[i], and more of them as they
// become safe to write (add(): OpRunner::open_gates). A receive about to be
// posted is given one of them (choose()) as its payload part, the 64-byte
// header going into the lane's own frame; the message that lands there may be
// another one (an acknowledgement, a duplicate, the next data frame, one
// behind a loss), and the lane then moves its payload into its own frame.
//
// Why that is safe: a receive posted behind `ahead` receives still posted
// targets data frame k, the (ahead + 1)-th frame number not delivered yet
// counted from the oldest not consumed, never one delivered. Frame k is
// consumed only after every number below it is delivered: `ahead` more
// deliveries (besides k's own) that, receives being taken oldest first,
// fill the receives ahead and then this one. So this receive has completed
// before k is consumed, and memory that still belongs to the fabric is
// never the destination of a copy, nor read as a finished frame. As the
// operation consumes all its frames, every receive targeted for it has
// completed when it ends. A receive's capacity stays the lane's frame
// (frames are given only where header + payload fill it), so a message
// that fits a receive fits one posted into user memory too.
//
// Invariants: at most one posted receive per slot; no two posted receives
// target the same number.
#ifndef WEFT_COLLECTIVES_ENGINE_RECEIVE_TARGETS_H_
#define WEFT_COLLECTIVES_ENGINE_RECEIVE_TARGETS_H_

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "collectives/engine/receive_window.h"
#include "fabric/slab.h"

namespace weft::collectives::internal {

class ReceiveTargets {
 public:
  struct Target {
    uint32_t seq = 0;
    Frame user;  // where its payload goes
  };

  explicit ReceiveTargets(uint32_t depth) : depth_(depth) {}

  // The running operation's destinations: data frame first_seq + i may be
  // received into frames[i] (an empty frame: not that one).
  void set(uint32_t first_seq, std::vector<Frame> frames) {
    first_seq_ = first_seq;
    frames_ = std::move(frames);
  }
  // More destinations of the same operation: frames[i] for data frame
  // first_seq + i, where not empty. Nothing after clear().
  void add(uint32_t first_seq, std::span<const Frame> frames);
  // No more targets are chosen; receives already posted keep theirs.
  void clear() { frames_.clear(); }
  // Receives targeted and not completed yet.
  uint32_t posted() const { return posted_count_; }

  // The target of the receive about to be posted in `slot` behind `ahead`
  // posted receives, recorded for that slot; nullptr when none (then it is
  // posted whole into the lane's own frame). `payload_room`: the lane
  // frame's bytes after the header; only a target that fills it is given.
  const Frame* choose(uint32_t slot, uint32_t ahead,
                      const ReceiveWindow& window, uint32_t payload_room);
  // The receive in `slot` could not be posted with its target after all.
  void cancel(uint32_t slot);
  // The receive in `slot` completed: its target, if it had one (forgotten
  // here).
  std::optional<Target> complete(uint32_t slot);
  bool targeted(uint32_t slot) const {
    return !posted_.empty() && posted_[slot].has_value();
  }

  // WEFT_ASSERTs the invariants above. O(depth^2).
  void check_invariants() const;

 private:
  uint32_t first_seq_ = 0;
  std::vector<Frame> frames_;
  uint32_t depth_;
  // Per slot; sized at the first target (most lanes never have one).
  std::vector<std::optional<Target>> posted_;
  uint32_t posted_count_ = 0;
};

}  // namespace weft::collectives::internal

#endif  // WEFT_COLLECTIVES_ENGINE_RECEIVE_TARGETS_H_
