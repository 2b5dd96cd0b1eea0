// Cluster: N ranks, each with a Group, formed over one fabric, and runs of
// per-rank scripts of operations to completion. It is what every tool,
// benchmark and test that drives whole groups stands on, whatever the
// fabric: SimCluster (sim_cluster.h) over the simulator's World, and the
// verbs fabric's cluster over the simulated verbs provider (tests/verbs).
// A ClusterFactory makes clusters of one fabric from a ClusterSpec; the
// shared collectives suite takes the factory as its parameter, so each test
// is written once and runs over every fabric that instantiates it.
//
//   absl::StatusOr<std::unique_ptr<Cluster>> c = factory.create(spec, {});
//   ScriptRun run = (*c)->run_scripts({{start_sum}, {start_sum}});
//   // run.run.outcome, run.results[rank][step]
#ifndef WEFT_HARNESS_CLUSTER_H_
#define WEFT_HARNESS_CLUSTER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/group.h"
#include "collectives/group_options.h"
#include "fabric/clock.h"
#include "fabric/topology.h"
#include "harness/call_program.h"
#include "sim/faults.h"
#include "sim/world.h"

namespace weft::harness {

// The link models every simulated fabric offers.
enum class LinkKind { kIdeal, kTb5 };

// What a cluster simulates, whatever the fabric.
struct ClusterSpec {
  Topology topology = *Topology::mesh(2);
  LinkKind link = LinkKind::kTb5;
  sim::FaultPlan faults;
  uint64_t seed = 1;
  // Virtual time a run may take before it is reported as hung.
  TimeNs time_limit_ns = 10 * kNsPerS;
};

// A run of rank scripts: how it ended and every operation's status.
struct ScriptRun {
  sim::RunResult run;
  std::vector<std::vector<absl::Status>> results;  // [rank][step]
};

class Cluster {
 public:
  virtual ~Cluster() = default;

  virtual uint32_t size() const = 0;
  virtual Group& group(uint32_t rank) = 0;
  // Runs scripts[r] on rank r, each operation after the previous one
  // ended, until every rank is done, a rank crashed, or the run gives up
  // (time limit, livelock: run.report says what each rank waits for).
  virtual ScriptRun run_scripts(std::vector<std::vector<Starter>> scripts) = 0;
  virtual bool crashed(uint32_t rank) const = 0;
  // The fabric's fingerprint of every frame event so far: equal on a rerun
  // of the same calls, unchanged while nothing is sent.
  virtual uint64_t trace_hash() const = 0;
  // Queue pairs `rank` has open, where the fabric counts them.
  virtual std::optional<int> queue_pairs(uint32_t /*rank*/) const {
    return std::nullopt;
  }
  // Faults the fabric injected so far, where it counts them.
  virtual std::optional<uint64_t> faults_injected() const {
    return std::nullopt;
  }
};

class ClusterFactory {
 public:
  virtual ~ClusterFactory() = default;
  // Names the fabric in test names: letters and digits only.
  virtual const char* name() const = 0;
  // Formation errors (bad options included) are returned as they are.
  virtual absl::StatusOr<std::unique_ptr<Cluster>> create(
      const ClusterSpec& spec, const GroupOptions& options) const = 0;
  // Seeds the fault property runs (fewer where a run costs more).
  virtual uint64_t fault_seeds() const = 0;
};

// gtest prints a test's parameter: the fabric's name, not an address.
inline void PrintTo(const ClusterFactory* factory, std::ostream* os) {
  *os << factory->name();
}

}  // namespace weft::harness

#endif  // WEFT_HARNESS_CLUSTER_H_
