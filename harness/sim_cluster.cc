#include "harness/sim_cluster.h"

#include <algorithm>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/absl_compat.h"
#include "collectives/inprocess_bootstrap.h"
#include "collectives/registered_memory.h"
#include "fabric/topology_check.h"
#include "harness/call_program.h"
#include "harness/rank_call.h"
#include "harness/reference.h"
#include "harness/script_program.h"

namespace weft::harness {

using sim::Counters;
using sim::RankProgram;
using sim::World;
using sim::WorldOptions;

namespace {

// How long a finished run's in-flight frames get to land.
constexpr TimeNs kSettleNs = kNsPerMs;

}  // namespace
namespace {

absl::Status check_cables(const CollectiveSpec& spec, Algorithm algorithm,
                          const Topology& topology,
                          const TopologyWording& wording) {
  const uint32_t n = topology.ranks();
  if (spec.kind == CollectiveKind::kSendRecv) {
    for (uint32_t r = 0; r < n; ++r) {
      if (!topology.connected(r, (r + 1) % n)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "send/recv sends from each rank to the next, but ranks %u and %u "
            "are not joined by a cable",
            r, (r + 1) % n));
      }
    }
    return absl::OkStatus();
  }
  // The algorithm as resolved: auto is the ring on what is not a full mesh,
  // so it needs what the ring needs, and gets the same line.
  return check_topology(topology,
                        algorithm == Algorithm::kRing ? TopologyNeeds::kRing
                                                      : TopologyNeeds::kMesh,
                        wording);
}

}  // namespace

SimCluster::SimCluster(std::unique_ptr<World> world, GroupOptions group_options)
    : world_(std::move(world)), group_options_(group_options) {}

SimCluster::~SimCluster() = default;

absl::StatusOr<SimCluster> SimCluster::create(WorldOptions world,
                                              const GroupOptions& group) {
  const Topology topology = world.topology;
  absl::StatusOr<std::unique_ptr<World>> made = World::create(std::move(world));
  if (!made.ok()) return made.status();
  SimCluster cluster(*std::move(made), group);
  std::vector<Fabric*> fabrics;
  for (uint32_t r = 0; r < cluster.world_->ranks(); ++r) {
    fabrics.push_back(&cluster.world_->fabric(r));
  }
  absl::StatusOr<std::vector<std::unique_ptr<Group>>> groups =
      form_groups_in_process(fabrics, topology, group);
  if (!groups.ok()) return groups.status();
  cluster.groups_ = *std::move(groups);
  return cluster;
}

ScriptRun SimCluster::run_scripts(std::vector<std::vector<Starter>> scripts) {
  std::vector<Group*> groups;
  for (const auto& g : groups_) groups.push_back(g.get());
  return run_scripts_on(std::move(scripts), std::move(groups));
}

ScriptRun SimCluster::run_scripts_on(std::vector<std::vector<Starter>> scripts,
                                     std::vector<Group*> groups) {
  std::vector<std::unique_ptr<ScriptProgram>> programs;
  std::vector<RankProgram*> raw;
  for (uint32_t r = 0; r < scripts.size(); ++r) {
    Group* g = r < groups.size() ? groups[r] : nullptr;
    programs.push_back(g == nullptr ? nullptr
                                    : std::make_unique<ScriptProgram>(
                                          *g, std::move(scripts[r])));
    raw.push_back(programs.back().get());
  }
  ScriptRun out;
  out.run = world_->run(raw);
  for (const auto& p : programs) {
    out.results.push_back(p ? p->results() : std::vector<absl::Status>{});
  }
  return out;
}

absl::StatusOr<std::unique_ptr<Cluster>> SimFactory::create(
    const ClusterSpec& spec, const GroupOptions& options) const {
  WorldOptions w;
  w.topology = spec.topology;
  w.link = spec.link == LinkKind::kIdeal ? sim::LinkModel::ideal()
                                         : sim::LinkModel::tb5();
  w.faults = spec.faults;
  w.seed = spec.seed;
  w.time_limit_ns = spec.time_limit_ns;
  w.keep_trace_events = false;  // the hash is kept either way
  absl::StatusOr<SimCluster> c = SimCluster::create(std::move(w), options);
  if (!c.ok()) return c.status();
  return std::make_unique<SimCluster>(*std::move(c));
}

void SimCluster::cancel_unfinished(
    const std::vector<std::unique_ptr<CallProgram>>& programs) {
  // An operation still queued after a hang holds pointers into buffers
  // about to be freed: cancel it now, so no later step writes into them.
  for (uint32_t r = 0; r < programs.size(); ++r) {
    if (programs[r]->finished()) continue;
    groups_[r]->abort();
    groups_[r]->progress();
  }
}

