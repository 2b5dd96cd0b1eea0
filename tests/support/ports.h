// Free TCP ports for programs under test to listen on: what the kernel
// hands out for port 0, found by binding and then releasing. Every socket
// stays bound until all are chosen, so the ports of one call are distinct.
// Another program may still take one before the test's program binds it.
#ifndef WEFT_TESTS_SUPPORT_PORTS_H_
#define WEFT_TESTS_SUPPORT_PORTS_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "net/socket.h"

namespace weft::testing {

// `count` distinct free ports on numeric `ip` (IPv4, or IPv6 when `ipv6`);
// empty when `ip` cannot be bound (no IPv6 loopback on this machine).
inline std::vector<uint16_t> free_ports(const char* ip, bool ipv6,
                                        size_t count) {
  std::vector<net::Socket> held;
  std::vector<uint16_t> ports;
  for (size_t i = 0; i < count; ++i) {
    net::Socket s(::socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0));
    sockaddr_storage storage{};
    socklen_t length = 0;
    if (ipv6) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&storage);
      a->sin6_family = AF_INET6;
      if (inet_pton(AF_INET6, ip, &a->sin6_addr) != 1) return {};
      length = sizeof(sockaddr_in6);
    } else {
      auto* a = reinterpret_cast<sockaddr_in*>(&storage);
      a->sin_family = AF_INET;
      if (inet_pton(AF_INET, ip, &a->sin_addr) != 1) return {};
      length = sizeof(sockaddr_in);
    }
    auto* address = reinterpret_cast<sockaddr*>(&storage);
    if (!s.valid() || ::bind(s.fd(), address, length) != 0 ||
        ::getsockname(s.fd(), address, &length) != 0) {
      return {};
    }
    ports.push_back(
        ntohs(ipv6 ? reinterpret_cast<sockaddr_in6*>(address)->sin6_port
                   : reinterpret_cast<sockaddr_in*>(address)->sin_port));
    held.push_back(std::move(s));
  }
  return ports;
}

}  // namespace weft::testing

#endif  // WEFT_TESTS_SUPPORT_PORTS_H_
