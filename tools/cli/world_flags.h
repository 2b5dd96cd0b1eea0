// The flags that describe a simulated world, which weft-sim's study, run and
// p2p and weft-bench share: ranks or device JSON, topology, link model,
// fault rates and plan, seed, Apple limits, time limit, trace file (the
// FlagSet kWorldFlags). Values are validated here so bad input exits 2 with
// one line naming the flag.
#ifndef WEFT_TOOLS_CLI_WORLD_FLAGS_H_
#define WEFT_TOOLS_CLI_WORLD_FLAGS_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "fabric/topology_check.h"
#include "sim/world.h"
#include "tools/cli/flag_scope.h"

namespace weft::tools::cli {

struct WorldFlags {
  sim::WorldOptions options;
  std::string topology_name;  // "mesh", "ring" or the device JSON path
  std::string link_name;      // as given to --link
  std::string trace_path;     // empty: no trace file
  // What check_topology's lines start with: "--devices: <path>", or
  // "--topology=<name>" for a generated topology.
  std::string topology_source;

  // The words of check_topology's lines on this world's topology
  // (fabric/topology_check.h): its source, and the ring as --algorithm.
  // Valid while this WorldFlags is.
  TopologyWording wording() const;
};

// --ranks, --devices, --topology, --cables, --link, --loss, --duplicate,
// --reorder, --error, --faults, --seed, --apple_limits, --time_limit_ms,
// --trace.
extern const FlagSet kWorldFlags;
// The name of --trace, which weft-bench refuses (it measures many runs in
// one world; weft-sim run traces one).
inline constexpr std::string_view kTraceFlagName = "trace";

// Reads and validates the shared flags (after absl::ParseCommandLine). A
// device JSON must pass check_topology(..., TopologyNeeds::kLinks): every
// cable named both ways, as many each way, no rank joined to none.
absl::StatusOr<WorldFlags> world_flags();

}  // namespace weft::tools::cli

#endif  // WEFT_TOOLS_CLI_WORLD_FLAGS_H_
