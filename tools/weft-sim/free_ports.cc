#include "tools/weft-sim/free_ports.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "net/address.h"
#include "net/stream.h"

namespace weft::tools::weft_sim {

absl::StatusOr<std::vector<uint16_t>> free_ports(std::string_view host,
                                                 size_t count) {
  absl::StatusOr<net::SocketAddress> ip = net::SocketAddress::numeric(host, 0);
  if (!ip.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--host=%s is not a numeric IPv4 or IPv6 address (127.0.0.1, ::1)",
        host));
  }
  return net::free_ports(*ip, count);
}

std::string address_text(std::string_view host, uint16_t port) {
  return net::HostPort{std::string(host), port}.to_string();
}

}  // namespace weft::tools::weft_sim
