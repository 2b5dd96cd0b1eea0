// Bootstrap: the side channel through which the ranks of a group exchange
// what they need to connect (endpoint destinations) before any fabric
// traffic flows. In-process for the simulator; TCP (rank 0 coordinates) on
// hardware.
#ifndef WEFT_COLLECTIVES_BOOTSTRAP_H_
#define WEFT_COLLECTIVES_BOOTSTRAP_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/clock.h"

namespace weft {

class Bootstrap {
 public:
  // Largest blob one rank may contribute to an exchange.
  static constexpr size_t kMaxBlobBytes = 1 << 20;

  virtual ~Bootstrap() = default;
  virtual uint32_t rank() const = 0;
  virtual uint32_t size() const = 0;

  // Every rank contributes `mine`; each gets all ranks' blobs, indexed by
  // rank. Blocks until all have contributed or `timeout_ns` has passed
  // (DeadlineExceeded naming the ranks that did not answer).
  virtual absl::StatusOr<std::vector<std::vector<uint8_t>>> all_gather(
      std::span<const uint8_t> mine, TimeNs timeout_ns) = 0;

  // OK while every peer's side channel is open; Unavailable naming the rank
  // whose channel closed. Non-blocking: the liveness signal.
  virtual absl::Status check_alive() = 0;
};

}  // namespace weft

#endif  // WEFT_COLLECTIVES_BOOTSTRAP_H_
