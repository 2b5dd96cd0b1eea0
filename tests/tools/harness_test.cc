// The harness weft-sim and weft-bench share: its 16-bit float conversions
// against IEEE bit patterns, its reference outputs against outputs built
// here by hand, the verdicts it gives, and a simulated cluster's runs.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "fabric/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/outcome.h"
#include "harness/plain_arithmetic.h"
#include "harness/reference.h"
#include "harness/sim_cluster.h"

namespace weft::harness {
namespace {

using sim::FaultPlan;
using sim::RunResult;
using sim::WorldOptions;
using ::testing::HasSubstr;

TEST(PlainArithmetic, HalfConversionsMatchIeeeBitPatterns) {
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);  // largest finite
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);  // rounds up to infinity
  EXPECT_EQ(float_to_half(0x1p-24f), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half(0x1p-25f), 0x0000);  // tie: to even (zero)
  EXPECT_EQ(float_to_half(0.1f), 0x2e66);
  EXPECT_EQ(float_to_half(1.0f + 0x1p-11f), 0x3c00);  // tie: stays even
  EXPECT_EQ(float_to_half(1.0f + 0x1p-10f + 0x1p-11f), 0x3c02);  // tie: up
  EXPECT_EQ(half_to_float(0x3555), 0x1.554p-2f);
  EXPECT_EQ(half_to_float(0x0001), 0x1p-24f);
  EXPECT_EQ(float_to_bfloat16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bfloat16(-0.5f), 0xbf00);
  EXPECT_EQ(float_to_bfloat16(1.0f + 0x1p-8f), 0x3f80);  // tie: even
  EXPECT_EQ(float_to_bfloat16(1.0f + 0x1p-7f + 0x1p-8f), 0x3f82);
  EXPECT_EQ(bfloat16_to_float(0x4040), 3.0f);
}

constexpr uint32_t kRanks = 3;
constexpr uint64_t kSeed = 5;

