#include "rendezvous/internal/tcp_stream.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <string_view>
#include <utility>

#include "absl/strings/str_format.h"

namespace weft::rendezvous::internal {
namespace {

#ifdef MSG_NOSIGNAL
constexpr int kSendFlags = MSG_NOSIGNAL;
#else
constexpr int kSendFlags = 0;  // SO_NOSIGPIPE is set on the socket instead
#endif

#ifdef POLLRDHUP
constexpr short kPeerClosedEvents = POLLRDHUP | POLLHUP | POLLERR;
#else
constexpr short kPeerClosedEvents = POLLHUP | POLLERR;
#endif

absl::Status errno_error(std::string_view what, int error_number) {
  const bool gone = error_number == EPIPE || error_number == ECONNRESET ||
                    error_number == ECONNREFUSED ||
                    error_number == ECONNABORTED ||
                    error_number == ENETUNREACH ||
                    error_number == EHOSTUNREACH || error_number == ETIMEDOUT;
  return absl::Status(
      gone ? absl::StatusCode::kUnavailable : absl::StatusCode::kInternal,
      absl::StrFormat("%s failed: %s", what, errno_text(error_number)));
}

// Non-blocking, close-on-exec, no SIGPIPE, no Nagle delay for our small
// messages.
absl::Status configure(int fd) {
  const int flags = fcntl(fd, F_GETFL, 0);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 ||
      fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
    return errno_error("fcntl", errno);
  }
  const int one = 1;
#ifdef SO_NOSIGPIPE
  if (setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof(one)) < 0) {
    return errno_error("setsockopt(SO_NOSIGPIPE)", errno);
  }
#endif
  // Fails harmlessly on listening sockets; ignored.
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return absl::OkStatus();
}

absl::StatusOr<Socket> new_socket() {
  Socket s(::socket(AF_INET, SOCK_STREAM, 0));
  if (!s.valid()) return errno_error("socket", errno);
  if (absl::Status st = configure(s.fd()); !st.ok()) return st;
  return s;
}

int poll_timeout_ms(TimeNs deadline_ns, const Clock& clock) {
  const TimeNs left_ns = deadline_ns - clock.now_ns();
  if (left_ns <= 0) return 0;
  const TimeNs ms = left_ns / kNsPerMs + (left_ns % kNsPerMs != 0 ? 1 : 0);
  return static_cast<int>(std::min<TimeNs>(ms, INT_MAX));
}

// Reads up to into.size() bytes: how many arrived (0: none yet).
// Unavailable when the peer closed the connection.
absl::StatusOr<size_t> receive_some(int fd, std::span<uint8_t> into) {
  while (true) {
    const ssize_t n = ::recv(fd, into.data(), into.size(), MSG_DONTWAIT);
    if (n > 0) return static_cast<size_t>(n);
    if (n == 0) return absl::UnavailableError("the peer closed the connection");
    const int err = errno;
    if (err == EINTR) continue;
    if (err == EAGAIN || err == EWOULDBLOCK) return 0;
    return errno_error("recv", err);
  }
}

// A connection to ourselves: Linux's simultaneous open can pair a connect to
// an unused local port with itself.
bool connected_to_self(int fd) {
  sockaddr_in mine{}, theirs{};
  socklen_t mine_len = sizeof(mine), theirs_len = sizeof(theirs);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&mine), &mine_len) != 0 ||
      getpeername(fd, reinterpret_cast<sockaddr*>(&theirs), &theirs_len) != 0) {
    return false;
  }
  return mine.sin_port == theirs.sin_port &&
         mine.sin_addr.s_addr == theirs.sin_addr.s_addr;
}

}  // namespace

std::string address_text(const sockaddr_in& address) {
  char ip[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &address.sin_addr, ip, sizeof(ip));
  return absl::StrFormat("%s:%u", ip, ntohs(address.sin_port));
}

absl::StatusOr<sockaddr_in> resolve_ipv4(const HostPort& host_port) {
  sockaddr_in out{};
  out.sin_family = AF_INET;
  out.sin_port = htons(host_port.port);
  const std::string& host = host_port.host;
  if (host == "localhost") {
    out.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return out;
  }
  if (inet_pton(AF_INET, host.c_str(), &out.sin_addr) == 1) return out;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || found == nullptr) {
    return absl::UnavailableError(absl::StrFormat(
        "'%s' is not an IPv4 address and does not resolve to one (%s); use "
        "the coordinator's IPv4 address",
        host, rc != 0 ? gai_strerror(rc) : "no addresses"));
  }
  out.sin_addr = reinterpret_cast<const sockaddr_in*>(found->ai_addr)->sin_addr;
  freeaddrinfo(found);
  return out;
}

absl::Status poll_until(std::span<pollfd> fds, TimeNs deadline_ns,
                        const Clock& clock) {
  while (true) {
    for (pollfd& p : fds) p.revents = 0;
    const int n =
        ::poll(fds.data(), fds.size(), poll_timeout_ms(deadline_ns, clock));
    if (n > 0) return absl::OkStatus();
    if (n < 0) {
      const int err = errno;
      if (err == EINTR) continue;
      return errno_error("poll", err);
    }
    if (clock.now_ns() >= deadline_ns) {
      return absl::DeadlineExceededError("timed out");
    }
  }
}

absl::StatusOr<Socket> listen_on(const sockaddr_in& address, int backlog) {
  absl::StatusOr<Socket> s = new_socket();
  if (!s.ok()) return s.status();
  const int one = 1;
  // A restarted rank 0 may reuse its port while old connections linger.
  if (setsockopt(s->fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0) {
    return errno_error("setsockopt(SO_REUSEADDR)", errno);
  }
  if (::bind(s->fd(), reinterpret_cast<const sockaddr*>(&address),
             sizeof(address)) < 0) {
    return errno_error(absl::StrFormat("bind to %s", address_text(address)),
                       errno);
  }
  if (::listen(s->fd(), backlog) < 0) return errno_error("listen", errno);
  return s;
}

absl::StatusOr<sockaddr_in> local_address(int fd) {
  sockaddr_in out{};
  socklen_t len = sizeof(out);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&out), &len) < 0) {
    return errno_error("getsockname", errno);
  }
  return out;
}

