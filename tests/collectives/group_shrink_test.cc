// Group::agree() and Group::shrink() on the simulator: every survivor that
// returns gets the same answer, also when a rank fails during the
// agreement; the shrunk group computes over its members; the old group and
// its late frames stay out of it; a rank left out learns it.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/sim_cluster.h"
#include "sim/faults.h"
#include "tests/collectives_suite/cases.h"

namespace weft::testing {

using harness::SimCluster;
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr TimeNs kTimeoutNs = 2 * kNsPerMs;

absl::StatusOr<SimCluster> cluster_of(uint32_t ranks, std::string_view plan,
                                      TimeNs timeout_ns = kTimeoutNs) {
  sim::WorldOptions w;
  w.topology = *Topology::mesh(ranks);
  absl::StatusOr<sim::FaultPlan> faults = sim::FaultPlan::parse(plan);
  if (!faults.ok()) return faults.status();
  w.faults = *std::move(faults);
  w.time_limit_ns = 100 * timeout_ns;
  GroupOptions o;
  o.timeout_ns = timeout_ns;
  return SimCluster::create(w, o);
}

// Turns every rank's watch off (groups formed on the simulator watch its
// record of crashes from the start): a crash is then found at the
// deadline.
void unwatch(SimCluster& cluster) {
  for (uint32_t r = 0; r < cluster.size(); ++r) cluster.group(r).watch({});
}

// An all-sum of one int32 per rank (world rank + 1) over `group`, whose
// result lands in *out.
Operation sum_of_ranks(Group& group, std::vector<int32_t>* in,
                       std::vector<int32_t>* out) {
  (*in)[0] = static_cast<int32_t>(group.world_rank(group.rank()) + 1);
  return group.all_reduce_async(
      std::as_bytes(std::span<const int32_t>(*in)),
      std::as_writable_bytes(std::span<int32_t>(*out)), DType::kInt32,
      ReduceOp::kSum);
}

// Each rank's program of the shrink tests: an all-sum of 400 KB, long
// enough that a crash or a stall lands inside it, then shrink() into
// shrunk[r], then a one-int32 all-sum of the world ranks + 1 over the
// shrunk group into sums[r]. `mark(r, step)` runs as step 1, 2 and 3 start
// (the instants the previous step ended).
struct ShrinkProgram {
  explicit ShrinkProgram(uint32_t ranks)
      : shrunk(ranks),
        big(ranks, std::vector<int32_t>(100000)),
        in(ranks, std::vector<int32_t>(1)),
        sums(ranks, std::vector<int32_t>(1)) {}

  std::vector<std::vector<Starter>> scripts(
      bool sum_after = true, std::function<void(uint32_t, int)> mark = {}) {
    std::vector<std::vector<Starter>> out(shrunk.size());
    for (uint32_t r = 0; r < shrunk.size(); ++r) {
      out[r].push_back([this, r](Group& g) {
        return g.all_reduce_async(
            std::as_bytes(std::span<const int32_t>(big[r])),
            std::as_writable_bytes(std::span<int32_t>(big[r])), DType::kInt32,
            ReduceOp::kSum);
      });
      out[r].push_back([this, r, mark](Group& g) {
        if (mark) mark(r, 1);
        return g.shrink_async(&shrunk[r]);
      });
      if (!sum_after) continue;
      out[r].push_back([this, r, mark](Group&) {
        if (mark) mark(r, 2);
        return sum_of_ranks(*shrunk[r], &in[r], &sums[r]);
      });
      if (!mark) continue;
      out[r].push_back([this, r, mark](Group& g) {
        mark(r, 3);
        return g.barrier_async();  // refused: only marks the time
      });
    }
    return out;
  }
  // The world ranks of rank r's shrunk group, in its rank order.
  std::vector<uint32_t> members(uint32_t r) const {
    std::vector<uint32_t> world;
    for (uint32_t m = 0; m < shrunk[r]->size(); ++m) {
      world.push_back(shrunk[r]->world_rank(m));
    }
    return world;
  }

