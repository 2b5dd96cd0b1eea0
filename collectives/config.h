// Config: what one process needs to join a group on hardware (its rank, the
// group's size and cabling, where rank 0 listens), read from MLX JACCL's
// environment variables and device JSON so existing launch scripts work
// unchanged, or filled in by hand.
//
// Environment variables, in order of precedence (the first one set wins; an
// alias pair set to different values is an error naming both):
//   rank         JACCL_RANK, MLX_RANK, then the launchers' own
//                OMPI_COMM_WORLD_RANK (mpirun), SLURM_PROCID (srun)
//   device JSON  JACCL_IBV_DEVICES, MLX_IBV_DEVICES: path to the file whose
//                devices[i][j] names the device(s) joining rank i to rank j;
//                the group's size is its number of rows
//   coordinator  JACCL_COORDINATOR, MLX_JACCL_COORDINATOR: "host:port" where
//                rank 0 listens (IPv4 address, "localhost" or a host name);
//                required when the group has more than one rank
//   ring         JACCL_RING, MLX_JACCL_RING: 1/0/true/false (default false)
//   secret       WEFT_SECRET: a shared secret every TCP connection (the
//                bootstrap's and the TCP fabric's) proves before it is
//                trusted; unset or empty: none. Any bytes; 32 random ones
//                recommended (e.g. `openssl rand -hex 32`); shorter ones,
//                even under 16 bytes, work but are easier to guess. Never
//                printed. Every rank must set the same one.
// The launcher variables are not checked against JACCL_RANK/MLX_RANK: a
// script that sets those has chosen its ranks itself.
#ifndef WEFT_COLLECTIVES_CONFIG_H_
#define WEFT_COLLECTIVES_CONFIG_H_

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "fabric/topology.h"

namespace weft {

// Looks up an environment variable: nullptr when it is not set.
using EnvLookup = std::function<const char*(const char*)>;
// Reads and parses the device JSON at a path.
using DeviceLoader =
    std::function<absl::StatusOr<Topology>(const std::string& path)>;

// A "host:port" split in two.
struct HostPort {
  std::string host;
  uint16_t port = 0;
};

// Splits "host:port". InvalidArgument (naming `text`) when the colon, the
// host or the port is missing, or the port is not a number in 0..65535.
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
  std::string coordinator;  // "host:port"; unused when size == 1
  bool ring = false;
  // WEFT_SECRET: what every TCP connection proves (fabric/secret_proof.h);
  // empty: none.
  std::string secret;
  // How long ranks keep trying to reach rank 0 and wait for the whole group
  // to join.
  TimeNs connect_timeout_ns = kDefaultConnectTimeoutNs;
  // How long one exchange of destinations may take.
  TimeNs exchange_timeout_ns = kDefaultExchangeTimeoutNs;

  // Reads the variables above through `getenv` (the process environment by
  // default) and the device JSON through `load_devices` (from the file by
  // default; a fuzzer or test may serve it from memory). The result has
  // passed validate(). InvalidArgument names the variable, its value and
  // what to set; NotFound when the device JSON file cannot be opened.
  static absl::StatusOr<Config> from_environment(
      const EnvLookup& getenv = ::getenv,
      const DeviceLoader& load_devices = &Topology::load_json_file);

  // OK when the fields agree: 1 <= size <= Topology::kMaxRanks, rank < size,
  // devices has `size` ranks and the cabling the algorithm needs (each rank
  // joined to its ring neighbours when `ring`, every pair otherwise), the
  // coordinator parses when size > 1, and the timeouts are in
  // 1 ns..kMaxTimeoutNs. Otherwise InvalidArgument saying what to fix.
  absl::Status validate() const;
};

}  // namespace weft

#endif  // WEFT_COLLECTIVES_CONFIG_H_
