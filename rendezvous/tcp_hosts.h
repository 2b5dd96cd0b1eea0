// TcpHosts: the addresses a group over the TCP fabric listens on, read from
// MLX's ring-backend hostfile (MLX_HOSTFILE, or weft's WEFT_HOSTFILE): a JSON
// list with, for each rank in rank order, a list of "ip:port" strings, one
// per cable:
//
//   [["192.168.1.10:5000", "10.0.0.10:5000"],
//    ["192.168.1.11:5000", "10.0.0.11:5000"]]
//
// weft stripes one cable per address index: cable c joins entry c of one
// rank's row to entry c of the other's, so every row needs the same count.
// Addresses are numeric (each rank's TCP fabric listens exactly where its
// row says, so no host name is looked up): IPv4 "a.b.c.d:port" or IPv6 in
// brackets "[::1]:port" (MLX's own parser splits at the first colon, so it
// reads neither "::1:5000" nor "[::1]:5000"; weft refuses the first, which
// is ambiguous, and reads the second), as net::SocketAddress::parse reads
// them. A row that is one string
// instead of a list is one address, as MLX's loader reads it.
//
// This is not mlx.launch's hostfile (a list of hosts with "ssh" and "ips"),
// which `weft-devices tcp-hostfile` turns into this one.
#ifndef WEFT_RENDEZVOUS_TCP_HOSTS_H_
#define WEFT_RENDEZVOUS_TCP_HOSTS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/topology.h"

namespace weft {

// tcp_hosts[rank][cable] = "ip:port" where that rank listens for that
// cable.
using TcpHosts = std::vector<std::vector<std::string>>;

// Largest hostfile read (4096 ranks of 8 cables fit many times over).
inline constexpr size_t kMaxHostfileBytes = size_t{4} << 20;

// One numeric TCP address: `ip` without brackets in its canonical form
// ("[0::1]" reads as "::1"), `ipv6` telling which form.
struct TcpAddress {
  std::string ip;
  uint16_t port = 0;
  bool ipv6 = false;
};

// Parses "a.b.c.d:port" or "[ipv6]:port" (numeric, port 0..65535).
// InvalidArgument naming `text` and the accepted forms; an IPv6 address
// without brackets is refused with the bracketed form to write instead.
absl::StatusOr<TcpAddress> parse_tcp_address(std::string_view text);

// The text form: "a.b.c.d:port" or "[ipv6]:port".
std::string format_tcp_address(const TcpAddress& address);

// OK when `hosts` is a hostfile weft can run: 1..Topology::kMaxRanks rows,
// each of 1..Topology::kMaxCables addresses, the same count in every row,
// every address numeric with a port other than 0, no address twice.
// Otherwise InvalidArgument naming `origin` (the file), the rank row and
// the entry, and what to change.
absl::Status check_tcp_hosts(const TcpHosts& hosts, std::string_view origin);

// Parses the hostfile's JSON text and checks it (check_tcp_hosts).
// InvalidArgument naming `origin`, the row and the entry.
absl::StatusOr<TcpHosts> parse_tcp_hosts(std::string_view json_text,
                                         std::string_view origin);

// Reads the hostfile at `path` (parse_tcp_hosts). NotFound when it cannot
// be opened; InvalidArgument when it is larger than kMaxHostfileBytes.
absl::StatusOr<TcpHosts> load_tcp_hosts(const std::string& path);

// The full mesh over the hosts: devices(i, j) = hosts[i] (rank i's
// listening address of each cable) for every i != j, as the TCP fabric
// names its cables. REQUIRES: check_tcp_hosts(hosts) is OK.
Topology tcp_mesh_topology(const TcpHosts& hosts);

// The side channel's address when none is configured: rank 0's first IP,
// with the port one above the highest port the hostfile names on that IP.
// InvalidArgument when that port would pass 65535. REQUIRES:
// check_tcp_hosts(hosts) is OK.
absl::StatusOr<std::string> default_tcp_coordinator(const TcpHosts& hosts);

}  // namespace weft

#endif  // WEFT_RENDEZVOUS_TCP_HOSTS_H_
