#include "collectives/engine/control_credit.h"

namespace weft::collectives::internal {

void ControlCredit::note_sent(uint32_t posted_as, bool asks) {
  WEFT_ASSERT(asks ? can_ask() : can_answer(),
              "a control frame sent beyond the peer's free receives");
  if (asks) {
    // The asking frame first.
    if (unproven_ > 0) frames_[unproven_] = frames_[0];
    frames_[0] = posted_as;
    asking_ = true;
  } else {
    frames_[unproven_] = posted_as;
  }
  ++unproven_;
  WEFT_CHECK_INVARIANTS_OF(*this);
}

void ControlCredit::note_heard(uint32_t heard) {
  uint32_t kept = 0;
  for (uint32_t i = 0; i < unproven_; ++i) {
    if (seq_after(heard, frames_[i])) {
      if (i == 0 && asking_) asking_ = false;
      continue;
    }
    // Only the asking frame (index 0) keeps its place.
    frames_[kept++] = frames_[i];
  }
  unproven_ = kept;
  WEFT_CHECK_INVARIANTS_OF(*this);
}

void ControlCredit::check_invariants() const {
  WEFT_ASSERT(unproven_ <= kControlReserve,
              "more control frames unproven than the peer keeps receives for");
  WEFT_ASSERT(!asking_ || unproven_ > 0,
              "an asking frame unproven, but no frame is");
}

}  // namespace weft::collectives::internal
