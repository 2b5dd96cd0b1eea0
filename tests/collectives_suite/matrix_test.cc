// Every collective against references computed in the test: several dtypes,
// sizes (0, one element, counts that do not divide by the rank count,
// many frames), mesh and ring algorithms, in place and out of place, on
// mesh topologies with one and two cables and on a ring topology, over
// every fabric.
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/collectives_suite/cases.h"
#include "tests/collectives_suite/suite.h"

namespace weft::testing {
namespace {

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

void run_all(const ClusterFactory& fabric, const ClusterSpec& spec,
             const GroupOptions& options, Algorithm algorithm) {
  absl::StatusOr<std::unique_ptr<Cluster>> cluster =
      fabric.create(spec, options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Cluster& c = **cluster;
  const uint32_t n = c.size();
  // Where the fabric counts them, every cable is a queue pair.
  for (uint32_t r = 0; r < n; ++r) {
    size_t cables = 0;
    for (uint32_t p = 0; p < n; ++p)
      cables += spec.topology.devices(r, p).size();
    if (std::optional<int> qps = c.queue_pairs(r)) {
      EXPECT_EQ(*qps, static_cast<int>(cables)) << "rank " << r;
    }
  }
  std::vector<PreparedCase> cases;
  for (const Case& k : all_cases(n, algorithm)) cases.emplace_back(k, n);
  ScriptRun run = run_cases(c, cases);
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

TEST_P(CollectivesMatrix, MeshExchangeTwoCables) {
  run_all(*GetParam(), spec_of(*Topology::mesh(3, 2)), small_frames(),
          Algorithm::kMeshExchange);
}

TEST_P(CollectivesMatrix, MeshScatterTwoCables) {
  run_all(*GetParam(), spec_of(*Topology::mesh(3, 2)), small_frames(),
          Algorithm::kMeshScatter);
}

TEST_P(CollectivesMatrix, RingBothDirectionsOnMesh) {
  run_all(*GetParam(), spec_of(*Topology::mesh(4)), small_frames(),
          Algorithm::kRing);
}

TEST_P(CollectivesMatrix, RingTopologyTwoCablesAuto) {
  run_all(*GetParam(), spec_of(*Topology::ring(5, 2)), small_frames(),
          Algorithm::kAuto);
}

TEST_P(CollectivesMatrix, RingOneDirectionTb5) {
  GroupOptions o;
  o.ring_directions = 1;
  run_all(*GetParam(), spec_of(*Topology::ring(3), LinkKind::kTb5), o,
          Algorithm::kRing);
}

TEST_P(CollectivesMatrix, TwoRanksAuto) {
  run_all(*GetParam(), spec_of(*Topology::mesh(2)), GroupOptions{},
          Algorithm::kAuto);
}

TEST_P(CollectivesMatrix, OneRank) {
  run_all(*GetParam(), spec_of(*Topology::mesh(1)), GroupOptions{},
          Algorithm::kAuto);
}

}  // namespace
}  // namespace weft::testing
