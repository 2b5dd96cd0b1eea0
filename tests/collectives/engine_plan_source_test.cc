// Plans made as they are reached: the ring's steps come from an ItemSource
// (so a rank's plan does not hold an item per peer), they are the items the
// ring algorithm describes, and the engine's PositionRing keeps entries by
// their position in the whole sequence while only a window is held.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "collectives/algorithms/algorithms.h"
#include "collectives/engine/position_ring.h"
#include "gtest/gtest.h"

namespace weft::collectives::internal {
namespace {

PlanInput ring_all_reduce(uint32_t rank, uint32_t size, uint64_t bytes) {
  return PlanInput{.kind = OpKind::kAllReduce,
                   .rank = rank,
                   .size = size,
                   .elem = 4,
                   .bytes = bytes};
}

TEST(PlanSource, ARingsStepsAreMadeAsTheyAreReached) {
  // 4096 ranks, 8,192 floats: two stripes with a float for every rank, so
  // 2 x 4095 steps of a send and a receive per stripe.
  Plan plan = build_plan(ring_all_reduce(7, 4096, 4096 * 4 * 2),
                         Algorithm::kRing, Striping{1, 2});
  ASSERT_EQ(plan.parts.size(), 2u);
  for (const PlanPart& part : plan.parts) {
    EXPECT_TRUE(part.items.empty()) << "made with the plan";
    ASSERT_NE(part.rest, nullptr);
    EXPECT_EQ(part.rest->size(), 4u * 4095);
    // A send lane and a receive lane, each with every step.
    ASSERT_EQ(part.rest->lanes().size(), 2u);
    EXPECT_EQ(part.rest->lanes()[0].sends, 2u * 4095);
    EXPECT_EQ(part.rest->lanes()[0].recvs, 0u);
    EXPECT_EQ(part.rest->lanes()[1].sends, 0u);
    EXPECT_EQ(part.rest->lanes()[1].recvs, 2u * 4095);
  }
  // Clockwise to rank 8 from 6; counter-clockwise to 6 from 8.
  EXPECT_EQ(plan.parts[0].rest->lanes()[0].peer, 8u);
  EXPECT_EQ(plan.parts[0].rest->lanes()[1].peer, 6u);
  EXPECT_EQ(plan.parts[1].rest->lanes()[0].peer, 6u);
  EXPECT_EQ(plan.parts[1].rest->lanes()[1].peer, 8u);
  EXPECT_EQ(plan.size(), 2u * 4 * 4095);
}

TEST(PlanSource, TheStepsAreTheRingAllReduce) {
  // Rank 0 of 3, 24 bytes out of place: chunk j is bytes [8j, 8j + 8) and
  // belongs to rank j. Reduce-scatter: send own chunk 0, fold chunk 2 (from
  // rank 2) with the input into the output, pass it on, fold chunk 1, which
  // is then complete here; all-gather: pass chunk 1, take chunk 0, pass it,
  // take chunk 2. Each send waits frame by frame for the receive before it.
  const std::vector<std::string> want = {
      "send in[0, 8) to 1 lane 0",
      "recv from 2 lane 0 reduce after in[16, 24) into out[16, 24)",
      "send out[16, 24) to 1 lane 0 after #1 frame",
      "recv from 2 lane 0 reduce after in[8, 16) into out[8, 16)",
      "send out[8, 16) to 1 lane 0 after #3 frame",
      "recv from 2 lane 0 copy into out[0, 8)",
      "send out[0, 8) to 1 lane 0 after #5 frame",
      "recv from 2 lane 0 copy into out[16, 24)",
  };
  Plan plan =
      build_plan(ring_all_reduce(0, 3, 24), Algorithm::kRing, Striping{1, 1});
  ASSERT_EQ(plan.parts.size(), 1u);
  EXPECT_TRUE(plan.parts[0].items.empty());
  std::vector<std::string> got;
  for (const Item& item : all_items(std::move(plan))) {
    got.push_back(describe_item(item));
  }
  EXPECT_EQ(got, want);
}

TEST(PlanSource, EmptyChunksAreLeftOut) {
  // Rank 0 of 4, 2 floats out of place: chunk 0 is bytes [0, 4) and
  // belongs to rank 0, chunk 1 is [4, 8) and belongs to rank 1, and the
  // chunks of ranks 2 and 3 are empty. Of the 12 positions of the six
  // steps, those moving chunk 2 or 3 are left out: send chunk 0; fold
  // chunk 1 (which came by ranks 2 and 3) into the output, where it is
  // complete; pass it on; take chunk 0 and pass it on.
  const std::vector<std::string> want = {
      "send in[0, 4) to 1 lane 0",
      "recv from 3 lane 0 reduce after in[4, 8) into out[4, 8)",
      "send out[4, 8) to 1 lane 0 after #1 frame",
      "recv from 3 lane 0 copy into out[0, 4)",
      "send out[0, 4) to 1 lane 0 after #3 frame",
  };
  Plan plan =
      build_plan(ring_all_reduce(0, 4, 8), Algorithm::kRing, Striping{1, 1});
  ASSERT_EQ(plan.parts.size(), 1u);
  ASSERT_NE(plan.parts[0].rest, nullptr);
  EXPECT_EQ(plan.parts[0].rest->size(), want.size());
  ASSERT_EQ(plan.parts[0].rest->lanes().size(), 2u);
  EXPECT_EQ(plan.parts[0].rest->lanes()[0].sends, 3u);
  EXPECT_EQ(plan.parts[0].rest->lanes()[1].recvs, 2u);
  std::vector<std::string> got;
  for (const Item& item : all_items(std::move(plan))) {
    got.push_back(describe_item(item));
  }
  EXPECT_EQ(got, want);
  // An all-reduce of nothing keeps every step: each rank still sends and
  // receives a frame per step, so no rank's operation is without frames.
  Plan nothing =
      build_plan(ring_all_reduce(0, 4, 0), Algorithm::kRing, Striping{1, 1});
  ASSERT_NE(nothing.parts[0].rest, nullptr);
  EXPECT_EQ(nothing.parts[0].rest->size(), 12u);
}

TEST(PlanSource, A4096RankRingOf4KiBSendsOnlyItsFloats) {
  // 1,024 floats over two stripes: 512 for 4,096 ranks each, so only the
  // chunks of ranks 0..511 hold data. Rank 7's neighbours are 6 and 8, so
  // each of its four phases (reduce-scatter sends and receives, all-gather
  // sends and receives) moves all 512 chunks but one: 4 x 511 items, not
  // 4 x 4,095.
  Plan plan = build_plan(ring_all_reduce(7, 4096, 4096), Algorithm::kRing,
                         Striping{1, 2});
  ASSERT_EQ(plan.parts.size(), 2u);
  for (const PlanPart& part : plan.parts) {
    ASSERT_NE(part.rest, nullptr);
    EXPECT_EQ(part.rest->size(), 4u * 511);
    ASSERT_EQ(part.rest->lanes().size(), 2u);
    EXPECT_EQ(part.rest->lanes()[0].sends, 2u * 511);
    EXPECT_EQ(part.rest->lanes()[1].recvs, 2u * 511);
  }
}

TEST(PlanSource, TwoRanksGetTheirWholePlanAtOnce) {
  // Both directions of a 2-rank stripe pair would share the one lane: the
  // steps are made with the plan.
  const Plan plan =
      build_plan(ring_all_reduce(0, 2, 64), Algorithm::kRing, Striping{1, 2});
  for (const PlanPart& part : plan.parts) {
    EXPECT_EQ(part.rest, nullptr);
    EXPECT_EQ(part.items.size(), 4u);
  }
}

TEST(PositionRing, KeepsPositionsWhileAWindowMovesAndGrows) {
  PositionRing<uint64_t> ring(100);
  EXPECT_TRUE(ring.empty());
  EXPECT_FALSE(ring.holds(100));
  // A window that slides forward and widens past the starting capacity.
  uint64_t next = 100;
  for (uint64_t round = 0; round < 50; ++round) {
    for (uint64_t k = 0; k <= round % 7; ++k) ring.push_back(next++ * 3);
    ring.pop_front_to(ring.begin() + (round % 7) / 2);
    for (uint64_t p = ring.begin(); p < ring.end(); ++p) {
      ASSERT_EQ(ring.at(p), p * 3) << "position " << p << " round " << round;
    }
  }
  EXPECT_EQ(ring.end(), next);
  EXPECT_FALSE(ring.holds(ring.begin() - 1));
  EXPECT_FALSE(ring.holds(ring.end()));
  ring.pop_front_to(ring.end());
  EXPECT_TRUE(ring.empty());
}

}  // namespace
}  // namespace weft::collectives::internal
