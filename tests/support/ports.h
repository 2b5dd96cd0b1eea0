// Free TCP ports for programs under test to listen on: what the kernel
// hands out for port 0, found by binding and then releasing
// (net::free_ports). The ports of one call are distinct. Another program
// may still take one before the test's program binds it.
#ifndef WEFT_TESTS_SUPPORT_PORTS_H_
#define WEFT_TESTS_SUPPORT_PORTS_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "net/address.h"
#include "net/stream.h"

namespace weft::testing {

// `count` distinct free ports on numeric `ip` ("127.0.0.1", "::1"); empty
// when `ip` cannot be bound (no IPv6 loopback on this machine).
inline std::vector<uint16_t> free_ports(const char* ip, size_t count) {
  absl::StatusOr<net::SocketAddress> address =
      net::SocketAddress::numeric(ip, 0);
  if (!address.ok()) return {};
  absl::StatusOr<std::vector<uint16_t>> ports =
      net::free_ports(*address, count);
  return ports.ok() ? *std::move(ports) : std::vector<uint16_t>{};
}

}  // namespace weft::testing

#endif  // WEFT_TESTS_SUPPORT_PORTS_H_
