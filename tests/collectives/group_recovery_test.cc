// Recovery (docs/faults.md, "Recovery"): with GroupOptions::recovery on, a
// lost, duplicated or reordered frame - data or acknowledgement - is survived
// and the result is bit-exact; with it off the same scripted fault is a typed
// sequence error. A peer that never acknowledges is Unavailable after the
// configured retries. A property over many seeds: loss, duplication and
// reordering alone never end in an error.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "fabric/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/sim_cluster.h"
#include "sim/prng.h"
#include "tests/collectives/faulted_run.h"
#include "tests/collectives_suite/cases.h"

namespace weft::testing {

using harness::SimCluster;
namespace {

using ::testing::HasSubstr;

constexpr TimeNs kTimeoutNs = 20 * kNsPerMs;

sim::ScriptedFault frame_fault(sim::FaultKind kind, uint32_t from, uint32_t to,
                               uint64_t frame) {
  sim::ScriptedFault f;
  f.kind = kind;
  f.rank = from;
  f.peer = to;
  f.frame = frame;
  if (kind == sim::FaultKind::kDelay) f.duration_ns = 30 * kNsPerUs;
  return f;
}

GroupOptions options(bool recovery) {
  return small_frame_options(kTimeoutNs, recovery);
}

struct Outcome {
  std::vector<absl::Status> first;  // per rank, its first result
  std::vector<std::string> wrong;   // per rank, "" when the bytes are right
  uint64_t faults = 0;
};

Outcome run_one(const Topology& topology, const Case& c,
                const sim::FaultPlan& faults, const GroupOptions& o) {
  const FaultedRun run = run_faulted(topology, {c}, faults, o);
  Outcome out;
  out.faults = run.faults;
  for (size_t r = 0; r < run.status.size(); ++r) {
    const bool ran = !run.status[r].empty();
    out.first.push_back(ran ? run.status[r][0] : absl::OkStatus());
    out.wrong.push_back(ran ? run.wrong[r][0] : "");
  }
  return out;
}

const Case kAllReduce{
    .kind = Kind::kAllReduce, .dtype = DType::kFloat32, .count = 12000};

struct ScriptedCase {
  const char* name;
  sim::ScriptedFault fault;
};

class RecoveryScripted : public ::testing::TestWithParam<ScriptedCase> {};

TEST_P(RecoveryScripted, IsSurvivedWithRecoveryAndTypedWithout) {
  sim::FaultPlan plan;
  plan.script.push_back(GetParam().fault);
  const Topology mesh = *Topology::mesh(3);

  const Outcome on = run_one(mesh, kAllReduce, plan, options(true));
  ASSERT_EQ(on.first.size(), 3u);
  EXPECT_EQ(on.faults, 1u) << "the scripted fault did not happen";
  for (uint32_t r = 0; r < 3; ++r) {
    EXPECT_TRUE(on.first[r].ok()) << "rank " << r << ": " << on.first[r];
    EXPECT_EQ(on.wrong[r], "") << "rank " << r;
  }

  const Outcome off = run_one(mesh, kAllReduce, plan, options(false));
  ASSERT_EQ(off.first.size(), 3u);
  bool sequence_error = false;
  for (uint32_t r = 0; r < 3; ++r) {
    if (off.first[r].ok()) {
      EXPECT_EQ(off.wrong[r], "") << "rank " << r;
      continue;
    }
    const auto place = error_place(off.first[r]);
    ASSERT_TRUE(place.has_value()) << off.first[r];
    sequence_error |= place->cause == ErrorCause::kSequence;
  }
  EXPECT_TRUE(sequence_error) << "without recovery the fault must be seen";
}

// Frame numbers count every frame rank 0 sends to rank 1 (data and
// acknowledgements); 3 and 5 fall among the data frames of kAllReduce.
INSTANTIATE_TEST_SUITE_P(
    Faults, RecoveryScripted,
    ::testing::Values(
        ScriptedCase{"lost_data", frame_fault(sim::FaultKind::kDrop, 0, 1, 3)},
        ScriptedCase{"duplicate",
                     frame_fault(sim::FaultKind::kDuplicate, 0, 1, 3)},
        ScriptedCase{"reordered", frame_fault(sim::FaultKind::kDelay, 0, 1, 3)},
        ScriptedCase{"lost_first", frame_fault(sim::FaultKind::kDrop, 2, 0, 1)},
        ScriptedCase{"lost_late", frame_fault(sim::FaultKind::kDrop, 1, 2, 5)}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Recovery, LostAcknowledgementsOfAPureSenderAreRecovered) {
  // send/recv: rank 1 sends only acknowledgements back to rank 0; lose the
  // first few of them, including the last one rank 0 waits for.
  const Case send{.kind = Kind::kSendRecv,
                  .dtype = DType::kUint8,
                  .count = 40000,
                  .root = 0,
                  .peer = 1};
  for (uint64_t lost = 1; lost <= 4; ++lost) {
    sim::FaultPlan plan;
    for (uint64_t f = 1; f <= lost; ++f)
      plan.script.push_back(frame_fault(sim::FaultKind::kDrop, 1, 0, f));
    const Outcome on = run_one(*Topology::mesh(2), send, plan, options(true));
    ASSERT_EQ(on.first.size(), 2u);
    EXPECT_GE(on.faults, 1u);
    for (uint32_t r = 0; r < 2; ++r) {
      EXPECT_TRUE(on.first[r].ok())
          << lost << " lost, rank " << r << ": " << on.first[r];
      EXPECT_EQ(on.wrong[r], "");
    }
  }
}

TEST(Recovery, PeerThatNeverAcknowledgesIsUnavailableAfterTheRetries) {
  sim::FaultPlan plan;
  sim::ScriptedFault down;
  down.kind = sim::FaultKind::kLinkDown;
  down.rank = 0;
  down.peer = 1;
  down.at_ns = 0;
  plan.script.push_back(down);
  GroupOptions o = options(true);
  o.timeout_ns = kNsPerS;  // the retries give up long before
  o.recovery.initial_rto_ns = 100 * kNsPerUs;
  o.recovery.max_rto_ns = kNsPerMs;
  o.recovery.max_retries = 5;
  const Case send{.kind = Kind::kSendRecv,
                  .dtype = DType::kUint8,
                  .count = 1000,
                  .root = 0,
                  .peer = 1};
  const Outcome out = run_one(*Topology::mesh(2), send, plan, o);
  ASSERT_EQ(out.first.size(), 2u);
  const absl::Status& s = out.first[0];
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  const auto place = error_place(s);
  ASSERT_TRUE(place.has_value()) << s;
  EXPECT_EQ(place->rank, 0u);
  EXPECT_EQ(place->peer, 1u);
  EXPECT_EQ(place->cause, ErrorCause::kPeerUnavailable);
  EXPECT_THAT(std::string(s.message()), HasSubstr("after 5 retransmissions"));
  // Rank 1 heard nothing at all (rank 0's abort takes the dead direction
  // too): its own deadline ends it, naming rank 0.
  EXPECT_EQ(out.first[1].code(), absl::StatusCode::kDeadlineExceeded)
      << out.first[1];
  ASSERT_TRUE(error_place(out.first[1]).has_value());
  EXPECT_EQ(error_place(out.first[1])->peer, 0u);
}

// Property: loss up to 5%, duplication and reordering, on random meshes
// and rings, every collective kind: with recovery, every operation on
// every rank ends OK with the bit-exact result.
TEST(Recovery, LossDuplicationAndReorderingNeverFailAnOperation) {
  constexpr uint64_t kSeeds = 120;
  constexpr Kind kKinds[] = {Kind::kAllReduce,     Kind::kAllGather,
                             Kind::kReduceScatter, Kind::kBroadcast,
                             Kind::kReduce,        Kind::kAllToAll,
                             Kind::kSendRecv,      Kind::kBarrier};
  constexpr uint64_t kCounts[] = {0, 1, 333, 4099, 20000};
  uint64_t faults = 0;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    sim::Prng rng(seed);
    const auto n = static_cast<uint32_t>(2 + rng.below(5));
    const bool ring = rng.chance(0.4);
    sim::WorldOptions w;
    w.topology = ring ? *Topology::ring(n) : *Topology::mesh(n);
    w.link = rng.chance(0.5) ? sim::LinkModel::tb5() : sim::LinkModel::ideal();
    w.seed = seed;
    w.time_limit_ns = 40 * kTimeoutNs;
    w.faults.rates.loss = 0.05 * rng.unit();
    w.faults.rates.duplicate = 0.02 * rng.unit();
    w.faults.rates.reorder = 0.02 * rng.unit();
    GroupOptions o = options(true);
    if (rng.chance(0.5)) o.depth = GroupOptions::kMinDepth;
    absl::StatusOr<SimCluster> cluster = SimCluster::create(w, o);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    std::vector<PreparedCase> cases;
    for (int i = 0; i < 3; ++i) {
      Case c;
      c.kind = kKinds[rng.below(std::size(kKinds))];
      c.dtype = rng.chance(0.5) ? DType::kFloat32 : DType::kInt64;
      c.op = static_cast<ReduceOp>(rng.below(kReduceOpCount));
      c.count = kCounts[rng.below(std::size(kCounts))];
      c.root = static_cast<uint32_t>(rng.below(n));
      c.peer = (c.root + 1) % n;
      c.salt = seed * 10 + static_cast<uint64_t>(i);
      cases.emplace_back(c, n);
    }
    const std::string where =
        absl::StrFormat("seed %u: %u ranks %s, %s", seed, n,
                        ring ? "ring" : "mesh", w.faults.to_text());
    ScriptRun run = run_cases(*cluster, cases);
    ASSERT_TRUE(run.run.completed()) << where << "\n" << run.run.report;
    faults += cluster->world().counters().faults_total();
    for (uint32_t r = 0; r < n; ++r) {
      size_t step = 0;
      for (PreparedCase& c : cases) {
        if (!c.starter(r)) continue;
        ASSERT_LT(step, run.results[r].size()) << where;
        ASSERT_TRUE(run.results[r][step].ok())
            << where << "\nrank " << r << ": " << run.results[r][step];
        EXPECT_EQ(c.check(r), "") << where << "\nrank " << r;
        ++step;
      }
    }
  }
  EXPECT_GT(faults, kSeeds) << "the property must see faults";
}

}  // namespace
}  // namespace weft::testing
