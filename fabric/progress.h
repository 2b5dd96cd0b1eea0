// Progress: what one non-blocking step of a piece of work reports, so a
// driver (the simulator's scheduler, or a blocking wait loop on hardware)
// knows whether to call again now, later, or never.
#ifndef WEFT_FABRIC_PROGRESS_H_
#define WEFT_FABRIC_PROGRESS_H_

#include "fabric/clock.h"

namespace weft {

struct Progress {
  enum class State {
    kDone,      // finished (successfully or not); do not call again
    kAdvanced,  // did something; call again soon
    kWaiting,   // nothing to do until a completion arrives or wake_at_ns
  };
  State state = State::kWaiting;
  // With kWaiting: the clock time at which the work wants to run even if
  // nothing arrives (a deadline or a retransmission timer).
  TimeNs wake_at_ns = kNeverNs;

  static Progress done() { return {State::kDone, kNeverNs}; }
  static Progress advanced() { return {State::kAdvanced, kNeverNs}; }
  static Progress waiting(TimeNs wake_at_ns = kNeverNs) {
    return {State::kWaiting, wake_at_ns};
  }
  bool is_done() const { return state == State::kDone; }
};

}  // namespace weft

#endif  // WEFT_FABRIC_PROGRESS_H_
