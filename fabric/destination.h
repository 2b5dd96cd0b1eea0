// Destination: what a peer needs to connect its endpoint to ours (verbs'
// LID, queue pair number, packet sequence number and GID). Ranks exchange
// destinations through a bootstrap channel, on every fabric.
#ifndef WEFT_FABRIC_DESTINATION_H_
#define WEFT_FABRIC_DESTINATION_H_

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "absl/status/statusor.h"

namespace weft {

struct Destination {
  static constexpr size_t kWireBytes = 2 + 4 + 4 + 16;

  uint16_t lid = 0;
  uint32_t qp_num = 0;
  uint32_t psn = 0;
  std::array<uint8_t, 16> gid{};

  friend bool operator==(const Destination&, const Destination&) = default;

  // True when the GID is routable (not all zero in its interface id half),
  // so a connection needs a global route header.
  bool gid_is_global() const;
  // "::ffff:169.254.0.1"-style text for messages.
  std::string gid_string() const;
  std::string to_string() const;

  // Fixed-size big-endian encoding for bootstrap messages.
  std::array<uint8_t, kWireBytes> encode() const;
  static absl::StatusOr<Destination> decode(std::span<const uint8_t> bytes);
};

}  // namespace weft

#endif  // WEFT_FABRIC_DESTINATION_H_
