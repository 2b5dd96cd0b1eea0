// Lane against a gMock endpoint: every completion is checked (status,
// sequence, header) before its bytes are used; credits gate data sends;
// reports go out at the threshold and when an acknowledgement is asked for;
// aborts and flow-control violations become typed errors.
#include <array>
#include <cstring>
#include <memory>
#include <vector>

#include "collectives/internal/lane.h"
#include "fabric/errors.h"
#include "fabric/testing/mock_fabric.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace weft::internal {
namespace {

using ::testing::_;
using ::testing::HasSubstr;
using ::testing::NiceMock;
using ::testing::Return;
using ::testing::ReturnRef;
using weft::testing::MockEndpoint;

constexpr uint32_t kDepth = 4;

class LaneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    slab_ = *Slab::create(LaneConfig{kDepth, 4096}.region_bytes());
    auto ep = std::make_unique<NiceMock<MockEndpoint>>();
    ep_ = ep.get();
    ON_CALL(*ep_, info()).WillByDefault(ReturnRef(info_));
    ON_CALL(*ep_, connect(_)).WillByDefault(Return(absl::OkStatus()));
    ON_CALL(*ep_, post_recv(_, _))
        .WillByDefault([this](WorkId id, const Frame& f) {
          recv_frames_[id.slot] = f;
          ++recvs_posted_;
          return absl::OkStatus();
        });
    ON_CALL(*ep_, post_send(_, _, _, _))
        .WillByDefault(
            [this](WorkId id, const Frame& f, uint32_t len, uint32_t imm) {
              sent_.push_back({id, f, len, imm});
              return absl::OkStatus();
            });
    ON_CALL(*ep_, poll(_)).WillByDefault([this](std::span<Completion> out) {
      const size_t n = std::min(out.size(), pending_.size());
      std::copy_n(pending_.begin(), n, out.begin());
      pending_.erase(pending_.begin(), pending_.begin() + static_cast<long>(n));
      return absl::StatusOr<size_t>(n);
    });
    lane_ = std::make_unique<Lane>(std::move(ep), 1, 0,
                                   LaneConfig{kDepth, 4096}, *slab_, 0);
    ASSERT_TRUE(lane_->connect(Destination{}).ok());
    ASSERT_EQ(recvs_posted_, kDepth);
  }

  // A frame from the peer lands in receive slot `slot` with sequence `seq`.
  void arrive(uint32_t slot, uint32_t seq, FrameHeader h,
              std::vector<std::byte> payload = {}) {
    h.payload_bytes = static_cast<uint32_t>(payload.size());
    const Frame& f = recv_frames_[slot];
    h.encode(f.span().first<kHeaderBytes>());
    if (!payload.empty())
      std::memcpy(f.data() + kHeaderBytes, payload.data(), payload.size());
    Completion c;
    c.id = WorkId{WorkKind::kRecv, 1, slot};
    c.byte_len = kHeaderBytes + h.payload_bytes;
    c.has_immediate = true;
    c.immediate = seq;
    pending_.push_back(c);
  }
  absl::Status poll() {
    bool advanced = false;
    std::array<Completion, Endpoint::kMaxPollBatch> batch;
    return lane_->poll(batch, &advanced);
  }
  FrameHeader sent_header(size_t i) const {
    return *FrameHeader::decode(sent_[i].frame.span().first(sent_[i].length));
  }

  struct Sent {
    WorkId id;
    Frame frame;
    uint32_t length;
    uint32_t immediate;
  };
  EndpointInfo info_{0, 1, "dev0"};
  std::unique_ptr<Slab> slab_;
  NiceMock<MockEndpoint>* ep_ = nullptr;
  std::unique_ptr<Lane> lane_;
  std::array<Frame, kDepth> recv_frames_;
  uint32_t recvs_posted_ = 0;
  std::vector<Sent> sent_;
  std::vector<Completion> pending_;
};

TEST_F(LaneTest, DataFrameIsCheckedThenQueuedThenReposted) {
  arrive(0, 0, FrameHeader{}, {std::byte{1}, std::byte{2}, std::byte{3}});
  ASSERT_TRUE(poll().ok());
  ASSERT_EQ(lane_->inbox_size(), 1u);
  const auto payload = lane_->payload(lane_->inbox(0));
  ASSERT_EQ(payload.size(), 3u);
  EXPECT_EQ(payload[2], std::byte{3});
  EXPECT_EQ(recvs_posted_, kDepth);
  ASSERT_TRUE(lane_->consume_front().ok());
  EXPECT_EQ(recvs_posted_, kDepth + 1);
  EXPECT_EQ(lane_->inbox_size(), 0u);
}

TEST_F(LaneTest, SequenceGapIsATypedErrorAndNothingIsQueued) {
  arrive(0, 1, FrameHeader{});  // 0 was lost
  const absl::Status s = poll();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("expected frame 0, received 1"));
  const auto place = error_place(s);
  ASSERT_TRUE(place.has_value());
  EXPECT_EQ(place->cause, ErrorCause::kSequence);
  EXPECT_EQ(place->peer, 1u);
  EXPECT_EQ(place->device, "dev0");
  EXPECT_EQ(lane_->inbox_size(), 0u);
}

TEST_F(LaneTest, DuplicateIsATypedError) {
  arrive(0, 0, FrameHeader{});
  arrive(1, 0, FrameHeader{});
  const absl::Status s = poll();
  EXPECT_EQ(error_place(s)->cause, ErrorCause::kSequence);
  EXPECT_EQ(lane_->inbox_size(), 1u);  // the first one only
}