std::vector<float> floats_of(const std::vector<std::byte>& bytes) {
  std::vector<float> out(bytes.size() / sizeof(float));
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}
std::vector<std::byte> bytes_of(const std::vector<float>& values) {
  std::vector<std::byte> out(values.size() * sizeof(float));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

struct Fixture {
  CollectiveSpec spec;
  CollectiveShape shape;
  std::vector<std::vector<float>> inputs;  // per rank
};

Fixture make(CollectiveKind kind, uint64_t bytes) {
  Fixture f;
  f.spec.kind = kind;
  f.spec.bytes = bytes;
  f.shape = *shape_of(f.spec, kRanks);
  Reference reference(f.spec, f.shape, kRanks, kSeed);
  for (uint32_t r = 0; r < kRanks; ++r) {
    std::vector<std::byte> in(f.shape.in_bytes);
    reference.fill_input(r, in);
    f.inputs.push_back(floats_of(in));
  }
  return f;
}

TEST(Reference, AllReduceIsTheRankOrderSum) {
  const Fixture f = make(CollectiveKind::kAllReduce, 5 * sizeof(float));
  std::vector<float> want(5);
  for (size_t i = 0; i < want.size(); ++i) {
    want[i] = (f.inputs[0][i] + f.inputs[1][i]) + f.inputs[2][i];
  }
  Reference reference(f.spec, f.shape, kRanks, kSeed);
  std::vector<std::byte> out = bytes_of(want);
  for (uint32_t r = 0; r < kRanks; ++r) {
    EXPECT_EQ(reference.wrong_elements(r, out), 0u);
  }
  out[6] ^= std::byte{1};  // one bit of element 1
  EXPECT_EQ(reference.wrong_elements(0, out), 1u);
  out.pop_back();
  EXPECT_EQ(reference.wrong_elements(0, out), 5u);  // wrong size: all wrong
}

TEST(Reference, GatherScatterAndAllToAllTakeTheRightBlocks) {
  const uint64_t block = 2;  // elements per block
  const uint64_t bytes = kRanks * block * sizeof(float);
  const Fixture gather = make(CollectiveKind::kAllGather, bytes);
  const Fixture scatter = make(CollectiveKind::kReduceScatter, bytes);
  const Fixture a2a = make(CollectiveKind::kAllToAll, bytes);
  for (uint32_t r = 0; r < kRanks; ++r) {
    std::vector<float> g, s, t;
    for (uint32_t k = 0; k < kRanks; ++k) {
      for (uint64_t i = 0; i < block; ++i) {
        g.push_back(gather.inputs[k][i]);
        t.push_back(a2a.inputs[k][r * block + i]);
      }
    }
    for (uint64_t i = 0; i < block; ++i) {
      const uint64_t at = r * block + i;
      s.push_back((scatter.inputs[0][at] + scatter.inputs[1][at]) +
                  scatter.inputs[2][at]);
    }
    Reference rg(gather.spec, gather.shape, kRanks, kSeed);
    Reference rs(scatter.spec, scatter.shape, kRanks, kSeed);
    Reference rt(a2a.spec, a2a.shape, kRanks, kSeed);
    EXPECT_EQ(rg.wrong_elements(r, bytes_of(g)), 0u) << r;
    EXPECT_EQ(rs.wrong_elements(r, bytes_of(s)), 0u) << r;
    EXPECT_EQ(rt.wrong_elements(r, bytes_of(t)), 0u) << r;
  }
}

TEST(Reference, FloatSumsTakeAtMostEightContributionsPerElement) {
  CollectiveSpec spec;
  spec.bytes = 64 * sizeof(float);
  constexpr uint32_t kMany = 20;
  const CollectiveShape shape = *shape_of(spec, kMany);
  Reference reference(spec, shape, kMany, kSeed);
  std::vector<int> nonzero(64);
  for (uint32_t r = 0; r < kMany; ++r) {
    std::vector<std::byte> in(shape.in_bytes);
    reference.fill_input(r, in);
    const std::vector<float> v = floats_of(in);
    for (size_t i = 0; i < v.size(); ++i) nonzero[i] += v[i] != 0.0f;
  }
  for (int n : nonzero) EXPECT_LE(n, 8);
}

absl::Status typed(absl::StatusCode code, ErrorCause cause, uint32_t rank,
                   uint32_t peer) {
  return make_error(code, ErrorPlace{rank, peer, "", cause}, "boom");
}

TEST(Outcome, ClassifiesEveryVerdict) {
  RunResult done;
  std::vector<RankOutcome> ranks(2);
  for (RankOutcome& r : ranks) r.finished = r.checked = true;
  EXPECT_EQ(classify(done, ranks).verdict, Verdict::kCorrect);

  ranks[1].first_error =
      typed(absl::StatusCode::kDataLoss, ErrorCause::kSequence, 1, 0);
  ranks[0].first_error =
      typed(absl::StatusCode::kAborted, ErrorCause::kSequence, 0, 1);
  Outcome o = classify(done, ranks);
  EXPECT_EQ(o.verdict, Verdict::kTypedError);
  EXPECT_EQ(o.detections, 1u);  // rank 0 only heard of it
  EXPECT_EQ(o.summary(), "typed error (sequence error: rank 1, peer 0)");

  ranks[1].first_error = absl::InternalError("no place");
  EXPECT_EQ(classify(done, ranks).verdict, Verdict::kUntypedError);

  ranks[1].first_error = absl::OkStatus();
  ranks[1].wrong_elements = 3;
  o = classify(done, ranks);
  EXPECT_EQ(o.verdict, Verdict::kCorrupt);
  EXPECT_THAT(o.summary(), HasSubstr("rank 1: 3 wrong elements"));

  ranks[1].wrong_elements = 0;
  ranks[1].finished = false;
  RunResult hung;
  hung.outcome = RunResult::Outcome::kHang;
  EXPECT_EQ(classify(hung, ranks).verdict, Verdict::kHang);
  EXPECT_FALSE(classify(hung, ranks).allowed());
  EXPECT_TRUE(verdict_failed(Verdict::kHang));
}

// The time limit is the user's budget running out, not a defect found: a
// verdict of its own, neither allowed nor failed, printed "time limit".
TEST(Outcome, TimeLimitIsItsOwnVerdictNotAHang) {
  std::vector<RankOutcome> ranks(2);
  ranks[0].finished = true;
  RunResult stopped;
  stopped.outcome = RunResult::Outcome::kTimeLimit;
  const Outcome o = classify(stopped, ranks);
  EXPECT_EQ(o.verdict, Verdict::kTimeLimit);
  EXPECT_EQ(o.summary(), "time limit");
  EXPECT_FALSE(o.allowed());
  EXPECT_TRUE(verdict_inconclusive(o.verdict));
  EXPECT_FALSE(verdict_failed(o.verdict));
  // Wrong bytes are a defect whatever stopped the run.
  ranks[0].checked = true;
  ranks[0].wrong_elements = 1;
  EXPECT_EQ(classify(stopped, ranks).verdict, Verdict::kCorrupt);
}

WorldOptions ring_world(uint32_t ranks) {
  WorldOptions w;
  w.topology = *Topology::ring(ranks);
  return w;
}

TEST(SimCluster, RunsAreCorrectTimedAndRepeatable) {
  auto cluster = *SimCluster::create(ring_world(4), GroupOptions{});
  CollectiveSpec spec;
  spec.bytes = 1000 * sizeof(float);
  RunOptions options;
  options.iterations = 3;
  const CaseRun run = *cluster.run(spec, options);
  EXPECT_EQ(run.outcome.verdict, Verdict::kCorrect);
  EXPECT_EQ(run.algorithm, Algorithm::kRing);
  EXPECT_GT(run.elapsed_ns, 0);
  EXPECT_GT(run.frames, 0u);
  EXPECT_EQ(run.wrong_elements, 0u);
  auto again = *SimCluster::create(ring_world(4), GroupOptions{});
  EXPECT_EQ(again.run(spec, options)->elapsed_ns, run.elapsed_ns);
}

// A series of runs (weft-bench's warm-up, timed and checking runs of each
// size) allocates each rank's buffers and the reference's reduction once
// per size it grows to, not once per run: a large buffer allocated anew
// costs a page fault per page every time.
TEST(SimCluster, RunsReuseTheBuffersOfTheRunBefore) {
  constexpr uint32_t kRanks = 4;
  auto cluster = *SimCluster::create(ring_world(kRanks), GroupOptions{});
  CollectiveSpec spec;
  spec.bytes = 1 << 20;
  const auto run_correct = [&] {
    const CaseRun run = *cluster.run(spec, RunOptions{});
    EXPECT_EQ(run.outcome.verdict, Verdict::kCorrect) << run.outcome.summary();
  };
  run_correct();
  // Every rank's input and output, and the reduction the check needs.
  EXPECT_EQ(cluster.buffer_allocations(), 2 * kRanks + 1);
  for (int i = 0; i < 3; ++i) run_correct();
  EXPECT_EQ(cluster.buffer_allocations(), 2 * kRanks + 1);
  // Smaller, or in place (one buffer of the same size): nothing new.
  spec.in_place = true;
  run_correct();
  spec.bytes /= 2;
  spec.in_place = false;
  run_correct();
  EXPECT_EQ(cluster.buffer_allocations(), 2 * kRanks + 1);
  // Larger: every buffer grows, once.
  spec.bytes *= 4;
  run_correct();
  run_correct();
  EXPECT_EQ(cluster.buffer_allocations(), 2 * (2 * kRanks + 1));
}

TEST(SimCluster, RefusesWhatTheTopologyCannotRun) {
  auto cluster = *SimCluster::create(ring_world(4), GroupOptions{});
  CollectiveSpec spec;
  spec.bytes = 4096;
  spec.algorithm = AlgorithmRequest::kMeshScatter;
  EXPECT_TRUE(absl::IsInvalidArgument(cluster.check(spec)));
  spec.algorithm = AlgorithmRequest::kAuto;
  spec.kind = CollectiveKind::kSendRecv;
  spec.in_place = true;
  EXPECT_TRUE(absl::IsInvalidArgument(cluster.check(spec)));
}

TEST(SimCluster, ADroppedFrameIsResentWithRecoveryAndTypedWithout) {
  WorldOptions w = ring_world(4);
  w.faults = *FaultPlan::parse("drop from=0 to=1 frame=2\n");
  CollectiveSpec spec;
  spec.bytes = 1 << 20;

  auto recovering = *SimCluster::create(w, GroupOptions{});
  const CaseRun on = *recovering.run(spec, RunOptions{});
  EXPECT_EQ(on.faults_injected, 1u);
  EXPECT_EQ(on.outcome.verdict, Verdict::kCorrect) << on.outcome.summary();
  EXPECT_EQ(on.wrong_elements, 0u);

  GroupOptions off;
  off.recovery.enabled = false;
  auto detecting = *SimCluster::create(w, off);
  const CaseRun run = *detecting.run(spec, RunOptions{});
  EXPECT_EQ(run.faults_injected, 1u);
  EXPECT_EQ(run.outcome.verdict, Verdict::kTypedError) << run.outcome.summary();
  EXPECT_GE(run.outcome.detections, 1u);
}

}  // namespace
}  // namespace weft::harness
