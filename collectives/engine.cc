#include "collectives/internal/engine.h"

#include "absl/strings/str_format.h"
#include "fabric/absl_compat.h"
#include "fabric/errors.h"

namespace weft::internal {

Engine::Engine(const Clock& clock, uint32_t rank,
               std::vector<std::unique_ptr<Lane>> lanes)
    : clock_(clock),
      rank_(rank),
      lanes_(std::move(lanes)),
      poll_batch_(Endpoint::kMaxPollBatch) {
  for (const auto& lane : lanes_) {
    by_peer_[{lane->peer(), lane->cable()}] = lane.get();
  }
}

Lane* Engine::lane(uint32_t peer, uint32_t cable) const {
  auto it = by_peer_.find({peer, cable});
  return it == by_peer_.end() ? nullptr : it->second;
}

std::shared_ptr<OpState> Engine::finished(absl::Status status) {
  auto op = std::make_shared<OpState>();
  op->done = true;
  op->status = std::move(status);
  return op;
}

absl::Status Engine::refusal() const {
  return make_error(
      absl::StatusCode::kFailedPrecondition,
      ErrorPlace{rank_, kNoPeer, "", ErrorCause::kGroupFailed},
      absl::StrFormat("this group failed earlier and refuses new work; "
                      "rebuild it. The first error was: %s",
                      failure_.message()));
}

std::shared_ptr<OpState> Engine::submit(std::unique_ptr<OpRunner> runner,
                                        TimeNs timeout_ns) {
  if (!failure_.ok()) return finished(refusal());
  if (queue_.size() >= kMaxQueued) {
    return finished(make_error(
        absl::StatusCode::kResourceExhausted,
        ErrorPlace{rank_, kNoPeer, "", ErrorCause::kResource},
        absl::StrFormat("%u operations are queued already; wait for some "
                        "to finish before starting more",
                        queue_.size())));
  }
  auto op = std::make_shared<OpState>();
  op->runner = std::move(runner);
  op->timeout_ns = timeout_ns;
  queue_.push_back(op);
  return op;
}

absl::Status Engine::poll_lanes(bool* advanced) {
  for (const auto& lane : lanes_) {
    absl::Status s = lane->poll(poll_batch_, advanced);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Engine::run_queue(bool* advanced) {
  while (!queue_.empty()) {
    OpState& op = *queue_.front();
    if (!running_) {
      running_ = true;
      op.deadline_ns = deadline_after(clock_.now_ns(), op.timeout_ns);
      absl::Status s = op.runner->start();
      if (!s.ok()) return s;
    }
    absl::Status s = op.runner->advance(advanced);
    if (!s.ok()) return s;
    if (!op.runner->done()) return absl::OkStatus();
    op.done = true;
    op.runner.reset();
    queue_.pop_front();
    running_ = false;
    *advanced = true;
  }
  return absl::OkStatus();
}

absl::Status Engine::report_credits(bool* advanced) {
  const OpRunner* runner = running_ ? queue_.front()->runner.get() : nullptr;
  for (const auto& lane : lanes_) {
    const bool waiting = runner != nullptr && runner->waiting_on(lane.get());
    absl::Status s = lane->maybe_report(waiting, advanced);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Engine::deadline_error(const OpState& op) const {
  const Lane* blame = nullptr;
  const std::string outstanding = op.runner->outstanding(&blame);
  ErrorPlace place{rank_, kNoPeer, "", ErrorCause::kDeadline};
  if (blame != nullptr) place = blame->place(ErrorCause::kDeadline);
  return make_error(
      absl::StatusCode::kDeadlineExceeded, place,
      absl::StrFormat("%s did not finish within its %d ns deadline; the "
                      "peer may have crashed, lost frames or been cut off. "
                      "Outstanding: %s",
                      describe_op(op.runner->identity()), op.timeout_ns,
                      outstanding));
}

Progress Engine::progress() {
  if (!failure_.ok()) return Progress::done();
  if (abort_requested_.load(std::memory_order_relaxed)) {
    fail(make_error(absl::StatusCode::kCancelled,
                    ErrorPlace{rank_, kNoPeer, "", ErrorCause::kCancelled},
                    "abort() was called; pending operations were cancelled"),
         rank_, /*every_op=*/true);
    return Progress::done();
  }
  bool advanced = false;
  absl::Status s = poll_lanes(&advanced);
  if (s.ok()) s = run_queue(&advanced);
  if (s.ok()) s = report_credits(&advanced);
  if (s.ok() && running_ && clock_.now_ns() >= queue_.front()->deadline_ns) {
    s = deadline_error(*queue_.front());
  }
  if (!s.ok()) {
    uint32_t origin = rank_;
    for (const auto& lane : lanes_) {
      if (lane->abort_origin().has_value()) origin = *lane->abort_origin();
    }
    fail(std::move(s), origin, /*every_op=*/false);
    return Progress::done();
  }
  if (queue_.empty()) return Progress::done();
  if (advanced) return Progress::advanced();
  return Progress::waiting(running_ ? queue_.front()->deadline_ns : kNeverNs);
}

void Engine::fail(absl::Status status, uint32_t origin, bool every_op) {
  failure_ = status;
  const std::optional<ErrorPlace> place = error_place(status);
  const ErrorCause cause = place ? place->cause : ErrorCause::kUnknown;
  for (const auto& lane : lanes_) {
    lane->send_abort(cause, origin, to_std(status.message()));
  }
  bool first = true;
  for (const auto& op : queue_) {
    op->done = true;
    op->status = every_op || first ? status : refusal();
    op->runner.reset();
    first = false;
  }
  queue_.clear();
  running_ = false;
}

}  // namespace weft::internal
