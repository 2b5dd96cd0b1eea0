// SimCluster: the simulator's kind of Cluster (cluster.h). N simulated
// ranks (a sim::World built from WorldOptions: topology, link, faults,
// seed), one Group per rank formed in process, all stepped by the world's
// scheduler in one thread and virtual time. Beyond any Cluster it offers
// what only the simulator has: the World itself (fault plans, virtual
// clock, counters, trace) and runs of one collective on every rank, each
// rank's operations started asynchronously, reporting the virtual time it
// took, the frames and faults of the run, each rank's status, and the
// verdict against the Reference (outcome.h).
//
//   SimCluster cluster = *SimCluster::create(world_options, GroupOptions{});
//   CollectiveSpec spec{.kind = CollectiveKind::kAllReduce, .bytes = 1 << 20};
//   CaseRun run = *cluster.run(spec, RunOptions{});
//   // run.elapsed_ns, run.outcome.summary(), ...
//
// Runs on one cluster follow each other in virtual time. Once a run ends in
// an error the groups are failed and refuse later runs; make a new cluster.
// SimFactory makes SimClusters from a ClusterSpec, for the shared suite.
#ifndef WEFT_HARNESS_SIM_CLUSTER_H_
#define WEFT_HARNESS_SIM_CLUSTER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/group.h"
#include "collectives/group_options.h"
#include "fabric/topology_check.h"
#include "harness/cluster.h"
#include "harness/collective_spec.h"
#include "harness/outcome.h"
#include "harness/rank_call.h"
#include "harness/reference.h"
#include "sim/world.h"

namespace weft::harness {

class CallProgram;

struct RunOptions {
  // The rank's operations run this many times back to back.
  uint32_t iterations = 1;
  // Compare every output with the Reference after the last iteration.
  // REQUIRES for a meaningful check: out of place, or one iteration (in
  // place, each iteration overwrites the next one's input).
  bool check = true;
  // Seed of the input data.
  uint64_t data_seed = 1;
  // Deadline of each operation; 0: the group's timeout_ns.
  TimeNs timeout_ns = 0;
  // Register each rank's buffers with its group first
  // (Group::register_memory), so operations send from and receive into
  // them where they can; released when the run ends, or, where an
  // operation failed, kept with its buffers until the cluster closes
  // (SimCluster::keep_until_closed).
  bool registered = false;
};

struct CaseRun {
  CollectiveShape shape;
  Algorithm algorithm = Algorithm::kAuto;  // as resolved (collective_spec.h)
  sim::RunResult run;
  TimeNs elapsed_ns = 0;  // virtual time from the start to the last rank's end
  uint64_t frames = 0;    // frames that left a sender during the run
  uint64_t faults_injected = 0;
  uint64_t wrong_elements = 0;  // over every checked rank
  std::vector<RankOutcome> ranks;
  Outcome outcome;
};

// InvalidArgument when `spec` cannot run on a group of `topology` with
// `options`: a bad shape (shape_of), an algorithm needing cables the
// topology lacks (check_topology's line, in `wording`), send/recv without a
// cable from each rank to the next, in place send/recv.
absl::Status check_collective(const CollectiveSpec& spec,
                              const Topology& topology,
                              const GroupOptions& options,
                              const TopologyWording& wording = {});

class SimCluster final : public Cluster {
 public:
  // The world's errors (bad topology, link, faults) and group formation's.
  static absl::StatusOr<SimCluster> create(sim::WorldOptions world,
                                           const GroupOptions& group = {});
  SimCluster(SimCluster&&) = default;
  SimCluster& operator=(SimCluster&&) = default;
  ~SimCluster() override;

  uint32_t ranks() const { return size(); }
  sim::World& world() { return *world_; }
  const sim::World& world() const { return *world_; }
  const GroupOptions& group_options() const { return group_options_; }

  // Cluster.
  uint32_t size() const override {
    return static_cast<uint32_t>(groups_.size());
  }
  Group& group(uint32_t rank) override { return *groups_[rank]; }
  // Each rank's script runs as a ScriptProgram (script_program.h) under the
  // world's scheduler.
  ScriptRun run_scripts(std::vector<std::vector<Starter>> scripts) override;
  bool crashed(uint32_t rank) const override { return world_->crashed(rank); }
  uint64_t trace_hash() const override { return world_->trace().hash(); }
  std::optional<uint64_t> faults_injected() const override {
    return world_->counters().faults_total();
  }

  // scripts[r] runs on groups[r] (nullptr: rank r runs nothing), e.g. the
  // groups of a split.
  ScriptRun run_scripts_on(std::vector<std::vector<Starter>> scripts,
                           std::vector<Group*> groups);

  // Keeps `kept` until every group of the cluster is destroyed: a failed
  // operation's registered buffers and their handles, which must stay
  // valid until then (a receive posted into them may still complete:
  // docs/collectives.md).
  void keep_until_closed(std::shared_ptr<void> kept) {
    kept_.push_back(std::move(kept));
  }

  // check_collective() on this cluster's topology and options.
  absl::Status check(const CollectiveSpec& spec) const;

  // Runs `spec` on every rank. check()'s errors; otherwise the run, whatever
  // its outcome. Each rank's buffers and the reference's reduction are
  // kept for the next run, which allocates only what it needs beyond them.
  absl::StatusOr<CaseRun> run(const CollectiveSpec& spec,
                              const RunOptions& options);

  // Buffers run() allocated so far (a rank's input or output, the
  // reference's reduction): once per size a run grows to, not per run.
  uint64_t buffer_allocations() const { return buffer_allocations_; }

 private:
  SimCluster(std::unique_ptr<sim::World> world, GroupOptions group_options);
  void cancel_unfinished(
      const std::vector<std::unique_ptr<CallProgram>>& programs);

  // What the last run's calls and reference released (run()).
  void recycle(std::vector<std::unique_ptr<RankCall>>& calls,
               Reference& reference);

  std::unique_ptr<sim::World> world_;
  GroupOptions group_options_;
  std::vector<RankBuffers> spare_buffers_;  // per rank, between runs
  std::vector<std::byte> spare_reduced_;
  uint64_t buffer_allocations_ = 0;
  std::vector<std::shared_ptr<void>> kept_;     // destroyed after groups_
  std::vector<std::unique_ptr<Group>> groups_;  // destroyed before world_
};

// Makes SimClusters for the shared collectives suite: the spec's link kind
// as LinkModel::ideal() or tb5(), no trace events kept (the hash is).
class SimFactory final : public ClusterFactory {
 public:
  const char* name() const override { return "sim"; }
  absl::StatusOr<std::unique_ptr<Cluster>> create(
      const ClusterSpec& spec, const GroupOptions& options) const override;
  uint64_t fault_seeds() const override { return 240; }
};

}  // namespace weft::harness

#endif  // WEFT_HARNESS_SIM_CLUSTER_H_
