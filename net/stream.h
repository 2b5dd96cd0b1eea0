// TCP streams as every part of weft uses them (the TCP fabric, the side
// channel, the benchmarks), with one behaviour: IPv4 and IPv6 alike; every
// socket non-blocking and close-on-exec; every connection TCP_NODELAY and
// never raising SIGPIPE (MSG_NOSIGNAL on Linux, SO_NOSIGPIPE on macOS);
// every call retried on EINTR; every socket option checked, a failure an
// error naming the option and the address; and every wait bounded by a
// deadline on a weft Clock. Compiles on Linux and macOS.
//
// Errors name the address and what to do, but not the rank: the caller adds
// where (fabric/errors.h). A connection that is gone (reset, refused,
// unreachable, closed) is Unavailable; a deadline that passed is
// DeadlineExceeded.
#ifndef WEFT_NET_STREAM_H_
#define WEFT_NET_STREAM_H_

#include <poll.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "net/address.h"
#include "net/socket.h"

namespace weft::net {

// Options of every connection: TCP_NODELAY, no SIGPIPE (macOS:
// SO_NOSIGPIPE), and when `buffer_bytes` > 0 that many bytes of send and
// receive buffer (0 leaves the kernel's auto-tuning). `peer` names the
// connection in errors.
absl::Status tune_connection(int fd, const SocketAddress& peer,
                             int buffer_bytes);

// A listening socket bound to `address` (port 0: one the system chooses)
// with room for `backlog` connections waiting to be accepted.
// SO_REUSEADDR, so a restarted process can bind while its old connections
// linger (a port another socket listens on is still refused); an IPv6
// address is IPv6 only, so "[::1]" is not also 127.0.0.1. Errors name the
// address and what to do (EADDRINUSE: choose a free port or stop the
// process that holds it).
absl::StatusOr<Socket> listen_on(const SocketAddress& address, int backlog);

// `count` distinct ports free on `ip`'s address now (its port is ignored):
// each bound with port 0 and all released at the end, so they differ.
// Another program may take one before it is used. FailedPrecondition when
// the address cannot be bound (not this machine's).
absl::StatusOr<std::vector<uint16_t>> free_ports(const SocketAddress& ip,
                                                 size_t count);

struct Accepted {
  Socket socket;  // invalid when no connection was waiting
  SocketAddress peer;
};
// Accepts one waiting connection without blocking; not yet tuned
// (tune_connection, which may fail for a peer already gone). A connection
// that went away before it was taken counts as none waiting.
absl::StatusOr<Accepted> accept_one(int listen_fd);

// accept_one, waiting for a connection until `deadline_ns`
// (DeadlineExceeded when none came).
absl::StatusOr<Accepted> accept_until(int listen_fd, TimeNs deadline_ns,
                                      const Clock& clock);

// Starts a connect without blocking, the connection tuned first
// (buffer sizes must be set before the handshake, which agrees the window
// scale). The socket becomes writable when the connect ends;
// connect_error() then tells how.
absl::StatusOr<Socket> start_connect(const SocketAddress& address,
                                     int buffer_bytes);
// 0 when the connect finished, else its errno (SO_ERROR).
int connect_error(int fd);
// One connect, bounded by `deadline_ns`: Unavailable when refused or
// unreachable (or when, with nothing listening, the system joined the
// socket to itself), DeadlineExceeded when the handshake did not finish.
absl::StatusOr<Socket> connect_once(const SocketAddress& address,
                                    int buffer_bytes, TimeNs deadline_ns,
                                    const Clock& clock);

// One sendmsg without SIGPIPE: bytes written, 0 when the socket is full;
// negative: -errno.
int64_t write_some(int fd, std::span<const iovec> parts);
// One recv: bytes read; 0: the peer closed; -EAGAIN when nothing is
// waiting; other negative values: -errno.
int64_t read_some(int fd, std::span<std::byte> into);
// readv: as read_some, into several places in turn.
int64_t read_parts(int fd, std::span<const iovec> parts);

// Waits until one of `fds` has an event or `deadline_ns` (on `clock`) has
// passed. OK when some revents is set, DeadlineExceeded when none is. A
// deadline already passed polls once without waiting; empty `fds` is a
// pause until the deadline.
absl::Status poll_until(std::span<pollfd> fds, TimeNs deadline_ns,
                        const Clock& clock);

// Writes all of `bytes`, waiting for room until `deadline_ns`.
absl::Status send_all(int fd, std::span<const std::byte> bytes,
                      TimeNs deadline_ns, const Clock& clock);
inline absl::Status send_all(int fd, std::span<const uint8_t> bytes,
                             TimeNs deadline_ns, const Clock& clock) {
  return send_all(fd, std::as_bytes(bytes), deadline_ns, clock);
}
// What has arrived, up to `into.size()` bytes, without waiting: how many
// (0: none yet). Unavailable when the peer closed or reset the connection.
absl::StatusOr<size_t> receive_some(int fd, std::span<std::byte> into);
// Reads exactly `into.size()` bytes, waiting for them until `deadline_ns`.
// Unavailable when the peer closes first.
absl::Status receive_all(int fd, std::span<std::byte> into, TimeNs deadline_ns,
                         const Clock& clock);

// True when the peer has closed or reset the connection; reads nothing
// (data waiting to be read means the peer was alive to send it). Does not
// wait.
bool peer_closed(int fd);

}  // namespace weft::net

#endif  // WEFT_NET_STREAM_H_
