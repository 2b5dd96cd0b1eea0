// The flags of `weft-sim sweep` and `weft-sim shrink`: which seeds
// (--seeds, --first-seed, --shard i/N, or shrink's --seed), --recovery,
// --check-determinism, --require-correct, --faults (a plan replacing each
// seed's drawn faults: how a shrunk plan is replayed), --keep-ops (the
// operations of each seed's program to keep: how a shrunk program is
// replayed) and --out. Each command
// accepts the flags its FlagSet names (kSweepFlags, kShrinkFlags), whichever
// file defines them; bad input exits 2 with one line naming the flag.
#ifndef WEFT_TOOLS_WEFT_SIM_SWEEP_FLAGS_H_
#define WEFT_TOOLS_WEFT_SIM_SWEEP_FLAGS_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/faults.h"
#include "tools/cli/flag_scope.h"

namespace weft::tools::weft_sim {

inline constexpr uint64_t kMaxSweepSeeds = 100'000'000;
inline constexpr uint64_t kMaxShards = 1'000'000;
inline constexpr char kDefaultSweepOut[] = "sweep-out";

struct SweepFlags {
  uint64_t seeds = 0;
  uint64_t first_seed = 1;
  uint64_t shard_index = 0;  // runs seed index i with i % shard_count ==
  uint64_t shard_count = 1;  // shard_index
  bool check_determinism = false;
  bool recovery = true;
  bool require_correct = false;  // a typed error fails the seed too
  std::optional<sim::FaultPlan> faults;
  std::string faults_path;  // as given
  // Only these operations of each seed's program (--keep-ops).
  std::optional<std::vector<uint32_t>> keep_ops;
  std::string out_dir;
};

struct ShrinkFlags {
  uint64_t seed = 0;
  bool recovery = true;
  std::string out_path;  // default shrink-<seed>.plan
};

// --seeds, --first_seed, --shard, --check_determinism, --recovery,
// --require_correct, --faults, --keep_ops, --out.
extern const cli::FlagSet kSweepFlags;
// --seed, --recovery, --out.
extern const cli::FlagSet kShrinkFlags;

// Sweep's flags' values (after absl::ParseCommandLine).
absl::StatusOr<SweepFlags> sweep_flags();

// Shrink's flags' values; `args` are the arguments as given, normalised
// (--seed is required).
absl::StatusOr<ShrinkFlags> shrink_flags(std::span<const std::string> args);

}  // namespace weft::tools::weft_sim

#endif  // WEFT_TOOLS_WEFT_SIM_SWEEP_FLAGS_H_
