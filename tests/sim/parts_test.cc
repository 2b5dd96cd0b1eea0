// Registered user memory and scatter/gather on the simulator: the shared
// contract checks (tests/support/parts_contract.h), and that a two-part
// message is copied from each part when its sender's loan ends before it
// arrives.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "sim/world.h"
#include "tests/sim/sim_test_util.h"
#include "tests/support/parts_contract.h"

namespace weft::sim {
namespace {

using testing::make_pair;
using testing::poll_all;
using testing::two_rank_options;

struct SimPartsPair {
  testing::Pair pair = make_pair(two_rank_options());
  std::array<std::vector<Completion>, 2> seen;
  weft::testing::PartsPair parts;

  SimPartsPair() {
    parts.sender_fabric = &pair.world->fabric(0);
    parts.receiver_fabric = &pair.world->fabric(1);
    parts.sender = pair.a.get();
    parts.receiver = pair.b.get();
    parts.sender_slab = pair.slab_a;
    parts.receiver_slab = pair.slab_b;
    parts.wait = [this](int side, size_t count) {
      pair.world->run_until_idle();
      Endpoint& ep = side == 0 ? *pair.a : *pair.b;
      for (const Completion& c : poll_all(ep)) seen[side].push_back(c);
      EXPECT_GE(seen[side].size(), count);
      return seen[side];
    };
  }
};

WEFT_PARTS_CONTRACT_TESTS(SimParts, SimPartsPair)

// The sender polls its completion before the message arrives: the
// simulator copies both parts out of the sender's memory then, so the
// sender may overwrite them at once and the receiver still gets what was
// sent.
TEST(SimParts, BothPartsAreCopiedWhenTheLoanEndsInFlight) {
  SimPartsPair s;
  std::vector<std::byte> user(256);
  for (size_t i = 0; i < user.size(); ++i) user[i] = weft::testing::pattern(i);
  auto slab = s.pair.world->fabric(0).register_memory(user);
  ASSERT_TRUE(slab.ok()) << slab.status();
  const Frame head = s.pair.frame_a(0, 64);
  for (uint32_t i = 0; i < 64; ++i) head.data()[i] = std::byte{0x42};
  ASSERT_TRUE(
      s.pair.b->post_recv({WorkKind::kRecv, 0, 0}, s.pair.frame_b(0, 512))
          .ok());
  const Frame parts[] = {head, *(*slab)->frame(0, 256)};
  const uint32_t lengths[] = {64, 256};
  ASSERT_TRUE(
      s.pair.a->post_send_parts({WorkKind::kSend, 1, 0}, parts, lengths, 1)
          .ok());
  // Departed (tb5: well under the 3.8 us latency), not arrived.
  s.pair.world->advance_to(1500);
  ASSERT_EQ(poll_all(*s.pair.a).size(), 1u);
  EXPECT_TRUE(poll_all(*s.pair.b).empty());
  std::fill(user.begin(), user.end(), std::byte{0});
  std::fill_n(head.data(), 64, std::byte{0});
  EXPECT_TRUE(s.pair.world->fabric(0).release_memory(*slab).ok());
  s.pair.world->run_until_idle();
  const std::vector<Completion> got = poll_all(*s.pair.b);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].byte_len, 320u);
  const std::byte* d = s.pair.frame_b(0, 512).data();
  EXPECT_EQ(d[0], std::byte{0x42});
  EXPECT_EQ(d[63], std::byte{0x42});
  for (size_t i = 0; i < 256; ++i) {
    ASSERT_EQ(d[64 + i], weft::testing::pattern(i)) << i;
  }
}

}  // namespace
}  // namespace weft::sim
