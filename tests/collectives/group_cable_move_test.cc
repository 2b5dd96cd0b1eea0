// A pulled cable of a pair with several (docs/fault-tolerance.md, "A dead
// cable"): the lane on it moves to another cable to the same peer, every
// collective completes bit for bit, and the counters show the move on both
// ends. Where no other cable answers (both pulled) or recovery is off, the
// cut stays a typed error.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "collectives/group_counters.h"
#include "fabric/errors.h"
#include "gtest/gtest.h"
#include "harness/collective_spec.h"
#include "sim/faults.h"
#include "tests/collectives/faulted_run.h"
#include "tests/collectives_suite/cases.h"

namespace weft::testing {

namespace {

constexpr TimeNs kTimeoutNs = 50 * kNsPerMs;

// Both directions of `cable` between ranks 0 and 1 (or one direction,
// from -> to), from `at_ns` on.
sim::ScriptedFault pull(uint32_t from, uint32_t to, uint32_t cable,
                        bool both_ways, TimeNs at_ns) {
  sim::ScriptedFault f;
  f.kind = sim::FaultKind::kLinkDown;
  f.rank = from;
  f.peer = to;
  f.cable = cable;
  f.both_ways = both_ways;
  f.at_ns = at_ns;
  return f;
}

GroupOptions options(bool recovery) {
  return small_frame_options(kTimeoutNs, recovery);
}

const PeerCounters* find(const GroupCounters& c, uint32_t peer,
                         uint32_t cable) {
  for (const PeerCounters& p : c.peers) {
    if (p.peer == peer && p.cable == cable) return &p;
  }
  return nullptr;
}

// Rank `rank`'s lane to `peer` over cable 1 moved once, onto cable 0's
// device, and no other lane of it moved; returns the frames it resent.
uint64_t expect_moved_to_cable_0(const GroupCounters& c, uint32_t rank,
                                 uint32_t peer) {
  const PeerCounters* moved = find(c, peer, 1);
  const PeerCounters* kept = find(c, peer, 0);
  EXPECT_NE(moved, nullptr) << "rank " << rank;
  EXPECT_NE(kept, nullptr) << "rank " << rank;
  if (moved == nullptr || kept == nullptr) return 0;
  EXPECT_EQ(moved->counts.lanes_moved, 1u) << "rank " << rank;
  EXPECT_EQ(moved->device, kept->device)
      << "rank " << rank << ": the moved lane is not on cable 0's device";
  EXPECT_EQ(c.total.lanes_moved, 1u) << "rank " << rank;
  return moved->counts.frames_resent;
}

const Kind kKinds[] = {Kind::kAllReduce, Kind::kAllGather,
                       Kind::kReduceScatter, Kind::kBroadcast,
                       Kind::kReduce,        Kind::kAllToAll,
                       Kind::kSendRecv,      Kind::kBarrier};

Case call(Kind kind) {
  Case c;
  c.kind = kind;
  c.dtype = DType::kFloat32;
  c.count = kind == Kind::kBarrier ? 0 : 24000;
  c.root = 0;
  c.peer = 1;
  return c;
}

// Every collective, on a 4-rank mesh and ring of two cables a pair, with
// one cable between ranks 0 and 1 pulled (both ways) mid-operation; a
// second call of the same kind then runs over the moved lane.
TEST(CableMove, EveryCollectiveCompletesWithOneCableOfAPairPulled) {
  for (const bool ring : {false, true}) {
    const Topology topology =
        ring ? *Topology::ring(4, 2) : *Topology::mesh(4, 2);
    for (const Kind kind : kKinds) {
      SCOPED_TRACE(std::string(ring ? "ring " : "mesh ") +
                   std::string(harness::collective_name(kind)));
      sim::FaultPlan plan;
      plan.script.push_back(pull(0, 1, 1, /*both_ways=*/true, 20 * kNsPerUs));
      const FaultedRun out =
          run_faulted(topology, {call(kind), call(kind)}, plan, options(true));
      ASSERT_EQ(out.status.size(), 4u);
      for (uint32_t r = 0; r < 4; ++r) {
        for (size_t i = 0; i < out.status[r].size(); ++i) {
          EXPECT_TRUE(out.status[r][i].ok())
              << "rank " << r << " call " << i << ": " << out.status[r][i];
          EXPECT_EQ(out.wrong[r][i], "") << "rank " << r << " call " << i;
        }
      }
      // Where the pulled cable carried the operation's frames, both of its
      // ends moved, and what was lost on it went again; a barrier's few
      // frames may never meet it.
      if (kind != Kind::kBarrier) {
        EXPECT_GT(out.faults, 0u) << "no frame met the pulled cable";
      }
      if (out.counters[0].total.lanes_moved > 0) {
        const uint64_t resent = expect_moved_to_cable_0(out.counters[0], 0, 1) +
                                expect_moved_to_cable_0(out.counters[1], 1, 0);
        EXPECT_GT(resent, 0u);
      }
      if (kind == Kind::kAllReduce || kind == Kind::kAllToAll) {
        EXPECT_EQ(out.counters[0].total.lanes_moved, 1u);
      }
      EXPECT_EQ(out.counters[2].total.lanes_moved, 0u);
      EXPECT_EQ(out.counters[3].total.lanes_moved, 0u);
    }
  }
}

// One direction only: rank 1's acknowledgements over cable 1 are lost, so
// rank 0 finds the cable cut (its frames arrive but are never answered);
// the lane moves on both ends.
TEST(CableMove, OneDirectionPulledMovesTheLaneToo) {
  sim::FaultPlan plan;
  plan.script.push_back(pull(1, 0, 1, /*both_ways=*/false, 0));
  const FaultedRun out = run_faulted(*Topology::mesh(2, 2), {call(Kind::kSendRecv)},
                          plan, options(true));
  ASSERT_EQ(out.status.size(), 2u);
  for (uint32_t r = 0; r < 2; ++r) {
    ASSERT_EQ(out.status[r].size(), 1u);
    EXPECT_TRUE(out.status[r][0].ok()) << "rank " << r << ": "
                                       << out.status[r][0];
    EXPECT_EQ(out.wrong[r][0], "");
  }
  // Rank 0's frames went unanswered, so it resent them.
  EXPECT_GT(expect_moved_to_cable_0(out.counters[0], 0, 1), 0u);
  expect_moved_to_cable_0(out.counters[1], 1, 0);
}

// Every cable of the pair pulled: nothing answers to move to, so the
// operation ends in a typed error at its deadline, and nothing moved.
TEST(CableMove, WithEveryCablePulledNothingMovesAndTheErrorIsTyped) {
  sim::FaultPlan plan;
  sim::ScriptedFault all = pull(0, 1, 0, /*both_ways=*/true, 0);
  all.cable = sim::kAllCables;
  plan.script.push_back(all);
  const FaultedRun out = run_faulted(*Topology::mesh(2, 2), {call(Kind::kAllReduce)},
                          plan, options(true));
  ASSERT_EQ(out.status.size(), 2u);
  for (uint32_t r = 0; r < 2; ++r) {
    ASSERT_EQ(out.status[r].size(), 1u);
    EXPECT_FALSE(out.status[r][0].ok()) << "rank " << r;
    EXPECT_TRUE(error_place(out.status[r][0]).has_value())
        << out.status[r][0];
    EXPECT_EQ(out.counters[r].total.lanes_moved, 0u) << "rank " << r;
  }
}

// Without recovery the frames lost on the pulled cable cannot be sent
// again: the cut is a typed error, as before, and nothing moves.
TEST(CableMove, WithoutRecoveryACutCableIsATypedError) {
  sim::FaultPlan plan;
  plan.script.push_back(pull(0, 1, 1, /*both_ways=*/true, kNsPerUs));
  const FaultedRun out = run_faulted(*Topology::mesh(2, 2), {call(Kind::kAllReduce)},
                          plan, options(false));
  EXPECT_GT(out.faults, 0u) << "no frame met the pulled cable";
  ASSERT_EQ(out.status.size(), 2u);
  bool failed = false;
  for (uint32_t r = 0; r < 2; ++r) {
    ASSERT_EQ(out.status[r].size(), 1u);
    if (!out.status[r][0].ok()) {
      failed = true;
      EXPECT_TRUE(error_place(out.status[r][0]).has_value())
          << out.status[r][0];
    }
    EXPECT_EQ(out.counters[r].total.lanes_moved, 0u) << "rank " << r;
  }
  EXPECT_TRUE(failed);
}

}  // namespace
}  // namespace weft::testing
