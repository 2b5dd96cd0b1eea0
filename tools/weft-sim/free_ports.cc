#include "tools/weft-sim/free_ports.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "net/socket.h"

namespace weft::tools::weft_sim {
namespace {

// `host` with port 0 as a socket address; false if it is not numeric.
bool parse_host(std::string_view host, sockaddr_storage& out,
                socklen_t& length) {
  const std::string text(host);
  out = {};
  auto* v4 = reinterpret_cast<sockaddr_in*>(&out);
  if (::inet_pton(AF_INET, text.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    length = sizeof(sockaddr_in);
    return true;
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&out);
  if (::inet_pton(AF_INET6, text.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    length = sizeof(sockaddr_in6);
    return true;
  }
  return false;
}

uint16_t port_of(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET) {
    return ntohs(reinterpret_cast<const sockaddr_in&>(address).sin_port);
  }
  return ntohs(reinterpret_cast<const sockaddr_in6&>(address).sin6_port);
}

}  // namespace

absl::StatusOr<std::vector<uint16_t>> free_ports(std::string_view host,
                                                 size_t count) {
  sockaddr_storage address{};
  socklen_t length = 0;
  if (!parse_host(host, address, length)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--host=%s is not a numeric IPv4 or IPv6 address (127.0.0.1, ::1)",
        host));
  }
  // Every socket stays bound until all are chosen, so the ports differ.
  std::vector<net::Socket> held;
  std::vector<uint16_t> ports;
  for (size_t i = 0; i < count; ++i) {
    net::Socket s(::socket(address.ss_family, SOCK_STREAM, 0));
    sockaddr_storage bound = address;
    socklen_t bound_length = length;
    if (!s.valid() ||
        ::bind(s.fd(), reinterpret_cast<const sockaddr*>(&address), length) !=
            0 ||
        ::getsockname(s.fd(), reinterpret_cast<sockaddr*>(&bound),
                      &bound_length) != 0) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "cannot bind a TCP port on %s: %s; give an address of this "
          "machine (127.0.0.1, ::1)",
          host, std::strerror(errno)));
    }
    ports.push_back(port_of(bound));
    held.push_back(std::move(s));
  }
  return ports;
}

std::string address_text(std::string_view host, uint16_t port) {
  if (host.find(':') != std::string_view::npos) {
    return absl::StrFormat("[%s]:%u", host, port);
  }
  return absl::StrFormat("%s:%u", host, port);
}

}  // namespace weft::tools::weft_sim
