// An operation ends once this rank's part is done, before the peers
// acknowledged its last frames (recovery on): a lost last frame is resent
// by a rank with nothing queued, which Group::progress() drives (kWaiting
// with the retransmission timer while frames await acknowledgement, kDone
// once none do).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "collectives/group.h"
#include "gtest/gtest.h"
#include "sim/world.h"
#include "sim_cluster.h"

namespace weft::testing {
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

TEST(GroupTail, ALostLastFrameIsResentAfterItsOperationEnded) {
  sim::WorldOptions w;
  w.topology = *Topology::mesh(2);
  sim::ScriptedFault lost;  // rank 0's only data frame to rank 1
  lost.kind = sim::FaultKind::kDrop;
  lost.rank = 0;
  lost.peer = 1;
  lost.frame = 1;
  w.faults.script.push_back(lost);
  GroupOptions o;
  o.timeout_ns = 20 * kNsPerMs;
  absl::StatusOr<SimCluster> c = make_cluster(w, o);
  ASSERT_TRUE(c.ok()) << c.status();
  const Clock& clock = c->world->clock();
  OneSum p0(*c->groups[0], clock, 1.0f), p1(*c->groups[1], clock, 2.0f);
  std::vector<sim::RankProgram*> programs = {&p0, &p1};
  const sim::RunResult run = c->world->run(programs);
  ASSERT_TRUE(run.completed()) << run.report;
  EXPECT_EQ(c->world->counters().faults_total(), 1u);
  for (const OneSum* p : {&p0, &p1}) {
    ASSERT_TRUE(p->status_.ok()) << p->status_;
    EXPECT_EQ(p->out_.front(), 3.0f);
    EXPECT_EQ(p->out_.back(), 3.0f);
  }
  // Rank 0 had its sum once rank 1's frame arrived; rank 1 waited for the
  // resend, at least one minimum timeout later.
  EXPECT_GE(p1.ended_ns_ - p0.ended_ns_, o.recovery.min_rto_ns);
  // Right after its operation, rank 0 still held the unacknowledged frame
  // and asked to be called again at its timer.
  EXPECT_EQ(p0.after_.state, Progress::State::kWaiting);
  EXPECT_GT(p0.after_.wake_at_ns, p0.ended_ns_);
  EXPECT_LE(p0.after_.wake_at_ns, p1.ended_ns_);
  // Once the resent frame was acknowledged, nothing is pending.
  c->world->settle(programs, o.timeout_ns);
  EXPECT_TRUE(c->groups[0]->progress().is_done());
  EXPECT_TRUE(c->groups[1]->progress().is_done());
}

TEST(GroupTail, WithoutLossAnOperationTakesOneWayNotARoundTrip) {
  sim::WorldOptions w;
  w.topology = *Topology::mesh(2);
  absl::StatusOr<SimCluster> c = make_cluster(w, GroupOptions{});
  ASSERT_TRUE(c.ok()) << c.status();
  const Clock& clock = c->world->clock();
  OneSum p0(*c->groups[0], clock, 1.0f), p1(*c->groups[1], clock, 2.0f);
  std::vector<sim::RankProgram*> programs = {&p0, &p1};
  const sim::RunResult run = c->world->run(programs);
  ASSERT_TRUE(run.completed()) << run.report;
  ASSERT_TRUE(p0.status_.ok() && p1.status_.ok());
  // Each rank ends when the other's one frame (header and 4000 bytes)
  // arrives, not a round trip later with the acknowledgement.
  const sim::LinkModel tb5 = sim::LinkModel::tb5();
  const TimeNs one_way =
      tb5.serialisation_ns(64 + kCount * sizeof(float)) + tb5.latency_ns;
  EXPECT_EQ(p0.ended_ns_ - p0.started_ns_, one_way);
  EXPECT_EQ(p1.ended_ns_ - p1.started_ns_, one_way);
}

}  // namespace
}  // namespace weft::testing
