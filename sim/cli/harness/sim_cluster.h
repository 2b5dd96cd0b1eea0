// SimCluster: the harness weft-sim and weft-bench share. N simulated ranks
// (a sim::World built from WorldOptions: topology, link, faults, seed),
// one Group per rank formed in process, and runs of one collective on
// every rank: each rank's operations start asynchronously and the world's
// scheduler drives them all in virtual time. A run reports the virtual time
// it took, the frames and faults of the run, each rank's status, and the
// verdict against the Reference (outcome.h).
//
//   auto cluster = *SimCluster::create(world_options, GroupOptions{});
//   CollectiveSpec spec{.kind = CollectiveKind::kAllReduce, .bytes = 1 << 20};
//   CaseRun run = *cluster->run(spec, RunOptions{});
//   // run.elapsed_ns, run.outcome.summary(), ...
//
// Runs on one cluster follow each other in virtual time. Once a run ends in
// an error the groups are failed and refuse later runs; make a new cluster.
#ifndef WEFT_SIM_CLI_HARNESS_SIM_CLUSTER_H_
#define WEFT_SIM_CLI_HARNESS_SIM_CLUSTER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/group.h"
#include "collectives/group_options.h"
#include "sim/cli/harness/collective_spec.h"
#include "sim/cli/harness/outcome.h"
#include "sim/world.h"

namespace weft::sim::harness {

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
};

struct CaseRun {
  CollectiveShape shape;
  Algorithm algorithm = Algorithm::kAuto;  // as resolved (collective_spec.h)
  RunResult run;
  TimeNs elapsed_ns = 0;  // virtual time from the start to the last rank's end
  uint64_t frames = 0;    // frames that left a sender during the run
  uint64_t faults_injected = 0;
  uint64_t wrong_elements = 0;  // over every checked rank
  std::vector<RankOutcome> ranks;
  Outcome outcome;
};

// InvalidArgument when `spec` cannot run on a group of `topology` with
// `options`: a bad shape (shape_of), an algorithm needing cables the
// topology lacks, send/recv without a cable from each rank to the next, in
// place send/recv.
absl::Status check_collective(const CollectiveSpec& spec,
                              const Topology& topology,
                              const GroupOptions& options);

class SimCluster {
 public:
  // The world's errors (bad topology, link, faults) and group formation's.
  static absl::StatusOr<std::unique_ptr<SimCluster>> create(
      WorldOptions world, const GroupOptions& group);
  ~SimCluster();
  SimCluster(const SimCluster&) = delete;
  SimCluster& operator=(const SimCluster&) = delete;

  uint32_t ranks() const { return static_cast<uint32_t>(groups_.size()); }
  World& world() { return *world_; }
  const GroupOptions& group_options() const { return group_options_; }

  // check_collective() on this cluster's topology and options.
  absl::Status check(const CollectiveSpec& spec) const;

  // Runs `spec` on every rank. check()'s errors; otherwise the run, whatever
  // its outcome.
  absl::StatusOr<CaseRun> run(const CollectiveSpec& spec,
                              const RunOptions& options);

 private:
  SimCluster(std::unique_ptr<World> world, GroupOptions group_options);
  void cancel_unfinished(
      const std::vector<std::unique_ptr<CallProgram>>& programs);

  std::unique_ptr<World> world_;
  GroupOptions group_options_;
  std::vector<std::unique_ptr<Group>> groups_;  // destroyed before world_
};

}  // namespace weft::sim::harness

#endif  // WEFT_SIM_CLI_HARNESS_SIM_CLUSTER_H_
