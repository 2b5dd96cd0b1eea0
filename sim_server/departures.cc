#include "sim_server/departures.h"

#include <algorithm>

namespace weft::sim_server {

namespace {
bool earlier(const Departure& a, const Departure& b) {
  return a.left_at_ns != b.left_at_ns ? a.left_at_ns < b.left_at_ns
                                      : a.rank < b.rank;
}
}  // namespace

void DepartureLog::record(uint32_t rank, TimeNs left_at_ns) {
  if (std::any_of(log_.begin(), log_.end(),
                  [rank](const Departure& d) { return d.rank == rank; })) {
    return;
  }
  const Departure d{rank, left_at_ns};
  log_.insert(std::upper_bound(log_.begin(), log_.end(), d, earlier), d);
}

std::span<const Departure> DepartureLog::visible_at(TimeNs now_ns) const {
  // Sorted by time: the visible ones are a prefix.
  const auto end = std::partition_point(
      log_.begin(), log_.end(),
      [now_ns](const Departure& d) { return d.left_at_ns < now_ns; });
  return std::span<const Departure>(log_.data(),
                                    static_cast<size_t>(end - log_.begin()));
}

}  // namespace weft::sim_server
