// Fuzzes the ring hostfile reader (rendezvous/tcp_hosts.h): any bytes give
// hosts or an InvalidArgument with a message, never a crash; hosts it
// accepts pass check_tcp_hosts, every entry parses and prints back to
// itself once normalised, the full mesh over them names each row's own
// addresses, and the default coordinator is an address or InvalidArgument.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/topology.h"
#include "rendezvous/tcp_hosts.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace weft;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<TcpHosts> hosts = parse_tcp_hosts(text, "fuzz.json");
  if (!hosts.ok()) {
    WEFT_FUZZ_CHECK(hosts.status().code() ==
                    absl::StatusCode::kInvalidArgument);
    WEFT_FUZZ_CHECK(!hosts.status().message().empty());
    return 0;
  }
  WEFT_FUZZ_CHECK(check_tcp_hosts(*hosts, "fuzz.json").ok());
  for (const auto& row : *hosts) {
    for (const std::string& entry : row) {
      absl::StatusOr<TcpAddress> a = parse_tcp_address(entry);
      WEFT_FUZZ_CHECK(a.ok() && a->port != 0);
      absl::StatusOr<TcpAddress> again =
          parse_tcp_address(format_tcp_address(*a));
      WEFT_FUZZ_CHECK(again.ok() && again->ip == a->ip &&
                      again->port == a->port && again->ipv6 == a->ipv6);
    }
  }
  const Topology mesh = tcp_mesh_topology(*hosts);
  WEFT_FUZZ_CHECK(mesh.ranks() == hosts->size());
  for (uint32_t i = 0; i < mesh.ranks(); ++i) {
    for (uint32_t j = 0; j < mesh.ranks(); ++j) {
      WEFT_FUZZ_CHECK(i == j ? !mesh.connected(i, j)
                             : mesh.devices(i, j) == (*hosts)[i]);
    }
  }
  absl::StatusOr<std::string> coordinator = default_tcp_coordinator(*hosts);
  WEFT_FUZZ_CHECK(coordinator.ok() || coordinator.status().code() ==
                                          absl::StatusCode::kInvalidArgument);
  if (coordinator.ok()) WEFT_FUZZ_CHECK(parse_tcp_address(*coordinator).ok());
  return 0;
}
