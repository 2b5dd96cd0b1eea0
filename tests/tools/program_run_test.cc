// Programs on a simulated cluster (harness/program_run.h): sub-groups from
// split and asynchronous operations end correct; loss that stops leaves a
// program correct (liveness); a crash ends it in typed errors on every
// surviving rank; bad programs are refused before anything runs.
#include "harness/program_run.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/errors.h"
#include "gtest/gtest.h"
#include "harness/program.h"
#include "harness/sim_cluster.h"

namespace weft::harness {
namespace {

constexpr TimeNs kDeadlineNs = 50 * kNsPerMs;

sim::WorldOptions world_of(absl::StatusOr<Topology> topology) {
  sim::WorldOptions w;
  w.topology = *topology;
  w.link = sim::LinkModel::tb5();
  w.seed = 7;
  w.time_limit_ns = 40 * kDeadlineNs;
  w.keep_trace_events = false;
  return w;
}

// world_of() with frames lost at `loss` and duplicated at 1%, until
// `until_ns`.
sim::WorldOptions lossy_world_of(absl::StatusOr<Topology> topology, double loss,
                                 TimeNs until_ns) {
  sim::WorldOptions w = world_of(std::move(topology));
  w.faults.rates.loss = loss;
  w.faults.rates.duplicate = 0.01;
  w.faults.rates.until_ns = until_ns;
  return w;
}

ProgramOp op(CollectiveKind kind, uint64_t bytes, uint32_t group = 0,
             bool async = false) {
  ProgramOp o;
  o.spec.kind = kind;
  o.spec.dtype = DType::kInt32;
  o.spec.bytes = bytes;
  o.group = group;
  o.async = async;
  return o;
}

// A program that touches every feature: two sub-groups (one listed out of
// rank order), operations in flight together, in place, roots, send/recv.
Program mixed_program() {
  Program p;
  p.subgroups = {{0, 2}, {3, 1, 2}};
  p.ops.push_back(op(CollectiveKind::kAllReduce, 40000, 0, true));
  p.ops.push_back(op(CollectiveKind::kAllGather, 3 * 4096, 2, true));
  ProgramOp bcast = op(CollectiveKind::kBroadcast, 9000, 1, true);
  bcast.spec.root = 1;
  p.ops.push_back(bcast);
  p.ops.push_back(op(CollectiveKind::kSendRecv, 5000));
  ProgramOp rs = op(CollectiveKind::kReduceScatter, 3 * 777 * 4, 2);
  rs.spec.in_place = true;
  p.ops.push_back(rs);
  p.ops.push_back(op(CollectiveKind::kAllToAll, 4 * 1024, 0, true));
  p.ops.push_back(op(CollectiveKind::kBarrier, 0));
  return p;
}

ProgramRunOptions run_options() {
  return {.data_seed = 3, .timeout_ns = kDeadlineNs, .linger_ns = kNsPerMs};
}

TEST(ProgramRun, SubgroupsAndAsyncOperationsEndCorrect) {
  absl::StatusOr<SimCluster> cluster =
      SimCluster::create(world_of(Topology::mesh(4)), GroupOptions{});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const Program p = mixed_program();
  absl::StatusOr<ProgramRun> run = run_program(*cluster, p, run_options());
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->outcome.verdict, Verdict::kCorrect) << run->outcome.summary();
  EXPECT_EQ(run->ops_correct, p.ops.size());
  EXPECT_EQ(run->wrong_elements, 0u);
  for (const RankOutcome& r : run->ranks) {
    EXPECT_TRUE(r.finished);
    EXPECT_TRUE(r.checked);
    EXPECT_TRUE(r.first_error.ok()) << r.first_error;
  }
}

TEST(ProgramRun, LossThatStopsLeavesTheProgramCorrect) {
  absl::StatusOr<SimCluster> cluster = SimCluster::create(
      lossy_world_of(Topology::ring(5), 0.05, 300 * kNsPerUs), GroupOptions{});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Program p;
  p.subgroups = {{1, 2}};
  for (int i = 0; i < 6; ++i) {
    p.ops.push_back(op(CollectiveKind::kAllReduce, 20000 + i * 4, 0, i % 2));
    p.ops.push_back(op(CollectiveKind::kSendRecv, 4096, 1));
  }
  absl::StatusOr<ProgramRun> run = run_program(*cluster, p, run_options());
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_GT(cluster->world().counters().faults_total(), 0u);
  EXPECT_EQ(run->outcome.verdict, Verdict::kCorrect) << run->outcome.summary();
  EXPECT_EQ(run->ops_correct, p.ops.size());
}

// Registered operations send from and receive into the caller's buffers,
// which the program overwrites as soon as each ended: under loss, frames
// resent after a call returned must still carry what was sent first, so
// every operation, the later ones included, ends correct.
TEST(ProgramRun, RegisteredOperationsUnderLossEndCorrect) {
  absl::StatusOr<SimCluster> cluster = SimCluster::create(
      lossy_world_of(Topology::mesh(4), 0.03, 2 * kNsPerMs), GroupOptions{});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Program p;
  p.subgroups = {{2, 0, 3}};
  // All-sums big enough that each lane carries more frames than a window
  // of full ones, so receives land in place too (docs/architecture.md,
  // "Registered user memory").
  for (int i = 0; i < 4; ++i) {
    const uint64_t bytes = i < 2 ? (16 << 20) : (256 << 10) + i * 8;
    ProgramOp sum = op(CollectiveKind::kAllReduce, bytes, 0, i % 2 == 1);
    sum.registered = true;
    p.ops.push_back(sum);
    ProgramOp gather = op(CollectiveKind::kAllGather, 3 * (1 << 20), 1);
    gather.registered = true;
    p.ops.push_back(gather);
  }
  absl::StatusOr<ProgramRun> run = run_program(*cluster, p, run_options());
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->outcome.verdict, Verdict::kCorrect) << run->outcome.summary();
  EXPECT_EQ(run->ops_correct, p.ops.size());
  uint64_t zero_copy = 0, in_place = 0, resent = 0;
  for (uint32_t r = 0; r < 4; ++r) {
    const GroupCounters c = cluster->group(r).counters();
    zero_copy += c.payload_bytes_zero_copy;
    in_place += c.payload_bytes_received_in_place;
    resent += c.total.frames_resent;
  }
  EXPECT_GT(zero_copy, 0u);
  EXPECT_GT(in_place, 0u);
  EXPECT_GT(resent, 0u);  // frames were lost and sent again
}

