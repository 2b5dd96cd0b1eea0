// Every frame and timed fault kind, scripted, in a two-rank world, and
// rate-injected faults reported back as a script that replays the run.
#include <cstdint>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/p2p_traffic.h"
#include "sim/world.h"
#include "tests/sim/sim_test_util.h"

namespace weft::sim {
namespace {

using testing::make_pair;
using testing::poll_all;
using testing::recv_id;
using testing::send_id;

// 1000 ns latency, 1 byte per ns, 100 ns per message: a 100-byte frame
// departs 200 ns after the previous one.
WorldOptions options_with(const char* plan) {
  WorldOptions options;
  options.topology = *Topology::mesh(2);
  options.link = LinkModel{
      .latency_ns = 1000, .bandwidth_bytes_per_s = 1e9, .per_message_ns = 100};
  options.faults = *FaultPlan::parse(plan);
  return options;
}

// Posts `n` receives on b and `n` sends (immediate i) on a, runs to idle.
void exchange(testing::Pair& p, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_TRUE(p.b->post_recv(recv_id(0, i), p.frame_b(i * 128, 128)).ok());
    ASSERT_TRUE(
        p.a->post_send(send_id(1, i), p.frame_a(i * 128, 128), 100, i).ok());
  }
  p.world->run_until_idle();
}

std::vector<uint32_t> immediates(const std::vector<Completion>& cs) {
  std::vector<uint32_t> out;
  for (const Completion& c : cs) {
    if (c.ok()) out.push_back(c.immediate);
  }
  return out;
}

std::vector<WcStatus> statuses(const std::vector<Completion>& cs) {
  std::vector<WcStatus> out;
  for (const Completion& c : cs) out.push_back(c.status);
  return out;
}

TEST(Faults, ScriptedDropLosesExactlyThatFrame) {
  auto p = make_pair(options_with("drop from=0 to=1 frame=3"));
  exchange(p, 5);
  EXPECT_THAT(immediates(poll_all(*p.b)), ::testing::ElementsAre(0, 1, 3, 4));
  auto sent = poll_all(*p.a);
  EXPECT_EQ(sent.size(), 5u);
  for (const Completion& c : sent) EXPECT_TRUE(c.ok());  // UC: sender unaware
  EXPECT_EQ(p.world->counters().dropped_loss, 1u);
  EXPECT_EQ(p.world->counters().faults_of(FaultKind::kDrop), 1u);
  ASSERT_EQ(p.world->injected_faults().size(), 1u);
  EXPECT_EQ(p.world->injected_faults()[0].to_text(),
            "drop from=0 to=1 frame=3");
}

TEST(Faults, ScriptedDuplicateArrivesTwice) {
  auto p = make_pair(options_with("duplicate from=0 to=1 frame=2"));
  exchange(p, 4);
  EXPECT_THAT(immediates(poll_all(*p.b)), ::testing::ElementsAre(0, 1, 1, 2));
  EXPECT_EQ(p.world->counters().frames_delivered, 4u);
  EXPECT_EQ(p.world->counters().dropped_no_receive,
            1u);  // frame 4: no receive left
}

TEST(Faults, ScriptedDelayReorders) {
  auto p = make_pair(options_with("delay from=0 to=1 frame=1 by_ns=5000"));
  exchange(p, 3);
  EXPECT_THAT(immediates(poll_all(*p.b)), ::testing::ElementsAre(1, 2, 0));
}

TEST(Faults, ScriptedReceiveErrorFailsTheReceiverAndFlushes) {
  auto p = make_pair(options_with(
      "error from=0 to=1 frame=2 status=IBV_WC_REM_OP_ERR side=recv"));
  exchange(p, 4);
  auto got = poll_all(*p.b);
  EXPECT_THAT(statuses(got), ::testing::ElementsAre(
                                 WcStatus::kSuccess, WcStatus::kRemOpErr,
                                 WcStatus::kWrFlushErr, WcStatus::kWrFlushErr));
  EXPECT_EQ(got[1].status_name, "remote operation error");
  EXPECT_EQ(p.world->counters().dropped_not_ready, 2u);  // frames 3, 4
}

TEST(Faults, ScriptedSendErrorFailsTheSenderAndTheFrameNeverLeaves) {
  auto p = make_pair(options_with(
      "error from=0 to=1 frame=2 status=IBV_WC_LOC_QP_OP_ERR side=send"));
  exchange(p, 4);
  EXPECT_THAT(
      statuses(poll_all(*p.a)),
      ::testing::ElementsAre(WcStatus::kSuccess, WcStatus::kLocQpOpErr,
                             WcStatus::kWrFlushErr, WcStatus::kWrFlushErr));
  EXPECT_THAT(immediates(poll_all(*p.b)), ::testing::ElementsAre(0));
}

TEST(Faults, QpErrorFlushesThatRanksQueuePairsAtItsTime) {
  auto p = make_pair(options_with("qp_error rank=0 peer=1 at_ns=500"));
  ASSERT_TRUE(p.a->post_recv(recv_id(1, 0), p.frame_a(0, 64)).ok());
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 0), p.frame_b(0, 64)).ok());
  p.world->advance_to(499);
  EXPECT_TRUE(poll_all(*p.a).empty());
  p.world->advance_to(500);
  EXPECT_THAT(statuses(poll_all(*p.a)),
              ::testing::ElementsAre(WcStatus::kWrFlushErr));
  EXPECT_TRUE(poll_all(*p.b).empty());  // the peer's side is untouched
  EXPECT_EQ(p.world->counters().faults_of(FaultKind::kQpError), 1u);
}

