// ControlCredit: the receives a lane's acknowledgements may take at the
// peer when nothing repairs a frame that found none (recovery off, or a
// fabric that delivers reliably, where the engine resends nothing; lane.h,
// "Control credits"). Data frames are limited by the data credits (at most
// the window unconsumed); the kControlReserve receives beyond the window
// are the control frames'. A receive a control frame took is posted again
// as the peer handles the frame, but a stalled or slow peer handles
// nothing, so a sender that counted only its data would overrun those
// receives with its third unanswered probe.
//
// So a control frame counts as taking a receive until the peer proves it
// was posted again: every acknowledgement carries `heard`, one past the
// last pair frame its sender handled (reposting a control frame's receive
// is part of handling it, before anything else is posted), so a frame
// numbered below a `heard` that arrived is proven. Two kinds of frame:
//
//  - An asking frame (kFlagAnswer, or a probe) asks the peer to answer at
//    once with an acknowledgement. Every control frame this side sends of
//    its own accord (a credit report, a probe) asks, and one goes only
//    while no earlier asking frame is unproven.
//  - An answer goes whenever the peer asked: the first acknowledgement
//    after handling the peer's asking frame (a data frame does not
//    answer: only an acknowledgement carries `heard`).
//
// The peer asks again only once this side's answer proved its last
// asking frame, and so only after it handled that answer: its next asking
// frame proves every answer this side sent before. So at most one asking
// frame and one answer of this side are ever unproven, and at most
// kControlReserve control frames take receives at the peer. An abort is
// not counted: it is sent once the group failed, best effort.
//
// Invariants (checked by check_invariants()): at most kControlReserve
// frames unproven, at most one of them asking.
#ifndef WEFT_COLLECTIVES_ENGINE_CONTROL_CREDIT_H_
#define WEFT_COLLECTIVES_ENGINE_CONTROL_CREDIT_H_

#include <array>
#include <cstdint>

#include "collectives/engine/lane_protocol.h"
#include "fabric/assert.h"

namespace weft::collectives::internal {

class ControlCredit {
 public:
  // A frame of this side's own accord may go (it asks): no asking frame is
  // unproven and a receive is free.
  bool can_ask() const { return !asking_ && unproven_ < kControlReserve; }
  // An answer may go (a receive is free). The protocol above keeps this
  // true whenever the peer asked; a peer that asks out of turn waits.
  bool can_answer() const { return unproven_ < kControlReserve; }
  // A control frame went out as the pair's frame `posted_as`; `asks`: it
  // asks for an answer. REQUIRES: can_ask() when asking, else
  // can_answer().
  void note_sent(uint32_t posted_as, bool asks);
  // The peer's acknowledgement carried `heard`: the frames numbered below
  // it were handled, their receives posted again.
  void note_heard(uint32_t heard);

  uint32_t unproven() const { return unproven_; }
  bool asking() const { return asking_; }

  // WEFT_ASSERTs the invariants above. O(1).
  void check_invariants() const;

 private:
  // Pair numbers of the unproven frames, [0, unproven_); frames_[0] is the
  // asking one when asking_.
  std::array<uint32_t, kControlReserve> frames_{};
  uint32_t unproven_ = 0;
  bool asking_ = false;
};

}  // namespace weft::collectives::internal

#endif  // WEFT_COLLECTIVES_ENGINE_CONTROL_CREDIT_H_
