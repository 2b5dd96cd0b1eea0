// `weft-devices discover` and `weft-devices check --devices=FILE`: one
// process per machine, joined by the side channel as a group is
// (rendezvous/config.h's variables: the rank, JACCL_COORDINATOR, WEFT_SIZE;
// or the flags, which win), probing the verbs fabric's devices
// (wiring/discovery.h).
//
// discover prints the wiring as a table, JACCL's device JSON for it and,
// with --ip, the TCP ring hostfile of the same machines (every rank's
// addresses, ports from 32323 as mlx.launch numbers them). check probes
// what the file declares, then every other pair of devices, prints one
// line per wrong entry (wiring/check.h) and the corrected file, and exits 1
// when anything is wrong.
#ifndef WEFT_TOOLS_WEFT_DEVICES_WIRING_COMMAND_H_
#define WEFT_TOOLS_WEFT_DEVICES_WIRING_COMMAND_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fabric/topology.h"
#include "rendezvous/config.h"

namespace weft::tools::weft_devices {

struct WiringArgs {
  // check: the declared file; empty for discover.
  std::string devices_file;
  // Override the environment when set.
  std::optional<uint32_t> rank;
  std::optional<uint32_t> ranks;
  std::string coordinator;
  // This machine's IP addresses for the TCP hostfile (discover).
  std::vector<std::string> ips;
  // The RDMA library (empty: $WEFT_VERBS_LIBRARY, else the system's).
  std::string library;
};

// The Config the command joins with: the environment under the flags, the
// device variable set to auto and, for a check, the size to the `declared`
// file's ranks; the fabric verbs. InvalidArgument saying what to set.
absl::StatusOr<Config> wiring_config(const WiringArgs& args,
                                     const Topology* declared,
                                     const EnvLookup& getenv);

// Runs discover (`check` false) or check; prints; returns the exit code:
// 0 found (discover) or the file matches (check), 1 a failure or a wrong
// file, 2 bad input.
int run_wiring_command(const WiringArgs& args, bool check,
                       const EnvLookup& getenv);

}  // namespace weft::tools::weft_devices

#endif  // WEFT_TOOLS_WEFT_DEVICES_WIRING_COMMAND_H_
