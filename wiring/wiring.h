// Wiring: which device of which rank is cabled to which device of which
// other rank, as probing found it (discovery.h), with the direction each
// cable carries frames in. One cable is one port at each end, so a device
// is at one end of at most one cable.
//
// Its renderings: topology() is JACCL's device matrix for the cables that
// work both ways (entry c of cell [i][j] and of cell [j][i] are the two
// ends of one cable, several cables of a pair in the order of the lower
// rank's device names, which both ends agree on); table() is the same
// matrix for a person, with every cable and every device no cable reaches
// listed below it.
#ifndef WEFT_WIRING_WIRING_H_
#define WEFT_WIRING_WIRING_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "fabric/topology.h"

namespace weft::wiring {

// One end of a cable: a device of a rank.
struct Port {
  uint32_t rank = 0;
  std::string device;

  friend bool operator==(const Port&, const Port&) = default;
};

// A cable and what crosses it: `a_to_b` when frames `a` sends reach `b`.
// In a Wiring, a.rank < b.rank and at least one direction works.
struct Cable {
  Port a;
  Port b;
  bool a_to_b = true;
  bool b_to_a = true;

  bool two_way() const { return a_to_b && b_to_a; }
  friend bool operator==(const Cable&, const Cable&) = default;
};

// Orders device names as a person reads them: runs of digits by value, so
// rdma_en2 comes before rdma_en10.
bool device_name_less(std::string_view x, std::string_view y);

class Wiring {
 public:
  // No ranks, no cables.
  Wiring() = default;
  // `devices[r]` lists rank r's devices (any order; kept in
  // device_name_less order). InvalidArgument for a cable naming a rank out
  // of range, a device its rank does not list, both ends on one rank, a
  // cable working in neither direction, or a device at the end of two
  // cables.
  static absl::StatusOr<Wiring> create(
      std::vector<std::vector<std::string>> devices, std::vector<Cable> cables);

  uint32_t ranks() const { return static_cast<uint32_t>(devices_.size()); }
  // Rank r's devices in device_name_less order.
  const std::vector<std::string>& devices(uint32_t rank) const {
    return devices_[rank];
  }
  // Every cable, ordered by (a.rank, b.rank, a.device by name).
  const std::vector<Cable>& cables() const { return cables_; }
  // The cable with `port` at one end; nullptr when no cable reaches it.
  const Cable* cable_at(const Port& port) const;

  // JACCL's device matrix of the cables that work both ways.
  Topology topology() const;
  // The matrix and the cable list for a person (ends with a newline).
  std::string table() const;

  friend bool operator==(const Wiring&, const Wiring&) = default;

 private:
  Wiring(std::vector<std::vector<std::string>> devices,
         std::vector<Cable> cables)
      : devices_(std::move(devices)), cables_(std::move(cables)) {}

  std::vector<std::vector<std::string>> devices_;
  std::vector<Cable> cables_;
};

}  // namespace weft::wiring

#endif  // WEFT_WIRING_WIRING_H_
