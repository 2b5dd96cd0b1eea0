// Transport, the simulator's frame path, driven through a bare WorldCore
// (no World scheduler): links and pairs are found again by their ends, a
// link direction reserves itself for the sends queued on it back to back,
// and a frame whose sender polls its completion while it is in flight holds
// a payload buffer exactly until it arrives, or none when its receive is
// already posted and the bytes go there at once.
#include "sim/internal/transport.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "fabric/assert.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/internal/world_core.h"
#include "tests/sim/sim_test_util.h"

namespace weft::sim {
namespace {

using ::testing::ElementsAre;
using testing::poll_all;
using testing::recv_id;
using testing::send_id;

// 1000 ns latency, 1 byte per ns, 100 ns per message: a 1000-byte frame
// holds its link for 1100 ns.
constexpr TimeNs kLatencyNs = 1000;
constexpr uint32_t kFrameBytes = 1000;
constexpr TimeNs kSerialisationNs = 1100;

WorldOptions options_with(FaultRates rates = {}) {
  WorldOptions options;
  options.topology = *Topology::mesh(2);
  options.link = LinkModel{.latency_ns = kLatencyNs,
                           .bandwidth_bytes_per_s = 1e9,
                           .per_message_ns = 100};
  options.faults.rates = rates;
  return options;
}

// A WorldCore of two ranks with one connected endpoint each way.
struct Core {
  std::unique_ptr<WorldCore> core;
  std::unique_ptr<Endpoint> a;  // rank 0 -> 1
  std::unique_ptr<Endpoint> b;  // rank 1 -> 0
  Slab* slab_a = nullptr;
  Slab* slab_b = nullptr;

  Transport& transport() { return core->transport(); }
  Frame frame_a(uint32_t i) const {
    return *slab_a->frame(uint64_t{i} * kFrameBytes, kFrameBytes);
  }
  Frame frame_b(uint32_t i) const {
    return *slab_b->frame(uint64_t{i} * kFrameBytes, kFrameBytes);
  }
  // Handles every event up to and at `t_ns` and leaves the clock there.
  void run_to(TimeNs t_ns) {
    core->process_due();
    while (core->has_events() && core->next_event_ns() <= t_ns) {
      core->advance_to(core->next_event_ns());
      core->process_due();
    }
    if (t_ns > core->now()) core->advance_to(t_ns);
  }
  void run_until_idle() {
    core->process_due();
    while (core->has_events()) {
      core->advance_to(core->next_event_ns());
      core->process_due();
    }
  }
};

Core make_core(WorldOptions options) {
  Core c;
  auto core = WorldCore::create(std::move(options));
  EXPECT_TRUE(core.ok()) << core.status();
  c.core = *std::move(core);
  const Topology& topo = c.core->options().topology;
  auto a = c.core->fabric(0).open(topo.devices(0, 1)[0], 1);
  auto b = c.core->fabric(1).open(topo.devices(1, 0)[0], 0);
  EXPECT_TRUE(a.ok() && b.ok());
  c.a = *std::move(a);
  c.b = *std::move(b);
  EXPECT_TRUE(c.a->connect(*c.b->destination()).ok());
  EXPECT_TRUE(c.b->connect(*c.a->destination()).ok());
  c.slab_a = *c.core->fabric(0).create_slab(testing::kSlabBytes);
  c.slab_b = *c.core->fabric(1).create_slab(testing::kSlabBytes);
  return c;
}

// Fills `frame` with `value` and sends it from `ep` as message `i`.
void send(Endpoint& ep, const Frame& frame, uint32_t i, std::byte value) {
  std::memset(frame.data(), std::to_integer<int>(value), kFrameBytes);
  ASSERT_TRUE(ep.post_send(send_id(1, i), frame, kFrameBytes, i).ok());
}

bool all_bytes(const Frame& frame, std::byte value) {
  for (uint32_t i = 0; i < kFrameBytes; ++i) {
    if (frame.data()[i] != value) return false;
  }
  return true;
}

TEST(Transport, FindsALinkByItsEndsAndCableAndAPairByItsEnds) {
  Core c = make_core(options_with());
  Transport& t = c.transport();
  // make_core opened both directions on cable 0 already.
  const uint32_t forward = t.link_index(0, 1, 0);
  const uint32_t backward = t.link_index(1, 0, 0);
  EXPECT_NE(forward, backward);
  EXPECT_EQ(t.link_index(0, 1, 0), forward);
  const uint32_t other_cable = t.link_index(0, 1, 1);
  EXPECT_NE(other_cable, forward);
  EXPECT_NE(other_cable, backward);
  EXPECT_EQ(t.link_index(0, 1, 1), other_cable);
  // One pair per direction, whatever the cable.
  EXPECT_EQ(t.pair_index(0, 1), t.pair_index(0, 1));
  EXPECT_NE(t.pair_index(0, 1), t.pair_index(1, 0));
}

TEST(Transport, SendsQueuedOnALinkLeaveBackToBackAndAnIdleLinkStartsNow) {
  Core c = make_core(options_with());
  Transport& t = c.transport();
  const uint32_t link = t.link_index(0, 1, 0);
  for (uint32_t i = 0; i < 3; ++i) send(*c.a, c.frame_a(i), i, std::byte{1});
  EXPECT_EQ(t.link_busy_until_ns(link), 3 * kSerialisationNs);
  // The other direction is not reserved by them.
  EXPECT_EQ(t.link_busy_until_ns(t.link_index(1, 0, 0)), 0);
  c.run_until_idle();
  std::vector<TimeNs> departures;
  for (const TraceEvent& e : c.core->trace().events()) {
    if (e.kind == TraceKind::kDepart) departures.push_back(e.time_ns);
  }
  EXPECT_THAT(departures, ElementsAre(kSerialisationNs, 2 * kSerialisationNs,
                                      3 * kSerialisationNs));
  // Long idle by now: the next send is serialised from now, not from the
  // end of the last reservation.
  const TimeNs now = c.core->now();
  ASSERT_GT(now, 3 * kSerialisationNs);
  send(*c.a, c.frame_a(3), 3, std::byte{1});
  EXPECT_EQ(t.link_busy_until_ns(link), now + kSerialisationNs);
}

TEST(Transport, AFramePolledInFlightHoldsAPayloadBufferUntilItArrives) {
  Core c = make_core(options_with());
  Transport& t = c.transport();
  send(*c.a, c.frame_a(0), 0, std::byte{0x5a});
  c.run_to(kSerialisationNs);  // departed, not arrived
  EXPECT_EQ(t.frames_in_flight(), 1u);
  EXPECT_EQ(t.payloads_in_use(), 0u);  // its bytes are still on loan
  // No receive posted, so the frame's receive is not known: polling the
  // send ends the loan and the bytes are copied aside.
  ASSERT_EQ(poll_all(*c.a).size(), 1u);
  EXPECT_EQ(t.payloads_in_use(), 1u);
  std::memset(c.frame_a(0).data(), 0xee, kFrameBytes);  // the sender reuses it
  ASSERT_TRUE(c.b->post_recv(recv_id(0, 0), c.frame_b(0)).ok());
  c.run_until_idle();
  EXPECT_EQ(t.frames_in_flight(), 0u);
  EXPECT_EQ(t.payloads_in_use(), 0u);
  const std::vector<Completion> got = poll_all(*c.b);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].ok());
  EXPECT_TRUE(all_bytes(c.frame_b(0), std::byte{0x5a}));
}

