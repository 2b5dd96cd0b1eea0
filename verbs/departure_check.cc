#include "verbs/departure_check.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "fabric/clock.h"
#include "fabric/errors.h"

namespace weft::verbs {

namespace {

// The check's state: which departure it names next.
class Check {
 public:
  Check(DepartedFn departed, uint32_t rank)
      : departed_(departed), rank_(rank) {}

  absl::Status operator()() {
    const int n = departed_(nullptr, nullptr, 0);
    if (n < 0) {
      return absl::FailedPreconditionError(
          "weft's simulated provider could not say which ranks left the "
          "world (weft_sim_verbs_departed returned -1)");
    }
    if (n == 0) return absl::OkStatus();
    ranks_.resize(static_cast<size_t>(n));
    times_ns_.resize(static_cast<size_t>(n));
    const int got = departed_(ranks_.data(), times_ns_.data(), n);
    std::vector<size_t> others;
    for (int i = 0; i < got && i < n; ++i) {
      if (ranks_[i] != rank_) others.push_back(static_cast<size_t>(i));
    }
    if (others.empty()) return absl::OkStatus();
    // The first to leave first; with several gone, each in turn, one per
    // call: a group may carry on past a departed peer it no longer needs,
    // and must still hear of the next.
    const size_t i = others[turn_++ % others.size()];
    return make_error(
        absl::StatusCode::kUnavailable,
        ErrorPlace{rank_, ranks_[i], "", ErrorCause::kPeerUnavailable},
        absl::StrFormat("rank %u left the simulated world at %.3f us (its "
                        "process exited or was killed)",
                        ranks_[i],
                        static_cast<double>(times_ns_[i]) / kNsPerUs));
  }

 private:
  DepartedFn departed_;
  uint32_t rank_;
  size_t turn_ = 0;
  std::vector<uint32_t> ranks_;
  std::vector<int64_t> times_ns_;
};

}  // namespace

std::function<absl::Status()> departure_check(const VerbsLibrary& library,
                                              uint32_t rank) {
  const DepartedFn departed = library.api().sim_departed;
  // -1 now: no simulation server (or no world), so no departures ever.
  if (departed == nullptr || departed(nullptr, nullptr, 0) < 0) return {};
  return departure_check(departed, rank);
}

std::function<absl::Status()> departure_check(DepartedFn departed,
                                              uint32_t rank) {
  return Check(departed, rank);
}

}  // namespace weft::verbs
