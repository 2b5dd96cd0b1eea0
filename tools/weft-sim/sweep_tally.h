// What `weft-sim sweep` counts while it runs and prints at the end: seeds by
// verdict, oracle failures (ranks that disagree, runs that do not repeat),
// issue 5's recovery target (seeds with loss <= 1% and no fatal fault: how
// many ended correct), and the combined trace hash.
#ifndef WEFT_TOOLS_WEFT_SIM_SWEEP_TALLY_H_
#define WEFT_TOOLS_WEFT_SIM_SWEEP_TALLY_H_

#include <cstdint>
#include <string>

#include "harness/outcome.h"
#include "tools/weft-sim/row_runner.h"
#include "tools/weft-sim/sweep_run.h"

namespace weft::sim::cli {

// Issue 5's target population: loss up to this rate and no fatal fault.
inline constexpr double kTargetMaxLoss = 0.01;

struct SweepTally {
  uint64_t seeds = 0;
  uint64_t by_verdict[harness::kVerdictCount] = {};
  uint64_t disagree = 0;
  uint64_t nondeterministic = 0;
  uint64_t failed = 0;  // seeds that failed any oracle
  uint64_t target_seeds = 0;
  uint64_t target_correct = 0;
  uint64_t folded_hash = kFoldHashStart;

  // Counts one seed. `in_target`: loss <= kTargetMaxLoss, no fatal fault;
  // `failed_oracle`: the seed failed one of the sweep's oracles.
  void add(const SweepRun& run, bool in_target, bool deterministic,
           bool failed_oracle);
};

// The summary table, the target line and the failure count (no wall time,
// so the same flags print the same text).
std::string sweep_table(const SweepTally& tally, bool check_determinism);

// "correct 97  typed error 3  failed 0": the counts progress shows.
std::string sweep_progress_counts(const SweepTally& tally);

}  // namespace weft::sim::cli

#endif  // WEFT_TOOLS_WEFT_SIM_SWEEP_TALLY_H_
