// `weft-devices tcp-hostfile`: turns mlx.launch's hostfile (the hosts to
// ssh into, each with the IPs the ring backend talks over) into the ring
// backend's own hostfile, which MLX_HOSTFILE (or WEFT_HOSTFILE) names and
// weft's TCP fabric reads (rendezvous/tcp_hosts.h).
//
// mlx.launch's file is a list of hosts, or an object whose "hosts" is that
// list (with "backend" and "envs" beside it, ignored here):
//
//   [{"ssh": "mac1", "ips": ["192.168.1.10"]},
//    {"ssh": "mac2", "ips": ["192.168.1.11"]}]
//
// Ports follow mlx.launch's ring launcher: the first address gets the
// starting port (mlx.launch's --starting-port, default 32323) and each
// further address one more, counting every host's every IP and every
// connection on it (--connections-per-ip, here --cables) in order:
//
//   [["192.168.1.10:32323"], ["192.168.1.11:32324"]]
//
// IPv6 addresses are written in brackets ("[fe80::1]:32325"), which weft
// reads and MLX's parser does not.
#ifndef WEFT_TOOLS_WEFT_DEVICES_TCP_HOSTFILE_H_
#define WEFT_TOOLS_WEFT_DEVICES_TCP_HOSTFILE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "rendezvous/tcp_hosts.h"

namespace weft::tools::weft_devices {

// mlx.launch's default --starting-port.
inline constexpr uint32_t kMlxStartingPort = 32323;

// The ring hostfile for mlx.launch's hostfile `json_text` (`origin` names it
// in messages). InvalidArgument naming the host and what to fix: not JSON,
// not a list of hosts, a host without "ips" (the ring backend needs IPs, not
// host names), an IP that is not numeric, ports past 65535, hosts with
// different numbers of IPs, the same address twice. REQUIRES:
// cables_per_ip >= 1.
absl::StatusOr<TcpHosts> ring_hosts_from_launch_hostfile(
    std::string_view json_text, std::string_view origin, uint32_t starting_port,
    uint32_t cables_per_ip);

// The ring hostfile's JSON as mlx.launch writes it (Python's json.dumps):
// [["ip:port", ...], ...] and a newline.
std::string format_ring_hostfile(const TcpHosts& hosts);

}  // namespace weft::tools::weft_devices

#endif  // WEFT_TOOLS_WEFT_DEVICES_TCP_HOSTFILE_H_