TEST_F(LaneTest, ErrorCompletionIsATypedError) {
  Completion c;
  c.id = WorkId{WorkKind::kRecv, 1, 0};
  c.status = WcStatus::kLocLenErr;
  c.status_name = wc_status_name(WcStatus::kLocLenErr);
  pending_.push_back(c);
  const absl::Status s = poll();
  EXPECT_EQ(error_place(s)->cause, ErrorCause::kCompletionError);
  EXPECT_THAT(std::string(s.message()), HasSubstr("local length error"));
}

TEST_F(LaneTest, FrameWithoutImmediateOrHeaderIsRefused) {
  arrive(0, 0, FrameHeader{});
  pending_.back().has_immediate = false;
  EXPECT_THAT(std::string(poll().message()),
              HasSubstr("without a sequence number"));
}

TEST_F(LaneTest, GarbageHeaderIsRefused) {
  Completion c;
  c.id = WorkId{WorkKind::kRecv, 1, 0};
  c.byte_len = 100;
  c.has_immediate = true;
  std::memset(recv_frames_[0].data(), 0x77, 100);
  pending_.push_back(c);
  EXPECT_THAT(std::string(poll().message()), HasSubstr("not a weft header"));
}

TEST_F(LaneTest, CreditsGateDataSendsAndReportsReturnThem) {
  const std::byte data[8] = {};
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(lane_->can_send_data());
    ASSERT_TRUE(lane_->send_data(FrameHeader{}, data, 8).ok());
  }
  EXPECT_FALSE(lane_->can_send_data());  // one credit left, kept for reports
  EXPECT_EQ(sent_.size(), 3u);
  EXPECT_EQ(sent_[2].immediate, 2u);  // sequence numbers as immediates
  FrameHeader report;
  report.type = FrameType::kCredit;
  report.reposts = 3;
  report.data_consumed = 3;
  arrive(0, 0, report);
  ASSERT_TRUE(poll().ok());
  EXPECT_TRUE(lane_->all_data_acked());
  EXPECT_EQ(recvs_posted_, kDepth + 1);  // credit frames are re-posted at once
  // Send completions free the slots.
  for (int i = 0; i < 3; ++i) {
    Completion c;
    c.id = sent_[static_cast<size_t>(i)].id;
    pending_.push_back(c);
  }
  ASSERT_TRUE(poll().ok());
  EXPECT_EQ(lane_->data_sends_in_flight(), 0u);
  EXPECT_TRUE(lane_->can_send_data());
}

TEST_F(LaneTest, ReportsAtTheThresholdOnly) {
  bool advanced = false;
  arrive(0, 0, FrameHeader{});
  ASSERT_TRUE(poll().ok());
  ASSERT_TRUE(lane_->consume_front().ok());
  ASSERT_TRUE(lane_->maybe_report(false, &advanced).ok());
  EXPECT_TRUE(sent_.empty());  // 1 unreported < depth / 2
  arrive(1, 1, FrameHeader{});
  ASSERT_TRUE(poll().ok());
  ASSERT_TRUE(lane_->consume_front().ok());
  ASSERT_TRUE(lane_->maybe_report(false, &advanced).ok());
  ASSERT_EQ(sent_.size(), 1u);
  const FrameHeader h = sent_header(0);
  EXPECT_EQ(h.type, FrameType::kCredit);
  EXPECT_EQ(h.reposts, 2u);
  EXPECT_EQ(h.data_consumed, 2u);
}

TEST_F(LaneTest, AcknowledgesAFlaggedFrameOnceConsumed) {
  bool advanced = false;
  FrameHeader last;
  last.flags = kFlagReportNow;
  arrive(0, 0, last);
  ASSERT_TRUE(poll().ok());
  ASSERT_TRUE(lane_->maybe_report(false, &advanced).ok());
  EXPECT_TRUE(sent_.empty());  // not consumed yet: nothing to acknowledge
  ASSERT_TRUE(lane_->consume_front().ok());
  EXPECT_TRUE(lane_->report_owed());
  ASSERT_TRUE(lane_->maybe_report(false, &advanced).ok());
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_header(0).data_consumed, 1u);
  EXPECT_FALSE(lane_->report_owed());
}

TEST_F(LaneTest, PeerClaimingMoreThanWasSentIsAViolation) {
  FrameHeader h;
  h.reposts = 1;  // nothing was sent
  arrive(0, 0, h);
  EXPECT_THAT(std::string(poll().message()),
              HasSubstr("flow-control violation"));
}

TEST_F(LaneTest, AbortCarriesCauseAndOrigin) {
  FrameHeader h;
  h.type = FrameType::kAbort;
  h.cause = static_cast<uint8_t>(ErrorCause::kMismatch);
  h.origin = 5;
  const std::string text = "rank 5: mismatched collectives";
  std::vector<std::byte> payload(text.size());
  std::memcpy(payload.data(), text.data(), text.size());
  arrive(0, 0, h, payload);
  const absl::Status s = poll();
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(error_place(s)->cause, ErrorCause::kMismatch);
  EXPECT_THAT(std::string(s.message()), HasSubstr("began on rank 5"));
  EXPECT_THAT(std::string(s.message()), HasSubstr(text));
  EXPECT_EQ(lane_->abort_origin(), 5u);
}

TEST_F(LaneTest, SendsAnAbortEvenWithoutCredits) {
  const std::byte data[8] = {};
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(lane_->send_data(FrameHeader{}, data, 8).ok());
  lane_->send_abort(ErrorCause::kDeadline, 0, "rank 0: deadline");
  ASSERT_EQ(sent_.size(), 4u);
  const FrameHeader h = sent_header(3);
  EXPECT_EQ(h.type, FrameType::kAbort);
  EXPECT_EQ(h.cause, static_cast<uint8_t>(ErrorCause::kDeadline));
  EXPECT_EQ(h.payload_bytes, 16u);
}

}  // namespace
}  // namespace weft::internal
