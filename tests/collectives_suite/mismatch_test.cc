// Ranks that call different collectives, or the same one with different
// sizes, dtypes, roots or algorithms, get a kMismatch error on every rank,
// over every fabric: never a hang, never data reduced into the wrong
// buffer.
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
#include "tests/collectives_suite/cases.h"
#include "tests/collectives_suite/suite.h"

namespace weft::testing {
namespace {

using ::testing::HasSubstr;

struct Mismatch {
  const char* name;
  Topology topology;
  Case usual;
  Case odd;  // what rank `odd_rank` calls instead
  uint32_t odd_rank;
  // False where a rank's part never meets the odd rank's frames (a
  // broadcast receiver hears only the root): it may finish with correct
  // data, and learns of the mismatch from the abort on its next call.
  bool every_rank_fails_the_call = true;
};

std::vector<Mismatch> mismatches() {
  const Case sum{
      .kind = Kind::kAllReduce, .dtype = DType::kFloat32, .count = 1000};
  Case gather = sum;
  gather.kind = Kind::kAllGather;
  Case bigger = sum;
  bigger.count = 1001;
  Case ints = sum;
  ints.dtype = DType::kInt32;
  Case max = sum;
  max.op = ReduceOp::kMax;
  Case empty = sum;
  empty.count = 0;
  Case bcast{
      .kind = Kind::kBroadcast, .dtype = DType::kUint8, .count = 64, .root = 0};
  Case bcast_other_root = bcast;
  bcast_other_root.root = 2;
  Case ring_alg = sum;
  ring_alg.algorithm = Algorithm::kRing;
  return {
      {"different collective", *Topology::mesh(3), sum, gather, 1},
      {"different size", *Topology::mesh(3), sum, bigger, 2},
      {"different dtype", *Topology::mesh(3), sum, ints, 0},
      {"different op", *Topology::mesh(4), sum, max, 3},
      {"empty against non-empty", *Topology::mesh(3), sum, empty, 1},
      {"different root", *Topology::mesh(3), bcast, bcast_other_root, 1, false},
      {"different algorithm", *Topology::mesh(3), sum, ring_alg, 1},
      {"ring: different collective", *Topology::ring(5), sum, gather, 2},
      {"ring: different size", *Topology::ring(4), sum, bigger, 0},
  };
}

TEST_P(CollectivesMismatch, EveryRankGetsAMismatchError) {
  for (const Mismatch& m : mismatches()) {
    ClusterSpec spec;
    spec.topology = m.topology;
    absl::StatusOr<std::unique_ptr<Cluster>> cluster = make_cluster(spec);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    const uint32_t n = (*cluster)->size();
    PreparedCase usual(m.usual, n), odd(m.odd, n);
    std::vector<std::vector<Starter>> scripts(n);
    for (uint32_t r = 0; r < n; ++r) {
      scripts[r].push_back(*(r == m.odd_rank ? odd : usual).starter(r));
      // A second call must be refused: the group is failed.
      scripts[r].push_back([](Group& g) { return g.barrier_async(); });
    }
    ScriptRun run = (*cluster)->run_scripts(std::move(scripts));
    ASSERT_TRUE(run.run.completed()) << m.name << "\n" << run.run.report;
    for (uint32_t r = 0; r < n; ++r) {
      ASSERT_EQ(run.results[r].size(), 2u) << m.name;
      const absl::Status& s = run.results[r][0];
      if (s.ok()) {
        ASSERT_FALSE(m.every_rank_fails_the_call) << m.name << " rank " << r;
        EXPECT_EQ((r == m.odd_rank ? odd : usual).check(r), "");
      } else {
        const auto place = error_place(s);
        ASSERT_TRUE(place.has_value()) << s;
        EXPECT_EQ(place->cause, ErrorCause::kMismatch)
            << m.name << " rank " << r << ": " << s;
        EXPECT_EQ(place->rank, r);
        EXPECT_NE(place->peer, kNoPeer);
        EXPECT_THAT(std::string(s.message()),
                    HasSubstr("mismatched collectives"))
            << s;
      }
      // The next call is refused, or (where the first call succeeded) ends
      // with the abort that carries the mismatch.
      const auto next = error_place(run.results[r][1]);
      ASSERT_TRUE(next.has_value()) << m.name << " rank " << r;
      EXPECT_EQ(next->cause,
                s.ok() ? ErrorCause::kMismatch : ErrorCause::kGroupFailed);
      EXPECT_THAT(std::string(run.results[r][1].message()),
                  HasSubstr("mismatched collectives"));
    }
  }
}

TEST_P(CollectivesMismatch, MessageNamesBothCalls) {
  ClusterSpec spec;
  spec.topology = *Topology::mesh(2);
  absl::StatusOr<std::unique_ptr<Cluster>> cluster = make_cluster(spec);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ByteVec a(40), b(80);
  std::vector<std::vector<Starter>> scripts(2);
  scripts[0].push_back([&](Group& g) {
    return g.all_reduce_async(a, Bytes(b).first(40), DType::kFloat32,
                              ReduceOp::kSum);
  });
  scripts[1].push_back(
      [&](Group& g) { return g.all_gather_async(a, b, DType::kFloat32); });
  ScriptRun run = (*cluster)->run_scripts(std::move(scripts));
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  // Whichever rank noticed first (on a fabric of real threads either may;
  // its abort carries its message to the other), rank 0's error names
  // both calls, each on its own side.
  const std::string m0(run.results[0][0].message());
  const bool rank0_noticed =
      m0.find("the peer sent a frame of all_gather #0") != std::string::npos &&
      m0.find("this rank runs all_sum #0") != std::string::npos;
  const bool rank1_noticed =
      m0.find("began on rank 1") != std::string::npos &&
      m0.find("the peer sent a frame of all_sum #0") != std::string::npos &&
      m0.find("this rank runs all_gather #0") != std::string::npos;
  EXPECT_TRUE(rank0_noticed || rank1_noticed) << m0;
}

}  // namespace
}  // namespace weft::testing
