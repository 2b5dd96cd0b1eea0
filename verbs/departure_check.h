// The liveness check (Group::watch) for a group whose fabric runs on weft's
// simulated provider: it asks the provider which ranks have left the
// simulated world (weft_sim_verbs_departed) instead of asking the TCP side
// channel. Both say the same thing, but the side channel's closing reaches
// the survivors in wall-clock time, so on virtual time which 50 ms check
// sees it would depend on the host, and with it the run's end time and
// trace. The provider's answer depends on virtual time alone.
#ifndef WEFT_VERBS_DEPARTURE_CHECK_H_
#define WEFT_VERBS_DEPARTURE_CHECK_H_

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "verbs/loader.h"

namespace weft::verbs {

// A check for rank `rank`: OK while no other rank has left the world before
// the provider's virtual time; once one has, Unavailable naming it
// (error_place: this rank, that peer, cause kPeerUnavailable), e.g. "rank 1
// left the simulated world at 5.000 us (its process exited or was
// killed)". With several gone, successive calls name each in turn, first
// to leave first, so a group that carries on past a peer it no longer
// needs still hears of the next. An empty function when `library` cannot say (a
// real library, or the simulated provider with its world in this process, whose
// ranks never leave it): watch the side channel then. REQUIRES: `library`
// outlives the check (loaded libraries are never unloaded).
std::function<absl::Status()> departure_check(const VerbsLibrary& library,
                                              uint32_t rank);

// The same over `departed`, a function with weft_sim_verbs_departed's
// contract (sim_verbs.h), without the probe: for tests.
using DepartedFn = int (*)(uint32_t* ranks, int64_t* left_at_ns, int capacity);
std::function<absl::Status()> departure_check(DepartedFn departed,
                                              uint32_t rank);

}  // namespace weft::verbs

#endif  // WEFT_VERBS_DEPARTURE_CHECK_H_
