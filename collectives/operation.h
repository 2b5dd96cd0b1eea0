// Operation: a handle to one collective started asynchronously on a Group.
// Drive it with progress() (the simulator's rank programs do, one step at a
// time, all ranks in one thread) or block on it with wait() (hardware: one
// process per rank, a wall clock). Either way it ends: with the result in
// the output buffer and an OK status, or with a typed error (fabric/errors.h
// gives rank, peer and cause).
//
// REQUIRES: the operation's buffers stay valid and untouched until done().
#ifndef WEFT_COLLECTIVES_OPERATION_H_
#define WEFT_COLLECTIVES_OPERATION_H_

#include <cstdint>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "fabric/progress.h"

namespace weft {

namespace collectives::internal {
class Engine;
struct OpState;
}  // namespace collectives::internal

class Operation {
 public:
  // Consecutive kWaiting steps without the clock moving before wait() gives
  // up: blocking needs a clock that runs by itself.
  static constexpr uint64_t kMaxStalledSpins = uint64_t{1} << 16;

  // An empty handle: done, with FailedPrecondition.
  Operation() = default;

  bool done() const;
  // The result once done(); Unavailable while it runs.
  absl::Status status() const;
  // One non-blocking step of the group's engine (every queued operation
  // moves). kDone once this operation is done; kWaiting carries the
  // deadline at which to step again if nothing arrives.
  Progress progress();
  // Steps until done and returns status(). FailedPrecondition if the clock
  // stands still (a simulated fabric must be driven with progress()).
  absl::Status wait();

 private:
  friend class Group;
  Operation(std::shared_ptr<collectives::internal::OpState> state,
            std::shared_ptr<collectives::internal::Engine> engine)
      : state_(std::move(state)), engine_(std::move(engine)) {}

  std::shared_ptr<collectives::internal::OpState> state_;
  std::shared_ptr<collectives::internal::Engine> engine_;
};

}  // namespace weft

#endif  // WEFT_COLLECTIVES_OPERATION_H_
