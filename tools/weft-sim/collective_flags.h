// The flags that pick one collective run for `weft-sim run` (and for the
// default study, which hands over to `run` when any of them is given):
// --op, --bytes, --dtype, --redop, --root, --algorithm, --in_place,
// --iterations, --timeout_ms; and --recovery, which sweep and shrink read
// too (the FlagSet kCollectiveFlags). Values are validated here so bad input
// exits 2 with one line naming the flag.
#ifndef WEFT_TOOLS_WEFT_SIM_COLLECTIVE_FLAGS_H_
#define WEFT_TOOLS_WEFT_SIM_COLLECTIVE_FLAGS_H_

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/statusor.h"
#include "collectives/group_options.h"
#include "fabric/clock.h"
#include "harness/collective_spec.h"
#include "tools/cli/flag_scope.h"

namespace weft::tools::weft_sim {

struct CollectiveFlags {
  harness::CollectiveSpec spec;
  uint32_t iterations = 1;
  TimeNs timeout_ns = 0;  // 0: the group's default
  GroupOptions group;     // recovery.enabled from --recovery
};

// --op, --bytes, --dtype, --redop, --root, --algorithm, --in_place,
// --iterations, --timeout_ms, --recovery.
extern const cli::FlagSet kCollectiveFlags;

// --recovery: true for "on" (the default), false for "off".
absl::StatusOr<bool> recovery_flag();

// Reads and validates the flags (after absl::ParseCommandLine).
absl::StatusOr<CollectiveFlags> collective_flags();

// True when `args` (normalised, "--name[=value]") set any of the flags
// other than --recovery: a collective to run.
bool sets_collective_flag(std::span<const std::string> args);

}  // namespace weft::tools::weft_sim

#endif  // WEFT_TOOLS_WEFT_SIM_COLLECTIVE_FLAGS_H_
