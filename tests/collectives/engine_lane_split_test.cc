// A Lane over an endpoint that takes two-part messages
// (Endpoint::max_parts() 2, as the simulator's, TCP's and verbs' with two
// scatter/gather entries): every data frame's 64-byte header lies among the
// lane's control frames, side by side with the other headers, and its
// payload at the start of its data frame, page-aligned. An acknowledgement
// landing in a receive slot then writes 64 bytes beside the other headers
// instead of the first page of a data frame, and a payload of one page
// writes one page, not two. Over a one-part endpoint (lane_fixture.h) the
// frames stay whole, as before.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/engine/frame_header.h"
#include "collectives/engine/lane.h"
#include "fabric/clock.h"
#include "fabric/testing/mock_fabric.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/collectives/lane_send.h"

namespace weft::collectives::internal {
namespace {

using lane_test::send_data;

using ::testing::_;
using ::testing::NiceMock;
using ::testing::Return;
using ::testing::ReturnRef;
using weft::testing::MockEndpoint;

constexpr uint32_t kDepth = 6;
constexpr uint32_t kFrameBytes = 8192;
constexpr uint64_t kPage = 4096;
constexpr TimeNs kRtoNs = 100 * kNsPerUs;

struct Posted {
  WorkId id;
  std::vector<Frame> parts;
  std::vector<uint32_t> lengths;  // sends only
};

// Records what is posted, in one or two parts.
class PartsEndpoint : public MockEndpoint {
 public:
  size_t max_parts() const override { return 2; }
  absl::Status post_recv_parts(WorkId id,
                               std::span<const Frame> parts) override {
    recvs.push_back({id, {parts.begin(), parts.end()}, {}});
    return absl::OkStatus();
  }
  absl::Status post_send_parts(WorkId id, std::span<const Frame> parts,
                               std::span<const uint32_t> lengths,
                               uint32_t) override {
    if (user_slab != nullptr && parts.size() == 2 &&
        parts[1].slab() == user_slab && !refuse_user.ok()) {
      ++user_refusals;
      return refuse_user;
    }
    sends.push_back(
        {id, {parts.begin(), parts.end()}, {lengths.begin(), lengths.end()}});
    return absl::OkStatus();
  }
  std::vector<Posted> recvs;
  std::vector<Posted> sends;
  std::vector<Completion> pending;
  // Two-part sends whose payload lies in user_slab fail with refuse_user.
  const Slab* user_slab = nullptr;
  absl::Status refuse_user;
  uint32_t user_refusals = 0;
};

class SplitLaneTest : public ::testing::Test {
 protected:
  LaneConfig config() const {
    LaneConfig c{kDepth, kFrameBytes};
    c.recovery.enabled = true;
    c.recovery.initial_rto_ns = kRtoNs;
    c.recovery.max_rto_ns = 4 * kRtoNs;
    c.recovery.max_retries = 3;
    return c;
  }
  uint64_t control_offset() const { return config().frames_bytes(true); }

  void SetUp() override {
    slab_ = *Slab::create(config().region_bytes());
    auto ep = std::make_unique<NiceMock<PartsEndpoint>>();
    ep_ = ep.get();
    ON_CALL(*ep_, info()).WillByDefault(ReturnRef(info_));
    ON_CALL(*ep_, connect(_)).WillByDefault(Return(absl::OkStatus()));
    ON_CALL(*ep_, post_send(_, _, _, _))
        .WillByDefault(
            [this](WorkId id, const Frame& f, uint32_t len, uint32_t) {
              ep_->sends.push_back({id, {f}, {len}});
              return absl::OkStatus();
            });
    ON_CALL(*ep_, poll(_)).WillByDefault([this](std::span<Completion> out) {
      const size_t n = std::min(out.size(), ep_->pending.size());
      std::copy_n(ep_->pending.begin(), n, out.begin());
      ep_->pending.erase(ep_->pending.begin(),
                         ep_->pending.begin() + static_cast<long>(n));
      return absl::StatusOr<size_t>(n);
    });
    // As a group lays a lane out: data frames first, control frames after.
    lane_ = std::make_unique<Lane>(
        std::move(ep), 1, 0, config(), *slab_, 0, control_offset(),
        control_offset() + config().control_bytes(true), clock_);
    ASSERT_TRUE(lane_->connect(Destination{}).ok());
  }

