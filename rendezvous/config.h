// Config: what one process needs to join a group on hardware (its rank, the
// group's size and cabling, where rank 0 listens), read from the environment
// variables MLX's JACCL (device JSON, verbs) and MLX's ring backend (hostfile,
// TCP) use, so existing launch scripts work unchanged, or filled in by hand.
//
// Environment variables, in order of precedence (the first one set wins; an
// alias group set to different values is an error naming both):
//   rank         WEFT_RANK, JACCL_RANK, MLX_RANK, then the launchers' own
//                OMPI_COMM_WORLD_RANK (mpirun), SLURM_PROCID (srun)
//   hostfile     WEFT_HOSTFILE, MLX_HOSTFILE: path to MLX's ring-backend
//                hostfile (rendezvous/tcp_hosts.h): one list of "ip:port"
//                per rank, one address per cable; the group runs over the
//                TCP fabric, its size is the number of rows and its devices
//                the full mesh over the addresses
//   device JSON  JACCL_IBV_DEVICES, MLX_IBV_DEVICES: path to the file whose
//                devices[i][j] names the device(s) joining rank i to rank j;
//                the group runs over verbs and its size is the number of rows.
//                The value `auto` instead: the ranks find their cabling
//                themselves when the group forms (wiring/discovery.h), and
//                the size comes from WEFT_SIZE, or the launchers'
//                OMPI_COMM_WORLD_SIZE (mpirun) or SLURM_NTASKS (srun)
//   fabric       WEFT_FABRIC: "tcp" or "verbs", only needed when both a
//                hostfile and a device JSON are set (otherwise an error
//                naming both): reads the one it names, ignores the other
//   coordinator  WEFT_COORDINATOR, JACCL_COORDINATOR, MLX_JACCL_COORDINATOR:
//                "host:port" where rank 0 listens for the side channel: an
//                IPv4 address ("192.168.1.10:5000"), an IPv6 address in
//                brackets ("[::1]:5000", without a zone index such as
//                "%en0"), "localhost" (127.0.0.1) or a host name (looked up
//                for IPv4 and IPv6); required when the group has more
//                than one rank, except with a hostfile, where it defaults to
//                rank 0's first IP with the port one above the highest port
//                the hostfile names on that IP. MLX's own JACCL reads IPv4
//                only (docs/jaccl.md)
//   ring         JACCL_RING, MLX_JACCL_RING: 1/0/true/false (default false)
//   secret       WEFT_SECRET: a shared secret every TCP connection (the
//                bootstrap's and the TCP fabric's) proves before it is
//                trusted; unset or empty: none. Any bytes; 32 random ones
//                recommended (e.g. `openssl rand -hex 32`); shorter ones,
//                even under 16 bytes, work but are easier to guess. Never
//                printed. Every rank must set the same one.
// The launcher variables are not checked against the rank variables: a
// script that sets those has chosen its ranks itself.
#ifndef WEFT_RENDEZVOUS_CONFIG_H_
#define WEFT_RENDEZVOUS_CONFIG_H_

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "fabric/topology.h"
#include "net/address.h"
#include "rendezvous/tcp_hosts.h"

namespace weft {

// Looks up an environment variable: nullptr when it is not set.
using EnvLookup = std::function<const char*(const char*)>;
// Reads and parses the device JSON at a path.
using DeviceLoader =
    std::function<absl::StatusOr<Topology>(const std::string& path)>;
// Reads and parses the ring hostfile at a path.
using HostsLoader =
    std::function<absl::StatusOr<TcpHosts>(const std::string& path)>;

// A "host:port" split in two (net/address.h): an IPv6 host is held
// without its brackets.
using HostPort = net::HostPort;

// Splits "host:port" or "[ipv6]:port" as net::split_host_port does.
// InvalidArgument quoting `text` and saying what to write when the port or
// the host is missing, the port is not a number in 0..65535, an IPv6
// address lacks its brackets ("::1:5000") or the brackets hold no IPv6
// address.
absl::StatusOr<HostPort> parse_host_port(std::string_view text);

// A topology of one rank and no cables: the default Config's devices.
Topology single_rank_topology();

struct Config {
  static constexpr TimeNs kDefaultConnectTimeoutNs = 60 * kNsPerS;
  static constexpr TimeNs kDefaultExchangeTimeoutNs = 30 * kNsPerS;
  // Longest timeout validate() accepts.
  static constexpr TimeNs kMaxTimeoutNs = 3600 * kNsPerS;

  uint32_t rank = 0;
  uint32_t size = 1;
  Topology devices = single_rank_topology();
  // The device variable said `auto`: `devices` holds `size` ranks and no
  // cable until the ranks find their cabling as the group forms.
  bool discover_devices = false;
  // What named the device JSON, for messages ("JACCL_IBV_DEVICES:
  // /path/devices.json"); empty when none did.
  std::string devices_source;
  // Each rank's listening addresses over the TCP fabric, one per cable
  // (tcp_hosts[rank][cable], "ip:port" or "[ipv6]:port"); empty: verbs.
  // When set, devices is tcp_mesh_topology(tcp_hosts).
  TcpHosts tcp_hosts;
  std::string coordinator;  // "host:port"; unused when size == 1
  bool ring = false;
  // WEFT_SECRET: what every TCP connection proves (net/secret_proof.h);
  // empty: none.
  std::string secret;
  // How long ranks keep trying to reach rank 0 and wait for the whole group
  // to join.
  TimeNs connect_timeout_ns = kDefaultConnectTimeoutNs;
  // How long one exchange of destinations may take.
  TimeNs exchange_timeout_ns = kDefaultExchangeTimeoutNs;

  // Reads the variables above through `getenv` (the process environment by
  // default), the device JSON through `load_devices` and the hostfile
  // through `load_hosts` (from the files by default; a fuzzer or test may
  // serve them from memory). The result has passed validate().
  // InvalidArgument names the variable, its value and what to set (for the
  // hostfile: the file, the rank's row and the entry); NotFound when a file
  // cannot be opened.
  static absl::StatusOr<Config> from_environment(
      const EnvLookup& getenv = ::getenv,
      const DeviceLoader& load_devices = &Topology::load_json_file,
      const HostsLoader& load_hosts = &load_tcp_hosts);

  // OK when the fields agree: 1 <= size <= Topology::kMaxRanks, rank < size,
  // devices has `size` ranks and the cabling the algorithm needs (each rank
  // joined to its ring neighbours when `ring`, every pair otherwise; not
  // judged with discover_devices, whose devices have no cable yet), the
  // coordinator parses when size > 1, and the timeouts are in
  // 1 ns..kMaxTimeoutNs; when tcp_hosts is set, it passes check_tcp_hosts
  // with `size` rows, devices is its full mesh, and the coordinator is none
  // of rank 0's addresses. Otherwise InvalidArgument saying what to fix.
  absl::Status validate() const;
};

}  // namespace weft

#endif  // WEFT_RENDEZVOUS_CONFIG_H_
