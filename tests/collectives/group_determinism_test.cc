// Bitwise determinism with inputs whose float sums depend on the order of
// addition: every rank gets identical bytes, a rerun (even with a different
// link model, so frames arrive in a different order) gives identical bytes,
// and the mesh algorithms reduce in rank order exactly.
#include <vector>

#include "cases.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

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

// Runs the cases; returns every rank's output of every case.
std::vector<std::vector<ByteVec>> run(Algorithm algorithm, sim::LinkModel link,
                                      bool check_reference) {
  sim::WorldOptions w;
  w.topology = *Topology::mesh(kRanks);
  w.link = link;
  GroupOptions o;
  o.max_frame_bytes = 8 << 10;
  absl::StatusOr<SimCluster> cluster = make_cluster(w, o);
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  std::vector<PreparedCase> cases;
  for (const Case& c : sensitive_cases(algorithm))
    cases.emplace_back(c, kRanks);
  ScriptRun r = run_cases(*cluster, cases);
  EXPECT_TRUE(r.run.completed()) << r.run.report;
  std::vector<std::vector<ByteVec>> outputs;
  for (PreparedCase& pc : cases) {
    outputs.emplace_back();
    for (uint32_t rank = 0; rank < kRanks; ++rank) {
      if (check_reference) {
        EXPECT_EQ(pc.check(rank), "");
      }
      Bytes out = pc.output(rank);
      outputs.back().emplace_back(out.begin(), out.end());
    }
  }
  for (const auto& statuses : r.results) {
    for (const auto& s : statuses) EXPECT_TRUE(s.ok()) << s;
  }
  return outputs;
}

TEST(GroupDeterminism, InputsReallyDependOnOrder) {
  // The property below means something only if another order differs.
  std::vector<ByteVec> inputs;
  for (uint32_t r = 0; r < kRanks; ++r) {
    inputs.push_back(sensitive_input(DType::kFloat32, kCount, r, 1));
  }
  std::vector<ByteVec> reversed(inputs.rbegin(), inputs.rend());
  EXPECT_NE(reference_reduce(DType::kFloat32, ReduceOp::kSum, inputs),
            reference_reduce(DType::kFloat32, ReduceOp::kSum, reversed));
}

TEST(GroupDeterminism, MeshReducesInRankOrderWhateverTheTiming) {
  for (Algorithm a : {Algorithm::kMeshExchange, Algorithm::kMeshScatter}) {
    const auto ideal =
        run(a, sim::LinkModel::ideal(), /*check_reference=*/true);
    const auto tb5 = run(a, sim::LinkModel::tb5(), /*check_reference=*/true);
    EXPECT_EQ(ideal, tb5) << algorithm_name(a);
  }
}

TEST(GroupDeterminism, RingIsIdenticalOnEveryRankAndRerun) {
  const auto first = run(Algorithm::kRing, sim::LinkModel::ideal(), false);
  const auto again = run(Algorithm::kRing, sim::LinkModel::tb5(), false);
  EXPECT_EQ(first, again);
  const std::vector<Case> cases = sensitive_cases(Algorithm::kRing);
  for (size_t i = 0; i < first.size(); ++i) {
    if (cases[i].kind != Kind::kAllReduce) continue;
    for (uint32_t r = 1; r < kRanks; ++r) {
      EXPECT_EQ(first[i][r], first[i][0]) << cases[i].name() << " rank " << r;
    }
  }
}

}  // namespace
}  // namespace weft::testing