  bool in_control(const Frame& f) const {
    return f.offset() >= control_offset() &&
           f.offset() + f.bytes() <= config().region_bytes();
  }
  // Frame `h` (with `payload`) lands in the receive posted i-th.
  void arrive(size_t i, uint32_t imm, FrameHeader h,
              std::span<const std::byte> payload = {}) {
    const Posted& r = ep_->recvs.at(i);
    h.payload_bytes = static_cast<uint32_t>(payload.size());
    h.encode(r.parts[0].span().first<kHeaderBytes>());
    if (!payload.empty())
      std::memcpy(r.parts[1].data(), payload.data(), payload.size());
    Completion c;
    c.id = r.id;
    c.byte_len = kHeaderBytes + h.payload_bytes;
    c.has_immediate = true;
    c.immediate = imm;
    ep_->pending.push_back(c);
  }
  absl::Status poll() {
    bool advanced = false;
    std::array<Completion, Endpoint::kMaxPollBatch> batch;
    return lane_->poll(batch, &advanced);
  }
  FrameHeader sent_header(size_t i) const {
    const Posted& s = ep_->sends.at(i);
    uint64_t bytes = 0;
    for (const uint32_t l : s.lengths) bytes += l;
    return *FrameHeader::decode(s.parts[0].span().first(kHeaderBytes), bytes);
  }

