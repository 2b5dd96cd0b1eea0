#include "collectives/group_counters.h"

namespace weft {

LinkCounters& LinkCounters::operator+=(const LinkCounters& o) {
  frames_sent += o.frames_sent;
  frames_resent += o.frames_resent;
  frames_received += o.frames_received;
  duplicates_dropped += o.duplicates_dropped;
  frames_held_early += o.frames_held_early;
  acks_sent += o.acks_sent;
  probes_sent += o.probes_sent;
  credit_stalls += o.credit_stalls;
  deadlines_hit += o.deadlines_hit;
  return *this;
}

LinkCounters& LinkCounters::operator-=(const LinkCounters& o) {
  frames_sent -= o.frames_sent;
  frames_resent -= o.frames_resent;
  frames_received -= o.frames_received;
  duplicates_dropped -= o.duplicates_dropped;
  frames_held_early -= o.frames_held_early;
  acks_sent -= o.acks_sent;
  probes_sent -= o.probes_sent;
  credit_stalls -= o.credit_stalls;
  deadlines_hit -= o.deadlines_hit;
  return *this;
}

}  // namespace weft
