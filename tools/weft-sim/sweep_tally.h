// What `weft-sim sweep` counts while it runs and prints at the end: seeds by
// verdict, oracle failures (ranks that disagree, runs that do not repeat,
// seeds without a fatal fault that did not end correct), the liveness line
// (seeds no fatal fault struck: how many ended correct), the combined
// trace hash, and each seed's wall time for the cost line.
#ifndef WEFT_TOOLS_WEFT_SIM_SWEEP_TALLY_H_
#define WEFT_TOOLS_WEFT_SIM_SWEEP_TALLY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "harness/outcome.h"
#include "tools/weft-sim/row_runner.h"
#include "tools/weft-sim/sweep_run.h"

namespace weft::tools::weft_sim {

struct SweepTally {
  uint64_t seeds = 0;
  uint64_t by_verdict[harness::kVerdictCount] = {};
  uint64_t disagree = 0;
  uint64_t nondeterministic = 0;
  uint64_t failed = 0;          // seeds that failed any oracle
  uint64_t not_live = 0;        // SweepRun::not_live
  uint64_t nonfatal_seeds = 0;  // no fatal fault struck
  uint64_t nonfatal_correct = 0;
  uint64_t folded_hash = kFoldHashStart;
  std::vector<double> wall_s;  // per seed, in the order run

  // Counts one seed. `failed_oracle`: the seed failed one of the sweep's
  // oracles; `wall_s`: what it cost.
  void add(const SweepRun& run, bool deterministic, bool failed_oracle,
           double seed_wall_s);
};

// "seed cost: median 12.3 ms, p99 456.7 ms, max 1.2 s (seed 42)": the wall
// time per seed (not in sweep_table: it differs from run to run).
std::string sweep_cost_line(const SweepTally& tally, uint64_t first_seed,
                            uint64_t shard_index, uint64_t shard_count);

// The summary table, the target line and the failure count (no wall time,
// so the same flags print the same text).
std::string sweep_table(const SweepTally& tally, bool check_determinism);

// "correct 97  typed error 3  failed 0": the counts progress shows.
std::string sweep_progress_counts(const SweepTally& tally);

}  // namespace weft::tools::weft_sim

#endif  // WEFT_TOOLS_WEFT_SIM_SWEEP_TALLY_H_
