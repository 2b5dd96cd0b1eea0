// RankAddress: what one rank publishes through the bootstrap so its peers
// can connect: its rank, the group size, a fingerprint of the GroupOptions
// every rank must share, and one endpoint destination per (peer, cable).
// Encoded little-endian, versioned and bounded.
#ifndef WEFT_COLLECTIVES_BOOTSTRAP_ADDRESS_H_
#define WEFT_COLLECTIVES_BOOTSTRAP_ADDRESS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "collectives/group_options.h"
#include "fabric/destination.h"

namespace weft::collectives::internal {

struct LaneAddress {
  uint32_t peer = 0;
  uint32_t cable = 0;
  Destination destination;
};

struct RankAddress {
  uint32_t rank = 0;
  uint32_t size = 0;
  uint64_t options_fingerprint = 0;
  std::vector<LaneAddress> lanes;
};

std::vector<uint8_t> encode_address(const RankAddress& address);
// InvalidArgument when `bytes` is not an encoded RankAddress.
absl::StatusOr<RankAddress> decode_address(std::span<const uint8_t> bytes);

// Hash of the options that change what goes on the wire (not timeout_ns).
uint64_t options_fingerprint(const GroupOptions& options);

}  // namespace weft::collectives::internal

#endif  // WEFT_COLLECTIVES_BOOTSTRAP_ADDRESS_H_
