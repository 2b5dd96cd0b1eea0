// Scatter/gather on the simulator beyond the contract's shared cases
// (tests/conformance): a two-part message is copied from each part when
// its sender's loan ends before it arrives.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "sim/world.h"
#include "tests/sim/sim_test_util.h"

namespace weft::sim {
namespace {

using testing::make_pair;
using testing::poll_all;
using testing::two_rank_options;

std::byte pattern(size_t i) {
  return static_cast<std::byte>((i * 37 + 11) & 0xff);
}

// The sender polls its completion before the message arrives: the
// simulator copies both parts out of the sender's memory then, so the
// sender may overwrite them at once and the receiver still gets what was
// sent.
TEST(SimParts, BothPartsAreCopiedWhenTheLoanEndsInFlight) {
  testing::Pair p = make_pair(two_rank_options());
  std::vector<std::byte> user(256);
  for (size_t i = 0; i < user.size(); ++i) user[i] = pattern(i);
  auto slab = p.world->fabric(0).register_memory(user);
  ASSERT_TRUE(slab.ok()) << slab.status();
  const Frame head = p.frame_a(0, 64);
  for (uint32_t i = 0; i < 64; ++i) head.data()[i] = std::byte{0x42};
  ASSERT_TRUE(
      p.b->post_recv({WorkKind::kRecv, 0, 0}, p.frame_b(0, 512))
          .ok());
  const Frame parts[] = {head, *(*slab)->frame(0, 256)};
  const uint32_t lengths[] = {64, 256};
  ASSERT_TRUE(
      p.a->post_send_parts({WorkKind::kSend, 1, 0}, parts, lengths, 1)
          .ok());
  // Departed (tb5: well under the 3.8 us latency), not arrived.
  p.world->advance_to(1500);
  ASSERT_EQ(poll_all(*p.a).size(), 1u);
  EXPECT_TRUE(poll_all(*p.b).empty());
  std::fill(user.begin(), user.end(), std::byte{0});
  std::fill_n(head.data(), 64, std::byte{0});
  EXPECT_TRUE(p.world->fabric(0).release_memory(*slab).ok());
  p.world->run_until_idle();
  const std::vector<Completion> got = poll_all(*p.b);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].byte_len, 320u);
  const std::byte* d = p.frame_b(0, 512).data();
  EXPECT_EQ(d[0], std::byte{0x42});
  EXPECT_EQ(d[63], std::byte{0x42});
  for (size_t i = 0; i < 256; ++i) {
    ASSERT_EQ(d[64 + i], pattern(i)) << i;
  }
}

}  // namespace
}  // namespace weft::sim
