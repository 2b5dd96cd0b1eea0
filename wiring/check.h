// Check: a declared device file (JACCL's device JSON) against the wiring
// the ranks found (discovery.h with DiscoveryOptions::declared set), one
// finding a line, and the corrected file. The file's own shape (a device
// named one way only, different cable counts each way, an isolated rank)
// is judged by the one check of a device file, fabric/topology_check.h,
// in its reporting mode; this adds what only probing can tell:
//
//   rank 0's rdma_en3 reaches rank 2, not rank 1 as devices.json says ...
//   rank 1 -> rank 3 is declared but no cable answers ...
//   rank 0's rdma_en4 reaches rank 1's rdma_en5, but devices.json pairs it
//     with rank 1's rdma_en6 ...
//   rank 0's rdma_en2 and rank 1's rdma_en2 are cabled but frames cross
//     from rank 0 to rank 1 only ...
//   rank 2 has no device rdma_en9 ...
//   rank 0's rdma_en6 reaches rank 3's rdma_en2, which devices.json does
//     not list ...
#ifndef WEFT_WIRING_CHECK_H_
#define WEFT_WIRING_CHECK_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "fabric/topology.h"
#include "wiring/wiring.h"

namespace weft::wiring {

enum class Problem : uint8_t {
  kShape,         // the file's shape (fabric/topology_check.h's finding)
  kNoSuchDevice,  // the file names a device its rank does not have
  kCrossed,       // the device's cable reaches another rank
  kWrongEnd,      // it reaches the peer, at another device than the file's
  kNoCable,       // no cable answers the device
  kOneWay,        // the declared cable carries frames one way only
  kUndeclared,    // a cable the file does not list
};

struct Finding {
  Problem problem = Problem::kShape;
  // The entry concerned: rank `rank`'s `device` toward rank `peer` (for
  // kShape, topology_check's cell; for kUndeclared, the cable's lower end
  // and its other rank).
  uint32_t rank = 0;
  uint32_t peer = 0;
  std::string device;
  // One line, no trailing newline.
  std::string text;
};

struct CheckReport {
  std::vector<Finding> findings;
  // The file the wiring calls for (Wiring::topology()).
  Topology corrected;

  bool ok() const { return findings.empty(); }
};

// The findings of `declared` against `wiring` (`source` names the file in
// each line: its path, or the variable and its path). REQUIRES:
// declared.ranks() == wiring.ranks(); when the discovery was not complete
// (Discovery::complete false) the wiring holds the declared cables only,
// and a cable the file does not list is not looked for.
CheckReport check_wiring(const Topology& declared, const Wiring& wiring,
                         std::string_view source);

// OK for a report without findings; otherwise FailedPrecondition whose
// message is the first finding, "(and N more)", and what to do.
absl::Status report_status(const CheckReport& report, std::string_view source);

}  // namespace weft::wiring

#endif  // WEFT_WIRING_CHECK_H_
