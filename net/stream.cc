#include "net/stream.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_format.h"
#include "fabric/errors.h"

namespace weft::net {
namespace {

#ifdef POLLRDHUP
constexpr short kPeerClosedEvents = POLLRDHUP | POLLHUP | POLLERR;
#else
constexpr short kPeerClosedEvents = POLLHUP | POLLERR;
#endif

bool connection_gone(int e) {
  return e == EPIPE || e == ECONNRESET || e == ECONNREFUSED ||
         e == ECONNABORTED || e == ENETUNREACH || e == EHOSTUNREACH ||
         e == ETIMEDOUT || e == ENOTCONN;
}

bool out_of_resources(int e) {
  return e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM;
}

// "<what> failed: <errno>", Unavailable when the connection is gone,
// ResourceExhausted (with what to raise) when the system ran out.
absl::Status errno_error(std::string_view what, int e) {
  if (out_of_resources(e)) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%s failed: %s; raise the open file limit (ulimit -n) or free "
        "memory",
        what, errno_text(e)));
  }
  return absl::Status(connection_gone(e) ? absl::StatusCode::kUnavailable
                                         : absl::StatusCode::kInternal,
                      absl::StrFormat("%s failed: %s", what, errno_text(e)));
}

// O_NONBLOCK and FD_CLOEXEC where the system cannot set them as the
// descriptor is made.
[[maybe_unused]] absl::Status set_descriptor_flags(int fd) {
  const int flags = fcntl(fd, F_GETFL, 0);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0 ||
      fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
    return errno_error("making a socket non-blocking and close-on-exec", errno);
  }
  return absl::OkStatus();
}

