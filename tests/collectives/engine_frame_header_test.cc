// The frame header and the group address: round trips and every way a
// malformed one is refused.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collectives/bootstrap/address.h"
#include "collectives/engine/frame_header.h"
#include "collectives/internal/op_kind.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace weft::collectives::internal {
namespace {

using ::testing::HasSubstr;

FrameHeader sample() {
  FrameHeader h;
  h.type = FrameType::kData;
  h.flags = kFlagReportNow;
  h.op = {.kind = static_cast<uint8_t>(OpKind::kAllReduce),
          .dtype = 11,
          .reduce_op = 2,
          .algorithm = 3,
          .group_id = 0xdeadbeef,
          .op_seq = 0xfffffffe,
          .root = 7,
          .total_bytes = (uint64_t{1} << 33) + 5,
          .chunk_bytes = 4032};
  h.item = 9;
  h.frame = 123456;
  h.payload_bytes = 10;
  h.seq = 0xfffffff0;
  h.received = 0x80000001;
  h.consumed = 42;
  h.cause = 4;
  h.relay_rank = 4095;
  return h;
}

std::vector<std::byte> encoded(const FrameHeader& h) {
  std::vector<std::byte> frame(kHeaderBytes + h.payload_bytes, std::byte{0x5a});
  h.encode(std::span<std::byte, kHeaderBytes>(frame.data(), kHeaderBytes));
  return frame;
}

TEST(FrameHeader, RoundTripsEveryField) {
  const FrameHeader h = sample();
  absl::StatusOr<FrameHeader> back = FrameHeader::decode(encoded(h));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->type, h.type);
  EXPECT_EQ(back->flags, h.flags);
  EXPECT_EQ(back->op, h.op);
  EXPECT_EQ(back->item, h.item);
  EXPECT_EQ(back->frame, h.frame);
  EXPECT_EQ(back->payload_bytes, h.payload_bytes);
  EXPECT_EQ(back->seq, h.seq);
  EXPECT_EQ(back->received, h.received);
  EXPECT_EQ(back->consumed, h.consumed);
  EXPECT_EQ(back->cause, h.cause);
  EXPECT_EQ(back->relay_rank, h.relay_rank);
}

TEST(FrameHeader, ControlFramesCarryTheirRanksWhereDataHasItems) {
  FrameHeader ack;
  ack.type = FrameType::kAck;
  ack.flags = kFlagProbe;
  ack.suspect = 6;
  ack.received = 17;
  ack.seq = 23;
  ack.heard = 0x01020304;
  absl::StatusOr<FrameHeader> back = FrameHeader::decode(encoded(ack));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->suspect, 6u);
  EXPECT_EQ(back->flags, kFlagProbe);
  EXPECT_EQ(back->received, 17u);
  EXPECT_EQ(back->seq, 23u);
  EXPECT_EQ(back->heard, 0x01020304u);
  // `heard` where other frames have the root, low byte first.
  EXPECT_EQ(encoded(ack)[20], std::byte{0x04});
  EXPECT_EQ(encoded(ack)[23], std::byte{0x01});

  FrameHeader abort;
  abort.type = FrameType::kAbort;
  abort.origin = 2;
  abort.blamed = 5;
  back = FrameHeader::decode(encoded(abort));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->origin, 2u);
  EXPECT_EQ(back->blamed, 5u);
  // The bytes where a data frame has its item and frame numbers.
  const std::vector<std::byte> f = encoded(abort);
  EXPECT_EQ(f[32], std::byte{2});
  EXPECT_EQ(f[36], std::byte{5});
}

TEST(FrameHeader, LayoutIsLittleEndianAndFixed) {
  const std::vector<std::byte> f = encoded(sample());
  EXPECT_EQ(f[0], std::byte{0x57});  // 'W'
  EXPECT_EQ(f[3], std::byte{0x54});  // 'T'
  EXPECT_EQ(f[4], std::byte{kProtocolVersion});
  EXPECT_EQ(f[12], std::byte{0xef});  // group id, low byte first
  EXPECT_EQ(f[28], std::byte{0x02});  // total bytes bit 33
  // Version 6: total bytes in 48 bits, the relay rank at 30.
  EXPECT_EQ(f[29], std::byte{0x00});
  EXPECT_EQ(f[30], std::byte{0xff});  // 4095, low byte first
  EXPECT_EQ(f[31], std::byte{0x0f});
}

TEST(FrameHeader, TotalBytesKeepTheirFortyEightBits) {
  FrameHeader h = sample();
  h.op.total_bytes = kMaxHeaderTotalBytes;
  absl::StatusOr<FrameHeader> back = FrameHeader::decode(encoded(h));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->op.total_bytes, (uint64_t{1} << 48) - 1);
  EXPECT_EQ(back->relay_rank, 4095u);
}

TEST(FrameHeader, EveryCorruptByteIsRefused) {
  const std::vector<std::byte> good = encoded(sample());
  for (size_t i = 0; i < kHeaderBytes; ++i) {
    std::vector<std::byte> bad = good;
    bad[i] ^= std::byte{0x10};
    EXPECT_FALSE(FrameHeader::decode(bad).ok()) << "byte " << i;
  }
}

TEST(FrameHeader, LengthMustMatchThePayload) {
  std::vector<std::byte> f = encoded(sample());
  f.push_back(std::byte{0});
  EXPECT_THAT(std::string(FrameHeader::decode(f).status().message()),
              HasSubstr("announces 10 payload bytes"));
  EXPECT_THAT(
      std::string(
          FrameHeader::decode(std::span(f).first(20)).status().message()),
      HasSubstr("shorter than the 64-byte weft header"));
}

TEST(FrameHeader, DescribesTheOperation) {
  EXPECT_THAT(
      describe_op(sample().op),
      HasSubstr(
          "all_max #4294967294 (ring, float32, 8589934597 bytes, root 7"));
}

TEST(Address, RoundTripsAndRefusesDamage) {
  RankAddress a;
  a.rank = 3;
  a.size = 8;
  a.options_fingerprint = 0x0123456789abcdefull;
  for (uint32_t p = 0; p < 3; ++p) {
    LaneAddress l;
    l.peer = p;
    l.cable = p % 2;
    l.destination.qp_num = 100 + p;
    l.destination.gid[15] = static_cast<uint8_t>(p);
    a.lanes.push_back(l);
  }
  const std::vector<uint8_t> bytes = encode_address(a);
  absl::StatusOr<RankAddress> back = decode_address(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->rank, 3u);
  EXPECT_EQ(back->size, 8u);
  EXPECT_EQ(back->options_fingerprint, a.options_fingerprint);
  ASSERT_EQ(back->lanes.size(), 3u);
  EXPECT_EQ(back->lanes[2].peer, 2u);
  EXPECT_EQ(back->lanes[2].cable, 0u);
  EXPECT_EQ(back->lanes[2].destination, a.lanes[2].destination);

  std::vector<uint8_t> cut(bytes.begin(), bytes.end() - 1);
  EXPECT_FALSE(decode_address(cut).ok());
  std::vector<uint8_t> magic = bytes;
  magic[0] ^= 1;
  EXPECT_FALSE(decode_address(magic).ok());
  EXPECT_FALSE(decode_address({}).ok());
}

TEST(Address, FingerprintCoversWireOptionsOnly) {
  GroupOptions a, b;
  b.timeout_ns = a.timeout_ns * 2;
  EXPECT_EQ(options_fingerprint(a), options_fingerprint(b));
  b.depth = a.depth + 1;
  EXPECT_NE(options_fingerprint(a), options_fingerprint(b));
}

}  // namespace
}  // namespace weft::collectives::internal
