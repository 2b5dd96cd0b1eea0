// The sweep's disagreement oracle (tools/weft-sim/sweep_run.h) on outcomes
// written by hand: an unaware survivor counts against a run only when an
// abort could still reach it, directly or through a peer that learnt of the
// failure; and the seed that first showed a rank no abort could reach.
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "harness/outcome.h"
#include "tools/weft-sim/sweep_case.h"
#include "tools/weft-sim/sweep_run.h"

namespace weft::tools::weft_sim {
namespace {

harness::RankOutcome ok() { return {}; }
harness::RankOutcome failed() {
  harness::RankOutcome r;
  r.first_error = absl::UnavailableError("peer gone");
  return r;
}
harness::RankOutcome told() {
  harness::RankOutcome r;
  r.told_of_failure = true;
  return r;
}

using Edges = std::set<std::pair<uint32_t, uint32_t>>;

bool judge(const std::vector<harness::RankOutcome>& ranks, const Edges& edges,
           const std::set<uint32_t>& crashed = {}) {
  return ranks_disagree(
      ranks, [&](uint32_t r) { return crashed.count(r) > 0; },
      [&](uint32_t from, uint32_t to) {
        return edges.count({from, to}) > 0;
      });
}

TEST(SweepOracle, AnUnawareRankAnAbortCouldReachDisagrees) {
  EXPECT_TRUE(judge({ok(), failed()}, {{1, 0}, {0, 1}}));
  EXPECT_TRUE(judge({ok(), failed()}, {{1, 0}}));
}

TEST(SweepOracle, AnUnawareRankNoAbortCanReachDoesNot) {
  EXPECT_FALSE(judge({ok(), failed()}, {}));
  // Only the unaware rank's direction works: its frames reach the failed
  // rank, nothing comes back.
  EXPECT_FALSE(judge({ok(), failed()}, {{0, 1}}));
}

TEST(SweepOracle, TheNewsTravelsThroughPeersThatLearnt) {
  // Rank 2 failed and cannot reach rank 0 directly; rank 1 can relay,
  // whether it learnt already (told) or not yet (unaware: it disagrees
  // too).
  const Edges relay = {{2, 1}, {1, 0}};
  EXPECT_TRUE(judge({ok(), told(), failed()}, relay));
  EXPECT_TRUE(judge({ok(), ok(), failed()}, relay));
  // Without rank 1 (crashed) the path is gone.
  EXPECT_FALSE(judge({ok(), ok(), failed()}, relay, /*crashed=*/{1}));
  EXPECT_FALSE(judge({ok(), told(), failed()}, {{2, 1}}));
}

TEST(SweepOracle, NoErrorOrNoSurvivorsIsNoDisagreement) {
  EXPECT_FALSE(judge({ok(), ok()}, {{0, 1}, {1, 0}}));
  EXPECT_FALSE(judge({told(), ok()}, {{0, 1}, {1, 0}}));
  EXPECT_FALSE(judge({failed(), failed()}, {{0, 1}, {1, 0}}));
  EXPECT_FALSE(judge({ok(), failed()}, {{1, 0}}, /*crashed=*/{0}));
}

// Seed 21258: two ranks, one cable. Rank 0's operations end OK; rank 1's
// queue pair goes into error at 26 us while its last operation waits, so
// it ends with a typed error and its abort cannot leave. Once reported as
// "ranks disagree"; no abort can reach rank 0, which learns at its next
// operation.
TEST(SweepOracle,
     ARankCutOffByItsPeersQueuePairErrorIsNotCountedAgainstTheRun) {
  const SweepCase c = draw_sweep_case(21258);
  ASSERT_EQ(c.world.topology.ranks(), 2u);
  absl::StatusOr<SweepRun> run = run_sweep_case(c, SweepRunOptions{});
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->verdict, harness::Verdict::kTypedError) << run->summary;
  EXPECT_TRUE(run->fatal);
  EXPECT_FALSE(run->ranks_disagree) << run->summary;
}

}  // namespace
}  // namespace weft::tools::weft_sim