  ManualClock clock_;
  EndpointInfo info_{0, 1, "dev0"};
  std::unique_ptr<Slab> slab_;
  NiceMock<PartsEndpoint>* ep_ = nullptr;
  std::unique_ptr<Lane> lane_;
};

TEST_F(SplitLaneTest, ReceivesArePostedAsAHeaderBesideTheOthersAndAPayload) {
  ASSERT_EQ(ep_->recvs.size(), kDepth);
  for (uint32_t slot = 0; slot < kDepth; ++slot) {
    const Posted& r = ep_->recvs[slot];
    EXPECT_EQ(r.id.slot, slot);
    ASSERT_EQ(r.parts.size(), 2u);
    // The headers side by side among the control frames...
    EXPECT_EQ(r.parts[0].bytes(), kHeaderBytes);
    EXPECT_TRUE(in_control(r.parts[0])) << slot;
    EXPECT_EQ(r.parts[0].offset(),
              ep_->recvs[0].parts[0].offset() + slot * kHeaderBytes);
    // ... the payload at its data frame's start, page-aligned: the whole
    // frame, max_frame_bytes of payload (the header is apart).
    EXPECT_EQ(r.parts[1].offset(), uint64_t{slot} * kFrameBytes);
    EXPECT_EQ(r.parts[1].offset() % kPage, 0u);
    EXPECT_EQ(r.parts[1].bytes(), kFrameBytes);
  }
}

TEST_F(SplitLaneTest, DataAndAcknowledgementsArriveInTheirParts) {
  std::vector<std::byte> page(kPage);
  for (size_t i = 0; i < page.size(); ++i) page[i] = std::byte(i * 7);
  FrameHeader d;
  d.seq = 0;
  arrive(0, 0, d, page);
  FrameHeader ack;
  ack.type = FrameType::kAck;
  arrive(1, 1, ack);
  ASSERT_TRUE(poll().ok());
  ASSERT_EQ(lane_->inbox_size(), 1u);
  const std::span<const std::byte> got = lane_->payload(lane_->inbox(0));
  ASSERT_EQ(got.size(), kPage);
  EXPECT_EQ(got.data(), ep_->recvs[0].parts[1].data());  // in place
  EXPECT_EQ(std::memcmp(got.data(), page.data(), kPage), 0);
  // The acknowledgement's receive is posted again at once, in two parts.
  ASSERT_EQ(ep_->recvs.size(), kDepth + 1);
  EXPECT_EQ(ep_->recvs.back().id.slot, 1u);
  EXPECT_EQ(ep_->recvs.back().parts, ep_->recvs[1].parts);
}

TEST_F(SplitLaneTest, DataIsSentAsItsHeaderAndItsPayloadAndResentSo) {
  std::vector<std::byte> page(kPage, std::byte{0x5a});
  ASSERT_TRUE(send_data(*lane_, page).ok());
  ASSERT_EQ(ep_->sends.size(), 1u);
  const Posted first = ep_->sends[0];
  ASSERT_EQ(first.parts.size(), 2u);
  EXPECT_TRUE(in_control(first.parts[0]));
  EXPECT_EQ(first.lengths, (std::vector<uint32_t>{kHeaderBytes, kPage}));
  EXPECT_EQ(first.parts[1].offset() % kPage, 0u);
  EXPECT_LT(first.parts[1].offset(), control_offset());
  EXPECT_EQ(first.parts[1].span()[kPage - 1], std::byte{0x5a});
  EXPECT_EQ(sent_header(0).payload_bytes, kPage);
  EXPECT_EQ(sent_header(0).type, FrameType::kData);
  // A frame without payload is its header alone, among the control frames.
  ASSERT_TRUE(send_data(*lane_, {}).ok());
  ASSERT_EQ(ep_->sends.size(), 2u);
  ASSERT_EQ(ep_->sends[1].parts.size(), 1u);
  EXPECT_TRUE(in_control(ep_->sends[1].parts[0]));
  EXPECT_EQ(ep_->sends[1].lengths[0], kHeaderBytes);
  // Both leave; nothing is acknowledged: the timeout resends the oldest
  // from the same two parts.
  for (const Posted& s : ep_->sends) {
    Completion c;
    c.id = s.id;
    ep_->pending.push_back(c);
  }
  ASSERT_TRUE(poll().ok());
  clock_.advance_to(4 * kRtoNs);
  bool advanced = false;
  ASSERT_TRUE(
      lane_->service(Lane::Watch{false, kRtoNs}, kNoPeer, &advanced).ok());
  ASSERT_EQ(ep_->sends.size(), 3u);
  EXPECT_EQ(ep_->sends[2].parts, first.parts);
  EXPECT_EQ(ep_->sends[2].lengths, first.lengths);
  EXPECT_EQ(sent_header(2).seq, 0u);
}

// A send from registered user memory that the fabric cannot take is
// staged through the lane's own frame instead of failing the group: no
// memory region left (ResourceExhausted) stages that frame; no two-part
// sends at all (Unimplemented) stages every later one without asking
// again. Any other error is the queue pair's and is returned.
TEST_F(SplitLaneTest, SendsFromUserMemoryTheFabricCannotTakeAreStaged) {
  std::vector<std::byte> user(kPage, std::byte{0x6b});
  const std::unique_ptr<Slab> slab = Slab::borrow(user.data(), user.size());
  const Frame frame = *slab->frame(0, kPage);
  ep_->user_slab = slab.get();

  ep_->refuse_user = absl::FailedPreconditionError("queue pair in error");
  EXPECT_EQ(send_data(*lane_, frame.span(), slab.get()).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(ep_->sends.empty());

  ep_->refuse_user = absl::ResourceExhaustedError("no memory region left");
  ASSERT_TRUE(send_data(*lane_, frame.span(), slab.get()).ok());
  ASSERT_EQ(ep_->sends.size(), 1u);
  ASSERT_EQ(ep_->sends[0].parts.size(), 2u);
  EXPECT_NE(ep_->sends[0].parts[1].slab(), slab.get());
  EXPECT_EQ(ep_->sends[0].parts[1].span()[kPage - 1], std::byte{0x6b});
  EXPECT_EQ(ep_->sends[0].lengths[1], kPage);
  EXPECT_EQ(lane_->stats().bytes_staged, kPage);
  EXPECT_EQ(lane_->stats().bytes_zero_copy, 0u);

  // Taken again: straight from user memory.
  ep_->refuse_user = absl::OkStatus();
  ASSERT_TRUE(send_data(*lane_, frame.span(), slab.get()).ok());
  ASSERT_EQ(ep_->sends.size(), 2u);
  EXPECT_EQ(ep_->sends[1].parts[1].slab(), slab.get());
  EXPECT_EQ(lane_->stats().bytes_zero_copy, kPage);

  ep_->refuse_user = absl::UnimplementedError("one part only");
  ASSERT_TRUE(send_data(*lane_, frame.span(), slab.get()).ok());
  ASSERT_TRUE(send_data(*lane_, frame.span(), slab.get()).ok());
  ASSERT_EQ(ep_->sends.size(), 4u);
  EXPECT_NE(ep_->sends[2].parts[1].slab(), slab.get());
  EXPECT_NE(ep_->sends[3].parts[1].slab(), slab.get());
  EXPECT_EQ(ep_->user_refusals, 3u);  // the last was not asked
  EXPECT_EQ(lane_->stats().bytes_staged, 3 * kPage);
  // Every frame numbered in order, none lost to a refusal.
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(sent_header(i).seq, i);
}

}  // namespace
}  // namespace weft::collectives::internal
