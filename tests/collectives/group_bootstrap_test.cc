// Group formation: the in-process bootstrap for ranks in threads, the
// blocking create_group() path, what connect() refuses, and blocking calls.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/group_builder.h"
#include "collectives/inprocess_bootstrap.h"
#include "fabric/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/sim_cluster.h"
#include "tests/collectives_suite/cases.h"

namespace weft::testing {

using harness::SimCluster;
namespace {

using ::testing::HasSubstr;

TEST(InProcessBootstrap, ThreadsExchangeEveryRound) {
  constexpr uint32_t kRanks = 4;
  auto exchange = std::make_shared<InProcessExchange>(kRanks);
  WallClock clock;
  std::vector<std::vector<std::vector<uint8_t>>> got(kRanks);
  std::vector<std::thread> threads;
  for (uint32_t r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      InProcessBootstrap b(exchange, r, clock);
      for (uint8_t round = 0; round < 3; ++round) {
        const std::vector<uint8_t> mine = {static_cast<uint8_t>(r), round};
        auto all = b.all_gather(mine, 10 * kNsPerS);
        ASSERT_TRUE(all.ok()) << all.status();
        got[r].insert(got[r].end(), all->begin(), all->end());
      }
    });
  }
  for (auto& t : threads) t.join();
  for (uint32_t r = 0; r < kRanks; ++r) {
    ASSERT_EQ(got[r].size(), 3 * kRanks);
    for (uint32_t i = 0; i < got[r].size(); ++i) {
      EXPECT_EQ(got[r][i],
                (std::vector<uint8_t>{static_cast<uint8_t>(i % kRanks),
                                      static_cast<uint8_t>(i / kRanks)}));
    }
  }
}

TEST(InProcessBootstrap, MissingRankTimesOutNamingIt) {
  auto exchange = std::make_shared<InProcessExchange>(3);
  ManualClock clock;
  InProcessBootstrap b(exchange, 0, clock);
  // The clock never moves past the deadline of 0 ns: the wait ends at once.
  auto all = b.all_gather({}, 0);
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(all.status().message()),
              HasSubstr("waiting for rank(s) 1, 2"));
  EXPECT_EQ(error_place(all.status())->peer, 1u);
  EXPECT_TRUE(b.check_alive().ok());
  { InProcessBootstrap gone(exchange, 2, clock); }
  EXPECT_EQ(b.check_alive().code(), absl::StatusCode::kUnavailable);
}

TEST(GroupFormation, CreateGroupThroughABootstrap) {
  sim::WorldOptions w;
  w.topology = *Topology::mesh(1);
  auto world = sim::World::create(w);
  ASSERT_TRUE(world.ok());
  auto exchange = std::make_shared<InProcessExchange>(1);
  InProcessBootstrap boot(exchange, 0, (*world)->clock());
  absl::StatusOr<std::unique_ptr<Group>> g =
      create_group((*world)->fabric(0), boot, w.topology, GroupOptions{});
  ASSERT_TRUE(g.ok()) << g.status();
  // Blocking calls work where nothing has to arrive.
  ByteVec in = exact_input(DType::kInt32, 10, 0, 3), out(in.size());
  ASSERT_TRUE((*g)->all_sum(in, out, DType::kInt32).ok());
  EXPECT_EQ(out, in);
  ASSERT_TRUE((*g)->barrier().ok());
}

TEST(GroupFormation, ConnectRefusesOtherOptionsAndBadAddresses) {
  sim::WorldOptions w;
  w.topology = *Topology::mesh(2);
  auto world = sim::World::create(w);
  ASSERT_TRUE(world.ok());
  GroupOptions other;
  other.depth = 5;
  auto a = GroupBuilder::open((*world)->fabric(0), w.topology, GroupOptions{});
  auto b = GroupBuilder::open((*world)->fabric(1), w.topology, other);
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<std::vector<uint8_t>> addresses = {(*a)->address(),
                                                 (*b)->address()};
  absl::StatusOr<std::unique_ptr<Group>> g = (*a)->connect(addresses);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(g.status().message()),
              HasSubstr("same GroupOptions"));
  EXPECT_EQ(error_place(g.status())->peer, 1u);

  auto c = GroupBuilder::open((*world)->fabric(0), w.topology, GroupOptions{});
  ASSERT_TRUE(c.ok());
  addresses[1] = {1, 2, 3};
  EXPECT_THAT(std::string((*c)->connect(addresses).status().message()),
              HasSubstr("shorter than"));
  EXPECT_THAT(
      std::string(
          (*c)->connect(std::span(addresses).first(1)).status().message()),
      HasSubstr("connect got 1 addresses for a group of 2 ranks"));
}

TEST(GroupFormation, BlockingCallOnAStandingClockSaysHowToDriveIt) {
  sim::WorldOptions w;
  w.topology = *Topology::mesh(2);
  absl::StatusOr<SimCluster> cluster = SimCluster::create(w);
  ASSERT_TRUE(cluster.ok());
  ByteVec in(64), out(64);
  const absl::Status s = cluster->group(0).all_sum(in, out, DType::kFloat32);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("driven with Operation::progress()"));
}

TEST(GroupFormation, SlabLimitShrinksFramesOrFails) {
  sim::WorldOptions w;
  w.topology = *Topology::mesh(3);
  auto world = sim::World::create(w);
  ASSERT_TRUE(world.ok());
  GroupOptions tiny;
  tiny.max_slab_bytes = 1 << 10;
  auto b = GroupBuilder::open((*world)->fabric(0), w.topology, tiny);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(b.status().message()),
              HasSubstr("raise max_slab_bytes"));
  GroupOptions small;
  small.max_slab_bytes = 4 << 20;  // fits only with smaller frames
  absl::StatusOr<SimCluster> cluster = SimCluster::create(w, small);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  std::vector<PreparedCase> cases;
  cases.emplace_back(
      Case{.kind = Kind::kAllReduce, .dtype = DType::kInt8, .count = 1 << 20},
      3);
  ScriptRun run = run_cases(*cluster, cases);
  ASSERT_TRUE(run.run.completed());
  for (uint32_t r = 0; r < 3; ++r) {
    ASSERT_TRUE(run.results[r][0].ok()) << run.results[r][0];
    EXPECT_EQ(cases[0].check(r), "");
  }
}

}  // namespace
}  // namespace weft::testing
