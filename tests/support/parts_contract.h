// The contract of registered user memory and scatter/gather
// (Fabric::register_memory, Endpoint::post_send_parts/post_recv_parts), as
// checks every fabric's tests run on a connected pair of their own: parts
// go out and land in order, a message longer than all parts is
// IBV_WC_LOC_LEN_ERR, a registration with work outstanding is not
// released, overlapping or empty registrations and frames outside any
// slab are refused.
#ifndef WEFT_TESTS_SUPPORT_PARTS_CONTRACT_H_
#define WEFT_TESTS_SUPPORT_PARTS_CONTRACT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "fabric/completion.h"
#include "fabric/endpoint.h"
#include "fabric/fabric.h"
#include "fabric/slab.h"
#include "fabric/wc_status.h"
#include "fabric/work_id.h"
#include "gtest/gtest.h"

namespace weft::testing {

// A connected pair as the checks see it: rank 0 sends on `sender`, rank 1
// receives on `receiver`; each side has a slab of at least 64 KiB.
struct PartsPair {
  Fabric* sender_fabric = nullptr;
  Fabric* receiver_fabric = nullptr;
  Endpoint* sender = nullptr;
  Endpoint* receiver = nullptr;
  Slab* sender_slab = nullptr;
  Slab* receiver_slab = nullptr;
  // Moves the pair until `side` (0: sender, 1: receiver) has `count`
  // completions in all (bounded); returns all of that side's so far.
  std::function<std::vector<Completion>(int side, size_t count)> wait;
};

inline std::byte pattern(size_t i) {
  return static_cast<std::byte>((i * 37 + 11) & 0xff);
}

// Header from the sender's slab + payload from registered user memory,
// received into a header frame of the receiver's slab + registered user
// memory there: every byte in its place, one completion with the whole
// length and the immediate.
inline void check_parts_in_order(PartsPair& p) {
  std::vector<std::byte> out(3000), in(4000, std::byte{0});
  for (size_t i = 0; i < out.size(); ++i) out[i] = pattern(i);
  auto out_slab = p.sender_fabric->register_memory(out);
  auto in_slab = p.receiver_fabric->register_memory(in);
  ASSERT_TRUE(out_slab.ok()) << out_slab.status();
  ASSERT_TRUE(in_slab.ok()) << in_slab.status();
  const Frame head_out = *p.sender_slab->frame(0, 64);
  for (uint32_t i = 0; i < 64; ++i) head_out.data()[i] = std::byte{0xee};
  const Frame send_parts[] = {head_out, *(*out_slab)->frame(100, 2000)};
  const uint32_t lengths[] = {64, 2000};
  const Frame recv_parts[] = {*p.receiver_slab->frame(0, 64),
                              *(*in_slab)->frame(0, 4000)};
  const WorkId rid{WorkKind::kRecv, 0, 1}, sid{WorkKind::kSend, 1, 2};
  ASSERT_TRUE(p.receiver->post_recv_parts(rid, recv_parts).ok());
  ASSERT_TRUE(p.sender->post_send_parts(sid, send_parts, lengths, 77).ok());
  const std::vector<Completion> sent = p.wait(0, 1);
  const std::vector<Completion> got = p.wait(1, 1);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_TRUE(sent[0].ok());
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(got[0].ok()) << got[0].status_name;
  EXPECT_EQ(got[0].byte_len, 2064u);
  EXPECT_EQ(got[0].immediate, 77u);
  EXPECT_EQ(p.receiver_slab->data()[63], std::byte{0xee});
  for (size_t i = 0; i < 2000; ++i) {
    ASSERT_EQ(in[i], pattern(100 + i)) << "payload byte " << i;
  }
  EXPECT_EQ(in[2000], std::byte{0});  // nothing past the message
  EXPECT_TRUE(p.sender_fabric->release_memory(*out_slab).ok());
  EXPECT_TRUE(p.receiver_fabric->release_memory(*in_slab).ok());
}

// A message of one frame scattered over two receive frames, split where
// the first part ends.
inline void check_scatter_into_two_frames(PartsPair& p) {
  const Frame out = *p.sender_slab->frame(4096, 300);
  for (uint32_t i = 0; i < 300; ++i) out.data()[i] = pattern(i);
  const Frame parts[] = {*p.receiver_slab->frame(8192, 100),
                         *p.receiver_slab->frame(16384, 400)};
  ASSERT_TRUE(p.receiver->post_recv_parts({WorkKind::kRecv, 0, 3}, parts).ok());
  ASSERT_TRUE(p.sender->post_send({WorkKind::kSend, 1, 3}, out, 300, 5).ok());
  const std::vector<Completion> got = p.wait(1, 1);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(got[0].ok()) << got[0].status_name;
  EXPECT_EQ(got[0].byte_len, 300u);
  for (uint32_t i = 0; i < 100; ++i) ASSERT_EQ(parts[0].data()[i], pattern(i));
  for (uint32_t i = 0; i < 200; ++i) {
    ASSERT_EQ(parts[1].data()[i], pattern(100 + i));
  }
}

// One byte more than all parts hold: LOC_LEN_ERR.
inline void check_too_long_for_all_parts(PartsPair& p) {
  const Frame parts[] = {*p.receiver_slab->frame(0, 64),
                         *p.receiver_slab->frame(1024, 64)};
  ASSERT_TRUE(p.receiver->post_recv_parts({WorkKind::kRecv, 0, 4}, parts).ok());
  ASSERT_TRUE(p.sender
                  ->post_send({WorkKind::kSend, 1, 4},
                              *p.sender_slab->frame(0, 129), 129, 0)
                  .ok());
  const std::vector<Completion> got = p.wait(1, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].status, WcStatus::kLocLenErr);
}

