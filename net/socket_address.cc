#include "net/socket_address.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstring>
#include <system_error>

#include "absl/strings/str_format.h"

namespace weft::net {
namespace {

absl::Status set_flags(int fd) {
  const int fl = fcntl(fd, F_GETFL, 0);
  if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0 ||
      fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrFormat(
        "making a socket non-blocking failed: %s", errno_text(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<Socket> new_socket(int family) {
  Socket s(::socket(family, SOCK_STREAM, 0));
  if (!s.valid()) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "creating a TCP socket failed: %s; raise the open file limit "
        "(ulimit -n) if it is the cause",
        errno_text(errno)));
  }
  if (absl::Status st = set_flags(s.fd()); !st.ok()) return st;
  return s;
}

bool parse_port(std::string_view text, uint16_t* port) {
  unsigned value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value > 65535) {
    return false;
  }
  *port = static_cast<uint16_t>(value);
  return true;
}

}  // namespace

absl::StatusOr<SocketAddress> SocketAddress::parse(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "bad TCP address \"%s\": %s; write \"ip:port\" (e.g. "
        "\"127.0.0.1:5000\") or \"[ipv6]:port\" (e.g. \"[::1]:5000\"), with "
        "a numeric address",
        text, why));
  };
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return bad("no port");
  std::string_view host = text.substr(0, colon);
  SocketAddress a;
  uint16_t port = 0;
  if (!parse_port(text.substr(colon + 1), &port)) {
    return bad("the port is not a number from 0 to 65535");
  }
  const bool bracketed =
      host.size() >= 2 && host.front() == '[' && host.back() == ']';
  const std::string h(bracketed ? host.substr(1, host.size() - 2) : host);
  if (bracketed) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&a.storage_);
    if (inet_pton(AF_INET6, h.c_str(), &in6->sin6_addr) != 1) {
      return bad("not a numeric IPv6 address between the brackets");
    }
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
    a.length_ = sizeof(sockaddr_in6);
    return a;
  }
  auto* in4 = reinterpret_cast<sockaddr_in*>(&a.storage_);
  if (inet_pton(AF_INET, h.c_str(), &in4->sin_addr) != 1) {
    return bad(h.find(':') != std::string::npos
                   ? "an IPv6 address needs brackets"
                   : "not a numeric IPv4 address");
  }
  in4->sin_family = AF_INET;
  in4->sin_port = htons(port);
  a.length_ = sizeof(sockaddr_in);
  return a;
}

SocketAddress SocketAddress::from_gid(const std::array<uint8_t, 16>& gid,
                                      uint16_t port) {
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0,    0,
                                          0, 0, 0, 0, 0xff, 0xff};
  SocketAddress a;
  if (std::memcmp(gid.data(), kMapped, sizeof(kMapped)) == 0) {
    auto* in4 = reinterpret_cast<sockaddr_in*>(&a.storage_);
    in4->sin_family = AF_INET;
    in4->sin_port = htons(port);
    std::memcpy(&in4->sin_addr, gid.data() + 12, 4);
    a.length_ = sizeof(sockaddr_in);
    return a;
  }
  auto* in6 = reinterpret_cast<sockaddr_in6*>(&a.storage_);
  in6->sin6_family = AF_INET6;
  in6->sin6_port = htons(port);
  std::memcpy(&in6->sin6_addr, gid.data(), 16);
  a.length_ = sizeof(sockaddr_in6);
  return a;
}

absl::StatusOr<SocketAddress> SocketAddress::bound_to(int fd) {
  return named(fd, &getsockname, "getsockname");
}

absl::StatusOr<SocketAddress> SocketAddress::peer_of(int fd) {
  return named(fd, &getpeername, "getpeername");
}

absl::StatusOr<SocketAddress> SocketAddress::named(int fd, NameCall call,
                                                   const char* what) {
  SocketAddress a;
  a.length_ = sizeof(a.storage_);
  if (call(fd, reinterpret_cast<sockaddr*>(&a.storage_), &a.length_) != 0) {
    return absl::UnavailableError(
        absl::StrFormat("%s failed: %s", what, errno_text(errno)));
  }
  return a;
}