absl::StatusOr<Accepted> accept_one(int listen_fd) {
  Accepted a;
  socklen_t len = sizeof(a.peer);
  const int fd =
      ::accept(listen_fd, reinterpret_cast<sockaddr*>(&a.peer), &len);
  if (fd < 0) {
    const int err = errno;
    // Nothing waiting, or a connection that went away before we took it.
    if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR ||
        err == ECONNABORTED) {
      return a;
    }
    return errno_error("accept", err);
  }
  a.socket = Socket(fd);
  if (absl::Status st = configure(fd); !st.ok()) return st;
  return a;
}

absl::StatusOr<Socket> connect_once(const sockaddr_in& address,
                                    TimeNs deadline_ns, const Clock& clock) {
  absl::StatusOr<Socket> s = new_socket();
  if (!s.ok()) return s.status();
  const std::string what =
      absl::StrFormat("connect to %s", address_text(address));
  if (::connect(s->fd(), reinterpret_cast<const sockaddr*>(&address),
                sizeof(address)) < 0) {
    const int err = errno;
    if (err != EINPROGRESS && err != EINTR) return errno_error(what, err);
    pollfd p{s->fd(), POLLOUT, 0};
    if (absl::Status st = poll_until({&p, 1}, deadline_ns, clock); !st.ok()) {
      return st;
    }
    int so_error = 0;
    socklen_t len = sizeof(so_error);
    if (getsockopt(s->fd(), SOL_SOCKET, SO_ERROR, &so_error, &len) < 0) {
      return errno_error("getsockopt(SO_ERROR)", errno);
    }
    if (so_error != 0) return errno_error(what, so_error);
  }
  if (connected_to_self(s->fd())) {
    return absl::UnavailableError(
        absl::StrFormat("%s reached ourselves: nothing listens there", what));
  }
  return s;
}

absl::Status send_all(int fd, std::span<const uint8_t> bytes,
                      TimeNs deadline_ns, const Clock& clock) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), kSendFlags);
    if (n >= 0) {
      bytes = bytes.subspan(static_cast<size_t>(n));
      continue;
    }
    const int err = errno;
    if (err == EINTR) continue;
    if (err != EAGAIN && err != EWOULDBLOCK) return errno_error("send", err);
    pollfd p{fd, POLLOUT, 0};
    if (absl::Status st = poll_until({&p, 1}, deadline_ns, clock); !st.ok()) {
      return st;
    }
  }
  return absl::OkStatus();
}

bool peer_closed(int fd) {
  pollfd p{fd, static_cast<short>(POLLIN | kPeerClosedEvents), 0};
  int n;
  do {
    n = ::poll(&p, 1, 0);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  if (p.revents & (kPeerClosedEvents | POLLNVAL)) return true;
  uint8_t byte;
  while (true) {
    const ssize_t got = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (got > 0) return false;
    if (got == 0) return true;
    const int err = errno;
    if (err == EINTR) continue;
    return err != EAGAIN && err != EWOULDBLOCK;
  }
}

absl::StatusOr<bool> MessageReader::pump_header(int fd) {
  while (header_filled_ < kWireHeaderBytes) {
    absl::StatusOr<size_t> n =
        receive_some(fd, std::span(header_bytes_).subspan(header_filled_));
    if (!n.ok()) return n.status();
    if (*n == 0) return false;
    header_filled_ += *n;
    spoke_weft_ =
        has_wire_magic(std::span(header_bytes_).first(header_filled_));
  }
  absl::StatusOr<WireHeader> header = decode_header(header_bytes_);
  if (!header.ok()) return header.status();
  header_ = *header;
  header_done_ = true;
  body_.assign(header_.body_bytes, 0);
  return true;
}

absl::StatusOr<bool> MessageReader::pump_body(int fd) {
  while (body_filled_ < body_.size()) {
    absl::StatusOr<size_t> n =
        receive_some(fd, std::span(body_).subspan(body_filled_));
    if (!n.ok()) return n.status();
    if (*n == 0) return false;
    body_filled_ += *n;
  }
  return true;
}

absl::StatusOr<bool> MessageReader::pump(int fd) {
  absl::StatusOr<bool> done = header_done_ ? true : pump_header(fd);
  if (done.ok() && *done) done = pump_body(fd);
  const size_t got = header_filled_ + body_filled_;
  if (!done.ok() && absl::IsUnavailable(done.status()) && got > 0) {
    return absl::UnavailableError(absl::StrFormat(
        "%s in the middle of a message, after %u of its %u bytes",
        done.status().message(), got,
        header_done_ ? kWireHeaderBytes + body_.size() : kWireHeaderBytes));
  }
  return done;
}

void MessageReader::reset() {
  header_filled_ = 0;
  header_done_ = false;
  body_.clear();
  body_filled_ = 0;
}

absl::Status receive_message(int fd, MessageReader& reader, TimeNs deadline_ns,
                             const Clock& clock) {
  while (true) {
    absl::StatusOr<bool> done = reader.pump(fd);
    if (!done.ok()) return done.status();
    if (*done) return absl::OkStatus();
    pollfd p{fd, POLLIN, 0};
    if (absl::Status st = poll_until({&p, 1}, deadline_ns, clock); !st.ok()) {
      return st;
    }
  }
}

}  // namespace weft::rendezvous::internal