// Registration rules: no release with a receive outstanding on it (then
// yes), no overlap, no empty memory, no frames outside any slab, no
// release of what is not registered.
inline void check_registration_rules(PartsPair& p) {
  std::vector<std::byte> buf(8192);
  auto slab = p.receiver_fabric->register_memory(buf);
  ASSERT_TRUE(slab.ok()) << slab.status();
  EXPECT_EQ(p.receiver_fabric
                ->register_memory(std::span<std::byte>(buf).subspan(100, 10))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(p.receiver_fabric->register_memory({}).status().code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(
      p.receiver->post_recv({WorkKind::kRecv, 0, 5}, *(*slab)->frame(0, 512))
          .ok());
  const absl::Status busy = p.receiver_fabric->release_memory(*slab);
  EXPECT_EQ(busy.code(), absl::StatusCode::kFailedPrecondition) << busy;
  p.receiver_fabric->hold_memory(*slab);
  const Frame out = *p.sender_slab->frame(0, 16);
  ASSERT_TRUE(p.sender->post_send({WorkKind::kSend, 1, 5}, out, 16, 0).ok());
  ASSERT_EQ(p.wait(1, 1).size(), 1u);
  // Received, but still held.
  EXPECT_EQ(p.receiver_fabric->release_memory(*slab).code(),
            absl::StatusCode::kFailedPrecondition);
  p.receiver_fabric->unhold_memory(*slab);
  EXPECT_TRUE(p.receiver_fabric->release_memory(*slab).ok());
  EXPECT_EQ(p.receiver_fabric->release_memory(*slab).code(),
            absl::StatusCode::kInvalidArgument);
  // Memory nobody registered with this fabric.
  std::unique_ptr<Slab> stranger = Slab::borrow(buf.data(), buf.size());
  EXPECT_EQ(
      p.receiver->post_recv({WorkKind::kRecv, 0, 6}, *stranger->frame(0, 64))
          .code(),
      absl::StatusCode::kInvalidArgument);
  const Frame parts[] = {out, *stranger->frame(0, 64)};
  const uint32_t lengths[] = {16, 64};
  EXPECT_EQ(
      p.sender->post_send_parts({WorkKind::kSend, 1, 6}, parts, lengths, 0)
          .code(),
      absl::StatusCode::kInvalidArgument);
}

}  // namespace weft::testing

// The four contract tests of `suite`, each on a fresh `Fixture` whose
// member `parts` is the pair (a PartsPair).
#define WEFT_PARTS_CONTRACT_TESTS(suite, Fixture)            \
  TEST(suite, PartsGoOutAndLandInOrder) {                    \
    Fixture f;                                               \
    ::weft::testing::check_parts_in_order(f.parts);          \
  }                                                          \
  TEST(suite, OneMessageScattersIntoTwoFrames) {             \
    Fixture f;                                               \
    ::weft::testing::check_scatter_into_two_frames(f.parts); \
  }                                                          \
  TEST(suite, AMessageLongerThanAllPartsIsLocLenErr) {       \
    Fixture f;                                               \
    ::weft::testing::check_too_long_for_all_parts(f.parts);  \
  }                                                          \
  TEST(suite, RegistrationRules) {                           \
    Fixture f;                                               \
    ::weft::testing::check_registration_rules(f.parts);      \
  }

#endif  // WEFT_TESTS_SUPPORT_PARTS_CONTRACT_H_