uint16_t SocketAddress::port() const {
  if (family() == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_port);
  }
  return ntohs(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_port);
}

std::array<uint8_t, 16> SocketAddress::gid() const {
  std::array<uint8_t, 16> g{};
  if (family() == AF_INET6) {
    std::memcpy(g.data(),
                &reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr,
                16);
    return g;
  }
  g[10] = g[11] = 0xff;
  std::memcpy(g.data() + 12,
              &reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr, 4);
  return g;
}

std::string SocketAddress::to_string() const {
  char text[INET6_ADDRSTRLEN] = {};
  if (family() == AF_INET6) {
    inet_ntop(AF_INET6,
              &reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr,
              text, sizeof(text));
    return absl::StrFormat("[%s]:%u", text, port());
  }
  if (family() != AF_INET) return "(no address)";
  inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr,
            text, sizeof(text));
  return absl::StrFormat("%s:%u", text, port());
}

absl::Status tune_connection(int fd, int buffer_bytes) {
  const int one = 1;
  bool ok = setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == 0;
#ifdef SO_NOSIGPIPE
  ok = ok && setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof(one)) == 0;
#endif
  if (ok && buffer_bytes > 0) {
    ok = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer_bytes,
                    sizeof(buffer_bytes)) == 0 &&
         setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer_bytes,
                    sizeof(buffer_bytes)) == 0;
  }
  if (!ok) {
    return absl::InternalError(absl::StrFormat(
        "setting TCP_NODELAY and buffer sizes failed: %s", errno_text(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<Socket> listen_on(const SocketAddress& address, int backlog) {
  absl::StatusOr<Socket> s = new_socket(address.family());
  if (!s.ok()) return s.status();
  const int one = 1;
  setsockopt(s->fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (address.family() == AF_INET6) {
    // Only the configured family: "[::1]" is not also 127.0.0.1.
    setsockopt(s->fd(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
  }
  if (::bind(s->fd(), address.get(), address.length()) != 0) {
    const int e = errno;
    return absl::UnavailableError(absl::StrFormat(
        "cannot listen on %s: %s; %s", address.to_string(), errno_text(e),
        e == EADDRINUSE ? "another socket holds the port: configure a free "
                          "port (or port 0 to let the system choose), or stop "
                          "the process that holds it"
                        : "configure an address of one of this machine's "
                          "interfaces"));
  }
  if (::listen(s->fd(), backlog) != 0) {
    return absl::UnavailableError(absl::StrFormat(
        "cannot listen on %s: %s", address.to_string(), errno_text(errno)));
  }
  return s;
}

absl::StatusOr<Socket> start_connect(const SocketAddress& address,
                                     int buffer_bytes) {
  absl::StatusOr<Socket> s = new_socket(address.family());
  if (!s.ok()) return s.status();
  // Buffer sizes before connect(): the window scale is agreed in the SYN.
  if (absl::Status st = tune_connection(s->fd(), buffer_bytes); !st.ok()) {
    return st;
  }
  if (::connect(s->fd(), address.get(), address.length()) != 0 &&
      errno != EINPROGRESS) {
    return absl::UnavailableError(absl::StrFormat(
        "cannot connect to %s: %s", address.to_string(), errno_text(errno)));
  }
  return s;
}

int connect_error(int fd) {
  int err = 0;
  socklen_t len = sizeof(err);
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
  return err;
}

absl::StatusOr<Socket> accept_one(int listen_fd) {
  for (;;) {
    Socket s(::accept(listen_fd, nullptr, nullptr));
    if (s.valid()) {
      if (absl::Status st = set_flags(s.fd()); !st.ok()) return st;
      return s;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED) {
      return Socket();
    }
    return absl::UnavailableError(
        absl::StrFormat("accept failed: %s", errno_text(errno)));
  }
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
  for (;;) {
    const ssize_t n = ::recv(fd, into.data(), into.size(), 0);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) return -EAGAIN;
    return -errno;
  }
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

}  // namespace weft::net
