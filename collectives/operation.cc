#include "collectives/operation.h"

#include "collectives/engine/engine.h"

namespace weft {

bool Operation::done() const { return state_ == nullptr || state_->done; }

absl::Status Operation::status() const {
  if (state_ == nullptr) {
    return absl::FailedPreconditionError(
        "this Operation is empty; start one with a Group's *_async call");
  }
  if (!state_->done) {
    return absl::UnavailableError(
        "the operation is still running; call progress() or wait()");
  }
  return state_->status;
}

Progress Operation::progress() {
  if (done()) return Progress::done();
  const Progress p = engine_->progress();
  return done() ? Progress::done() : p;
}

absl::Status Operation::wait() {
  if (done()) return status();
  const Clock& clock = engine_->clock();
  TimeNs last_ns = clock.now_ns();
  uint64_t stalled = 0;
  while (!done()) {
    const Progress p = progress();
    if (p.state != Progress::State::kWaiting || engine_->moved()) continue;
    engine_->idle(p.wake_at_ns);
    const TimeNs now_ns = clock.now_ns();
    if (now_ns != last_ns) {
      last_ns = now_ns;
      stalled = 0;
    } else if (++stalled > kMaxStalledSpins) {
      return absl::FailedPreconditionError(
          "wait() made no progress and the fabric's clock does not move; "
          "a simulated fabric must be driven with Operation::progress() "
          "from a rank program, not with blocking calls");
    }
  }
  // The operation's sends have all been posted, but on a fabric that
  // moves them only while this rank calls in, their last bytes may still
  // wait here: they leave before the caller goes off to compute.
  if (state_->status.ok()) engine_->finish_sends(state_->deadline_ns);
  return status();
}

}  // namespace weft
