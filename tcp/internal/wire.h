// Internal to weft::tcp: what goes over a fabric connection. Each side
// first sends a hello (who it is, whom it wants, the protocol version);
// then every message is a fixed header followed by its payload. All
// integers are big-endian.
#ifndef WEFT_TCP_INTERNAL_WIRE_H_
#define WEFT_TCP_INTERNAL_WIRE_H_

#include <array>
#include <cstdint>
#include <span>

#include "absl/status/statusor.h"

namespace weft::tcp::internal {

inline constexpr uint32_t kProtocolVersion = 1;

// The connector's hello names the listener's endpoint (to_qp, to_psn from
// its Destination); the listener's reply names the connector's.
struct Hello {
  static constexpr size_t kBytes = 32;
  uint32_t version = kProtocolVersion;
  uint32_t from_rank = 0;
  uint32_t to_rank = 0;
  uint32_t from_qp = 0;
  uint32_t to_qp = 0;
  uint32_t cable = 0;
  uint32_t to_psn = 0;

  std::array<uint8_t, kBytes> encode() const;
  // InvalidArgument: not weft's magic (a stranger, or garbage), or another
  // protocol version; the message says which.
  static absl::StatusOr<Hello> decode(std::span<const uint8_t> bytes);
};

// One SEND: `length` payload bytes follow.
struct MessageHeader {
  static constexpr size_t kBytes = 12;
  // Flags: the SEND carries an immediate (verbs' SEND_WITH_IMM).
  static constexpr uint32_t kHasImmediate = 1;
  // Flags: no payload; the sender destroyed its endpoint on purpose.
  static constexpr uint32_t kGoodbye = 2;

  uint32_t length = 0;
  uint32_t immediate = 0;
  bool has_immediate = true;
  bool goodbye = false;

  std::array<uint8_t, kBytes> encode() const;
  // InvalidArgument on flags this version does not know.
  static absl::StatusOr<MessageHeader> decode(std::span<const uint8_t> bytes);
};

}  // namespace weft::tcp::internal

#endif  // WEFT_TCP_INTERNAL_WIRE_H_
