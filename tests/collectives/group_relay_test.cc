// A pair's only cable pulled, on a mesh (docs/fault-tolerance.md, "A dead
// cable"): the pair's lane goes through the other ranks, every collective
// completes bit for bit, the group keeps every member, and the counters
// show the detour on both ends and on the relays. A rank with every cable
// pulled, or recovery off, still ends in a typed error.
#include <cstdint>
#include <string>
#include <utility>
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

// The cable between `from` and `to`, both ways or from -> to only, from
// `at_ns` on.
sim::ScriptedFault pull(uint32_t from, uint32_t to, bool both_ways,
                        TimeNs at_ns) {
  sim::ScriptedFault f;
  f.kind = sim::FaultKind::kLinkDown;
  f.rank = from;
  f.peer = to;
  f.cable = 0;
  f.both_ways = both_ways;
  f.at_ns = at_ns;
  return f;
}

const PeerCounters* find(const GroupCounters& c, uint32_t peer) {
  for (const PeerCounters& p : c.peers) {
    if (p.peer == peer) return &p;
  }
  return nullptr;
}

const Kind kKinds[] = {Kind::kAllReduce, Kind::kAllGather,
                       Kind::kReduceScatter, Kind::kBroadcast,
                       Kind::kReduce,        Kind::kAllToAll,
                       Kind::kSendRecv,      Kind::kBarrier};

Case call(Kind kind, uint32_t a, uint32_t b) {
  Case c;
  c.kind = kind;
  c.dtype = DType::kFloat32;
  c.count = kind == Kind::kBarrier ? 0 : 24000;
  c.root = a;
  c.peer = b;
  return c;
}

void expect_all_ok(const FaultedRun& out, uint32_t ranks) {
  ASSERT_EQ(out.status.size(), ranks);
  for (uint32_t r = 0; r < ranks; ++r) {
    for (size_t i = 0; i < out.status[r].size(); ++i) {
      EXPECT_TRUE(out.status[r][i].ok())
          << "rank " << r << " call " << i << ": " << out.status[r][i];
      EXPECT_EQ(out.wrong[r][i], "") << "rank " << r << " call " << i;
    }
  }
}

// The lane between `a` and `b` went through relays on both ends (frames
// sent through them on each, received through them on each), and the
// ranks in `relays` carried them: returns how many of those did.
uint32_t expect_detour(const FaultedRun& out, uint32_t a, uint32_t b,
                       const std::vector<uint32_t>& relays) {
  for (const auto& [r, p] : {std::pair{a, b}, std::pair{b, a}}) {
    const PeerCounters* lane = find(out.counters[r], p);
    EXPECT_NE(lane, nullptr);
    if (lane == nullptr) return 0;
    EXPECT_EQ(lane->counts.lane_relayed, 1u) << "rank " << r;
    EXPECT_EQ(lane->device, "relayed") << "rank " << r;
    EXPECT_GT(lane->counts.frames_via_relays, 0u) << "rank " << r;
    EXPECT_GT(lane->counts.frames_from_relays, 0u) << "rank " << r;
    // Its own cable carried nothing relayed, and it carried the frames
    // of this rank's first hops over the others.
    EXPECT_EQ(lane->counts.frames_relayed, 0u) << "rank " << r;
    EXPECT_GT(out.counters[r].total.frames_relayed, 0u) << "rank " << r;
  }
  uint32_t carried = 0;
  for (const uint32_t r : relays) {
    // A relay forwards over its lanes to a and b, and relays nothing of
    // its own.
    const PeerCounters* to_a = find(out.counters[r], a);
    const PeerCounters* to_b = find(out.counters[r], b);
    EXPECT_EQ(out.counters[r].total.lane_relayed, 0u) << "relay " << r;
    EXPECT_EQ(out.counters[r].total.frames_via_relays, 0u) << "relay " << r;
    if (to_a == nullptr || to_b == nullptr) continue;
    const uint64_t forwarded =
        to_a->counts.frames_relayed + to_b->counts.frames_relayed;
    EXPECT_EQ(out.counters[r].total.frames_relayed, forwarded)
        << "relay " << r;
    if (forwarded > 0) {
      ++carried;
      // Each whole, its 64-byte header at least.
      EXPECT_GE(to_a->counts.relayed_bytes + to_b->counts.relayed_bytes,
                64 * forwarded);
    }
  }
  return carried;
}

