// Internal to the TCP bootstrap: non-blocking IPv4 sockets where every wait
// has a deadline, and reading whole wire messages off them. Errors carry the
// captured errno's text but no rank: the bootstrap adds where.
#ifndef WEFT_RENDEZVOUS_INTERNAL_TCP_STREAM_H_
#define WEFT_RENDEZVOUS_INTERNAL_TCP_STREAM_H_

#include <netinet/in.h>
#include <poll.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "fabric/errors.h"
#include "net/socket.h"
#include "rendezvous/config.h"
#include "rendezvous/internal/wire.h"

namespace weft::rendezvous::internal {

// Shared with the TCP fabric (net/socket.h, fabric/errors.h).
using ::weft::errno_text;
using ::weft::net::Socket;

// "192.168.1.10:5000".
std::string address_text(const sockaddr_in& address);

// `host` as an IPv4 address: dotted quad, "localhost" (127.0.0.1 without
// asking a resolver), or a name looked up with getaddrinfo (bounded by the
// system resolver's own timeouts). Unavailable when the name does not
// resolve to an IPv4 address.
absl::StatusOr<sockaddr_in> resolve_ipv4(const HostPort& host_port);

// Waits until one of `fds` has an event or `deadline_ns` (on `clock`) has
// passed; retries on EINTR. OK when some revents is set, DeadlineExceeded
// when none is. A deadline already passed polls once without blocking.
absl::Status poll_until(std::span<pollfd> fds, TimeNs deadline_ns,
                        const Clock& clock);

// A listening, non-blocking socket bound to `address` (port 0: any free
// port) with room for `backlog` connections waiting to be accepted.
absl::StatusOr<net::Socket> listen_on(const sockaddr_in& address, int backlog);

// The address a socket is bound to (to learn the port the system chose).
absl::StatusOr<sockaddr_in> local_address(int fd);

struct Accepted {
  net::Socket socket;  // invalid when no connection was waiting
  sockaddr_in peer{};
};
// Accepts one waiting connection without blocking.
absl::StatusOr<Accepted> accept_one(int listen_fd);

// One attempt to connect, bounded by `deadline_ns`. Unavailable with the
// errno's text when refused or unreachable, DeadlineExceeded when the
// handshake did not finish in time.
absl::StatusOr<net::Socket> connect_once(const sockaddr_in& address,
                                         TimeNs deadline_ns,
                                         const Clock& clock);

// Writes all of `bytes`, waiting for room until `deadline_ns`. Never raises
// SIGPIPE: a closed peer is Unavailable.
absl::Status send_all(int fd, std::span<const uint8_t> bytes,
                      TimeNs deadline_ns, const Clock& clock);

// True when the peer has closed or reset the connection; reads nothing (data
// waiting to be read means the peer was alive to send it). Non-blocking.
bool peer_closed(int fd);

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

#endif  // WEFT_RENDEZVOUS_INTERNAL_TCP_STREAM_H_