// A non-blocking, close-on-exec TCP socket for `address`'s family (on
// Linux both flags come with the descriptor, so a process forked by
// another thread meanwhile cannot inherit it).
absl::StatusOr<Socket> new_socket(const SocketAddress& address) {
#ifdef __linux__
  Socket s(::socket(address.family(),
                    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
#else
  Socket s(::socket(address.family(), SOCK_STREAM, 0));
#endif
  if (!s.valid()) {
    const int e = errno;
    if (e == EAFNOSUPPORT) {
      return absl::UnavailableError(absl::StrFormat(
          "cannot make a socket for %s: %s; this machine does not speak "
          "that address family: use an address of the other one",
          address.to_string(), errno_text(e)));
    }
    return errno_error(
        absl::StrFormat("creating a TCP socket for %s", address.to_string()),
        e);
  }
#ifndef __linux__
  if (absl::Status st = set_descriptor_flags(s.fd()); !st.ok()) return st;
#endif
  return s;
}

struct IntOption {
  int level;
  int name;
  const char* text;  // the option's name, for messages
  int value;
};

absl::Status set_options(int fd, std::span<const IntOption> options,
                         const SocketAddress& address) {
  for (const IntOption& o : options) {
    if (setsockopt(fd, o.level, o.name, &o.value, sizeof(o.value)) == 0) {
      continue;
    }
    const int e = errno;
    const bool buffer = o.name == SO_SNDBUF || o.name == SO_RCVBUF;
    absl::Status why =
        errno_error(absl::StrFormat("setting %s to %d on the socket for %s",
                                    o.text, o.value, address.to_string()),
                    e);
    return absl::Status(
        why.code(),
        absl::StrFormat("%s; %s", why.message(),
                        buffer ? "choose a smaller socket buffer size, or 0 "
                                 "for the kernel's auto-tuning"
                               : "the socket is not used"));
  }
  return absl::OkStatus();
}

std::string bind_advice(int e) {
  switch (e) {
    case EADDRINUSE:
      return "another socket holds the port: configure a free port (or port "
             "0 to let the system choose), or stop the process that holds it";
    case EACCES:
      return "ports below 1024 need privileges: configure a port above 1023";
    default:
      return "use an address of one of this machine's interfaces (e.g. "
             "127.0.0.1)";
  }
}

// A socket bound to `address` (IPv6 only for an IPv6 address, so "[::1]"
// is not also 127.0.0.1; SO_REUSEADDR when `reuse_address`). Errors read
// "cannot <doing>: <errno>; <what to do>".
absl::StatusOr<Socket> bound_socket(const SocketAddress& address,
                                    bool reuse_address,
                                    std::string_view doing) {
  absl::StatusOr<Socket> s = new_socket(address);
  if (!s.ok()) return s.status();
  std::vector<IntOption> options;
  if (reuse_address) {
    options.push_back({SOL_SOCKET, SO_REUSEADDR, "SO_REUSEADDR", 1});
  }
  if (address.family() == AF_INET6) {
    options.push_back({IPPROTO_IPV6, IPV6_V6ONLY, "IPV6_V6ONLY", 1});
  }
  if (absl::Status st = set_options(s->fd(), options, address); !st.ok()) {
    return st;
  }
  if (::bind(s->fd(), address.get(), address.length()) != 0) {
    const int e = errno;
    return absl::UnavailableError(absl::StrFormat(
        "cannot %s: %s; %s", doing, errno_text(e), bind_advice(e)));
  }
  return s;
}

// Milliseconds poll(2) may wait: up to the deadline, rounded up.
int poll_timeout_ms(TimeNs deadline_ns, const Clock& clock) {
  const TimeNs left_ns = deadline_ns - clock.now_ns();
  if (left_ns <= 0) return 0;
  const TimeNs ms = left_ns / kNsPerMs + (left_ns % kNsPerMs != 0 ? 1 : 0);
  return static_cast<int>(std::min<TimeNs>(ms, INT_MAX));
}

// Waits for `events` on `fd` until `deadline_ns`; DeadlineExceeded says
// why(), computed only then.
template <typename Why>
absl::Status wait_for(int fd, short events, TimeNs deadline_ns,
                      const Clock& clock, Why why) {
  pollfd p{fd, events, 0};
  absl::Status st = poll_until({&p, 1}, deadline_ns, clock);
  if (absl::IsDeadlineExceeded(st)) return absl::DeadlineExceededError(why());
  return st;
}

// Moves `total` bytes by calls to `step(done)` (bytes moved now, 0 when
// the socket must first be ready for `events`), waiting between them until
// `deadline_ns`. DeadlineExceeded says how far it got: "the peer <verb> 5
// of 9 bytes before the deadline".
template <typename Step>
absl::Status move_all(int fd, size_t total, short events, const char* verb,
                      TimeNs deadline_ns, const Clock& clock, Step step) {
  size_t done = 0;
  while (done < total) {
    absl::StatusOr<size_t> n = step(done);
    if (!n.ok()) return n.status();
    done += *n;
    if (*n > 0 || done == total) continue;
    if (absl::Status st = wait_for(fd, events, deadline_ns, clock,
                                   [&] {
                                     return absl::StrFormat(
                                         "the peer %s %u of %u bytes before "
                                         "the deadline",
                                         verb, done, total);
                                   });
        !st.ok()) {
      return st;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status tune_connection(int fd, const SocketAddress& peer,
                             int buffer_bytes) {
  std::vector<IntOption> options = {
      {IPPROTO_TCP, TCP_NODELAY, "TCP_NODELAY", 1}};
#ifdef SO_NOSIGPIPE
  options.push_back({SOL_SOCKET, SO_NOSIGPIPE, "SO_NOSIGPIPE", 1});
#endif
  if (buffer_bytes > 0) {
    options.push_back({SOL_SOCKET, SO_SNDBUF, "SO_SNDBUF", buffer_bytes});
    options.push_back({SOL_SOCKET, SO_RCVBUF, "SO_RCVBUF", buffer_bytes});
  }
  return set_options(fd, options, peer);
}

absl::StatusOr<Socket> listen_on(const SocketAddress& address, int backlog) {
  absl::StatusOr<Socket> s =
      bound_socket(address, /*reuse_address=*/true,
                   absl::StrFormat("listen on %s", address.to_string()));
  if (!s.ok()) return s.status();
  if (::listen(s->fd(), backlog) != 0) {
    return errno_error(absl::StrFormat("listening on %s", address.to_string()),
                       errno);
  }
  return s;
}

absl::StatusOr<std::vector<uint16_t>> free_ports(const SocketAddress& ip,
                                                 size_t count) {
  const SocketAddress any_port = SocketAddress::from_gid(ip.gid(), 0);
  const std::string doing =
      absl::StrFormat("bind a TCP port on %s", any_port.ip());
  std::vector<Socket> held;
  std::vector<uint16_t> ports;
  for (size_t i = 0; i < count; ++i) {
    absl::StatusOr<Socket> s =
        bound_socket(any_port, /*reuse_address=*/false, doing);
    absl::StatusOr<SocketAddress> bound =
        s.ok() ? SocketAddress::bound_to(s->fd()) : s.status();
    if (!bound.ok()) {
      return absl::FailedPreconditionError(bound.status().message());
    }
    ports.push_back(bound->port());
    held.push_back(*std::move(s));
  }
  return ports;
}

absl::StatusOr<Accepted> accept_one(int listen_fd) {
  for (;;) {
#ifdef __linux__
    Socket s(
        ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
#else
    Socket s(::accept(listen_fd, nullptr, nullptr));
#endif
    if (!s.valid()) {
      const int e = errno;
      if (e == EINTR) continue;
      // Nothing waiting, or a connection that went away before we took it.
      if (e == EAGAIN || e == EWOULDBLOCK || e == ECONNABORTED) {
        return Accepted{};
      }
      return errno_error("accept", e);
    }
#ifndef __linux__
    if (absl::Status st = set_descriptor_flags(s.fd()); !st.ok()) return st;
#endif
    absl::StatusOr<SocketAddress> peer = SocketAddress::peer_of(s.fd());
    // A peer already gone has no name; it shows as "(no address)".
    return Accepted{std::move(s), peer.ok() ? *peer : SocketAddress()};
  }
}

absl::StatusOr<Accepted> accept_until(int listen_fd, TimeNs deadline_ns,
                                      const Clock& clock) {
  for (;;) {
    absl::StatusOr<Accepted> a = accept_one(listen_fd);
    if (!a.ok() || a->socket.valid()) return a;
    if (absl::Status st = wait_for(
            listen_fd, POLLIN, deadline_ns, clock,
            [] { return "no connection arrived before the deadline"; });
        !st.ok()) {
      return st;
    }
  }
}

absl::StatusOr<Socket> start_connect(const SocketAddress& address,
                                     int buffer_bytes) {
  absl::StatusOr<Socket> s = new_socket(address);
  if (!s.ok()) return s.status();
  if (absl::Status st = tune_connection(s->fd(), address, buffer_bytes);
      !st.ok()) {
    return st;
  }
  // EINTR: the connect goes on without us, as EINPROGRESS says.
  if (::connect(s->fd(), address.get(), address.length()) != 0 &&
      errno != EINPROGRESS && errno != EINTR) {
    return errno_error(absl::StrFormat("connecting to %s", address.to_string()),
                       errno);
  }
  return s;
}

int connect_error(int fd) {
  int err = 0;
  socklen_t len = sizeof(err);
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
  return err;
}

absl::StatusOr<Socket> connect_once(const SocketAddress& address,
                                    int buffer_bytes, TimeNs deadline_ns,
                                    const Clock& clock) {
  absl::StatusOr<Socket> s = start_connect(address, buffer_bytes);
  if (!s.ok()) return s.status();
  const std::string what =
      absl::StrFormat("connecting to %s", address.to_string());
  if (absl::Status st = wait_for(
          s->fd(), POLLOUT, deadline_ns, clock,
          [&] {
            return absl::StrFormat("%s: no answer before the deadline", what);
          });
      !st.ok()) {
    return st;
  }
  if (const int e = connect_error(s->fd()); e != 0) return errno_error(what, e);
  // Linux's simultaneous open can join a connect to an unused local port
  // with itself.
  absl::StatusOr<SocketAddress> mine = SocketAddress::bound_to(s->fd());
  absl::StatusOr<SocketAddress> theirs = SocketAddress::peer_of(s->fd());
  if (!theirs.ok()) return errno_error(what, ENOTCONN);
  if (mine.ok() && *mine == *theirs) {
    return absl::UnavailableError(
        absl::StrFormat("%s reached ourselves: nothing listens there", what));
  }
  return s;
}

int64_t write_some(int fd, std::span<const iovec> parts) {
  msghdr msg{};
  msg.msg_iov = const_cast<iovec*>(parts.data());
  msg.msg_iovlen = static_cast<decltype(msg.msg_iovlen)>(parts.size());
#ifdef __linux__
  constexpr int kFlags = MSG_NOSIGNAL;
#else
  constexpr int kFlags = 0;  // SO_NOSIGPIPE is set on the socket
#endif
  for (;;) {
    const ssize_t n = ::sendmsg(fd, &msg, kFlags);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    return -errno;
  }
}

int64_t read_some(int fd, std::span<std::byte> into) {
  const iovec part{into.data(), into.size()};
  return read_parts(fd, {&part, 1});
}

int64_t read_parts(int fd, std::span<const iovec> parts) {
  for (;;) {
    const ssize_t n = ::readv(fd, parts.data(), static_cast<int>(parts.size()));
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return -EAGAIN;
    return -errno;
  }
}

absl::Status poll_until(std::span<pollfd> fds, TimeNs deadline_ns,
                        const Clock& clock) {
  for (;;) {
    for (pollfd& p : fds) p.revents = 0;
    const int n = ::poll(fds.data(), static_cast<nfds_t>(fds.size()),
                         poll_timeout_ms(deadline_ns, clock));
    if (n > 0) return absl::OkStatus();
    if (n < 0) {
      const int e = errno;
      if (e == EINTR) continue;
      return errno_error("poll", e);
    }
    if (clock.now_ns() >= deadline_ns) {
      return absl::DeadlineExceededError("timed out");
    }
  }
}

absl::Status send_all(int fd, std::span<const std::byte> bytes,
                      TimeNs deadline_ns, const Clock& clock) {
  return move_all(fd, bytes.size(), POLLOUT, "took", deadline_ns, clock,
                  [&](size_t done) -> absl::StatusOr<size_t> {
                    const iovec part{
                        const_cast<std::byte*>(bytes.data()) + done,
                        bytes.size() - done};
                    const int64_t n = write_some(fd, {&part, 1});
                    if (n < 0) return errno_error("send", static_cast<int>(-n));
                    return static_cast<size_t>(n);
                  });
}

absl::StatusOr<size_t> receive_some(int fd, std::span<std::byte> into) {
  const int64_t n = read_some(fd, into);
  if (n > 0) return static_cast<size_t>(n);
  if (n == 0 && !into.empty()) {
    return absl::UnavailableError("the peer closed the connection");
  }
  if (n == 0 || n == -EAGAIN) return 0;
  return errno_error("recv", static_cast<int>(-n));
}

absl::Status receive_all(int fd, std::span<std::byte> into, TimeNs deadline_ns,
                         const Clock& clock) {
  return move_all(
      fd, into.size(), POLLIN, "sent", deadline_ns, clock,
      [&](size_t done) -> absl::StatusOr<size_t> {
        absl::StatusOr<size_t> n = receive_some(fd, into.subspan(done));
        if (n.ok()) return n;
        return absl::Status(
            n.status().code(),
            absl::StrFormat("%s after %u of %u bytes", n.status().message(),
                            done, into.size()));
      });
}

bool peer_closed(int fd) {
  pollfd p{fd, static_cast<short>(POLLIN | kPeerClosedEvents), 0};
  int n;
  do {
    n = ::poll(&p, 1, 0);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  if (p.revents & (kPeerClosedEvents | POLLNVAL)) return true;
  std::byte byte;
  for (;;) {
    const ssize_t got = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (got > 0) return false;
    if (got == 0) return true;
    if (errno == EINTR) continue;
    return errno != EAGAIN && errno != EWOULDBLOCK;
  }
}

}  // namespace weft::net