TEST(Faults, LinkDownDropsOneDirectionFromItsTime) {
  // Frame 1 departs at 200 and arrives at 1200; frame 2 departs at 400.
  auto p = make_pair(options_with("link_down from=0 to=1 at_ns=300"));
  exchange(p, 2);
  EXPECT_TRUE(poll_all(*p.b).empty());  // frame 1 was in flight when it died
  EXPECT_EQ(p.world->counters().dropped_link_down, 2u);
  EXPECT_EQ(poll_all(*p.a).size(), 2u);  // both sends still succeeded
  // The other direction still works.
  ASSERT_TRUE(p.a->post_recv(recv_id(1, 0), p.frame_a(0, 128)).ok());
  ASSERT_TRUE(p.b->post_send(send_id(0, 0), p.frame_b(0, 128), 100, 7).ok());
  p.world->run_until_idle();
  EXPECT_THAT(immediates(poll_all(*p.a)), ::testing::ElementsAre(7));
}

// Receives that completed successfully.
size_t received(const std::vector<Completion>& cs) {
  size_t n = 0;
  for (const Completion& c : cs) {
    if (c.ok() && c.id.kind == WorkKind::kRecv) ++n;
  }
  return n;
}

// 0 -> 1 over `cable` of two: how many of two frames arrive, and how many
// of two the other way.
std::pair<size_t, size_t> both_ways_over(const char* plan, uint32_t cable) {
  WorldOptions options = options_with(plan);
  options.topology = *Topology::mesh(2, 2);
  auto p = make_pair(std::move(options), cable);
  exchange(p, 2);
  for (uint32_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(p.a->post_recv(recv_id(1, i), p.frame_a(i * 128, 128)).ok());
    EXPECT_TRUE(
        p.b->post_send(send_id(0, i), p.frame_b(i * 128, 128), 100, i).ok());
  }
  p.world->run_until_idle();
  return {received(poll_all(*p.b)), received(poll_all(*p.a))};
}

// cable=K takes that cable only; between= takes both directions.
TEST(Faults, LinkDownOfOneCableLeavesTheOtherCableWorking) {
  using Arrived = std::pair<size_t, size_t>;
  EXPECT_EQ(both_ways_over("link_down from=0 to=1 cable=1 at_ns=0", 0),
            Arrived(2, 2));
  EXPECT_EQ(both_ways_over("link_down from=0 to=1 cable=1 at_ns=0", 1),
            Arrived(0, 2));
  EXPECT_EQ(both_ways_over("link_down from=1 to=0 cable=0 at_ns=0", 0),
            Arrived(2, 0));
  EXPECT_EQ(both_ways_over("link_down between=0,1 cable=1 at_ns=0", 1),
            Arrived(0, 0));
  EXPECT_EQ(both_ways_over("link_down between=0,1 cable=1 at_ns=0", 0),
            Arrived(2, 2));
  EXPECT_EQ(both_ways_over("link_down between=1,0 at_ns=0", 0), Arrived(0, 0));
  EXPECT_EQ(both_ways_over("link_down from=0 to=1 at_ns=0", 1), Arrived(0, 2));
}

// What a run injected is written back in the form it was given, so a
// replay (weft-sim shrink) pulls the same cable the same ways.
TEST(Faults, InjectedLinkDownsKeepTheirCableAndDirections) {
  const char* kPlan =
      "link_down between=0,1 cable=1 at_ns=100\n"
      "link_down from=1 to=0 cable=0 at_ns=200\n"
      "link_down from=0 to=1 at_ns=300\n";
  WorldOptions options = options_with(kPlan);
  options.topology = *Topology::mesh(2, 2);
  auto p = make_pair(options, 0);
  p.world->advance_to(300);
  FaultPlan injected;
  injected.script = p.world->injected_faults();
  EXPECT_EQ(injected.to_text(), kPlan);
}

TEST(Faults, CableUpAndDeliversFollowOneCablesLinkDown) {
  WorldOptions options =
      options_with("link_down between=0,1 cable=1 at_ns=300");
  options.topology = *Topology::mesh(2, 2);
  {
    auto p = make_pair(options, 1);
    EXPECT_TRUE(p.world->cable_up(0, 1, 1));
    EXPECT_TRUE(p.world->delivers(0, 1));
    p.world->advance_to(300);
    EXPECT_FALSE(p.world->cable_up(0, 1, 1));
    EXPECT_FALSE(p.world->cable_up(1, 0, 1));
    EXPECT_TRUE(p.world->cable_up(0, 1, 0));
    // Only cable 1 has queue pairs, and it is down both ways.
    EXPECT_FALSE(p.world->delivers(0, 1));
    EXPECT_FALSE(p.world->delivers(1, 0));
  }
  {
    auto p = make_pair(options, 0);
    p.world->advance_to(300);
    EXPECT_TRUE(p.world->delivers(0, 1));  // over cable 0
    EXPECT_TRUE(p.world->delivers(1, 0));
  }
}