std::vector<uint32_t> others(uint32_t ranks, uint32_t a, uint32_t b) {
  std::vector<uint32_t> out;
  for (uint32_t r = 0; r < ranks; ++r) {
    if (r != a && r != b) out.push_back(r);
  }
  return out;
}

// A send/recv between the pulled pair: the other ranks make no call, and
// a relay forwards only while its engine steps (an operation of its own,
// or the linger after one): the pair's calls complete bit for bit or end
// in a typed error at the deadline, never with wrong data; the other
// ranks' calls are empty.
void expect_send_recv(const FaultedRun& out, uint32_t ranks) {
  for (uint32_t r = 0; r < ranks; ++r) {
    for (size_t i = 0; i < out.status[r].size(); ++i) {
      const absl::Status& s = out.status[r][i];
      if (r > 1 || s.ok()) {
        EXPECT_TRUE(s.ok()) << "rank " << r << " call " << i << ": " << s;
        EXPECT_EQ(out.wrong[r][i], "") << "rank " << r << " call " << i;
      } else {
        EXPECT_TRUE(error_place(s).has_value()) << s;
      }
    }
  }
}

// Every collective on a 4- and an 8-rank mesh of one cable a pair, the
// cable between ranks 0 and 1 pulled both ways before the first call and
// during it; a second call of the same kind then runs over the relays.
TEST(Relay, EveryCollectiveCompletesWithAPairsOnlyCablePulled) {
  for (const uint32_t ranks : {4u, 8u}) {
    for (const TimeNs at_ns : {TimeNs{0}, 20 * kNsPerUs}) {
      for (const Kind kind : kKinds) {
        SCOPED_TRACE(std::to_string(ranks) + " ranks, pulled at " +
                     std::to_string(at_ns) + " ns, " +
                     std::string(harness::collective_name(kind)));
        sim::FaultPlan plan;
        plan.script.push_back(pull(0, 1, /*both_ways=*/true, at_ns));
        const FaultedRun out =
            run_faulted(*Topology::mesh(ranks, 1),
                        {call(kind, 0, 1), call(kind, 0, 1)}, plan,
                        small_frame_options(kTimeoutNs, true));
        if (out.status.size() != ranks) {
          ADD_FAILURE() << "the run gave no result";
          continue;
        }
        if (kind == Kind::kSendRecv) {
          expect_send_recv(out, ranks);
          continue;
        }
        expect_all_ok(out, ranks);
        // A barrier pulled during the call may have ended before its
        // frames met the cable: pulled before, every call does.
        if (at_ns == 0 || kind != Kind::kBarrier) {
          EXPECT_GT(out.faults, 0u) << "no frame met the pulled cable";
        }
        if (at_ns > 0 && out.counters[0].total.lane_relayed == 0) continue;
        const uint32_t carried = expect_detour(out, 0, 1, others(ranks, 0, 1));
        // Spread: the data-heavy calls use more than one relay.
        if (kind == Kind::kAllReduce || kind == Kind::kAllToAll) {
          EXPECT_GE(carried, 2u);
        }
      }
    }
  }
}

// One direction only: rank 1's frames to rank 0 are lost, rank 0's
// arrive. Both ends end up relayed, and every call completes.
TEST(Relay, OneDirectionPulledIsRoutedAroundToo) {
  sim::FaultPlan plan;
  plan.script.push_back(pull(1, 0, /*both_ways=*/false, 0));
  const FaultedRun out =
      run_faulted(*Topology::mesh(4, 1),
                  {call(Kind::kAllReduce, 0, 1), call(Kind::kSendRecv, 0, 1)},
                  plan, small_frame_options(kTimeoutNs, true));
  expect_all_ok(out, 4);
  if (out.status.size() != 4) return;
  EXPECT_GE(expect_detour(out, 0, 1, {2, 3}), 1u);
}

