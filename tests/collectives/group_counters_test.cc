// Group::counters(): what the engine counted, checked against what must
// have happened. Frames sent are worked out from the algorithm's known
// traffic (a mesh exchange all-reduce sends the whole buffer to every
// peer), not read back from the engine; scripted faults (a dropped and a
// duplicated frame, a silent rank) must show in the resent, duplicate and
// deadline counts, and nothing else may.
#include "collectives/group_counters.h"

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/engine/frame_header.h"
#include "gtest/gtest.h"
#include "harness/sim_cluster.h"
#include "tests/collectives_suite/cases.h"

namespace weft::testing {

using harness::SimCluster;
namespace {

constexpr uint32_t kRanks = 3;
constexpr uint32_t kFrameBytes = GroupOptions::kMinFrameBytes;
// Payload per frame: the frame less the protocol's header.
constexpr uint64_t kPayloadBytes =
    kFrameBytes - collectives::internal::kHeaderBytes;
constexpr uint64_t kFrames = 10;  // a message of exactly ten full frames
constexpr uint64_t kCount = kFrames * kPayloadBytes / sizeof(float);

GroupOptions small_frames(uint32_t depth = 8) {
  GroupOptions o;
  o.timeout_ns = 20 * kNsPerMs;
  o.max_frame_bytes = kFrameBytes;
  o.depth = depth;
  return o;
}

absl::StatusOr<SimCluster> cluster_of(const sim::FaultPlan& faults,
                                      const GroupOptions& o) {
  sim::WorldOptions w;
  w.topology = *Topology::mesh(kRanks);
  w.faults = faults;
  w.time_limit_ns = 10 * o.timeout_ns;
  return SimCluster::create(w, o);
}

// One mesh-exchange all-reduce of `count` floats; every rank must succeed.
void run_all_reduce(SimCluster& cluster, uint64_t count) {
  std::vector<PreparedCase> cases;
  cases.emplace_back(Case{.kind = Kind::kAllReduce,
                          .dtype = DType::kFloat32,
                          .count = count,
                          .algorithm = Algorithm::kMeshExchange},
                     kRanks);
  ScriptRun run = run_cases(cluster, cases);
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  for (uint32_t r = 0; r < kRanks; ++r) {
    ASSERT_EQ(run.results[r].size(), 1u);
    EXPECT_TRUE(run.results[r][0].ok()) << "rank " << r << run.results[r][0];
    EXPECT_EQ(cases[0].check(r), "") << "rank " << r;
  }
}

const PeerCounters* find(const GroupCounters& c, uint32_t peer) {
  for (const PeerCounters& p : c.peers) {
    if (p.peer == peer) return &p;
  }
  return nullptr;
}
// A pointer into a temporary would dangle: bind counters() to a name first.
const PeerCounters* find(GroupCounters&& c, uint32_t peer) = delete;

sim::FaultPlan one_fault(sim::FaultKind kind, uint32_t from, uint32_t to,
                         uint64_t frame) {
  sim::ScriptedFault f;
  f.kind = kind;
  f.rank = from;
  f.peer = to;
  f.frame = frame;
  sim::FaultPlan plan;
  plan.script.push_back(f);
  return plan;
}

TEST(GroupCounters, CleanRunSendsWhatTheAlgorithmMustAndResendsNothing) {
  absl::StatusOr<SimCluster> cluster = cluster_of({}, small_frames());
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  run_all_reduce(*cluster, kCount);
  for (uint32_t r = 0; r < kRanks; ++r) {
    const GroupCounters c = cluster->group(r).counters();
    ASSERT_EQ(c.peers.size(), kRanks - 1) << "one cable to each peer";
    for (const PeerCounters& p : c.peers) {
      EXPECT_NE(p.peer, r);
      EXPECT_EQ(p.cable, 0u);
      EXPECT_FALSE(p.device.empty());
      EXPECT_EQ(p.counts.frames_sent, kFrames) << r << "->" << p.peer;
      EXPECT_EQ(p.counts.frames_received, kFrames) << r << "<-" << p.peer;
      EXPECT_EQ(p.counts.frames_resent, 0u);
      EXPECT_EQ(p.counts.duplicates_dropped, 0u);
      EXPECT_EQ(p.counts.frames_held_early, 0u);
      EXPECT_EQ(p.counts.deadlines_hit, 0u);
      EXPECT_GE(p.counts.acks_sent, 1u) << "every arrival is acknowledged";
    }
    EXPECT_EQ(c.total.frames_sent, (kRanks - 1) * kFrames);
    EXPECT_EQ(c.total.frames_resent, 0u);
  }
}

// In a loop of operations an operation's last frame asks for no
// acknowledgement of its own: the next operation's first frame to that
// peer carries it (every frame carries `received`), so no acknowledgement
// takes the link's per-message time between two operations' data. At
// most the loop's last frame is acknowledged alone (within min_rto_ns / 4).
TEST(GroupCounters, ALoopOfOneFrameOperationsSendsNoAcknowledgementBetween) {
  absl::StatusOr<SimCluster> cluster = cluster_of({}, small_frames());
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  constexpr uint32_t kLoop = 8;
  std::vector<PreparedCase> cases;
  for (uint32_t i = 0; i < kLoop; ++i) {
    cases.emplace_back(Case{.kind = Kind::kAllReduce,
                            .dtype = DType::kFloat32,
                            .count = kPayloadBytes / sizeof(float),
                            .algorithm = Algorithm::kMeshExchange},
                       kRanks);
  }
  ScriptRun run = run_cases(*cluster, cases);
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  for (uint32_t r = 0; r < kRanks; ++r) {
    ASSERT_EQ(run.results[r].size(), kLoop);
    for (uint32_t i = 0; i < kLoop; ++i) {
      EXPECT_TRUE(run.results[r][i].ok()) << "rank " << r << " op " << i;
      EXPECT_EQ(cases[i].check(r), "") << "rank " << r << " op " << i;
    }
    const GroupCounters c = cluster->group(r).counters();
    for (const PeerCounters& p : c.peers) {
      EXPECT_EQ(p.counts.frames_sent, kLoop) << r << "->" << p.peer;
      EXPECT_LE(p.counts.acks_sent, 1u) << r << "->" << p.peer;
    }
  }
}

TEST(GroupCounters, CountsGrowAcrossCallsAndSplitGroupsShareThem) {
  absl::StatusOr<SimCluster> cluster = cluster_of({}, small_frames());
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  run_all_reduce(*cluster, kCount);
  run_all_reduce(*cluster, kCount);
  EXPECT_EQ(cluster->group(0).counters().total.frames_sent,
            2 * (kRanks - 1) * kFrames);
  const uint32_t pair[] = {0, 1};
  absl::StatusOr<std::unique_ptr<Group>> sub = cluster->group(0).split(pair);
  ASSERT_TRUE(sub.ok()) << sub.status();
  EXPECT_EQ((*sub)->counters().total, cluster->group(0).counters().total);
  EXPECT_EQ((*sub)->counters().peers.size(), kRanks - 1)
      << "the engine's every cable, not only the sub-group's";
}

TEST(GroupCounters, ADroppedFrameIsResent) {
  // Frame 3 from rank 0 to rank 1 is one of the data frames.
  absl::StatusOr<SimCluster> cluster =
      cluster_of(one_fault(sim::FaultKind::kDrop, 0, 1, 3), small_frames());
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  run_all_reduce(*cluster, kCount);
  EXPECT_EQ(cluster->world().counters().dropped_loss, 1u);
  const GroupCounters sender = cluster->group(0).counters();
  const PeerCounters* to_1 = find(sender, 1);
  ASSERT_NE(to_1, nullptr);
  EXPECT_GE(to_1->counts.frames_resent, 1u);
  // First transmissions are what the algorithm sends, loss or not.
  EXPECT_EQ(to_1->counts.frames_sent, kFrames);
  const PeerCounters* to_2 = find(sender, 2);
  ASSERT_NE(to_2, nullptr);
  EXPECT_EQ(to_2->counts.frames_resent, 0u) << "nothing was lost towards 2";
  const GroupCounters receiver = cluster->group(1).counters();
  const PeerCounters* from_0 = find(receiver, 0);
  ASSERT_NE(from_0, nullptr);
  EXPECT_EQ(from_0->counts.frames_received, kFrames);
}

TEST(GroupCounters, ADuplicatedFrameIsDroppedOnce) {
  absl::StatusOr<SimCluster> cluster = cluster_of(
      one_fault(sim::FaultKind::kDuplicate, 0, 1, 3), small_frames());
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  run_all_reduce(*cluster, kCount);
  const GroupCounters receiver = cluster->group(1).counters();
  const PeerCounters* from_0 = find(receiver, 0);
  ASSERT_NE(from_0, nullptr);
  EXPECT_EQ(from_0->counts.duplicates_dropped, 1u);
  EXPECT_EQ(from_0->counts.frames_received, kFrames);
  EXPECT_EQ(cluster->group(1).counters().total.duplicates_dropped, 1u);
  EXPECT_EQ(cluster->group(0).counters().total.frames_resent, 0u);
}

TEST(GroupCounters, CreditStallsOnlyWhenTheMessageOutgrowsTheWindow) {
  // Depth 4 leaves a window of a few frames: ten frames must wait for
  // credit; one frame never does.
  absl::StatusOr<SimCluster> big = cluster_of({}, small_frames(4));
  ASSERT_TRUE(big.ok()) << big.status();
  run_all_reduce(*big, kCount);
  EXPECT_GE(big->group(0).counters().total.credit_stalls, 1u);

  absl::StatusOr<SimCluster> small = cluster_of({}, small_frames(4));
  ASSERT_TRUE(small.ok()) << small.status();
  run_all_reduce(*small, kPayloadBytes / sizeof(float));
  EXPECT_EQ(small->group(0).counters().total.frames_sent, kRanks - 1);
  EXPECT_EQ(small->group(0).counters().total.credit_stalls, 0u);
}

TEST(GroupCounters, ADeadlineIsCountedAgainstTheSilentPeer) {
  GroupOptions o = small_frames();
  o.timeout_ns = kNsPerMs;
  absl::StatusOr<SimCluster> cluster = cluster_of({}, o);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  PreparedCase c(
      Case{.kind = Kind::kAllReduce, .dtype = DType::kFloat32, .count = 100},
      kRanks);
  // Rank 2 never calls.
  ScriptRun run = cluster->run_scripts({{*c.starter(0)}, {*c.starter(1)}, {}});
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  for (uint32_t r = 0; r < 2; ++r) {
    ASSERT_EQ(run.results[r][0].code(), absl::StatusCode::kDeadlineExceeded);
    const GroupCounters counts = cluster->group(r).counters();
    EXPECT_EQ(counts.total.deadlines_hit, 1u) << "rank " << r;
    const PeerCounters* silent = find(counts, 2);
    ASSERT_NE(silent, nullptr);
    EXPECT_EQ(silent->counts.deadlines_hit, 1u) << "rank " << r;
    EXPECT_GE(silent->counts.probes_sent, 1u) << "a silent peer is probed";
  }
}

}  // namespace
}  // namespace weft::testing
