// Group::watch(): a dead peer's closed side channel ends the operations
// waiting on it at once, not at the deadline; the check is consulted once
// per interval of the fabric clock, not on every step; without a check, or
// with one that answers OK, nothing changes.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/group.h"
#include "collectives/inprocess_bootstrap.h"
#include "fabric/errors.h"
#include "fabric/fabric.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/sim_cluster.h"
#include "sim/faults.h"
#include "sim/world.h"
#include "tests/collectives_suite/cases.h"

namespace weft::testing {

using harness::SimCluster;
namespace {

using ::testing::HasSubstr;

constexpr TimeNs kTimeoutNs = 2 * kNsPerS;
constexpr TimeNs kExitNs = 300 * kNsPerMs;  // when rank 1's process exits

// Rank `rank` of a simulated world, for blocking calls: idle() runs the
// world up to the wake-up time or its next event, whichever is first, as a
// hardware rank's wall clock runs while it waits. At the exit time it runs
// the exit (a peer's process ending) instead and returns.
class DrivingFabric final : public Fabric {
 public:
  DrivingFabric(sim::World& world, uint32_t rank)
      : world_(world), inner_(world.fabric(rank)) {}

  void exit_at(TimeNs at_ns, std::function<void()> exit) {
    exit_at_ns_ = at_ns;
    exit_ = std::move(exit);
  }
  uint64_t idles() const { return idles_; }
  // From `at_ns` on, health() answers `why` (a provider that crashed this
  // rank).
  void fail_at(TimeNs at_ns, absl::Status why) {
    fail_at_ns_ = at_ns;
    failure_ = std::move(why);
  }
  absl::Status health() const override {
    return clock().now_ns() >= fail_at_ns_ ? failure_ : absl::OkStatus();
  }

  std::string_view kind() const override { return inner_.kind(); }
  uint32_t rank() const override { return inner_.rank(); }
  const Clock& clock() const override { return inner_.clock(); }
  void idle(TimeNs wake_at_ns) override {
    ++idles_;
    TimeNs until_ns =
        std::min(wake_at_ns, world_.next_event_ns().value_or(kNeverNs));
    if (exit_ && until_ns >= exit_at_ns_) {
      world_.advance_to(exit_at_ns_);
      std::exchange(exit_, nullptr)();
      return;
    }
    if (until_ns != kNeverNs) world_.advance_to(until_ns);
  }
  absl::StatusOr<Slab*> create_slab(uint64_t bytes) override {
    return inner_.create_slab(bytes);
  }
  absl::StatusOr<std::unique_ptr<Endpoint>> open(std::string_view device,
                                                 uint32_t peer) override {
    return inner_.open(device, peer);
  }

 private:
  sim::World& world_;
  Fabric& inner_;
  TimeNs exit_at_ns_ = kNeverNs;
  std::function<void()> exit_;
  TimeNs fail_at_ns_ = kNeverNs;
  absl::Status failure_;
  uint64_t idles_ = 0;
};

// Two ranks, each with its side channel; rank 0 makes blocking calls, rank
// 1 never calls (its process exits at kExitNs when exit_peer()).
struct TwoRanks {
  std::unique_ptr<sim::World> world;
  std::vector<std::unique_ptr<DrivingFabric>> fabrics;
  std::shared_ptr<InProcessExchange> exchange =
      std::make_shared<InProcessExchange>(2);
  std::unique_ptr<InProcessBootstrap> boot0, boot1;
  std::vector<std::unique_ptr<Group>> groups;

  static std::unique_ptr<TwoRanks> create() {
    auto t = std::make_unique<TwoRanks>();
    sim::WorldOptions w;
    w.topology = *Topology::mesh(2);
    absl::StatusOr<std::unique_ptr<sim::World>> world = sim::World::create(w);
    if (!world.ok()) return nullptr;
    t->world = *std::move(world);
    std::vector<Fabric*> raw;
    for (uint32_t r = 0; r < 2; ++r) {
      t->fabrics.push_back(std::make_unique<DrivingFabric>(*t->world, r));
      raw.push_back(t->fabrics.back().get());
    }
    const Clock& clock = t->world->clock();
    t->boot0 = std::make_unique<InProcessBootstrap>(t->exchange, 0, clock);
    t->boot1 = std::make_unique<InProcessBootstrap>(t->exchange, 1, clock);
    GroupOptions o;
    o.timeout_ns = kTimeoutNs;
    absl::StatusOr<std::vector<std::unique_ptr<Group>>> groups =
        form_groups_in_process(raw, w.topology, o);
    if (!groups.ok()) return nullptr;
    t->groups = *std::move(groups);
    return t;
  }
  ~TwoRanks() { groups.clear(); }  // before the fabrics and the world

