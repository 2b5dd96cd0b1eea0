#include "bench/tcp_compare/plain_stream.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

#include "absl/strings/str_format.h"

// macOS has no MSG_NOSIGNAL; SO_NOSIGPIPE (set in tune()) does its work.
#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0
#endif

namespace weft::bench {
namespace {

absl::Status errno_error(const std::string& what) {
  return absl::UnavailableError(
      absl::StrFormat("%s: %s", what, std::strerror(errno)));
}

absl::StatusOr<sockaddr_in> ipv4_address(const std::string& ipv4,
                                         uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (inet_pton(AF_INET, ipv4.c_str(), &a.sin_addr) != 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "\"%s\" is not an IPv4 address; give one like 127.0.0.1", ipv4));
  }
  return a;
}

absl::Status tune(const net::Socket& s, const StreamOptions& options) {
  const int one = 1;
  const int bytes = options.socket_buffer_bytes;
  timeval deadline{};
  deadline.tv_sec = static_cast<time_t>(options.deadline_ns / kNsPerS);
  deadline.tv_usec = static_cast<suseconds_t>((options.deadline_ns % kNsPerS) /
                                              (kNsPerS / 1'000'000));
  bool ok =
      setsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == 0 &&
      setsockopt(s.fd(), SOL_SOCKET, SO_SNDTIMEO, &deadline,
                 sizeof(deadline)) == 0 &&
      setsockopt(s.fd(), SOL_SOCKET, SO_RCVTIMEO, &deadline,
                 sizeof(deadline)) == 0;
#ifdef SO_NOSIGPIPE
  ok = ok &&
       setsockopt(s.fd(), SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof(one)) == 0;
#endif
  if (ok && bytes > 0) {
    ok =
        setsockopt(s.fd(), SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes)) == 0 &&
        setsockopt(s.fd(), SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes)) == 0;
  }
  return ok ? absl::OkStatus() : errno_error("setting socket options");
}

}  // namespace

absl::StatusOr<net::Socket> listen_stream(const std::string& ipv4,
                                          uint16_t* port) {
  absl::StatusOr<sockaddr_in> a = ipv4_address(ipv4, 0);
  if (!a.ok()) return a.status();
  net::Socket s(::socket(AF_INET, SOCK_STREAM, 0));
  if (!s.valid()) return errno_error("socket()");
  socklen_t len = sizeof(*a);
  if (::bind(s.fd(), reinterpret_cast<sockaddr*>(&*a), len) != 0 ||
      ::listen(s.fd(), 1) != 0 ||
      getsockname(s.fd(), reinterpret_cast<sockaddr*>(&*a), &len) != 0) {
    return errno_error(absl::StrFormat("listening on %s", ipv4));
  }
  *port = ntohs(a->sin_port);
  return s;
}

absl::StatusOr<net::Socket> accept_stream(const net::Socket& listener,
                                          const StreamOptions& options) {
  // The listener inherits the receive deadline, so accept() has one too.
  timeval deadline{};
  deadline.tv_sec = static_cast<time_t>(options.deadline_ns / kNsPerS);
  setsockopt(listener.fd(), SOL_SOCKET, SO_RCVTIMEO, &deadline,
             sizeof(deadline));
  net::Socket s(::accept(listener.fd(), nullptr, nullptr));
  if (!s.valid()) return errno_error("accepting the peer's plain stream");
  if (absl::Status st = tune(s, options); !st.ok()) return st;
  return s;
}

absl::StatusOr<net::Socket> connect_stream(const std::string& ipv4,
                                           uint16_t port,
                                           const StreamOptions& options) {
  absl::StatusOr<sockaddr_in> a = ipv4_address(ipv4, port);
  if (!a.ok()) return a.status();
  net::Socket s(::socket(AF_INET, SOCK_STREAM, 0));
  if (!s.valid()) return errno_error("socket()");
  // Tuned before connect(), so the buffer sizes apply from the handshake.
  if (absl::Status st = tune(s, options); !st.ok()) return st;
  if (::connect(s.fd(), reinterpret_cast<const sockaddr*>(&*a), sizeof(*a)) !=
      0) {
    return errno_error(absl::StrFormat("connecting to %s:%u", ipv4, port));
  }
  return s;
}

absl::Status send_all(const net::Socket& s, std::span<const std::byte> bytes) {
  size_t put = 0;
  while (put < bytes.size()) {
    const ssize_t n =
        ::send(s.fd(), bytes.data() + put, bytes.size() - put, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return errno_error("plain stream send (deadline or peer gone)");
    put += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status recv_all(const net::Socket& s, std::span<std::byte> bytes) {
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::recv(s.fd(), bytes.data() + got, bytes.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {
      return absl::UnavailableError("plain stream: the peer closed it");
    }
    if (n < 0) return errno_error("plain stream receive (deadline passed?)");
    got += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace weft::bench
