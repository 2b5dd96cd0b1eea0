// split(): sub-groups over a subset of ranks that share the parent's cables
// and engine, interleaved with the parent's own collectives.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/sim_cluster.h"
#include "tests/collectives_suite/cases.h"

namespace weft::testing {

using harness::SimCluster;
namespace {

using ::testing::HasSubstr;

TEST(GroupSplit, SubGroupsAndParentInterleave) {
  sim::WorldOptions w;
  w.topology = *Topology::mesh(4);
  absl::StatusOr<SimCluster> cluster = SimCluster::create(w);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  // Ranks 0 and 2 form one pair, ranks 3 and 1 (in that order) the other.
  const std::vector<std::vector<uint32_t>> lists = {{0, 2}, {3, 1}};
  std::vector<std::unique_ptr<Group>> child(4);
  for (uint32_t r = 0; r < 4; ++r) {
    absl::StatusOr<std::unique_ptr<Group>> c =
        cluster->group(r).split(lists[r % 2 == 0 ? 0 : 1]);
    ASSERT_TRUE(c.ok()) << c.status();
    child[r] = *std::move(c);
  }
  EXPECT_EQ(child[0]->rank(), 0u);
  EXPECT_EQ(child[2]->rank(), 1u);
  EXPECT_EQ(child[3]->rank(), 0u);
  EXPECT_EQ(child[1]->rank(), 1u);
  EXPECT_EQ(child[1]->world_rank(0), 3u);

  const Case sum{
      .kind = Kind::kAllReduce, .dtype = DType::kInt64, .count = 5000};
  const Case gather{
      .kind = Kind::kAllGather, .dtype = DType::kFloat32, .count = 777};
  // Child cases, per pair; the parent case over all four.
  std::vector<PreparedCase> pair_sum, pair_gather;
  for (int p = 0; p < 2; ++p) {
    Case s = sum, g = gather;
    s.salt = g.salt = 10 + static_cast<uint64_t>(p);
    pair_sum.emplace_back(s, 2);
    pair_gather.emplace_back(g, 2);
  }
  PreparedCase parent(
      Case{.kind = Kind::kAllReduce, .dtype = DType::kInt32, .count = 999}, 4);

  std::vector<std::vector<Starter>> scripts(4);
  for (uint32_t r = 0; r < 4; ++r) {
    const int p = r % 2 == 0 ? 0 : 1;
    const uint32_t cr = child[r]->rank();
    Group* c = child[r].get();
    auto on_child = [c](Starter s) { return [c, s](Group&) { return s(*c); }; };
    scripts[r] = {on_child(*pair_sum[p].starter(cr)), *parent.starter(r),
                  on_child(*pair_gather[p].starter(cr))};
  }
  ScriptRun run = cluster->run_scripts(std::move(scripts));
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  for (uint32_t r = 0; r < 4; ++r) {
    for (const auto& s : run.results[r])
      ASSERT_TRUE(s.ok()) << "rank " << r << ": " << s;
    const int p = r % 2 == 0 ? 0 : 1;
    EXPECT_EQ(pair_sum[p].check(child[r]->rank()), "");
    EXPECT_EQ(pair_gather[p].check(child[r]->rank()), "");
    EXPECT_EQ(parent.check(r), "");
  }
}

TEST(GroupSplit, BadListsAreRefused) {
  sim::WorldOptions w;
  w.topology = *Topology::mesh(3);
  absl::StatusOr<SimCluster> cluster = SimCluster::create(w);
  ASSERT_TRUE(cluster.ok());
  Group& g = cluster->group(1);
  const std::vector<std::pair<std::vector<uint32_t>, std::string>> bad = {
      {{0, 2}, "rank 1 is not in the list"},
      {{1, 1}, "rank 1 is listed twice"},
      {{1, 7}, "rank 7 is out of range"},
  };
  for (const auto& [list, says] : bad) {
    absl::StatusOr<std::unique_ptr<Group>> c = g.split(list);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(c.status().message()), HasSubstr(says));
  }
}

TEST(GroupSplit, SubsetWithoutARingOrMeshIsRefusedPerCall) {
  sim::WorldOptions w;
  w.topology = *Topology::ring(4);
  absl::StatusOr<SimCluster> cluster = SimCluster::create(w);
  ASSERT_TRUE(cluster.ok());
  const std::vector<uint32_t> evens = {0, 2};
  absl::StatusOr<std::unique_ptr<Group>> c = cluster->group(0).split(evens);
  ASSERT_TRUE(c.ok());
  ByteVec buf(16);
  Operation op =
      (*c)->all_reduce_async(buf, buf, DType::kInt32, ReduceOp::kSum);
  ASSERT_TRUE(op.done());
  EXPECT_EQ(op.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      std::string(op.status().message()),
      HasSubstr("needs a cable between each pair of consecutive ranks"));
}

}  // namespace
}  // namespace weft::testing
