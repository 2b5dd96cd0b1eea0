// Internal to weft::tcp: the few socket operations the TCP fabric needs,
// over IPv4 and IPv6 alike, every one non-blocking. Compiles on Linux and
// macOS (macOS has no MSG_NOSIGNAL or SOCK_NONBLOCK: the file guards them).
#ifndef WEFT_NET_SOCKET_ADDRESS_H_
#define WEFT_NET_SOCKET_ADDRESS_H_

#include <sys/socket.h>
#include <sys/uio.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/errors.h"
#include "net/socket.h"

namespace weft::net {

// An IPv4 or IPv6 address and port, parsed from weft's text form:
// "127.0.0.1:5000" or "[::1]:5000" (numeric only: the fabric never asks a
// resolver, so a listen address is exactly what was configured).
class SocketAddress {
 public:
  SocketAddress() = default;
  // InvalidArgument saying what form is expected.
  static absl::StatusOr<SocketAddress> parse(std::string_view text);
  // From a Destination's GID (an IPv4-mapped GID is IPv4) and port.
  static SocketAddress from_gid(const std::array<uint8_t, 16>& gid,
                                uint16_t port);
  static absl::StatusOr<SocketAddress> bound_to(int fd);
  static absl::StatusOr<SocketAddress> peer_of(int fd);

  int family() const { return storage_.ss_family; }
  uint16_t port() const;
  // IPv4 as ::ffff:a.b.c.d, IPv6 as is: what a Destination carries.
  std::array<uint8_t, 16> gid() const;
  // "127.0.0.1:5000", "[::1]:5000".
  std::string to_string() const;

  const sockaddr* get() const {
    return reinterpret_cast<const sockaddr*>(&storage_);
  }
  socklen_t length() const { return length_; }

 private:
  using NameCall = int (*)(int, sockaddr*, socklen_t*);
  // getsockname or getpeername into a new address.
  static absl::StatusOr<SocketAddress> named(int fd, NameCall call,
                                             const char* what);

  sockaddr_storage storage_{};
  socklen_t length_ = 0;
};

// Socket options of every fabric connection: TCP_NODELAY, no SIGPIPE
// (macOS: SO_NOSIGPIPE), and when `buffer_bytes` > 0 that many bytes of
// send and receive buffer (0 leaves the kernel's auto-tuning).
absl::Status tune_connection(int fd, int buffer_bytes);

// A non-blocking listening socket bound to `address` (SO_REUSEADDR, so a
// restarted rank can bind while old connections linger; a port another
// socket listens on is still refused). Errors name the address.
absl::StatusOr<Socket> listen_on(const SocketAddress& address, int backlog);

// Starts a non-blocking connect; the socket becomes writable when it ends
// (connect_error() tells how). Errors name the address.
absl::StatusOr<Socket> start_connect(const SocketAddress& address,
                                     int buffer_bytes);
// 0 when the connect finished, else its errno (SO_ERROR).
int connect_error(int fd);

// Accepts one waiting connection, non-blocking and close-on-exec; an
// invalid socket when none waits.
absl::StatusOr<Socket> accept_one(int listen_fd);

// sendmsg without SIGPIPE. Bytes written, 0 when the socket is full;
// negative: -errno.
int64_t write_some(int fd, std::span<const iovec> parts);
// recv. Bytes read; 0: the peer closed; -EAGAIN when nothing is waiting;
// other negative values: -errno.
int64_t read_some(int fd, std::span<std::byte> into);
// readv: as read_some, into several places in turn.
int64_t read_parts(int fd, std::span<const iovec> parts);

}  // namespace weft::net

#endif  // WEFT_NET_SOCKET_ADDRESS_H_
