// Internal to weft::tcp: how TcpFabric::idle() waits for its sockets.
// Two implementations behind one interface: poll(2), the portable baseline
// every POSIX system has (Linux, macOS), and epoll(7), Linux only, which
// keeps the interest set in the kernel between waits instead of passing it
// in on every call. TcpOptions::poller chooses; the default is the one that
// measured faster on Linux (docs/tcp.md, "Progress").
#ifndef WEFT_TCP_INTERNAL_POLLER_H_
#define WEFT_TCP_INTERNAL_POLLER_H_

#include <poll.h>

#include <memory>
#include <span>

#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "tcp/tcp_fabric.h"

namespace weft::tcp::internal {

class Poller {
 public:
  // kDefault resolves to the platform's default; kEpoll off Linux is
  // Unimplemented, saying to use poll.
  static absl::StatusOr<std::unique_ptr<Poller>> create(PollerKind kind);
  virtual ~Poller() = default;

  // Which implementation this is (never kDefault).
  virtual PollerKind kind() const = 0;
  // For the next wait(): wait for `events` (POLLIN, POLLOUT) on `fd`.
  // `lasting`: the socket stays open until forget(fd), so a poller that
  // keeps interest between waits may keep it (an endpoint's or a
  // listener's socket); otherwise the interest ends with this wait (a
  // connection still in its hello, which may close without notice).
  virtual void want(int fd, short events, bool lasting) = 0;
  // `fd` is about to be closed: drop any interest kept in it.
  virtual void forget(int fd) = 0;
  // Blocks until a socket wanted since the last wait is ready or
  // `timeout_ns` passed (0: returns at once); the wanted fds that are
  // ready (readable, writable, closed or failed).
  virtual std::span<const int> wait(TimeNs timeout_ns) = 0;
};

}  // namespace weft::tcp::internal

#endif  // WEFT_TCP_INTERNAL_POLLER_H_