// A 4-rank mesh whose rank 2 crashes 20 us in.
absl::StatusOr<SimCluster> mesh_where_rank_2_crashes() {
  sim::WorldOptions w = world_of(Topology::mesh(4));
  w.faults.script.push_back(
      {.kind = sim::FaultKind::kCrash, .rank = 2, .at_ns = 20 * kNsPerUs});
  return SimCluster::create(w, GroupOptions{});
}

TEST(ProgramRun, ACrashEndsEverySurvivorInATypedError) {
  absl::StatusOr<SimCluster> cluster = mesh_where_rank_2_crashes();
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Program p;
  for (int i = 0; i < 8; ++i) {
    p.ops.push_back(op(CollectiveKind::kAllReduce, 64 << 10, 0, i % 2));
  }
  absl::StatusOr<ProgramRun> run = run_program(*cluster, p, run_options());
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->outcome.verdict, Verdict::kTypedError)
      << run->outcome.summary();
  for (uint32_t r = 0; r < 4; ++r) {
    if (r == 2) continue;
    const absl::Status& e = run->ranks[r].first_error;
    EXPECT_FALSE(e.ok()) << "rank " << r;
    EXPECT_TRUE(error_place(e).has_value()) << "rank " << r << ": " << e;
  }
  EXPECT_LT(run->ops_correct, p.ops.size());
}

// A crash leaves operations in flight when the run ends, registered ones
// among them: their buffers and registrations stay with the cluster until
// it closes, and closing ends them after the endpoints (so the fabric has
// no send or receive left on them, and nothing is left registered with a
// warning).
TEST(ProgramRun, OperationsCancelledAtTheEndKeepTheirRegistrations) {
  std::string logged;
  {
    absl::StatusOr<SimCluster> cluster = mesh_where_rank_2_crashes();
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    Program p;
    for (int i = 0; i < 4; ++i) {
      ProgramOp sum = op(CollectiveKind::kAllReduce, 1 << 20, 0, i % 2 == 1);
      sum.registered = true;
      p.ops.push_back(sum);
    }
    testing::internal::CaptureStderr();
    absl::StatusOr<ProgramRun> run = run_program(*cluster, p, run_options());
    ASSERT_TRUE(run.ok()) << run.status();
    EXPECT_EQ(run->outcome.verdict, Verdict::kTypedError)
        << run->outcome.summary();
  }
  logged = testing::internal::GetCapturedStderr();
  EXPECT_EQ(logged.find("registered memory"), std::string::npos) << logged;
}

TEST(ProgramRun, BadProgramsAreRefusedBeforeAnythingRuns) {
  absl::StatusOr<SimCluster> cluster =
      SimCluster::create(world_of(Topology::ring(4)), GroupOptions{});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Program twice;
  twice.subgroups = {{0, 1}, {0, 1}};
  Program no_group;
  no_group.ops.push_back(op(CollectiveKind::kBarrier, 0, 1));
  Program one_member;
  one_member.subgroups = {{3}};
  Program uncabled;  // ranks 0 and 2 share no cable on a ring of 4
  uncabled.subgroups = {{0, 2}};
  uncabled.ops.push_back(op(CollectiveKind::kAllReduce, 64, 1));
  for (const Program* p : {&twice, &no_group, &one_member, &uncabled}) {
    absl::StatusOr<ProgramRun> run = run_program(*cluster, *p, run_options());
    EXPECT_EQ(run.status().code(), absl::StatusCode::kInvalidArgument)
        << run.status();
  }
  EXPECT_EQ(cluster->world().counters().frames_sent, 0u);
}

TEST(ProgramRun, SubTopologyKeepsTheMembersCables) {
  absl::StatusOr<Topology> sub =
      sub_topology(*Topology::ring(5, 2), std::vector<uint32_t>{4, 0, 2});
  ASSERT_TRUE(sub.ok()) << sub.status();
  ASSERT_EQ(sub->ranks(), 3u);
  EXPECT_EQ(sub->devices(0, 1).size(), 2u);  // ranks 4 and 0: neighbours
  EXPECT_FALSE(sub->connected(1, 2));        // ranks 0 and 2: none
  EXPECT_FALSE(sub->connected(0, 2));        // ranks 4 and 2: none
}

}  // namespace
}  // namespace weft::harness
