#include "tools/weft-sim/sweep_run.h"

#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "harness/sim_cluster.h"

namespace weft::sim::cli {
namespace {

// True when some surviving rank ended with an error while another ended
// OK and was never told: its group still looked healthy at the end of the
// run. (A rank whose part finished before the failure ends OK with the
// right bytes; the peers' abort then reaches it and fails its group.)
bool disagree(const harness::CaseRun& run, const World& world) {
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

// Runs the case's collectives in order; the first that does not end
// correct decides the verdict (the group refuses later calls by design).
absl::Status run_ops(const SweepCase& c, harness::SimCluster& cluster,
                     SweepRun* out) {
  for (size_t i = 0; i < c.ops.size(); ++i) {
    harness::RunOptions options;
    options.data_seed = c.seed + i;
    options.timeout_ns = kSweepDeadlineNs;
    absl::StatusOr<harness::CaseRun> run = cluster.run(c.ops[i], options);
    if (!run.ok()) return run.status();
    ++out->ops_run;
    out->faults_injected += run->faults_injected;
    out->verdict = run->outcome.verdict;
    out->summary = run->outcome.summary();
    if (out->verdict == harness::Verdict::kCorrect) continue;
    out->ranks_disagree = out->verdict != harness::Verdict::kHang &&
                          disagree(*run, cluster.world());
    break;
  }
  if (c.ops.empty()) out->summary = "correct";
  return absl::OkStatus();
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
  SweepRun out;
  if (absl::Status s = run_ops(c, *cluster, &out); !s.ok()) return s;
  World& w = cluster->world();
  out.trace_hash = w.trace().hash();
  out.faults_by_kind = w.counters().faults;
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
