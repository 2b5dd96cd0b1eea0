// One seed of `weft-sim sweep` (and each trial of `weft-sim shrink`): the
// seed's case (sweep_case.h) on a fresh simulated cluster, its program run
// (harness/program_run.h: every operation checked against its Reference),
// and the oracles applied: the verdict must be an allowed one (correct or
// typed error; outcome.h), every surviving rank must agree on the outcome
// class (all succeeded, or all failed), and liveness: a run that no fatal
// fault struck (crash, dead link, queue pair error, error completion) must
// end correct, since its faults stop and recovery has time to repair what
// they did.
#ifndef WEFT_TOOLS_WEFT_SIM_SWEEP_RUN_H_
#define WEFT_TOOLS_WEFT_SIM_SWEEP_RUN_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "harness/outcome.h"
#include "sim/faults.h"
#include "tools/weft-sim/sweep_case.h"

namespace weft::sim::cli {

struct SweepRunOptions {
  bool recovery = true;  // GroupOptions::recovery.enabled
  // Replaces the seed's drawn faults (rates and timed faults) when set.
  std::optional<FaultPlan> faults;
  // Write the run's Perfetto trace here ("": none).
  std::string trace_path;
  // Return World::injected_faults() in SweepRun::injected.
  bool want_injected = false;
};

struct SweepRun {
  harness::Verdict verdict = harness::Verdict::kCorrect;
  std::string summary;  // Outcome::summary() of the deciding collective
  // Surviving ranks ended differently: some OK, some with an error.
  bool ranks_disagree = false;
  uint32_t ops_total = 0;    // operations of the program
  uint32_t ops_correct = 0;  // ended OK and correct on every member
  // A fatal fault struck: a crash, a dead link, a queue pair error or an
  // error completion. Without one the run must end correct (liveness).
  bool fatal = false;
  // With recovery on, no fatal fault, yet the verdict is not correct.
  bool not_live = false;
  TimeNs end_ns = 0;  // virtual time when the last rank ended its part
  uint64_t trace_hash = 0;
  uint64_t faults_injected = 0;
  // The world's faults over the whole run, by FaultKind.
  std::array<uint64_t, kFaultKindCount> faults_by_kind{};
  std::vector<ScriptedFault> injected;  // with want_injected
};

// Runs `c` with `options`. Errors only for what is no outcome of the run:
// a cluster that cannot be built, a trace file that cannot be written.
absl::StatusOr<SweepRun> run_sweep_case(const SweepCase& c,
                                        const SweepRunOptions& options);

}  // namespace weft::sim::cli

#endif  // WEFT_TOOLS_WEFT_SIM_SWEEP_RUN_H_
