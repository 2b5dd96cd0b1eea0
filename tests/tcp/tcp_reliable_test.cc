// Over TCP, a fabric that delivers reliably (Fabric::delivers_reliably()),
// the engine resends nothing and runs no retransmission timer, whatever
// GroupOptions::recovery says (docs/faults.md, "Recovery"): with the
// shortest timeouts the options allow, which loopback round trips outlast,
// all-sums end right with no frame resent, no duplicate and none held
// ahead of a gap, on every rank.
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "collectives/group_counters.h"
#include "gtest/gtest.h"
#include "tests/collectives_suite/cases.h"
#include "tests/tcp/tcp_cluster.h"

namespace weft::testing {
namespace {

class TcpReliable : public ::testing::TestWithParam<bool> {};

TEST_P(TcpReliable, NothingIsResentWhateverRecoverySays) {
  GroupOptions o;
  o.recovery.enabled = GetParam();
  // Retransmission timers this short would fire on every frame.
  o.recovery.min_rto_ns = RecoveryOptions::kMinRtoNs;
  o.recovery.initial_rto_ns = RecoveryOptions::kMinRtoNs;
  o.max_frame_bytes = 64 << 10;
  harness::ClusterSpec spec;
  spec.topology = *Topology::mesh(3);
  absl::StatusOr<std::unique_ptr<tcp::testing::TcpCluster>> cluster =
      tcp::testing::TcpCluster::create(spec, o);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  std::vector<PreparedCase> cases;
  for (uint64_t salt = 0; salt < 3; ++salt) {
    cases.emplace_back(Case{.kind = Kind::kAllReduce,
                            .dtype = DType::kFloat32,
                            .count = (2u << 20) / 4,
                            .salt = salt},
                       3);
  }
  ScriptRun run = run_cases(**cluster, cases);
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  for (uint32_t r = 0; r < 3; ++r) {
    for (size_t i = 0; i < cases.size(); ++i) {
      ASSERT_TRUE(run.results[r][i].ok()) << run.results[r][i];
      EXPECT_EQ(cases[i].check(r), "") << "rank " << r << ", case " << i;
    }
    const LinkCounters c = (*cluster)->group(r).counters().total;
    EXPECT_GT(c.frames_sent, 0u);
    EXPECT_EQ(c.frames_resent, 0u) << "rank " << r;
    EXPECT_EQ(c.duplicates_dropped, 0u) << "rank " << r;
    EXPECT_EQ(c.frames_held_early, 0u) << "rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Recovery, TcpReliable, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "On" : "Off";
                         });

}  // namespace
}  // namespace weft::testing
