// Scale: a ring all-sum over 256 simulated ranks in the normal suite (small
// in bytes, so it stays fast), and over 1024 ranks as an opt-in test
// (--gtest_also_run_disabled_tests, or WEFT_SCALE_1024=1).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "harness/sim_cluster.h"
#include "tests/collectives_suite/cases.h"

namespace weft::testing {

using harness::SimCluster;
namespace {

void ring_all_sum(uint32_t ranks, uint64_t count) {
  sim::WorldOptions w;
  w.topology = *Topology::ring(ranks);
  w.link = sim::LinkModel::tb5();
  w.keep_trace_events = false;
  GroupOptions o;
  o.max_frame_bytes = GroupOptions::kMinFrameBytes;
  absl::StatusOr<SimCluster> cluster = SimCluster::create(w, o);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  std::vector<PreparedCase> cases;
  cases.emplace_back(
      Case{.kind = Kind::kAllReduce, .dtype = DType::kFloat32, .count = count},
      ranks);
  ScriptRun run = run_cases(*cluster, cases);
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  for (uint32_t r = 0; r < ranks; ++r) {
    ASSERT_EQ(run.results[r].size(), 1u);
    ASSERT_TRUE(run.results[r][0].ok()) << run.results[r][0];
    ASSERT_EQ(cases[0].check(r), "");
  }
}

TEST(GroupScale, RingAllSum256Ranks) { ring_all_sum(256, 1000); }

TEST(GroupScale, DISABLED_RingAllSum1024Ranks) { ring_all_sum(1024, 4096); }

TEST(GroupScale, RingAllSum1024RanksWhenAsked) {
  const char* want = std::getenv("WEFT_SCALE_1024");
  if (want == nullptr || std::string(want) != "1")
    GTEST_SKIP() << "set WEFT_SCALE_1024=1";
  ring_all_sum(1024, 4096);
}

}  // namespace
}  // namespace weft::testing
