#include "verbs/departure_check.h"

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "fabric/clock.h"
#include "fabric/errors.h"

namespace weft::verbs {

std::function<absl::Status()> departure_check(const VerbsLibrary& library,
                                              uint32_t rank) {
  auto* const departed = library.api().sim_departed;
  // -1 now: no simulation server (or no world), so no departures ever.
  if (departed == nullptr || departed(nullptr, nullptr, 0) < 0) return {};
  return [departed, rank]() -> absl::Status {
    // Each rank leaves once and this one is still here: the first entry
    // that is not this rank is the first to leave (two entries suffice).
    uint32_t ranks[2] = {};
    int64_t times_ns[2] = {};
    const int n = departed(ranks, times_ns, 2);
    if (n < 0) {
      return absl::FailedPreconditionError(
          "weft's simulated provider could not say which ranks left the "
          "world (weft_sim_verbs_departed returned -1)");
    }
    for (int i = 0; i < n && i < 2; ++i) {
      if (ranks[i] == rank) continue;
      return make_error(
          absl::StatusCode::kUnavailable,
          ErrorPlace{rank, ranks[i], "", ErrorCause::kPeerUnavailable},
          absl::StrFormat("rank %u left the simulated world at %.3f us (its "
                          "process exited or was killed)",
                          ranks[i],
                          static_cast<double>(times_ns[i]) / kNsPerUs));
    }
    return absl::OkStatus();
  };
}

}  // namespace weft::verbs
