// The scheduler: stepping order, virtual-time jumps, wake-ups, hang, time
// limit and livelock detection with their reports, stalled and crashed
// ranks.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/world.h"
#include "tests/sim/sim_test_util.h"

namespace weft::sim {
namespace {

using testing::FnProgram;
using ::testing::HasSubstr;
using testing::make_pair;
using testing::poll_all;
using testing::recv_id;
using testing::send_id;

std::unique_ptr<World> world_of(uint32_t ranks, const char* plan = "") {
  WorldOptions options;
  options.topology = *Topology::mesh(ranks);
  options.faults = *FaultPlan::parse(plan);
  return *World::create(options);
}

TEST(Scheduler, CompletesWhenEveryProgramIsDoneAndSkipsNull) {
  auto world = world_of(3);
  std::vector<uint32_t> order;
  int steps[3] = {0, 0, 0};
  auto make = [&](uint32_t r) {
    return FnProgram([&, r] {
      order.push_back(r);
      return ++steps[r] < 2 ? Progress::advanced() : Progress::done();
    });
  };
  FnProgram p0 = make(0), p2 = make(2);
  RankProgram* programs[] = {&p0, nullptr, &p2};
  const RunResult result = world->run(programs);
  EXPECT_EQ(result.outcome, RunResult::Outcome::kCompleted);
  EXPECT_TRUE(result.report.empty());
  EXPECT_THAT(order, ::testing::ElementsAre(0, 2, 0, 2));  // rank order, rounds
  EXPECT_EQ(result.end_ns, 0);
}

TEST(Scheduler, JumpsToTheEarliestWakeUp) {
  auto world = world_of(2);
  std::vector<TimeNs> seen;
  FnProgram p([&] {
    const TimeNs now = world->clock().now_ns();
    seen.push_back(now);
    return now >= 3000 ? Progress::done() : Progress::waiting(now + 1500);
  });
  RankProgram* programs[] = {&p};
  const RunResult result = world->run(programs);
  EXPECT_TRUE(result.completed());
  EXPECT_THAT(seen, ::testing::ElementsAre(0, 1500, 3000));
  EXPECT_EQ(result.end_ns, 3000);
  // A second run continues from there.
  seen.clear();
  EXPECT_TRUE(world->run(programs).completed());
  EXPECT_THAT(seen, ::testing::ElementsAre(3000));
}

// Done at once, then served: the first serve() names a wake-up.
class ServedProgram final : public RankProgram {
 public:
  explicit ServedProgram(const Clock& clock) : clock_(clock) {}
  Progress step() override { return Progress::done(); }
  Progress serve() override {
    served.push_back(clock_.now_ns());
    return served.size() == 1 ? Progress::waiting(clock_.now_ns() + 1000)
                              : Progress::done();
  }
  std::string outstanding() const override { return ""; }
  std::vector<TimeNs> served;

