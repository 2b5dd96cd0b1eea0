// The probe plan: rounds within the queue-pair budget, every pair probed
// once until its devices are resolved, resolved devices never again.
#include "wiring/internal/plan.h"

#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace weft::wiring::internal {
namespace {

// Ranks r with `per_rank` devices each.
std::vector<uint32_t> device_ranks(uint32_t ranks, uint32_t per_rank) {
  std::vector<uint32_t> out;
  for (uint32_t r = 0; r < ranks; ++r) out.insert(out.end(), per_rank, r);
  return out;
}

// Runs the plan to the end with nothing heard; returns every pair probed.
std::vector<std::pair<uint32_t, uint32_t>> run_silent(Plan& plan,
                                                      uint32_t budget) {
  std::vector<std::pair<uint32_t, uint32_t>> probed;
  while (!plan.done()) {
    const std::vector<ProbePair> round = plan.next_round();
    EXPECT_FALSE(round.empty());
    std::map<uint32_t, uint32_t> load;
    for (const ProbePair& p : round) {
      EXPECT_LT(p.a, p.b);
      EXPECT_NE(plan.rank_of(p.a), plan.rank_of(p.b));
      ++load[p.a];
      ++load[p.b];
      probed.emplace_back(p.a, p.b);
    }
    for (const auto& [device, n] : load) EXPECT_LE(n, budget) << device;
    plan.record(round, std::vector<PairResult>(round.size()));
  }
  return probed;
}

TEST(PlanTest, ProbesEveryPairOfDevicesOnDifferentRanksOnceWithinBudget) {
  Plan plan(device_ranks(4, 3), 2);
  const auto probed = run_silent(plan, 2);
  const std::set<std::pair<uint32_t, uint32_t>> unique(probed.begin(),
                                                       probed.end());
  EXPECT_EQ(unique.size(), probed.size());
  // 12 devices, 3 on each rank: C(12, 2) minus 4 * C(3, 2) same-rank pairs.
  EXPECT_EQ(probed.size(), 66u - 12u);
}

TEST(PlanTest, AResolvedDeviceIsNotProbedAgain) {
  Plan plan(device_ranks(3, 2), 1);
  std::vector<ProbePair> round = plan.next_round();
  ASSERT_FALSE(round.empty());
  const ProbePair found = round.front();
  std::vector<PairResult> results(round.size());
  results.front().b_heard_a = true;  // one direction is enough
  plan.record(round, results);
  EXPECT_TRUE(plan.resolved(found.a));
  EXPECT_TRUE(plan.resolved(found.b));
  while (!plan.done()) {
    round = plan.next_round();
    for (const ProbePair& p : round) {
      EXPECT_NE(p.a, found.a);
      EXPECT_NE(p.b, found.a);
      EXPECT_NE(p.a, found.b);
      EXPECT_NE(p.b, found.b);
    }
    plan.record(round, std::vector<PairResult>(round.size()));
  }
}

TEST(PlanTest, PairsGivenFirstAreProbedBeforeAnyOther) {
  Plan plan(device_ranks(3, 2), 10);
  const std::vector<ProbePair> first = {{0, 2}, {1, 4}};
  plan.probe_first(first);
  const std::vector<ProbePair> round = plan.next_round();
  ASSERT_EQ(round.size(), 2u);
  EXPECT_EQ(round[0].a, 0u);
  EXPECT_EQ(round[0].b, 2u);
  EXPECT_EQ(round[1].a, 1u);
  EXPECT_EQ(round[1].b, 4u);
  std::vector<PairResult> results(2);
  results[0] = {true, true};
  plan.record(round, results);
  EXPECT_TRUE(plan.first_done());
  // The rest: every pair of the unresolved devices 1, 3, 4, 5 on different
  // ranks except 1-4, probed already: 1-3, 1-5, 3-4, 3-5 (4 and 5 share
  // rank 2).
  const auto probed = run_silent(plan, 10);
  const std::set<std::pair<uint32_t, uint32_t>> got(probed.begin(),
                                                    probed.end());
  const std::set<std::pair<uint32_t, uint32_t>> want = {
      {1, 3}, {1, 5}, {3, 4}, {3, 5}};
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace weft::wiring::internal
