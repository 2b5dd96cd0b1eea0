// Bitwise determinism with inputs whose float sums depend on the order of
// addition, over every fabric: every rank gets identical bytes, a rerun
// (even with a different link model, so frames arrive in a different
// order) gives identical bytes, the mesh algorithms reduce in rank order
// exactly, and a rerun makes the same calls (the fabric's trace hash
// repeats).
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/collectives_suite/cases.h"
#include "tests/collectives_suite/suite.h"

namespace weft::testing {
namespace {

constexpr uint32_t kRanks = 5;
constexpr uint64_t kCount = 10007;

std::vector<Case> sensitive_cases(Algorithm algorithm) {
  std::vector<Case> cases;
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProd}) {
      for (bool in_place : {false, true}) {
        Case c{.kind = Kind::kAllReduce,
               .dtype = dtype,
               .op = op,
               .count = kCount,
               .in_place = in_place,
               .algorithm = algorithm,
               .sensitive = true};
        cases.push_back(c);
        c.kind = Kind::kReduceScatter;
        c.count = kCount / kRanks;
        cases.push_back(c);
        c.kind = Kind::kReduce;
        c.root = 3;
        cases.push_back(c);
      }
    }
  }
  return cases;
}

struct Outputs {
  std::vector<std::vector<ByteVec>> bytes;  // [case][rank]
  uint64_t trace_hash = 0;
};

// Runs the cases; returns every rank's output of every case.
Outputs run(const ClusterFactory& fabric, Algorithm algorithm, LinkKind link,
            bool check_reference) {
  ClusterSpec spec;
  spec.topology = *Topology::mesh(kRanks);
  spec.link = link;
  GroupOptions o;
  o.max_frame_bytes = 8 << 10;
  absl::StatusOr<std::unique_ptr<Cluster>> cluster = fabric.create(spec, o);
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  if (!cluster.ok()) return {};
  std::vector<PreparedCase> cases;
  for (const Case& c : sensitive_cases(algorithm))
    cases.emplace_back(c, kRanks);
  ScriptRun r = run_cases(**cluster, cases);
  EXPECT_TRUE(r.run.completed()) << r.run.report;
  Outputs outputs;
  for (PreparedCase& pc : cases) {
    outputs.bytes.emplace_back();
    for (uint32_t rank = 0; rank < kRanks; ++rank) {
      if (check_reference) {
        EXPECT_EQ(pc.check(rank), "");
      }
      Bytes out = pc.output(rank);
      outputs.bytes.back().emplace_back(out.begin(), out.end());
    }
  }
  for (const auto& statuses : r.results) {
    for (const auto& s : statuses) EXPECT_TRUE(s.ok()) << s;
  }
  outputs.trace_hash = (*cluster)->trace_hash();
  return outputs;
}

TEST_P(CollectivesDeterminism, MeshReducesInRankOrderWhateverTheTiming) {
  for (Algorithm a : {Algorithm::kMeshExchange, Algorithm::kMeshScatter}) {
    const Outputs ideal =
        run(*GetParam(), a, LinkKind::kIdeal, /*check_reference=*/true);
    const Outputs tb5 =
        run(*GetParam(), a, LinkKind::kTb5, /*check_reference=*/true);
    EXPECT_EQ(ideal.bytes, tb5.bytes) << algorithm_name(a);
  }
}

TEST_P(CollectivesDeterminism, RingIsIdenticalOnEveryRankAndRerun) {
  const Outputs first = run(*GetParam(), Algorithm::kRing, LinkKind::kIdeal,
                            /*check_reference=*/false);
  const Outputs again = run(*GetParam(), Algorithm::kRing, LinkKind::kTb5,
                            /*check_reference=*/false);
  EXPECT_EQ(first.bytes, again.bytes);
  const std::vector<Case> cases = sensitive_cases(Algorithm::kRing);
  ASSERT_EQ(first.bytes.size(), cases.size());
  for (size_t i = 0; i < first.bytes.size(); ++i) {
    if (cases[i].kind != Kind::kAllReduce) continue;
    for (uint32_t r = 1; r < kRanks; ++r) {
      EXPECT_EQ(first.bytes[i][r], first.bytes[i][0])
          << cases[i].name() << " rank " << r;
    }
  }
}

TEST_P(CollectivesDeterminism, RerunRepeatsTheTrace) {
  for (Algorithm a : {Algorithm::kMeshScatter, Algorithm::kRing}) {
    const Outputs first = run(*GetParam(), a, LinkKind::kTb5, false);
    const Outputs again = run(*GetParam(), a, LinkKind::kTb5, false);
    EXPECT_NE(first.trace_hash, 0u);
    EXPECT_EQ(first.trace_hash, again.trace_hash) << algorithm_name(a);
    EXPECT_EQ(first.bytes, again.bytes) << algorithm_name(a);
    // The hash tells runs apart: another link model times frames otherwise.
    EXPECT_NE(run(*GetParam(), a, LinkKind::kIdeal, false).trace_hash,
              first.trace_hash);
  }
}

}  // namespace
}  // namespace weft::testing