absl::Status check_collective(const CollectiveSpec& spec,
                              const Topology& topology,
                              const GroupOptions& options,
                              const TopologyWording& wording) {
  absl::StatusOr<CollectiveShape> shape = shape_of(spec, topology.ranks());
  if (!shape.ok()) return shape.status();
  if (spec.in_place && spec.kind == CollectiveKind::kSendRecv) {
    return absl::InvalidArgumentError(
        "send/recv has no in-place form (each rank sends and receives "
        "different data)");
  }
  return check_cables(
      spec, resolve_algorithm(spec, *shape, topology.is_full_mesh(), options),
      topology, wording);
}

absl::Status SimCluster::check(const CollectiveSpec& spec) const {
  return check_collective(spec, world_->options().topology, group_options_);
}

absl::StatusOr<CaseRun> SimCluster::run(const CollectiveSpec& spec,
                                        const RunOptions& options) {
  if (absl::Status s = check(spec); !s.ok()) return s;
  const uint32_t n = ranks();
  CaseRun out;
  out.shape = *shape_of(spec, n);
  out.algorithm = resolve_algorithm(spec, out.shape,
                                    world_->options().topology.is_full_mesh(),
                                    group_options_);
  Reference reference(spec, out.shape, n, options.data_seed,
                      std::move(spare_reduced_));
  spare_buffers_.resize(n);
  std::vector<std::unique_ptr<RankCall>> calls;
  std::vector<std::unique_ptr<CallProgram>> programs;
  std::vector<RankProgram*> raw;
  const CallOptions call{out.algorithm, options.timeout_ns};
  for (uint32_t r = 0; r < n; ++r) {
    calls.push_back(
        std::make_unique<RankCall>(reference, r, std::move(spare_buffers_[r])));
    buffer_allocations_ += calls[r]->allocations();
    programs.push_back(std::make_unique<CallProgram>(
        *groups_[r], calls[r]->starters(call), options.iterations));
    raw.push_back(programs.back().get());
  }
  // Released before the buffers they name (declared after `calls`).
  std::vector<RegisteredMemory> registrations;
  for (uint32_t r = 0; r < n && options.registered; ++r) {
    if (absl::Status s = calls[r]->register_with(*groups_[r], &registrations);
        !s.ok()) {
      return s;
    }
  }
  const Counters before = world_->counters();
  const TimeNs start_ns = world_->clock().now_ns();
  out.run = world_->run(raw);
  out.elapsed_ns = out.run.end_ns - start_ns;
  const Counters& after = world_->counters();
  out.frames = after.frames_sent - before.frames_sent;
  out.faults_injected = after.faults_total() - before.faults_total();
  // Let the last aborts land, so a rank that finished OK before a failure
  // elsewhere learns of it (RankOutcome::told_of_failure).
  if (out.run.completed()) world_->settle(raw, kSettleNs);
  for (uint32_t r = 0; r < n; ++r) {
    RankOutcome rank;
    const bool crashed = world_->crashed(r);
    rank.finished = crashed || programs[r]->finished();
    rank.first_error = programs[r]->first_error();
    rank.told_of_failure = !crashed && !groups_[r]->health().ok();
    rank.checked = options.check && !crashed && programs[r]->finished() &&
                   rank.first_error.ok();
    if (rank.checked) {
      rank.wrong_elements = reference.wrong_elements(r, calls[r]->output());
      out.wrong_elements += rank.wrong_elements;
    }
    out.ranks.push_back(std::move(rank));
  }
  out.outcome = classify(out.run, out.ranks);
  cancel_unfinished(programs);
  const bool all_ok = std::all_of(
      out.ranks.begin(), out.ranks.end(),
      [](const RankOutcome& r) { return r.finished && r.first_error.ok(); });
  if (!registrations.empty() && !all_ok) {
    // A failed operation's receives may still land in its registered
    // output: the buffers stay until the groups close.
    auto kept = std::make_shared<RegisteredCalls>();
    kept->calls = std::move(calls);
    kept->registrations = std::move(registrations);
    keep_until_closed(std::move(kept));
  }
  registrations.clear();  // released before their buffers are reused
  recycle(calls, reference);
  return out;
}

void SimCluster::recycle(std::vector<std::unique_ptr<RankCall>>& calls,
                         Reference& reference) {
  buffer_allocations_ += reference.allocated() ? 1 : 0;
  spare_reduced_ = reference.release_reduced();
  // Kept calls (above) leave their ranks no buffers: the next run
  // allocates.
  for (uint32_t r = 0; r < calls.size(); ++r) {
    spare_buffers_[r] = calls[r]->release_buffers();
  }
}

}  // namespace weft::harness
