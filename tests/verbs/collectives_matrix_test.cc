// The collectives matrix of tests/collectives/group_matrix_test.cc, over
// VerbsFabric loaded through the simulated verbs provider: every collective
// against references computed in the test (cases.h, reference.h), for the
// same dtypes, ops, sizes, algorithms, in place and out of place, on the
// same topologies, group options and link models. all_cases() and the
// topology list are that file's, kept in step with it.
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/verbs/verbs_cluster.h"

namespace weft::verbs::testing {
namespace {

using weft::testing::Case;
using weft::testing::Kind;

constexpr DType kDTypes[] = {DType::kBool,     DType::kInt8,    DType::kUint16,
                             DType::kInt32,    DType::kUint64,  DType::kFloat16,
                             DType::kBFloat16, DType::kFloat32, DType::kFloat64,
                             DType::kComplex64};
constexpr ReduceOp kOps[] = {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax,
                             ReduceOp::kMin};

// 0 elements, 1, a prime that divides by no rank count, and enough for many
// frames per item (the groups below use small frames).
constexpr uint64_t kCounts[] = {0, 1, 7, 3001};

std::vector<Case> all_cases(uint32_t n, Algorithm algorithm) {
  std::vector<Case> cases;
  uint64_t salt = 1;
  auto add = [&](Case c) {
    c.algorithm = algorithm;
    c.salt = salt++;
    for (bool in_place : {false, true}) {
      c.in_place = in_place;
      cases.push_back(c);
    }
  };
  for (DType dtype : kDTypes) {
    for (uint64_t count : kCounts) {
      for (ReduceOp op : kOps) {
        add({.kind = Kind::kAllReduce,
             .dtype = dtype,
             .op = op,
             .count = count});
      }
      add({.kind = Kind::kAllGather, .dtype = dtype, .count = count});
      add({.kind = Kind::kReduceScatter,
           .dtype = dtype,
           .op = kOps[count % 4],
           .count = count});
      add({.kind = Kind::kBroadcast,
           .dtype = dtype,
           .count = count,
           .root = static_cast<uint32_t>(count % n)});
      add({.kind = Kind::kReduce,
           .dtype = dtype,
           .op = kOps[(count + 1) % 4],
           .count = count,
           .root = static_cast<uint32_t>((count + 1) % n)});
      add({.kind = Kind::kAllToAll, .dtype = dtype, .count = count});
    }
  }
  if (n > 1) {
    add({.kind = Kind::kSendRecv,
         .dtype = DType::kInt32,
         .count = 3001,
         .root = 0,
         .peer = 1});
    add({.kind = Kind::kSendRecv,
         .dtype = DType::kInt32,
         .count = 0,
         .root = 1,
         .peer = 0});
  }
  add({.kind = Kind::kBarrier});
  return cases;
}

void run_all(VerbsWorld world, GroupOptions options, Algorithm algorithm) {
  absl::StatusOr<std::unique_ptr<VerbsCluster>> cluster =
      VerbsCluster::create(world, options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const uint32_t n = (*cluster)->size();
  // Every cable of the topology is a queue pair of the provider.
  for (uint32_t r = 0; r < n; ++r) {
    size_t cables = 0;
    for (uint32_t p = 0; p < n; ++p)
      cables += world.topology.devices(r, p).size();
    EXPECT_EQ((*cluster)->provider().live("qps", r), static_cast<int>(cables));
  }
  std::vector<PreparedCase> cases;
  for (const Case& c : all_cases(n, algorithm)) cases.emplace_back(c, n);
  ScriptRun run = (*cluster)->run_cases(cases);
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  for (uint32_t r = 0; r < n; ++r) {
    for (size_t i = 0; i < run.results[r].size(); ++i) {
      ASSERT_TRUE(run.results[r][i].ok())
          << "rank " << r << " step " << i << ": " << run.results[r][i];
    }
  }
  for (const PreparedCase& pc : cases) {
    for (uint32_t r = 0; r < n; ++r) EXPECT_EQ(pc.check(r), "");
  }
}

VerbsWorld world_of(Topology topology) {
  VerbsWorld w;
  w.topology = std::move(topology);
  w.link = "ideal";
  return w;
}

GroupOptions small_frames() {
  GroupOptions o;
  o.max_frame_bytes = GroupOptions::kMinFrameBytes;
  o.depth = GroupOptions::kMinDepth;
  return o;
}

TEST(VerbsCollectivesMatrix, MeshExchangeTwoCables) {
  run_all(world_of(*Topology::mesh(3, 2)), small_frames(),
          Algorithm::kMeshExchange);
}

TEST(VerbsCollectivesMatrix, MeshScatterTwoCables) {
  run_all(world_of(*Topology::mesh(3, 2)), small_frames(),
          Algorithm::kMeshScatter);
}

TEST(VerbsCollectivesMatrix, RingBothDirectionsOnMesh) {
  run_all(world_of(*Topology::mesh(4)), small_frames(), Algorithm::kRing);
}

TEST(VerbsCollectivesMatrix, RingTopologyTwoCablesAuto) {
  run_all(world_of(*Topology::ring(5, 2)), small_frames(), Algorithm::kAuto);
}

TEST(VerbsCollectivesMatrix, RingOneDirectionTb5) {
  VerbsWorld w = world_of(*Topology::ring(3));
  w.link = "tb5";
  GroupOptions o;
  o.ring_directions = 1;
  run_all(std::move(w), o, Algorithm::kRing);
}

TEST(VerbsCollectivesMatrix, TwoRanksAuto) {
  run_all(world_of(*Topology::mesh(2)), GroupOptions{}, Algorithm::kAuto);
}

TEST(VerbsCollectivesMatrix, OneRank) {
  run_all(world_of(*Topology::mesh(1)), GroupOptions{}, Algorithm::kAuto);
}

}  // namespace
}  // namespace weft::verbs::testing
