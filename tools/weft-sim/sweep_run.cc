#include "tools/weft-sim/sweep_run.h"

#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/topology.h"
#include "harness/program_run.h"
#include "harness/sim_cluster.h"
#include "sim/faults.h"

namespace weft::tools::weft_sim {
namespace {

// A link_down that recovery survives, the only link_down of its pair: one
// cable of a pair joined by several (its lanes move to another cable), or
// a pair's only cable on a mesh of three ranks or more (its lane goes
// through the others; docs/fault-tolerance.md, "A dead cable").
bool survivable_pull(const sim::ScriptedFault& f,
                     std::span<const sim::ScriptedFault> script,
                     const Topology& topology) {
  if (f.kind != sim::FaultKind::kLinkDown) return false;
  const bool other_cable = f.cable != sim::kAllCables &&
                           topology.devices(f.rank, f.peer).size() >= 2;
  const bool only_cable = topology.devices(f.rank, f.peer).size() == 1 &&
                          topology.ranks() >= 3 &&
                          topology.is_full_mesh();
  if (!other_cable && !only_cable) return false;
  for (const sim::ScriptedFault& other : script) {
    if (&other != &f && other.kind == sim::FaultKind::kLinkDown &&
        ((other.rank == f.rank && other.peer == f.peer) ||
         (other.rank == f.peer && other.peer == f.rank))) {
      return false;
    }
  }
  return true;
}

bool fatal_fault(const std::array<uint64_t, sim::kFaultKindCount>& by_kind,
                 std::span<const sim::ScriptedFault> script,
                 const Topology& topology) {
  for (sim::FaultKind k : {sim::FaultKind::kCrash, sim::FaultKind::kQpError,
                           sim::FaultKind::kError}) {
    if (by_kind[static_cast<size_t>(k)] > 0) return true;
  }
  if (by_kind[static_cast<size_t>(sim::FaultKind::kLinkDown)] == 0) {
    return false;
  }
  for (const sim::ScriptedFault& f : script) {
    if (f.kind == sim::FaultKind::kLinkDown &&
        !survivable_pull(f, script, topology)) {
      return true;
    }
  }
  return false;
}

}  // namespace

bool ranks_disagree(std::span<const harness::RankOutcome> ranks,
                    const std::function<bool(uint32_t)>& crashed,
                    const std::function<bool(uint32_t, uint32_t)>& delivers) {
  const auto n = static_cast<uint32_t>(ranks.size());
  bool any_error = false;
  std::vector<bool> aware(n, false);
  std::vector<uint32_t> frontier;
  for (uint32_t r = 0; r < n; ++r) {
    if (crashed(r)) continue;
    any_error |= !ranks[r].first_error.ok();
    if (!ranks[r].first_error.ok() || ranks[r].told_of_failure) {
      aware[r] = true;
      frontier.push_back(r);
    }
  }
  if (!any_error) return false;
  // Every survivor an abort can reach, hop by hop, from the aware ones.
  std::vector<bool> reached = aware;
  while (!frontier.empty()) {
    const uint32_t from = frontier.back();
    frontier.pop_back();
    for (uint32_t to = 0; to < n; ++to) {
      if (reached[to] || crashed(to) || !delivers(from, to)) continue;
      reached[to] = true;
      frontier.push_back(to);
    }
  }
  for (uint32_t r = 0; r < n; ++r) {
    if (!crashed(r) && !aware[r] && reached[r]) return true;
  }
  return false;
}

absl::StatusOr<SweepRun> run_sweep_case(const SweepCase& c,
                                        const SweepRunOptions& options) {
  sim::WorldOptions world = c.world;
  if (options.faults) world.faults = *options.faults;
  const sim::FaultPlan world_faults = world.faults;
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
  sim::World& w = cluster->world();
  SweepRun out;
  out.verdict = run->outcome.verdict;
  out.summary = run->outcome.summary();
  if (out.verdict == harness::Verdict::kTimeLimit) {
    // A seed's time limit is not a budget the user chose: it lies past
    // every operation's deadline (sweep_case.cc), so reaching it means a
    // deadline did not end its operation: a hang.
    out.verdict = harness::Verdict::kHang;
    out.summary = "hang (time limit)";
  }
  out.ranks_disagree =
      out.verdict != harness::Verdict::kHang &&
      ranks_disagree(
          run->ranks, [&w](uint32_t r) { return w.crashed(r); },
          [&w](uint32_t from, uint32_t to) { return w.delivers(from, to); });
  out.ops_total = static_cast<uint32_t>(c.program.ops.size());
  out.ops_correct = run->ops_correct;
  out.end_ns = run->end_ns;
  out.trace_hash = w.trace().hash();
  out.faults_by_kind = w.counters().faults;
  out.faults_injected = w.counters().faults_total();
  out.fatal = fatal_fault(out.faults_by_kind, world_faults.script,
                          c.world.topology);
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

}  // namespace weft::tools::weft_sim
