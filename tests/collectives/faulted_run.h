// A run of a few collective calls, one after another, on a simulated world
// with a fault plan, for the group_*_test.cc files that inject faults: every
// rank's status and checked output per call (bit for bit against the suite's
// reference), its counters afterwards, and the faults the world injected.
#ifndef WEFT_TESTS_COLLECTIVES_FAULTED_RUN_H_
#define WEFT_TESTS_COLLECTIVES_FAULTED_RUN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/group_counters.h"
#include "collectives/group_options.h"
#include "fabric/topology.h"
#include "gtest/gtest.h"
#include "harness/sim_cluster.h"
#include "sim/faults.h"
#include "tests/collectives_suite/cases.h"

namespace weft::testing {

// Options with the smallest frames, so a few tens of KiB are many frames
// on every cable, and the given deadline and recovery.
inline GroupOptions small_frame_options(TimeNs timeout_ns, bool recovery) {
  GroupOptions o;
  o.timeout_ns = timeout_ns;
  o.recovery.enabled = recovery;
  o.max_frame_bytes = GroupOptions::kMinFrameBytes;
  return o;
}

struct FaultedRun {
  // Per rank, per call: the status, and "" when the bytes are right.
  std::vector<std::vector<absl::Status>> status;
  std::vector<std::vector<std::string>> wrong;
  std::vector<GroupCounters> counters;  // per rank, after the run
  uint64_t faults = 0;                  // injected by the world
};

// Runs `calls` in order on every rank; the world's time limit is ten
// deadlines (a run that reaches it fails the test: a hang).
inline FaultedRun run_faulted(const Topology& topology,
                              const std::vector<Case>& calls,
                              const sim::FaultPlan& faults,
                              const GroupOptions& o) {
  sim::WorldOptions w;
  w.topology = topology;
  w.faults = faults;
  w.time_limit_ns = 10 * o.timeout_ns;
  absl::StatusOr<harness::SimCluster> cluster =
      harness::SimCluster::create(w, o);
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  if (!cluster.ok()) return {};
  std::vector<PreparedCase> cases;
  for (const Case& c : calls) cases.emplace_back(c, cluster->size());
  ScriptRun script = run_cases(*cluster, cases);
  EXPECT_TRUE(script.run.completed()) << script.run.report;
  FaultedRun out;
  out.faults = cluster->world().counters().faults_total();
  for (uint32_t r = 0; r < cluster->size(); ++r) {
    out.status.push_back(script.results[r]);
    std::vector<std::string> wrong;
    for (const PreparedCase& c : cases) wrong.push_back(c.check(r));
    out.wrong.push_back(wrong);
    out.counters.push_back(cluster->group(r).counters());
  }
  return out;
}

}  // namespace weft::testing

#endif  // WEFT_TESTS_COLLECTIVES_FAULTED_RUN_H_
