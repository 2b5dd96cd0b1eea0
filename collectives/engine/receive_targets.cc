#include "collectives/engine/receive_targets.h"

#include "collectives/engine/lane_protocol.h"
#include "fabric/assert.h"

namespace weft::collectives::internal {

const Frame* ReceiveTargets::choose(uint32_t slot, uint32_t ahead,
                                    const ReceiveWindow& window,
                                    uint32_t payload_room) {
  if (frames_.empty()) return nullptr;
  WEFT_ASSERT(!targeted(slot), "a slot's receive posted twice");
  // The (ahead + 1)-th number not delivered yet: everything below
  // received() is, and so are the frames held early beyond it.
  uint32_t seq = window.received();
  for (uint32_t skipped = 0;; ++seq) {
    const bool held = seq - window.consumed() < window.window() &&
                      window.slot_holding(seq) != kNoSlot;
    if (held) continue;
    if (skipped == ahead) break;
    ++skipped;
  }
  const uint32_t index = seq - first_seq_;
  if (index >= frames_.size()) return nullptr;
  const Frame& user = frames_[index];
  if (user.slab() == nullptr || user.bytes() != payload_room) return nullptr;
  for (const std::optional<Target>& p : posted_) {
    // Already the target of a receive ahead (whose frame went to another
    // number's receive after all): that one completes first.
    if (p.has_value() && p->seq == seq) return nullptr;
  }
  if (posted_.empty()) posted_.resize(depth_);
  posted_[slot] = Target{seq, user};
  ++posted_count_;
  WEFT_CHECK_INVARIANTS_OF(*this);
  return &posted_[slot]->user;
}

void ReceiveTargets::add(uint32_t first_seq, std::span<const Frame> frames) {
  for (size_t i = 0; i < frames.size(); ++i) {
    const uint32_t index = first_seq + static_cast<uint32_t>(i) - first_seq_;
    if (index < frames_.size() && frames[i].slab() != nullptr) {
      frames_[index] = frames[i];
    }
  }
}

void ReceiveTargets::cancel(uint32_t slot) {
  if (targeted(slot)) {
    posted_[slot].reset();
    --posted_count_;
  }
  WEFT_CHECK_INVARIANTS_OF(*this);
}

std::optional<ReceiveTargets::Target> ReceiveTargets::complete(uint32_t slot) {
  if (!targeted(slot)) return std::nullopt;
  std::optional<Target> t = posted_[slot];
  cancel(slot);
  return t;
}

void ReceiveTargets::check_invariants() const {
  WEFT_ASSERT(posted_.empty() || posted_.size() == depth_,
              "the targets do not match the depth");
  uint32_t count = 0;
  for (size_t i = 0; i < posted_.size(); ++i) {
    if (!posted_[i].has_value()) continue;
    ++count;
    for (size_t j = i + 1; j < posted_.size(); ++j) {
      WEFT_ASSERT(!posted_[j].has_value() || posted_[j]->seq != posted_[i]->seq,
                  "two posted receives target the same data frame");
    }
  }
  WEFT_ASSERT(count == posted_count_, "the targeted receives are miscounted");
}

}  // namespace weft::collectives::internal
