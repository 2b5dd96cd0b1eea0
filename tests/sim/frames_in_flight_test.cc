// The bytes of frames whose send completion is polled while they are still
// on the wire (every frame of a link with latency). Without faults the
// simulator copies such a frame straight into the receive it will land in
// when that receive is already certain, and aside otherwise; these pin down
// that either way every receive gets exactly its own frame's bytes, whatever
// order sends, polls and receive posts come in, and that a receive no frame
// lands in keeps its own bytes.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/world.h"
#include "tests/sim/sim_test_util.h"

namespace weft::sim {
namespace {

using testing::make_pair;
using testing::poll_all;
using testing::recv_id;
using testing::send_id;
using testing::two_rank_options;

constexpr uint32_t kFrameBytes = 256;
constexpr uint32_t kSendBytes = 200;

std::byte fill_of(uint32_t i) { return std::byte(0x40 + i); }

// True when all `bytes` of `frame` are `value`.
bool all_bytes(const Frame& frame, uint32_t bytes, std::byte value) {
  for (uint32_t i = 0; i < bytes; ++i) {
    if (frame.data()[i] != value) return false;
  }
  return true;
}

// Sends frame `i` (kSendBytes of fill_of(i)) from `ep` out of `out`, waits
// until it departs, polls its completion and overwrites `out` at once, as a
// sender reusing its frame does.
void send_poll_and_reuse(World& world, Endpoint& ep, const Frame& out,
                         uint32_t i) {
  std::memset(out.data(), std::to_integer<int>(fill_of(i)), kSendBytes);
  ASSERT_TRUE(ep.post_send(send_id(1, i), out, kSendBytes, i).ok());
  std::vector<Completion> sent;
  while (sent.empty()) {
    ASSERT_LT(world.clock().now_ns(), 1 * kNsPerMs) << "frame " << i;
    world.advance_to(world.clock().now_ns() + 1);
    sent = poll_all(ep);
  }
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].id, send_id(1, i));
  std::memset(out.data(), 0xee, kSendBytes);
}

// Receives posted before and after the polls, and a frame whose receive is
// not posted yet at its poll ahead of one whose receive is.
TEST(FramesInFlight, EachReceiveGetsItsOwnFrameWhenPostsAndPollsInterleave) {
  auto p = make_pair(two_rank_options());
  const Frame out = p.frame_a(0, kFrameBytes);
  auto in = [&](uint32_t i) { return p.frame_b(i * kFrameBytes, kFrameBytes); };
  for (uint32_t i = 0; i < 2; ++i)
    ASSERT_TRUE(p.b->post_recv(recv_id(0, i), in(i)).ok());
  for (uint32_t i = 0; i < 3; ++i) send_poll_and_reuse(*p.world, *p.a, out, i);
  for (uint32_t i = 2; i < 5; ++i)
    ASSERT_TRUE(p.b->post_recv(recv_id(0, i), in(i)).ok());
  for (uint32_t i = 3; i < 5; ++i) send_poll_and_reuse(*p.world, *p.a, out, i);
  p.world->run_until_idle();
  const std::vector<Completion> got = poll_all(*p.b);
  ASSERT_EQ(got.size(), 5u);
  for (uint32_t i = 0; i < 5; ++i) {
    EXPECT_TRUE(got[i].ok()) << i;
    EXPECT_EQ(got[i].id, recv_id(0, i));
    EXPECT_EQ(got[i].immediate, i);
    EXPECT_TRUE(all_bytes(in(i), kSendBytes, fill_of(i))) << "receive " << i;
  }
  EXPECT_EQ(p.world->counters().frames_delivered, 5u);
}

// The first frame is too long for its receive: the queue pair fails and
// flushes the second receive, which must keep what it held.
TEST(FramesInFlight, AReceiveFlushedBehindATooLongFrameKeepsItsBytes) {
  auto p = make_pair(two_rank_options());
  const Frame out = p.frame_a(0, kFrameBytes);
  const Frame second = p.frame_b(kFrameBytes, kFrameBytes);
  std::memset(second.data(), 0x99, kFrameBytes);
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 0), p.frame_b(0, 16)).ok());
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 1), second).ok());
  for (uint32_t i = 0; i < 2; ++i) send_poll_and_reuse(*p.world, *p.a, out, i);
  p.world->run_until_idle();
  const std::vector<Completion> got = poll_all(*p.b);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].status, WcStatus::kLocLenErr);
  EXPECT_EQ(got[1].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(p.world->counters().dropped_not_ready, 1u);
  EXPECT_TRUE(all_bytes(second, kFrameBytes, std::byte{0x99}));
}

// Two queue pairs between the same ranks share one cable, so their frames
// queue on one link direction, interleaved.
TEST(FramesInFlight, QueuePairsSharingACableEachGetTheirOwnFrames) {
  auto p = make_pair(two_rank_options());
  const std::string device_a = p.a->info().device;
  const std::string device_b = p.b->info().device;
  std::unique_ptr<Endpoint> a2 = *p.world->fabric(0).open(device_a, 1);
  std::unique_ptr<Endpoint> b2 = *p.world->fabric(1).open(device_b, 0);
  ASSERT_TRUE(a2->connect(*b2->destination()).ok());
  ASSERT_TRUE(b2->connect(*a2->destination()).ok());
  Endpoint* senders[] = {p.a.get(), a2.get()};
  Endpoint* receivers[] = {p.b.get(), b2.get()};
  const Frame out = p.frame_a(0, kFrameBytes);
  // Frame i goes over queue pair i % 2 into receive i of rank 1's slab.
  auto in = [&](uint32_t i) { return p.frame_b(i * kFrameBytes, kFrameBytes); };
  constexpr uint32_t kFrames = 6;
  for (uint32_t i = 0; i < kFrames; ++i)
    ASSERT_TRUE(receivers[i % 2]->post_recv(recv_id(0, i), in(i)).ok());
  for (uint32_t i = 0; i < kFrames; ++i)
    send_poll_and_reuse(*p.world, *senders[i % 2], out, i);
  p.world->run_until_idle();
  for (uint32_t qp = 0; qp < 2; ++qp) {
    const std::vector<Completion> got = poll_all(*receivers[qp]);
    ASSERT_EQ(got.size(), kFrames / 2) << "queue pair " << qp;
    for (const Completion& c : got) {
      EXPECT_TRUE(c.ok());
      EXPECT_EQ(c.id.slot % 2, qp);
      EXPECT_EQ(c.immediate, c.id.slot);
    }
  }
  for (uint32_t i = 0; i < kFrames; ++i)
    EXPECT_TRUE(all_bytes(in(i), kSendBytes, fill_of(i))) << "receive " << i;
}

}  // namespace
}  // namespace weft::sim
