// The flags every weft-sim subcommand shares to describe a simulated world:
// ranks or device JSON, topology, link model, fault rates and plan, seed,
// Apple limits, time limit, trace file. Values are validated here so bad
// input exits 2 with one line naming the flag.
#ifndef WEFT_SIM_CLI_WORLD_FLAGS_H_
#define WEFT_SIM_CLI_WORLD_FLAGS_H_

#include <string>

#include "absl/status/statusor.h"
#include "sim/world.h"

namespace weft::sim::cli {

struct WorldFlags {
  WorldOptions options;
  std::string topology_name;  // "mesh", "ring" or the device JSON path
  std::string link_name;      // as given to --link
  std::string trace_path;     // empty: no trace file
};

// Reads and validates the shared flags (after absl::ParseCommandLine).
absl::StatusOr<WorldFlags> world_flags();

}  // namespace weft::sim::cli

#endif  // WEFT_SIM_CLI_WORLD_FLAGS_H_
