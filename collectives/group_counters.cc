#include "collectives/group_counters.h"

#include <tuple>

namespace weft {

const std::array<LinkCounters::Field, 16> LinkCounters::kFields = {{
    {"frames_sent", &LinkCounters::frames_sent},
    {"frames_resent", &LinkCounters::frames_resent},
    {"frames_received", &LinkCounters::frames_received},
    {"duplicates_dropped", &LinkCounters::duplicates_dropped},
    {"frames_held_early", &LinkCounters::frames_held_early},
    {"acks_sent", &LinkCounters::acks_sent},
    {"probes_sent", &LinkCounters::probes_sent},
    {"credit_stalls", &LinkCounters::credit_stalls},
    {"deadlines_hit", &LinkCounters::deadlines_hit},
    {"lanes_moved", &LinkCounters::lanes_moved},
    {"lane_relayed", &LinkCounters::lane_relayed},
    {"frames_via_relays", &LinkCounters::frames_via_relays},
    {"frames_from_relays", &LinkCounters::frames_from_relays},
    {"frames_relayed", &LinkCounters::frames_relayed},
    {"relayed_bytes", &LinkCounters::relayed_bytes},
    {"relay_drops", &LinkCounters::relay_drops},
}};

// Every counter is in kFields (a new one added above but not there would
// be left out of sums and output).
static_assert(sizeof(LinkCounters) ==
                  std::tuple_size_v<decltype(LinkCounters::kFields)> *
                      sizeof(uint64_t),
              "a LinkCounters field is missing from kFields");

LinkCounters& LinkCounters::operator+=(const LinkCounters& o) {
  for (const Field& f : kFields) this->*f.value += o.*f.value;
  return *this;
}

LinkCounters& LinkCounters::operator-=(const LinkCounters& o) {
  for (const Field& f : kFields) this->*f.value -= o.*f.value;
  return *this;
}

}  // namespace weft