 private:
  const Clock& clock_;
};

TEST(Scheduler, AFinishedRankIsServedAtOnceAndAtItsWakeUp) {
  auto world = world_of(2);
  ServedProgram finished(world->clock());
  FnProgram busy([&] {
    const TimeNs now = world->clock().now_ns();
    return now >= 5000 ? Progress::done() : Progress::waiting(5000);
  });
  RankProgram* programs[] = {&finished, &busy};
  const RunResult result = world->run(programs);
  EXPECT_TRUE(result.completed());
  // Served right after step() said done, and again at the wake-up that
  // serve() asked for, while rank 1 still ran.
  EXPECT_THAT(finished.served, ::testing::ElementsAre(0, 1000));
  EXPECT_EQ(result.end_ns, 5000);
}

TEST(Scheduler, AllWaitingWithNothingLeftIsAHangWithAReport) {
  auto p = make_pair(testing::two_rank_options());
  ASSERT_TRUE(p.a->post_recv(recv_id(1, 0), p.frame_a(0, 64)).ok());
  FnProgram waiter([] { return Progress::waiting(); },
                   "waiting for a frame from rank 1");
  RankProgram* programs[] = {&waiter, nullptr};
  const RunResult result = p.world->run(programs);
  EXPECT_EQ(result.outcome, RunResult::Outcome::kHang);
  EXPECT_THAT(result.report, HasSubstr("no events"));
  EXPECT_THAT(result.report,
              HasSubstr("rank 0: waiting for a frame from rank 1"));
  EXPECT_THAT(result.report, HasSubstr("to peer 1 on sim_0_1_0: RTS"));
  EXPECT_THAT(result.report, HasSubstr("1 receives still posted"));
  EXPECT_EQ(outcome_name(result.outcome), "hang");
}

TEST(Scheduler, VirtualTimeLimitEndsTheRun) {
  WorldOptions options;
  options.topology = *Topology::mesh(1);
  options.time_limit_ns = 10 * kNsPerUs;
  auto world = *World::create(options);
  FnProgram ticker(
      [&] { return Progress::waiting(world->clock().now_ns() + 1000); },
      "ticking");
  RankProgram* programs[] = {&ticker};
  const RunResult result = world->run(programs);
  EXPECT_EQ(result.outcome, RunResult::Outcome::kTimeLimit);
  EXPECT_EQ(result.end_ns, 10 * kNsPerUs);
  EXPECT_THAT(result.report, HasSubstr("rank 0: ticking"));
}

TEST(Scheduler, EndlessProgressWithoutTimeMovingIsALivelock) {
  WorldOptions options;
  options.topology = *Topology::mesh(1);
  options.max_rounds_per_instant = 1000;
  auto world = *World::create(options);
  int steps = 0;
  FnProgram spinner([&] {
    ++steps;
    return Progress::advanced();
  });
  RankProgram* programs[] = {&spinner};
  const RunResult result = world->run(programs);
  EXPECT_EQ(result.outcome, RunResult::Outcome::kLivelock);
  EXPECT_EQ(steps, 1000);
  EXPECT_THAT(result.report, HasSubstr("livelock"));
}

TEST(Scheduler, AStalledRankIsNotSteppedButItsNicStillWorks) {
  WorldOptions options = testing::two_rank_options();
  options.faults = *FaultPlan::parse("stall rank=1 at_ns=0 for_ns=50000");
  auto p = make_pair(options);
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 0), p.frame_b(0, 4096)).ok());
  ASSERT_TRUE(p.a->post_send(send_id(1, 0), p.frame_a(0, 4096), 4096, 42).ok());
  std::vector<TimeNs> b_steps;
  TimeNs b_got_at = -1;
  FnProgram a([] { return Progress::done(); });
  FnProgram b([&] {
    b_steps.push_back(p.world->clock().now_ns());
    auto got = poll_all(*p.b);
    if (got.empty()) return Progress::waiting();
    b_got_at = p.world->clock().now_ns();
    EXPECT_EQ(got[0].immediate, 42u);
    return Progress::done();
  });
  RankProgram* programs[] = {&a, &b};
  const RunResult result = p.world->run(programs);
  EXPECT_TRUE(result.completed()) << result.report;
  // Not stepped before 50 us; the frame (arrived at 4.64 us) was waiting.
  ASSERT_FALSE(b_steps.empty());
  EXPECT_EQ(b_steps.front(), 50000);
  EXPECT_EQ(b_got_at, 50000);
  EXPECT_EQ(p.world->counters().frames_delivered, 1u);
  EXPECT_EQ(p.world->counters().faults_of(FaultKind::kStall), 1u);
}

