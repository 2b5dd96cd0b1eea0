#include "fabric/clock.h"

#include <cassert>
#include <chrono>

namespace weft {

TimeNs WallClock::now_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void ManualClock::advance_to(TimeNs t_ns) {
  assert(t_ns >= now_ns_ && "virtual time never runs backwards");
  if (t_ns > now_ns_) now_ns_ = t_ns;
}

TimeNs deadline_after(TimeNs now_ns, TimeNs delta_ns) {
  if (delta_ns <= 0) return now_ns;
  if (now_ns > kNeverNs - delta_ns) return kNeverNs;
  return now_ns + delta_ns;
}

}  // namespace weft