  std::vector<std::unique_ptr<Group>> shrunk;
  std::vector<std::vector<int32_t>> big;
  std::vector<std::vector<int32_t>> in;
  std::vector<std::vector<int32_t>> sums;
};

TEST(GroupAgree, AHealthyGroupDecidesTheAndOfEveryRanksFlags) {
  constexpr uint32_t kRanks = 4;
  absl::StatusOr<SimCluster> cluster = cluster_of(kRanks, "");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  std::vector<Group::Agreed> agreed(kRanks);
  std::vector<std::vector<int32_t>> in(kRanks, std::vector<int32_t>(1));
  std::vector<std::vector<int32_t>> out(kRanks, std::vector<int32_t>(1));
  std::vector<std::vector<Starter>> scripts(kRanks);
  for (uint32_t r = 0; r < kRanks; ++r) {
    // Rank r clears bit r: the AND keeps the bits no rank cleared.
    scripts[r].push_back(
        [&, r](Group& g) { return g.agree_async(~(1u << r), &agreed[r]); });
    // The group goes on: the agreement's late frames are not taken for
    // the all-sum's.
    scripts[r].push_back(
        [&, r](Group& g) { return sum_of_ranks(g, &in[r], &out[r]); });
  }
  ScriptRun run = cluster->run_scripts(std::move(scripts));
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  for (uint32_t r = 0; r < kRanks; ++r) {
    ASSERT_TRUE(run.results[r][0].ok()) << r << run.results[r][0];
    EXPECT_EQ(agreed[r].flags, 0xfffffff0u) << r;
    EXPECT_TRUE(agreed[r].failed.empty()) << r;
    ASSERT_TRUE(run.results[r][1].ok()) << r << run.results[r][1];
    EXPECT_EQ(out[r][0], 1 + 2 + 3 + 4) << r;
  }
}

// A shrink after a crash: survivors each hold the same new group, of the
// survivors in their old order, and an all-sum over it is right.
void shrink_after_crash(bool watched) {
  constexpr uint32_t kRanks = 5;
  constexpr uint32_t kDead = 2;
  // Watched (the simulator's record of crashes), a deadline past the
  // watch's interval: the watch names the crashed rank first.
  absl::StatusOr<SimCluster> cluster =
      cluster_of(kRanks, "crash rank=2 at_ns=3000\n",
                 watched ? 4 * Group::kWatchIntervalNs : kTimeoutNs);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  if (!watched) unwatch(*cluster);
  ShrinkProgram p(kRanks);
  ScriptRun run = cluster->run_scripts(p.scripts());
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  ASSERT_TRUE(cluster->crashed(kDead));
  for (uint32_t r = 0; r < kRanks; ++r) {
    if (r == kDead) continue;
    SCOPED_TRACE(::testing::Message() << "rank " << r);
    EXPECT_FALSE(run.results[r][0].ok());
    if (watched) {
      EXPECT_EQ(error_place(run.results[r][0])->cause,
                ErrorCause::kPeerUnavailable)
          << run.results[r][0];
    }
    ASSERT_TRUE(run.results[r][1].ok()) << run.results[r][1];
    ASSERT_NE(p.shrunk[r], nullptr);
    EXPECT_THAT(p.members(r), ElementsAre(0, 1, 3, 4));
    EXPECT_EQ(p.shrunk[r]->world_rank(p.shrunk[r]->rank()), r);
    ASSERT_TRUE(run.results[r][2].ok()) << run.results[r][2];
    EXPECT_EQ(p.sums[r][0], 1 + 2 + 4 + 5);
    // The old group refuses new work.
    Operation old = cluster->group(r).barrier_async();
    ASSERT_TRUE(old.done());
    EXPECT_EQ(error_place(old.status())->cause, ErrorCause::kGroupFailed);
    EXPECT_THAT(std::string(old.status().message()), HasSubstr("shrunk"));
  }
}

TEST(GroupShrink, AfterACrashNamedByTheWatch) { shrink_after_crash(true); }
TEST(GroupShrink, AfterACrashFoundAtTheDeadline) { shrink_after_crash(false); }

// A second rank crashes while the survivors agree on the first (the shrink
// starts at 50 ms, when the watch names rank 2, and takes 9 us when no one
// else fails): every survivor that returns holds the same members, and
// none holds the rank the watch named before it proposed.
TEST(GroupShrink, ARankThatFailsDuringTheShrinkLeavesTheSurvivorsAgreeing) {
  constexpr uint32_t kRanks = 6;
  for (TimeNs second_ns :
       {50'000'500, 50'003'000, 50'005'000, 50'007'000, 50'008'500}) {
    SCOPED_TRACE(::testing::Message() << "second crash at " << second_ns);
    const std::string plan = "crash rank=2 at_ns=3000\ncrash rank=4 at_ns=" +
                             std::to_string(second_ns) + "\n";
    absl::StatusOr<SimCluster> cluster =
        cluster_of(kRanks, plan, 4 * Group::kWatchIntervalNs);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    ShrinkProgram p(kRanks);
    ScriptRun run = cluster->run_scripts(p.scripts(/*sum_after=*/false));
    ASSERT_TRUE(run.run.completed()) << run.run.report;
    std::optional<std::vector<uint32_t>> agreed;
    for (uint32_t r = 0; r < kRanks; ++r) {
      if (cluster->crashed(r)) continue;
      ASSERT_EQ(run.results[r].size(), 2u);
      ASSERT_TRUE(run.results[r][1].ok()) << r << run.results[r][1];
      const std::vector<uint32_t> world = p.members(r);
      if (!agreed.has_value()) agreed = world;
      EXPECT_EQ(world, *agreed) << "rank " << r;
      EXPECT_THAT(world, ::testing::Not(::testing::Contains(2u)));
    }
    ASSERT_TRUE(cluster->crashed(4));
  }
}

// A rank the others report failed (it stalled past their deadline) but
// that is alive follows the agreement and learns it was left out.
TEST(GroupShrink, ARankReportedFailedLearnsItWasLeftOut) {
  constexpr uint32_t kRanks = 4;
  absl::StatusOr<SimCluster> cluster =
      cluster_of(kRanks, "stall rank=3 at_ns=1000 for_ns=10000000\n");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ShrinkProgram p(kRanks);
  ScriptRun run = cluster->run_scripts(p.scripts(/*sum_after=*/false));
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  for (uint32_t r = 0; r < 3; ++r) {
    ASSERT_TRUE(run.results[r][1].ok()) << r << run.results[r][1];
    ASSERT_NE(p.shrunk[r], nullptr);
    EXPECT_EQ(p.shrunk[r]->size(), 3u);
  }
  const absl::Status& left_out = run.results[3][1];
  EXPECT_EQ(left_out.code(), absl::StatusCode::kFailedPrecondition) << left_out;
  ASSERT_TRUE(error_place(left_out).has_value()) << left_out;
  EXPECT_EQ(error_place(left_out)->cause, ErrorCause::kExcluded) << left_out;
  EXPECT_EQ(p.shrunk[3], nullptr);
}

TEST(GroupShrink, ARingIsRefused) {
  sim::WorldOptions w;
  w.topology = *Topology::ring(4);
  absl::StatusOr<SimCluster> cluster = SimCluster::create(w, GroupOptions{});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  std::unique_ptr<Group> shrunk;
  Operation op = cluster->group(0).shrink_async(&shrunk);
  ASSERT_TRUE(op.done());
  EXPECT_EQ(op.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(op.status().message()), HasSubstr("mesh"));
}

// Recovery in virtual time on the tb5 link: from the watch naming a crash
// (the failed all-sum's end) to the end of the first all-sum of the
// shrunk group of 7, at most 1 ms (docs/fault-tolerance.md has the
// figures: 8.9 us to shrink, 13.6 us to the sum).
TEST(GroupShrink, RecoversWithinOneMillisecondOfTheDetection) {
  constexpr uint32_t kRanks = 8;
  absl::StatusOr<SimCluster> cluster = cluster_of(
      kRanks, "crash rank=5 at_ns=3000\n", 4 * Group::kWatchIntervalNs);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const Clock& clock = cluster->world().clock();
  ShrinkProgram p(kRanks);
  // [r][step]: when rank r's steps 1 (shrink), 2 (sum) and 3 started.
  std::vector<std::array<TimeNs, 4>> at_ns(kRanks);
  auto mark = [&](uint32_t r, int step) { at_ns[r][step] = clock.now_ns(); };
  ScriptRun run = cluster->run_scripts(p.scripts(/*sum_after=*/true, mark));
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  for (uint32_t r = 0; r < kRanks; ++r) {
    if (r == 5) continue;
    SCOPED_TRACE(::testing::Message() << "rank " << r);
    ASSERT_TRUE(run.results[r][2].ok()) << run.results[r][2];
    EXPECT_EQ(p.sums[r][0], 36 - 6);  // 1 + ... + 8, rank 5's 6 left out
    EXPECT_GE(at_ns[r][2], at_ns[r][1]);
    EXPECT_LE(at_ns[r][3] - at_ns[r][1], kNsPerMs);
  }
}

}  // namespace
}  // namespace weft::testing