TEST(Scheduler, ACrashedRankStopsAndFramesToItVanish) {
  WorldOptions options = testing::two_rank_options();
  options.faults = *FaultPlan::parse("crash rank=1 at_ns=1000");
  auto p = make_pair(options);
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 0), p.frame_b(0, 4096)).ok());
  ASSERT_TRUE(p.a->post_send(send_id(1, 0), p.frame_a(0, 4096), 4096, 1).ok());
  int b_steps_after_crash = 0;
  bool a_sent = false;
  FnProgram a([&] {
    for (const Completion& c : poll_all(*p.a)) a_sent = c.ok();
    return a_sent ? Progress::done() : Progress::waiting();
  });
  FnProgram b([&] {
    if (p.world->clock().now_ns() >= 1000) ++b_steps_after_crash;
    return Progress::waiting(p.world->clock().now_ns() + 100);
  });
  RankProgram* programs[] = {&a, &b};
  const RunResult result = p.world->run(programs);
  EXPECT_TRUE(result.completed())
      << result.report;  // a crashed rank counts as finished
  EXPECT_THAT(result.crashed_ranks, ::testing::ElementsAre(1u));
  EXPECT_TRUE(p.world->crashed(1));
  EXPECT_FALSE(p.world->crashed(0));
  EXPECT_EQ(b_steps_after_crash, 0);
  EXPECT_TRUE(a_sent);  // UC: the sender cannot tell
  EXPECT_EQ(result.end_ns, 1000);
  p.world->run_until_idle();  // the frame still in flight lands at 4640
  EXPECT_TRUE(poll_all(*p.b).empty());
  EXPECT_EQ(p.world->counters().dropped_peer_crashed, 1u);
}

TEST(Scheduler, AWaitingRankIsNotSteppedWhileOthersAdvance) {
  auto world = world_of(2);
  int busy_steps = 0;
  int idle_steps = 0;
  FnProgram busy([&] {
    return ++busy_steps < 5 ? Progress::advanced() : Progress::done();
  });
  FnProgram idle([&] {
    ++idle_steps;
    return busy_steps < 5 ? Progress::waiting(1000) : Progress::done();
  });
  RankProgram* programs[] = {&busy, &idle};
  const RunResult result = world->run(programs);
  EXPECT_TRUE(result.completed()) << result.report;
  EXPECT_EQ(busy_steps, 5);
  // Once at the start, once at its wake-up: nothing arrived in between.
  EXPECT_EQ(idle_steps, 2);
  EXPECT_EQ(result.end_ns, 1000);
}

TEST(Scheduler, ACompletionStepsItsRankAtThatInstantOnly) {
  auto p = make_pair(testing::two_rank_options());
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 0), p.frame_b(0, 4096)).ok());
  ASSERT_TRUE(p.a->post_send(send_id(1, 0), p.frame_a(0, 4096), 4096, 7).ok());
  std::vector<TimeNs> a_steps, b_steps;
  FnProgram a([&] {
    a_steps.push_back(p.world->clock().now_ns());
    return poll_all(*p.a).empty() ? Progress::waiting() : Progress::done();
  });
  FnProgram b([&] {
    b_steps.push_back(p.world->clock().now_ns());
    return poll_all(*p.b).empty() ? Progress::waiting() : Progress::done();
  });
  RankProgram* programs[] = {&a, &b};
  const RunResult result = p.world->run(programs);
  EXPECT_TRUE(result.completed()) << result.report;
  // tb5: the send leaves after 437 + 410 ns, the frame lands 3793 ns later;
  // each rank is stepped at the start and when its own completion comes.
  EXPECT_THAT(a_steps, ::testing::ElementsAre(0, 847));
  EXPECT_THAT(b_steps, ::testing::ElementsAre(0, 4640));
}

TEST(Scheduler, AWakeUpInsideAStallComesAtTheStallsEnd) {
  auto world = world_of(1, "stall rank=0 at_ns=500 for_ns=4500");
  std::vector<TimeNs> steps;
  FnProgram p([&] {
    steps.push_back(world->clock().now_ns());
    return steps.size() < 2 ? Progress::waiting(1000) : Progress::done();
  });
  RankProgram* programs[] = {&p};
  const RunResult result = world->run(programs);
  EXPECT_TRUE(result.completed()) << result.report;
  EXPECT_THAT(steps, ::testing::ElementsAre(0, 5000));
}

TEST(Scheduler, BadOptionsAreRejected) {
  WorldOptions options;
  options.topology = *Topology::mesh(2);
  options.faults.rates.loss = 2;
  EXPECT_EQ(World::create(options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.faults = *FaultPlan::parse("crash rank=7 at_ns=1");
  EXPECT_EQ(World::create(options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.faults = FaultPlan{};
  options.link.latency_ns = -1;
  EXPECT_EQ(World::create(options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace weft::sim
