// An operation ends once this rank's part is done, before the peers
// acknowledged its last frames (recovery on): a lost last frame is resent
// by a rank with nothing queued, which Group::progress() drives (kWaiting
// with the retransmission timer while frames await acknowledgement, kDone
// once none do).
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "collectives/group.h"
#include "gtest/gtest.h"
#include "harness/sim_cluster.h"
#include "sim/world.h"
#include "tests/collectives_suite/cases.h"

namespace weft::testing {

using harness::SimCluster;
namespace {

constexpr uint32_t kCount = 1000;  // one frame each way

// One all_sum, then serving: records when the operation ended and what
// Group::progress() said right after.
class OneSum final : public sim::RankProgram {
 public:
  OneSum(Group& group, const Clock& clock, float value)
      : group_(group), clock_(clock), in_(kCount, value), out_(kCount) {}

  Progress step() override {
    if (!started_) {
      started_ = true;
      started_ns_ = clock_.now_ns();
      op_ = group_.all_reduce_async(std::as_bytes(std::span(in_)),
                                    std::as_writable_bytes(std::span(out_)),
                                    DType::kFloat32, ReduceOp::kSum);
    }
    const Progress p = op_.progress();
    if (!op_.done()) return p;
    status_ = op_.status();
    ended_ns_ = clock_.now_ns();
    after_ = group_.progress();
    return Progress::done();
  }
  Progress serve() override { return group_.progress(); }
  std::string outstanding() const override {
    return absl::StrFormat("rank %u: all_sum running", group_.rank());
  }

  Group& group_;
  const Clock& clock_;
  std::vector<float> in_, out_;
  Operation op_;
  bool started_ = false;
  TimeNs started_ns_ = -1;
  absl::Status status_ = absl::UnknownError("not run");
  TimeNs ended_ns_ = -1;
  Progress after_;
};

// Two ranks of a tb5 mesh, each running one OneSum (1 + 2) to its end.
struct SumRun {
  SumRun(sim::WorldOptions w, GroupOptions o) {
    w.topology = *Topology::mesh(2);
    absl::StatusOr<SimCluster> made = SimCluster::create(w, o);
    EXPECT_TRUE(made.ok()) << made.status();
    if (!made.ok()) return;
    cluster.emplace(*std::move(made));
    const Clock& clock = cluster->world().clock();
    p.push_back(std::make_unique<OneSum>(cluster->group(0), clock, 1.0f));
    p.push_back(std::make_unique<OneSum>(cluster->group(1), clock, 2.0f));
    programs = {p[0].get(), p[1].get()};
    run = cluster->world().run(programs);
    EXPECT_TRUE(run.completed()) << run.report;
    for (const auto& one : p) {
      EXPECT_TRUE(one->status_.ok()) << one->status_;
      EXPECT_EQ(one->out_.front(), 3.0f);
      EXPECT_EQ(one->out_.back(), 3.0f);
    }
  }
  std::optional<SimCluster> cluster;
  std::vector<std::unique_ptr<OneSum>> p;
  std::vector<sim::RankProgram*> programs;
  sim::RunResult run;
};

// Drops rank 0's frames to rank 1 with these numbers (counted from 1).
sim::WorldOptions dropping(std::vector<uint64_t> frames) {
  sim::WorldOptions w;
  for (uint64_t frame : frames) {
    sim::ScriptedFault lost;
    lost.kind = sim::FaultKind::kDrop;
    lost.rank = 0;
    lost.peer = 1;
    lost.frame = frame;
    w.faults.script.push_back(lost);
  }
  return w;
}

TEST(GroupTail, ALostLastFrameIsResentAfterItsOperationEnded) {
  // Rank 0's only data frame, and then its acknowledgement of rank 1's
  // frame, which would have told rank 1 that the data frame was lost:
  // only rank 0's timer finds the loss.
  GroupOptions o;
  o.timeout_ns = 20 * kNsPerMs;
  SumRun r(dropping({1, 2}), o);
  ASSERT_EQ(r.p.size(), 2u);
  EXPECT_EQ(r.cluster->world().counters().faults_total(), 2u);
  const OneSum& p0 = *r.p[0];
  const OneSum& p1 = *r.p[1];
  // Rank 0 had its sum once rank 1's frame arrived; rank 1 waited for the
  // resend, at least one minimum timeout later.
  EXPECT_GE(p1.ended_ns_ - p0.ended_ns_, o.recovery.min_rto_ns);
  // Right after its operation, rank 0 still held the unacknowledged frame
  // and asked to be called again at its timer.
  EXPECT_EQ(p0.after_.state, Progress::State::kWaiting);
  EXPECT_GT(p0.after_.wake_at_ns, p0.ended_ns_);
  EXPECT_LE(p0.after_.wake_at_ns, p1.ended_ns_);
  // Once the resent frame was acknowledged, nothing is pending.
  r.cluster->world().settle(r.programs, o.timeout_ns);
  EXPECT_TRUE(r.cluster->group(0).progress().is_done());
  EXPECT_TRUE(r.cluster->group(1).progress().is_done());
}

TEST(GroupTail, ALostLastFrameIsFoundByTheNextFrameNotByATimer) {
  // Rank 0's only data frame is lost. Its acknowledgement of rank 1's
  // frame (rank 1's last, so acknowledged min_rto_ns / 4 after it came,
  // with no frame of rank 0 to carry it sooner) says one data frame was
  // sent before it; rank 1 has none and answers at once, naming that
  // acknowledgement as heard; rank 0 resends, well before its own
  // retransmission timer (min_rto_ns) would have.
  const GroupOptions o;
  SumRun r(dropping({1}), o);
  ASSERT_EQ(r.p.size(), 2u);
  EXPECT_EQ(r.cluster->world().counters().faults_total(), 1u);
  const sim::LinkModel tb5 = sim::LinkModel::tb5();
  const TimeNs data_ns =
      tb5.serialisation_ns(64 + kCount * sizeof(float)) + tb5.latency_ns;
  const TimeNs ack_ns = tb5.serialisation_ns(64) + tb5.latency_ns;
  EXPECT_EQ(r.p[0]->ended_ns_ - r.p[0]->started_ns_, data_ns);
  // Rank 1's frame reaches rank 0, the delayed acknowledgement and its
  // answer cross, the resend reaches rank 1.
  const TimeNs delayed_ack_ns = o.recovery.min_rto_ns / 4;
  EXPECT_EQ(r.p[1]->ended_ns_ - r.p[1]->started_ns_,
            data_ns + delayed_ack_ns + 2 * ack_ns + data_ns);
  EXPECT_LT(r.p[1]->ended_ns_ - r.p[1]->started_ns_,
            data_ns + o.recovery.min_rto_ns);
}

TEST(GroupTail, WithoutLossAnOperationTakesOneWayNotARoundTrip) {
  SumRun r(sim::WorldOptions{}, GroupOptions{});
  ASSERT_EQ(r.p.size(), 2u);
  // Each rank ends when the other's one frame (header and 4000 bytes)
  // arrives, not a round trip later with the acknowledgement.
  const sim::LinkModel tb5 = sim::LinkModel::tb5();
  const TimeNs one_way =
      tb5.serialisation_ns(64 + kCount * sizeof(float)) + tb5.latency_ns;
  for (const auto& one : r.p) {
    EXPECT_EQ(one->ended_ns_ - one->started_ns_, one_way);
  }
}

}  // namespace
}  // namespace weft::testing
