#include "tools/weft-sim/sweep_run.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "harness/program_run.h"
#include "harness/sim_cluster.h"

namespace weft::sim::cli {
namespace {

// True when some surviving rank ended with an error while another ended
// OK and was never told: its group still looked healthy at the end of the
// run. (A rank whose part finished before the failure ends OK with the
// right bytes; the peers' abort then reaches it and fails its group.)
bool disagree(const harness::ProgramRun& run, const World& world) {
  bool any_unaware = false;
  bool any_error = false;
  for (uint32_t r = 0; r < run.ranks.size(); ++r) {
    if (world.crashed(r)) continue;
    const harness::RankOutcome& rank = run.ranks[r];
    if (!rank.first_error.ok()) {
      any_error = true;
    } else if (!rank.told_of_failure) {
      any_unaware = true;
    }
  }
  return any_unaware && any_error;
}

bool fatal_fault(const std::array<uint64_t, kFaultKindCount>& by_kind) {
  for (FaultKind k : {FaultKind::kCrash, FaultKind::kLinkDown,
                      FaultKind::kQpError, FaultKind::kError}) {
    if (by_kind[static_cast<size_t>(k)] > 0) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<SweepRun> run_sweep_case(const SweepCase& c,
                                        const SweepRunOptions& options) {
  WorldOptions world = c.world;
  if (options.faults) world.faults = *options.faults;
  world.keep_trace_events = !options.trace_path.empty();
  GroupOptions group = c.group;
  group.recovery.enabled = options.recovery;
  absl::StatusOr<harness::SimCluster> cluster =
      harness::SimCluster::create(std::move(world), group);
  if (!cluster.ok()) return cluster.status();
  const harness::ProgramRunOptions run_options{.data_seed = c.seed,
                                               .timeout_ns = c.deadline_ns,
                                               .linger_ns = kSweepLingerNs};
  absl::StatusOr<harness::ProgramRun> run =
      harness::run_program(*cluster, c.program, run_options);
  if (!run.ok()) return run.status();
  World& w = cluster->world();
  SweepRun out;
  out.verdict = run->outcome.verdict;
  out.summary = run->outcome.summary();
  out.ranks_disagree =
      out.verdict != harness::Verdict::kHang && disagree(*run, w);
  out.ops_total = static_cast<uint32_t>(c.program.ops.size());
  out.ops_correct = run->ops_correct;
  out.end_ns = run->end_ns;
  out.trace_hash = w.trace().hash();
  out.faults_by_kind = w.counters().faults;
  out.faults_injected = w.counters().faults_total();
  out.fatal = fatal_fault(out.faults_by_kind);
  // Without recovery a single lost frame ends a run: liveness is a promise
  // of recovery only.
  out.not_live = options.recovery && !out.fatal &&
                 out.verdict != harness::Verdict::kCorrect;
  if (options.want_injected) out.injected = w.injected_faults();
  if (!options.trace_path.empty()) {
    if (absl::Status s = w.trace().write_perfetto_json(options.trace_path);
        !s.ok()) {
      return s;
    }
  }
  return out;
}

}  // namespace weft::sim::cli
