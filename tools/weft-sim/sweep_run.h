// One seed of `weft-sim sweep` (and each trial of `weft-sim shrink`): the
// seed's case (sweep_case.h) on a fresh simulated cluster, its program run
// (harness/program_run.h: every operation checked against its Reference),
// and the oracles applied: the verdict must be an allowed one (correct or
// typed error; outcome.h), every surviving rank must agree on the outcome
// class (all succeeded, or all failed) unless no abort could reach it
// (ranks_disagree below), and liveness: a run that no fatal
// fault struck (crash, dead link, queue pair error, error completion) must
// end correct, since its faults stop and recovery has time to repair what
// they did. A seed's virtual-time limit lies past every deadline of its
// program, so a seed that reaches it is a hang, never the verdict "time
// limit" (the user's own budget, --time_limit_ms, which a sweep has not).
#ifndef WEFT_TOOLS_WEFT_SIM_SWEEP_RUN_H_
#define WEFT_TOOLS_WEFT_SIM_SWEEP_RUN_H_

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "harness/outcome.h"
#include "sim/faults.h"
#include "tools/weft-sim/sweep_case.h"

namespace weft::tools::weft_sim {

struct SweepRunOptions {
  bool recovery = true;  // GroupOptions::recovery.enabled
  // Replaces the seed's drawn faults (rates and timed faults) when set.
  std::optional<sim::FaultPlan> faults;
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
  // A fatal fault struck: a crash, a dead link (other than one cable of a
  // pair joined by several, the pair's only link_down: its lanes move), a
  // queue pair error or an error completion. Without one the run must end
  // correct (liveness).
  bool fatal = false;
  // With recovery on, no fatal fault, yet the verdict is not correct.
  bool not_live = false;
  TimeNs end_ns = 0;  // virtual time when the last rank ended its part
  uint64_t trace_hash = 0;
  uint64_t faults_injected = 0;
  // The world's faults over the whole run, by FaultKind.
  std::array<uint64_t, sim::kFaultKindCount> faults_by_kind{};
  std::vector<sim::ScriptedFault> injected;  // with want_injected
};

// The disagreement oracle. A surviving rank that ended every operation OK
// and whose group still looks healthy is "unaware"; one that ended with an
// error or was told of a failure is "aware". An aware rank sends every
// peer an abort, and a peer that takes one becomes aware in turn, so the
// news travels along every direction `delivers(from, to)` still carries
// (World::delivers: no crash, no dead link, no queue pair in error). The
// ranks disagree when some survivor ended with an error and an unaware
// survivor could have been reached from an aware one. An unaware rank no
// abort can reach (its only peer's queue pair is in error, say, after its
// own part ended) learns at its next operation instead: UC gives no other
// way to tell it.
bool ranks_disagree(std::span<const harness::RankOutcome> ranks,
                    const std::function<bool(uint32_t)>& crashed,
                    const std::function<bool(uint32_t, uint32_t)>& delivers);

// Runs `c` with `options`. Errors only for what is no outcome of the run:
// a cluster that cannot be built, a trace file that cannot be written.
absl::StatusOr<SweepRun> run_sweep_case(const SweepCase& c,
                                        const SweepRunOptions& options);

}  // namespace weft::tools::weft_sim

#endif  // WEFT_TOOLS_WEFT_SIM_SWEEP_RUN_H_
