// Internal to the TCP bootstrap: reading whole wire messages off the
// non-blocking sockets of net/stream.h. Errors carry the captured errno's
// text but no rank: the bootstrap adds where.
#ifndef WEFT_RENDEZVOUS_INTERNAL_MESSAGE_READER_H_
#define WEFT_RENDEZVOUS_INTERNAL_MESSAGE_READER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "rendezvous/internal/wire.h"

namespace weft::rendezvous::internal {

// Assembles one wire message at a time from a non-blocking socket, never
// reading past its end, so the next message stays in the kernel's buffer.
class MessageReader {
 public:
  // Reads what has arrived. true once a whole message is in (see header()
  // and body(); reset() before the next one), false when more is needed.
  // Errors: Unavailable when the peer closed or reset the connection, the
  // socket's errno, or decode_header()'s error.
  absl::StatusOr<bool> pump(int fd);
  const WireHeader& header() const { return header_; }
  std::span<const uint8_t> body() const { return body_; }
  void reset();
  // True once the first four bytes of a message arrived and were weft's
  // magic: the peer is a weft process, not a stranger.
  bool spoke_weft() const { return spoke_weft_; }

 private:
  absl::StatusOr<bool> pump_header(int fd);
  absl::StatusOr<bool> pump_body(int fd);

  std::array<uint8_t, kWireHeaderBytes> header_bytes_{};
  size_t header_filled_ = 0;
  bool header_done_ = false;
  bool spoke_weft_ = false;
  WireHeader header_;
  std::vector<uint8_t> body_;
  size_t body_filled_ = 0;
};

// Pumps `reader` until a whole message is in or `deadline_ns` passes
// (DeadlineExceeded).
absl::Status receive_message(int fd, MessageReader& reader, TimeNs deadline_ns,
                             const Clock& clock);

}  // namespace weft::rendezvous::internal

#endif  // WEFT_RENDEZVOUS_INTERNAL_MESSAGE_READER_H_