// World::delivers: what stops a frame from rank to peer (a judge's view of
// whether an abort could still travel), each at its time.
TEST(Faults, DeliversFollowsQueuePairErrorsDeadLinksAndCrashes) {
  {
    auto p = make_pair(options_with("qp_error rank=1 peer=0 at_ns=500"));
    EXPECT_TRUE(p.world->delivers(0, 1));
    EXPECT_TRUE(p.world->delivers(1, 0));
    EXPECT_FALSE(p.world->delivers(0, 0));  // no endpoint to itself
    EXPECT_FALSE(p.world->delivers(0, 2));  // no such rank
    p.world->advance_to(500);
    // Rank 1's queue pair neither sends nor receives any more.
    EXPECT_FALSE(p.world->delivers(1, 0));
    EXPECT_FALSE(p.world->delivers(0, 1));
  }
  {
    auto p = make_pair(options_with("link_down from=0 to=1 at_ns=300"));
    p.world->advance_to(299);
    EXPECT_TRUE(p.world->delivers(0, 1));
    p.world->advance_to(300);
    EXPECT_FALSE(p.world->delivers(0, 1));
    EXPECT_TRUE(p.world->delivers(1, 0));  // one direction only
  }
  {
    auto p = make_pair(options_with("crash rank=0 at_ns=100"));
    EXPECT_TRUE(p.world->delivers(1, 0));
    p.world->advance_to(100);
    EXPECT_FALSE(p.world->delivers(1, 0));
    EXPECT_FALSE(p.world->delivers(0, 1));
  }
}

TEST(Faults, LossRateOneDropsEverythingAndRecordsEachFrame) {
  WorldOptions options = options_with("");
  options.faults.rates.loss = 1.0;
  auto p = make_pair(options);
  exchange(p, 3);
  EXPECT_TRUE(poll_all(*p.b).empty());
  const auto injected = p.world->injected_faults();
  ASSERT_EQ(injected.size(), 3u);
  for (uint64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(injected[i].kind, FaultKind::kDrop);
    EXPECT_EQ(injected[i].frame, i + 1);
  }
}

// The rates stop at until_ns: a frame leaving before it is lost (loss 1),
// the frames leaving after it arrive (they depart 200 ns apart).
TEST(Faults, RatesStopAtUntilNs) {
  WorldOptions options = options_with("rates loss=1 until_ns=300");
  auto p = make_pair(options);
  exchange(p, 3);
  EXPECT_EQ(immediates(poll_all(*p.b)), (std::vector<uint32_t>{1, 2}));
  const auto injected = p.world->injected_faults();
  ASSERT_EQ(injected.size(), 1u);
  EXPECT_EQ(injected[0].kind, FaultKind::kDrop);
  EXPECT_EQ(injected[0].frame, 1u);
}

struct Outcome {
  uint64_t hash;
  Counters counters;
  std::vector<ScriptedFault> injected;
};

Outcome run_p2p(WorldOptions options) {
  auto world = *World::create(std::move(options));
  harness::P2pConfig config;
  config.frames_per_pair = 200;
  config.frame_bytes = 512;
  auto traffic = *harness::P2pTraffic::create(*world, config);
  const RunResult result = world->run(traffic->programs());
  EXPECT_TRUE(result.completed()) << result.report;
  return {world->trace().hash(), world->counters(), world->injected_faults()};
}

TEST(Faults, RateFaultsReplayAsAScriptWithTheSameTrace) {
  WorldOptions options;
  options.topology = *Topology::mesh(4);
  options.faults.rates = {.loss = 0.02,
                          .duplicate = 0.02,
                          .reorder = 0.02,
                          .error_completion = 0.002};
  options.seed = 99;
  options.keep_trace_events = false;
  const Outcome first = run_p2p(options);
  ASSERT_GT(first.injected.size(), 10u);
  ASSERT_GT(first.counters.faults_of(FaultKind::kError), 0u);
  WorldOptions replay = options;
  replay.faults = FaultPlan{};
  replay.faults.script = first.injected;
  replay.seed = 12345;  // the seed no longer matters: no rates
  // Through the text form, as a user would replay it.
  replay.faults = *FaultPlan::parse(replay.faults.to_text());
  const Outcome second = run_p2p(replay);
  EXPECT_EQ(second.hash, first.hash);
  EXPECT_EQ(second.counters.frames_dropped, first.counters.frames_dropped);
  EXPECT_EQ(second.injected, first.injected);
}

}  // namespace
}  // namespace weft::sim