  TimeNs now_ns() const { return world->clock().now_ns(); }
  Group& zero() { return *groups[0]; }
  void exit_peer() {
    fabrics[0]->exit_at(kExitNs, [this] { boot1.reset(); });
  }
  // Rank 0's side channel check, recording when it was consulted.
  std::function<absl::Status()> side_channel(std::vector<TimeNs>* calls_ns) {
    return [this, calls_ns] {
      calls_ns->push_back(now_ns());
      return boot0->check_alive();
    };
  }
  absl::Status all_sum() {
    ByteVec in = exact_input(DType::kInt32, 100, 0, 3), out(in.size());
    return zero().all_sum(in, out, DType::kInt32);
  }
};

TEST(GroupWatch, BlockingCallEndsSoonAfterThePeersProcessExits) {
  std::unique_ptr<TwoRanks> t = TwoRanks::create();
  ASSERT_NE(t, nullptr);
  std::vector<TimeNs> calls_ns;
  t->zero().watch(t->side_channel(&calls_ns));
  t->exit_peer();
  const absl::Status s = t->all_sum();
  const TimeNs ended_ns = t->now_ns();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  const std::optional<ErrorPlace> place = error_place(s);
  ASSERT_TRUE(place.has_value()) << s;
  EXPECT_EQ(place->rank, 0u);
  EXPECT_EQ(place->peer, 1u);
  EXPECT_EQ(place->cause, ErrorCause::kPeerUnavailable);
  EXPECT_FALSE(place->device.empty()) << "the cable to the peer is named";
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("peer 1 is gone (its process exited "
                        "or was killed"));
  // Within one interval of the exit, far before the 2 s deadline.
  EXPECT_GE(ended_ns, kExitNs);
  EXPECT_LE(ended_ns, kExitNs + Group::kWatchIntervalNs);
  ASSERT_FALSE(calls_ns.empty());
  EXPECT_EQ(calls_ns.back(), ended_ns);
  // Later calls are refused, with the first error.
  const absl::Status later = t->zero().barrier();
  EXPECT_EQ(error_place(later)->cause, ErrorCause::kGroupFailed) << later;
  EXPECT_THAT(std::string(later.message()), HasSubstr("is gone (its process"));
}

TEST(GroupWatch, WithoutACheckTheExitIsWaitedOutToTheDeadline) {
  std::unique_ptr<TwoRanks> t = TwoRanks::create();
  ASSERT_NE(t, nullptr);
  t->exit_peer();
  const absl::Status s = t->all_sum();
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_EQ(error_place(s)->cause, ErrorCause::kDeadline);
  EXPECT_EQ(error_place(s)->peer, 1u);
  EXPECT_GE(t->now_ns(), kTimeoutNs);
}

TEST(GroupWatch, CheckIsConsultedOncePerIntervalAndOkChangesNothing) {
  // The peer never calls and its process lives on: with or without a check
  // answering OK, the call ends at its deadline with the same error.
  std::unique_ptr<TwoRanks> plain = TwoRanks::create();
  std::unique_ptr<TwoRanks> watched = TwoRanks::create();
  ASSERT_NE(plain, nullptr);
  ASSERT_NE(watched, nullptr);
  std::vector<TimeNs> calls_ns;
  watched->zero().watch(watched->side_channel(&calls_ns));
  const TimeNs start_ns = watched->now_ns();
  const absl::Status without = plain->all_sum();
  const absl::Status with = watched->all_sum();
  EXPECT_EQ(with, without);
  EXPECT_EQ(with.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(watched->now_ns(), plain->now_ns());
  // Consulted when the call started, then once per interval: never twice
  // within one, and never an interval skipped.
  ASSERT_FALSE(calls_ns.empty());
  EXPECT_EQ(calls_ns.front(), start_ns);
  for (size_t i = 1; i < calls_ns.size(); ++i) {
    EXPECT_EQ(calls_ns[i] - calls_ns[i - 1], Group::kWatchIntervalNs) << i;
  }
  const TimeNs elapsed_ns = watched->now_ns() - start_ns;
  EXPECT_EQ(calls_ns.size(), elapsed_ns / Group::kWatchIntervalNs + 1);
  // The engine stepped (and idled) far more often than it checked.
  EXPECT_GT(watched->fabrics[0]->idles(), 2 * calls_ns.size());
}

TEST(GroupWatch, QueuedOperationsEndWithTheDeadPeersError) {
  std::unique_ptr<TwoRanks> t = TwoRanks::create();
  ASSERT_NE(t, nullptr);
  std::vector<TimeNs> calls_ns;
  t->zero().watch(t->side_channel(&calls_ns));
  t->boot1.reset();  // gone before the calls
  ByteVec in = exact_input(DType::kInt32, 100, 0, 3), out(in.size());
  const TimeNs start_ns = t->now_ns();
  Operation first =
      t->zero().all_reduce_async(in, out, DType::kInt32, ReduceOp::kSum);
  Operation second = t->zero().barrier_async();
  const absl::Status s = second.wait();
  EXPECT_EQ(t->now_ns(), start_ns) << "the first step consults the check";
  EXPECT_EQ(calls_ns.size(), 1u);
  ASSERT_TRUE(first.done());
  EXPECT_EQ(first.status(), s);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_EQ(error_place(s)->peer, 1u);
  EXPECT_EQ(error_place(s)->cause, ErrorCause::kPeerUnavailable);
}

absl::StatusOr<SimCluster> cluster_of(Topology topology) {
  sim::WorldOptions w;
  w.topology = std::move(topology);
  GroupOptions o;
  o.timeout_ns = kTimeoutNs;
  return SimCluster::create(w, o);
}

TEST(GroupWatch, ProgressDrivenRanksWakeForTheCheckAndPeersAreTold) {
  absl::StatusOr<SimCluster> cluster = cluster_of(*Topology::mesh(3));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const Clock& clock = cluster->world().clock();
  // Rank 0's side channel says rank 2 is gone from kExitNs on.
  cluster->group(0).watch([&clock]() -> absl::Status {
    if (clock.now_ns() < kExitNs) return absl::OkStatus();
    return make_error(absl::StatusCode::kUnavailable,
                      ErrorPlace{0, 2, "", ErrorCause::kPeerUnavailable},
                      "rank 2 closed its bootstrap channel");
  });
  PreparedCase c(
      Case{.kind = Kind::kAllReduce, .dtype = DType::kFloat32, .count = 100},
      3);
  // Rank 2 never calls.
  ScriptRun run = cluster->run_scripts({{*c.starter(0)}, {*c.starter(1)}, {}});
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  EXPECT_GE(run.run.end_ns, kExitNs);
  EXPECT_LE(run.run.end_ns, kExitNs + Group::kWatchIntervalNs);
  const absl::Status& zero = run.results[0][0];
  EXPECT_EQ(zero.code(), absl::StatusCode::kUnavailable) << zero;
  EXPECT_THAT(std::string(zero.message()), HasSubstr("peer 2 is gone"));
  // Rank 1 has no check: it hears of the failure from rank 0.
  const absl::Status& one = run.results[1][0];
  ASSERT_FALSE(one.ok());
  const std::optional<ErrorPlace> place = error_place(one);
  ASSERT_TRUE(place.has_value()) << one;
  EXPECT_EQ(place->rank, 1u);
  EXPECT_EQ(place->peer, 2u) << one;
  EXPECT_EQ(place->cause, ErrorCause::kPeerUnavailable) << one;
}

// Groups formed on the simulator watch its record of crashes from the
// start (Fabric::departures), with no check set by anyone: a crash is
// named by every survivor within one watch interval, not at the deadline.
TEST(GroupWatch, GroupsOnTheSimulatorWatchTheirWorldsRecordOfCrashes) {
  constexpr TimeNs kCrashNs = 5000;
  sim::WorldOptions w;
  w.topology = *Topology::mesh(3);
  w.faults = *sim::FaultPlan::parse("crash rank=2 at_ns=5000\n");
  GroupOptions o;
  o.timeout_ns = 100 * Group::kWatchIntervalNs;
  absl::StatusOr<SimCluster> cluster = SimCluster::create(w, o);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  PreparedCase c(
      Case{.kind = Kind::kAllReduce, .dtype = DType::kInt32, .count = 200000},
      3);
  ScriptRun run =
      cluster->run_scripts({{*c.starter(0)}, {*c.starter(1)}, {*c.starter(2)}});
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  EXPECT_LE(run.run.end_ns, kCrashNs + Group::kWatchIntervalNs);
  for (uint32_t r = 0; r < 2; ++r) {
    const absl::Status& s = run.results[r][0];
    EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
    ASSERT_TRUE(error_place(s).has_value()) << s;
    EXPECT_EQ(error_place(s)->peer, 2u) << s;
    EXPECT_THAT(std::string(s.message()),
                HasSubstr("rank 2 crashed at 5.000 us (the simulator's "
                          "record of departures)"));
  }
}

// A rank that has done its part may leave (a job's last collective ends on
// one rank before another): its closed side channel does not end an
// operation that no longer waits on it, only the next one that does.
TEST(GroupWatch, ADepartureEndsOnlyOperationsThatWaitOnThePeer) {
  absl::StatusOr<SimCluster> cluster = cluster_of(*Topology::mesh(3));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  // Rank 0's side channel says rank 2 left, from the start.
  cluster->group(0).watch([]() -> absl::Status {
    return make_error(absl::StatusCode::kUnavailable,
                      ErrorPlace{0, 2, "", ErrorCause::kPeerUnavailable},
                      "rank 2 closed its bootstrap channel");
  });
  // Rank 1 sends to rank 0: rank 2 takes no part. Then rank 0 starts an
  // all-reduce, which needs rank 2.
  PreparedCase p2p(Case{.kind = Kind::kSendRecv,
                        .dtype = DType::kInt32,
                        .count = 5000,
                        .root = 1,
                        .peer = 0},
                   3);
  PreparedCase all(
      Case{.kind = Kind::kAllReduce, .dtype = DType::kFloat32, .count = 100},
      3);
  ScriptRun run = cluster->run_scripts(
      {{*p2p.starter(0), *all.starter(0)}, {*p2p.starter(1)}, {}});
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  EXPECT_TRUE(run.results[0][0].ok()) << run.results[0][0];
  EXPECT_EQ(p2p.check(0), "");
  const absl::Status& needs_two = run.results[0][1];
  EXPECT_EQ(needs_two.code(), absl::StatusCode::kUnavailable) << needs_two;
  EXPECT_THAT(std::string(needs_two.message()), HasSubstr("peer 2 is gone"));
  EXPECT_LT(run.run.end_ns, 2 * Group::kWatchIntervalNs);
}

TEST(GroupWatch, ACheckAnsweringOkLeavesTheRunUnchanged) {
  std::vector<PreparedCase> cases;
  for (uint64_t salt = 0; salt < 3; ++salt) {
    cases.emplace_back(Case{.kind = Kind::kAllReduce,
                            .dtype = DType::kFloat32,
                            .count = 20000,
                            .salt = salt},
                       4);
  }
  uint64_t calls = 0;
  std::vector<uint64_t> hashes;
  std::vector<TimeNs> ends_ns;
  for (bool watch : {false, true}) {
    absl::StatusOr<SimCluster> cluster = cluster_of(*Topology::ring(4));
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    for (uint32_t r = 0; r < 4 && watch; ++r) {
      cluster->group(r).watch([&calls] {
        ++calls;
        return absl::OkStatus();
      });
    }
    ScriptRun run = run_cases(*cluster, cases);
    ASSERT_TRUE(run.run.completed()) << run.run.report;
    for (uint32_t r = 0; r < 4; ++r) {
      for (const absl::Status& s : run.results[r]) ASSERT_TRUE(s.ok()) << s;
      for (const PreparedCase& c : cases) EXPECT_EQ(c.check(r), "");
    }
    hashes.push_back(cluster->trace_hash());
    ends_ns.push_back(run.run.end_ns);
  }
  EXPECT_GE(calls, 4u) << "every rank consulted its check";
  EXPECT_EQ(hashes[0], hashes[1]);
  EXPECT_EQ(ends_ns[0], ends_ns[1]);
}

// A fabric that can no longer make progress (its simulated provider crashed
// this rank) ends the blocking call with its own error when the call next
// waits, not at the deadline, and the group refuses later calls.
TEST(FabricHealth, BlockingCallEndsWithTheFabricsError) {
  std::unique_ptr<TwoRanks> t = TwoRanks::create();
  ASSERT_NE(t, nullptr);
  t->fabrics[0]->fail_at(
      kExitNs, make_error(absl::StatusCode::kUnavailable,
                          ErrorPlace{0, kNoPeer, "", ErrorCause::kFabric},
                          "the provider crashed this rank"));
  const absl::Status s = t->all_sum();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(s.message(), HasSubstr("the provider crashed this rank"));
  const std::optional<ErrorPlace> place = error_place(s);
  ASSERT_TRUE(place.has_value());
  EXPECT_EQ(place->cause, ErrorCause::kFabric);
  EXPECT_GE(t->now_ns(), kExitNs);
  EXPECT_LT(t->now_ns(), kTimeoutNs);
  const absl::Status later = t->zero().barrier();
  EXPECT_EQ(later.code(), absl::StatusCode::kFailedPrecondition) << later;
}

}  // namespace
}  // namespace weft::testing