// Two pairs pulled: 0-1 goes through 2 and 3 (on 4 ranks) and 2-3
// through 0 and 1; no frame is relayed twice.
TEST(Relay, TwoPairsPulledAreEachRoutedAround) {
  for (const uint32_t ranks : {4u, 8u}) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    sim::FaultPlan plan;
    plan.script.push_back(pull(0, 1, /*both_ways=*/true, 0));
    plan.script.push_back(pull(2, 3, /*both_ways=*/true, 0));
    const FaultedRun out = run_faulted(
        *Topology::mesh(ranks, 1),
        {call(Kind::kAllReduce, 0, 1), call(Kind::kAllToAll, 0, 1)}, plan,
        small_frame_options(kTimeoutNs, true));
    expect_all_ok(out, ranks);
    if (out.status.size() != ranks) continue;
    for (const auto& [a, b] : {std::pair{0u, 1u}, std::pair{2u, 3u}}) {
      for (const auto& [r, p] : {std::pair{a, b}, std::pair{b, a}}) {
        const PeerCounters* lane = find(out.counters[r], p);
        ASSERT_NE(lane, nullptr);
        EXPECT_EQ(lane->counts.lane_relayed, 1u) << r << " to " << p;
        EXPECT_GT(lane->counts.frames_from_relays, 0u) << r << " to " << p;
      }
    }
    // Ranks 0 to 3 each have one relayed lane; the others none.
    for (uint32_t r = 0; r < ranks; ++r) {
      EXPECT_EQ(out.counters[r].total.lane_relayed, r < 4 ? 1u : 0u)
          << "rank " << r;
    }
  }
}

// Every cable of rank 0 pulled: no rank can reach it, so nothing is
// relayed to it, and every rank's call ends in a typed error (no hang:
// run_faulted fails the test if the world hits its time limit).
TEST(Relay, ARankWithEveryCablePulledEndsTyped) {
  sim::FaultPlan plan;
  for (uint32_t p = 1; p < 4; ++p) {
    plan.script.push_back(pull(0, p, /*both_ways=*/true, 0));
  }
  const FaultedRun out =
      run_faulted(*Topology::mesh(4, 1), {call(Kind::kAllReduce, 0, 1)}, plan,
                  small_frame_options(kTimeoutNs, true));
  ASSERT_EQ(out.status.size(), 4u);
  for (uint32_t r = 0; r < 4; ++r) {
    ASSERT_EQ(out.status[r].size(), 1u);
    EXPECT_FALSE(out.status[r][0].ok()) << "rank " << r;
    EXPECT_TRUE(error_place(out.status[r][0]).has_value())
        << out.status[r][0];
    EXPECT_EQ(out.counters[r].total.frames_from_relays, 0u) << "rank " << r;
  }
}

// Without recovery the frames lost on the pulled cable cannot be sent
// again: the cut is a typed error, as before, and nothing is relayed.
TEST(Relay, WithoutRecoveryACutCableIsATypedError) {
  sim::FaultPlan plan;
  plan.script.push_back(pull(0, 1, /*both_ways=*/true, kNsPerUs));
  const FaultedRun out =
      run_faulted(*Topology::mesh(4, 1), {call(Kind::kAllReduce, 0, 1)}, plan,
                  small_frame_options(kTimeoutNs, false));
  EXPECT_GT(out.faults, 0u) << "no frame met the pulled cable";
  ASSERT_EQ(out.status.size(), 4u);
  bool failed = false;
  for (uint32_t r = 0; r < 4; ++r) {
    ASSERT_EQ(out.status[r].size(), 1u);
    if (!out.status[r][0].ok()) {
      failed = true;
      EXPECT_TRUE(error_place(out.status[r][0]).has_value())
          << out.status[r][0];
    }
    EXPECT_EQ(out.counters[r].total.lane_relayed, 0u) << "rank " << r;
    EXPECT_EQ(out.counters[r].total.frames_relayed, 0u) << "rank " << r;
  }
  EXPECT_TRUE(failed);
}

}  // namespace
}  // namespace weft::testing