TEST(Transport, AFramePolledInFlightWhoseReceiveIsPostedGoesThereAtOnce) {
  Core c = make_core(options_with());
  Transport& t = c.transport();
  std::memset(c.frame_b(0).data(), 0, kFrameBytes);
  ASSERT_TRUE(c.b->post_recv(recv_id(0, 0), c.frame_b(0)).ok());
  send(*c.a, c.frame_a(0), 0, std::byte{0x3c});
  c.run_to(kSerialisationNs);
  ASSERT_EQ(poll_all(*c.a).size(), 1u);
  // Placed in its receive already, with no buffer, before it arrives.
  EXPECT_EQ(t.frames_in_flight(), 1u);
  EXPECT_EQ(t.payloads_in_use(), 0u);
  EXPECT_TRUE(all_bytes(c.frame_b(0), std::byte{0x3c}));
  EXPECT_TRUE(poll_all(*c.b).empty());
  c.run_until_idle();
  EXPECT_EQ(t.frames_in_flight(), 0u);
  ASSERT_EQ(poll_all(*c.b).size(), 1u);
}

// Every fault rate at once, in both directions: duplicates, reorders,
// losses and error completions leave each structure consistent.
TEST(Transport, EveryFaultRateAtOnceKeepsTheWorldsInvariants) {
  if (!weft::kChecksInvariants) {
    GTEST_SKIP() << "invariant checks are compiled out of this build";
  }
  Core c = make_core(options_with(FaultRates{.loss = 0.1,
                                             .duplicate = 0.2,
                                             .reorder = 0.3,
                                             .error_completion = 0.02}));
  constexpr uint32_t kFrames = 24;
  for (uint32_t i = 0; i < kFrames; ++i) {
    (void)c.b->post_recv(recv_id(0, i), c.frame_b(i));
    (void)c.a->post_recv(recv_id(1, i), c.frame_a(kFrames + i));
    (void)c.a->post_send(send_id(1, i), c.frame_a(i), kFrameBytes, i);
    (void)c.b->post_send(send_id(0, i), c.frame_b(kFrames + i), kFrameBytes, i);
    c.run_to(c.core->now() + kSerialisationNs / 2);
    c.core->check_invariants();
    poll_all(*c.a);
    c.core->check_invariants();
  }
  c.run_until_idle();
  c.core->check_invariants();
  poll_all(*c.a);
  poll_all(*c.b);
  EXPECT_EQ(c.transport().frames_in_flight(), 0u);
  EXPECT_EQ(c.transport().payloads_in_use(), 0u);
  EXPECT_GT(c.core->injected().size(), 0u);
}

}  // namespace
}  // namespace weft::sim
