// DepartureLog: the ranks that have left a simulation server's world (their
// process exited, crashed or was killed), each stamped with the virtual
// time at which it left, and the rule that makes what a rank learns of them
// deterministic: a departure stamped t0 is visible to a query at virtual
// time t only when t0 < t. A departure is recorded while the world's clock
// stands at its stamp (fabric_server.h, FabricServer::leave says why it
// does), so every departure visible at t is on record before the clock
// reaches t, however the host schedules the processes; one at the same
// instant as the query is not, so it must not race the query either.
//
// The server keeps one log and sends each rank, with every answer to a
// wait, the departures that became visible at the answer's time (Step's
// `departures`); the rank's provider keeps its own log of them and answers
// weft_sim_verbs_departed() from it.
#ifndef WEFT_SIM_SERVER_DEPARTURES_H_
#define WEFT_SIM_SERVER_DEPARTURES_H_

#include <cstdint>
#include <span>
#include <vector>

#include "fabric/clock.h"

namespace weft::sim_server {

struct Departure {
  uint32_t rank = 0;
  TimeNs left_at_ns = 0;
  bool operator==(const Departure&) const = default;
};

class DepartureLog {
 public:
  // Records that `rank` left at `left_at_ns`; ignored when the rank's
  // departure is on record already (a rank leaves once). Kept in order of
  // (time, rank), so departures at one instant read the same whichever was
  // recorded first.
  void record(uint32_t rank, TimeNs left_at_ns);
  // The departures a query at virtual time `now_ns` sees: those stamped
  // strictly before it, in order of (time, rank).
  std::span<const Departure> visible_at(TimeNs now_ns) const;
  // Every departure on record.
  std::span<const Departure> all() const { return log_; }

 private:
  std::vector<Departure> log_;
};

}  // namespace weft::sim_server

#endif  // WEFT_SIM_SERVER_DEPARTURES_H_
