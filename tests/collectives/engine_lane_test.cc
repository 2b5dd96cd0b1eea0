// Lane against a gMock endpoint and a manual clock: every completion is
// checked (status, sequence, header) before its bytes are used; data is
// placed by sequence number, duplicates are discarded and acknowledged; the
// window gates data sends; acknowledgements go out at the threshold and
// when asked for; unacknowledged frames are resent with back-off until the
// retries run out; a silent peer is probed; aborts and counter violations
// become typed errors.
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <vector>

#include "collectives/internal/engine.h"
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

constexpr uint32_t kDepth = 6;  // a window of 4 data frames
constexpr TimeNs kRtoNs = 100 * kNsPerUs;

// A manual clock that can also move by `tick_ns` at every reading, as a
// wall clock does.
class StepClock final : public Clock {
 public:
  TimeNs now_ns() const override {
    const TimeNs now = now_ns_;
    now_ns_ += tick_ns;
    return now;
  }
  void advance_to(TimeNs t_ns) { now_ns_ = std::max(now_ns_, t_ns); }
  TimeNs tick_ns = 0;

 private:
  mutable TimeNs now_ns_ = 0;
};

class LaneTest : public ::testing::Test {
 protected:
  LaneConfig config() const {
    LaneConfig c{kDepth, frame_bytes_};
    c.send_queue_bytes = send_queue_bytes_;
    c.recovery.enabled = recovery_;
    c.recovery.initial_rto_ns = kRtoNs;
    c.recovery.max_rto_ns = 4 * kRtoNs;
    c.recovery.max_retries = 3;
    return c;
  }
  void SetUp() override {
    slab_ = *Slab::create(config().region_bytes());
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
              if (auto_complete_) {
                Completion c;
                c.id = id;
                pending_.push_back(c);
                completed_ = sent_.size();
              }
              return absl::OkStatus();
            });
    ON_CALL(*ep_, poll(_)).WillByDefault([this](std::span<Completion> out) {
      const size_t n = std::min(out.size(), pending_.size());
      std::copy_n(pending_.begin(), n, out.begin());
      pending_.erase(pending_.begin(), pending_.begin() + static_cast<long>(n));
      return absl::StatusOr<size_t>(n);
    });
    lane_ = std::make_unique<Lane>(std::move(ep), 1, 0, config(), *slab_, 0,
                                   clock_);
    ASSERT_TRUE(lane_->connect(Destination{}).ok());
    ASSERT_EQ(recvs_posted_, kDepth);
  }

  // A frame from the peer lands in receive slot `slot` with immediate
  // `imm`; data frames carry data sequence number h.seq.
  void arrive(uint32_t slot, uint32_t imm, FrameHeader h,
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
    c.immediate = imm;
    pending_.push_back(c);
  }
  FrameHeader data(uint32_t seq, uint8_t flags = 0) const {
    FrameHeader h;
    h.seq = seq;
    h.flags = flags;
    return h;
  }
  FrameHeader ack(uint32_t received, uint32_t consumed) const {
    FrameHeader h;
    h.type = FrameType::kAck;
    h.received = received;
    h.consumed = consumed;
    return h;
  }
  absl::Status service(bool waiting = false) {
    bool advanced = false;
    return lane_->service(Lane::Watch{waiting, kRtoNs}, kNoPeer, &advanced);
  }
  // Send completions for every send posted so far.
  void complete_sends() {
    for (size_t i = completed_; i < sent_.size(); ++i) {
      Completion c;
      c.id = sent_[i].id;
      pending_.push_back(c);
    }
    completed_ = sent_.size();
  }
  absl::Status send(uint8_t fill) {
    const std::byte bytes[8] = {std::byte{fill}};
    return lane_->send_data(FrameHeader{}, bytes, 8);
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
  bool recovery_ = true;
  bool auto_complete_ = false;  // every send completes at once
  uint32_t frame_bytes_ = 4096;
  uint64_t send_queue_bytes_ = uint64_t{1} << 20;
  StepClock clock_;
  size_t completed_ = 0;
  EndpointInfo info_{0, 1, "dev0"};
  std::unique_ptr<Slab> slab_;
  NiceMock<MockEndpoint>* ep_ = nullptr;
  std::unique_ptr<Lane> lane_;
  std::array<Frame, kDepth> recv_frames_;
  uint32_t recvs_posted_ = 0;
  std::vector<Sent> sent_;
  std::vector<Completion> pending_;
};

// An engine owning the fixture's lane, destroyed with one data frame sent
// and not acknowledged: it lingers.
class LingerTest : public LaneTest {
 protected:
  // Sends one frame that leaves at once, then destroys an engine that owns
  // the lane; returns the sends posted during the destruction.
  size_t destroy_with_one_unacknowledged(TimeNs tick_ns) {
    EXPECT_TRUE(send(7).ok());
    complete_sends();
    std::vector<std::unique_ptr<Lane>> lanes;
    lanes.push_back(std::move(lane_));
    auto engine = std::make_unique<Engine>(clock_, 0, std::move(lanes));
    const size_t before = sent_.size();
    clock_.tick_ns = tick_ns;
    auto_complete_ = true;
    engine.reset();
    auto_complete_ = false;
    clock_.tick_ns = 0;
    return sent_.size() - before;
  }
};

TEST_F(LingerTest, ALostFrameIsResentWhileTheEngineIsDestroyed) {
  const size_t sent = destroy_with_one_unacknowledged(10 * kNsPerUs);
  // Resent at each timeout (100, 200, 400 us) until the retries ran out
  // (the peer never answers), then the abort: all well inside the linger.
  const uint32_t retries = config().recovery.max_retries;
  ASSERT_EQ(sent, retries + 1u);
  for (size_t i = 1; i <= retries; ++i) {
    EXPECT_EQ(sent_header(i).type, FrameType::kData);
    EXPECT_EQ(sent_header(i).seq, 0u);
  }
  EXPECT_EQ(sent_header(retries + 1).type, FrameType::kAbort);
  EXPECT_LT(clock_.now_ns(), Engine::kLingerNs);
}

TEST_F(LingerTest, AnAcknowledgementEndsTheLingerAtOnce) {
  arrive(0, 0, ack(1, 1));  // waiting in the completion queue
  EXPECT_EQ(destroy_with_one_unacknowledged(10 * kNsPerUs), 0u);
  EXPECT_LT(clock_.now_ns(), kRtoNs);
}

TEST_F(LingerTest, AClockThatStandsStillEndsTheLinger) {
  // The simulator's clock moves only while its world runs.
  EXPECT_EQ(destroy_with_one_unacknowledged(0), 0u);
  EXPECT_EQ(clock_.now_ns(), 0);
}

// The fixture without recovery: strict sequence checking.
class StrictLaneTest : public LaneTest {
 protected:
  void SetUp() override {
    recovery_ = false;
    LaneTest::SetUp();
  }
};

TEST_F(LaneTest, DataFrameIsCheckedThenQueuedThenReposted) {
  arrive(0, 0, data(0), {std::byte{1}, std::byte{2}, std::byte{3}});
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

TEST_F(LaneTest, ReorderedFramesArePlacedBySequenceNumber) {
  arrive(0, 0, data(2), {std::byte{22}});
  arrive(1, 1, data(0), {std::byte{20}});
  ASSERT_TRUE(poll().ok());
  EXPECT_EQ(lane_->inbox_size(), 1u);  // 1 is missing: 2 waits behind it
  arrive(2, 2, data(1), {std::byte{21}});
  ASSERT_TRUE(poll().ok());
  ASSERT_EQ(lane_->inbox_size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(lane_->inbox(i).header.seq, i);
    EXPECT_EQ(lane_->payload(lane_->inbox(i))[0],
              std::byte{static_cast<uint8_t>(20 + i)});
  }
  EXPECT_EQ(lane_->stats().placed_early, 1u);
}

TEST_F(LaneTest, DuplicatesAreDiscardedAndAcknowledged) {
  arrive(0, 0, data(0), {std::byte{1}});
  arrive(1, 1, data(0), {std::byte{9}});  // a copy: resent or duplicated
  ASSERT_TRUE(poll().ok());
  ASSERT_EQ(lane_->inbox_size(), 1u);
  EXPECT_EQ(lane_->payload(lane_->inbox(0))[0], std::byte{1});
  EXPECT_EQ(recvs_posted_, kDepth + 1);  // the copy's receive is back
  EXPECT_EQ(lane_->stats().duplicates, 1u);
  // The sender missed our acknowledgement: one goes out at once.
  EXPECT_TRUE(lane_->report_owed());
  ASSERT_TRUE(service().ok());
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_header(0).type, FrameType::kAck);
  EXPECT_EQ(sent_header(0).received, 1u);
  // A copy of a frame already consumed is discarded too.
  ASSERT_TRUE(lane_->consume_front().ok());
  arrive(2, 2, data(0), {std::byte{9}});
  ASSERT_TRUE(poll().ok());
  EXPECT_EQ(lane_->inbox_size(), 0u);
  EXPECT_EQ(lane_->stats().duplicates, 2u);
}

TEST_F(LaneTest, DataBeyondTheWindowIsAViolation) {
  arrive(0, 0, data(kDepth - kControlReserve));  // the window is 0..3
  const absl::Status s = poll();
  EXPECT_EQ(error_place(s)->cause, ErrorCause::kSequence);
  EXPECT_THAT(std::string(s.message()), HasSubstr("beyond the window"));
}

TEST_F(LaneTest, TheWindowGatesDataSendsAndReportsReopenIt) {
  for (uint8_t i = 0; i < kDepth - kControlReserve; ++i) {
    ASSERT_TRUE(lane_->can_send_data());
    ASSERT_TRUE(send(i).ok());
    EXPECT_EQ(sent_header(i).seq, i);
    EXPECT_EQ(sent_[i].immediate, i);  // pair sequence as the immediate
  }
  EXPECT_FALSE(lane_->can_send_data());  // the peer holds a full window
  complete_sends();
  arrive(0, 0, ack(4, 0));  // all arrived, none consumed yet
  ASSERT_TRUE(poll().ok());
  EXPECT_TRUE(lane_->all_data_received());
  EXPECT_FALSE(lane_->all_data_consumed());
  EXPECT_FALSE(lane_->can_send_data());
  EXPECT_EQ(recvs_posted_, kDepth + 1);  // acknowledgements re-post at once
  arrive(1, 1, ack(4, 2));
  ASSERT_TRUE(poll().ok());
  EXPECT_TRUE(lane_->can_send_data());
}

TEST_F(LaneTest, AcknowledgesReceiptAtTheThresholdOrWhenAsked) {
  arrive(0, 0, data(0));
  ASSERT_TRUE(poll().ok());
  ASSERT_TRUE(service().ok());
  EXPECT_TRUE(sent_.empty());  // 1 unreported < window / 2
  arrive(1, 1, data(1));
  ASSERT_TRUE(poll().ok());
  ASSERT_TRUE(service().ok());
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_header(0).received, 2u);
  EXPECT_EQ(sent_header(0).consumed, 0u);
  complete_sends();
  arrive(2, 2, data(2, kFlagAckNow));  // the sender's last frame
  ASSERT_TRUE(poll().ok());
  EXPECT_TRUE(lane_->report_owed());
  ASSERT_TRUE(service().ok());
  ASSERT_EQ(sent_.size(), 2u);
  EXPECT_EQ(sent_header(1).received, 3u);
}

TEST_F(LaneTest, ReportsConsumptionOfAFlaggedFrame) {
  arrive(0, 0, data(0, kFlagReportNow));
  ASSERT_TRUE(poll().ok());
  EXPECT_FALSE(lane_->report_owed());  // not consumed yet
  ASSERT_TRUE(lane_->consume_front().ok());
  EXPECT_TRUE(lane_->report_owed());
  ASSERT_TRUE(service().ok());
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_header(0).consumed, 1u);
  EXPECT_FALSE(lane_->report_owed());
}

TEST_F(LaneTest, ResendsTheOldestUnacknowledgedFrameWithBackOff) {
  ASSERT_TRUE(send(7).ok());
  ASSERT_TRUE(send(8).ok());
  // No timeout while the frames wait in the local send queue.
  EXPECT_EQ(lane_->next_timer_ns(Lane::Watch{}), kNeverNs);
  complete_sends();  // they left at time 0
  ASSERT_TRUE(poll().ok());
  ASSERT_TRUE(service().ok());
  EXPECT_EQ(sent_.size(), 2u);
  EXPECT_EQ(lane_->next_timer_ns(Lane::Watch{}), kRtoNs);
  clock_.advance_to(kRtoNs);
  ASSERT_TRUE(service().ok());
  ASSERT_EQ(sent_.size(), 3u);
  // The same frame, data sequence number and payload, a new immediate.
  EXPECT_EQ(sent_header(2).seq, 0u);
  EXPECT_EQ(sent_[2].frame.data()[kHeaderBytes], std::byte{7});
  EXPECT_EQ(sent_[2].immediate, 2u);
  EXPECT_EQ(lane_->stats().retransmitted, 1u);
  EXPECT_EQ(lane_->next_timer_ns(Lane::Watch{}), kNeverNs);
  complete_sends();
  ASSERT_TRUE(poll().ok());
  // The timeout doubled, from when the copy left.
  EXPECT_EQ(lane_->next_timer_ns(Lane::Watch{}), kRtoNs + 2 * kRtoNs);
  // The first is acknowledged: the second (left at 0) is due at once.
  arrive(0, 0, ack(1, 0));
  ASSERT_TRUE(poll().ok());
  EXPECT_EQ(lane_->next_timer_ns(Lane::Watch{}), 2 * kRtoNs);
  clock_.advance_to(2 * kRtoNs);
  ASSERT_TRUE(service().ok());
  ASSERT_EQ(sent_.size(), 4u);
  EXPECT_EQ(sent_header(3).seq, 1u);
  arrive(1, 1, ack(2, 2));
  complete_sends();
  ASSERT_TRUE(poll().ok());
  EXPECT_TRUE(lane_->all_data_received());
  EXPECT_EQ(lane_->next_timer_ns(Lane::Watch{}), kNeverNs);
}

TEST_F(LaneTest,
       TheTimeoutAllowsForAcknowledgementsQueuedBehindBurstsOfFrames) {
  // One round trip of 10 us on a lone frame: srtt 10 us, rttvar 5 us, so
  // the timeout is 30 us (above min_rto_ns, 20 us).
  ASSERT_TRUE(send(0).ok());
  complete_sends();
  ASSERT_TRUE(poll().ok());
  clock_.advance_to(10 * kNsPerUs);
  arrive(0, 0, ack(1, 1));
  ASSERT_TRUE(poll().ok());
  // A burst of three frames, each 100 us on the wire: the peer's answer
  // may queue behind a burst of its own, three frames long.
  clock_.advance_to(1000 * kNsPerUs);
  for (uint8_t i = 1; i <= 3; ++i) ASSERT_TRUE(send(i).ok());
  clock_.advance_to(1100 * kNsPerUs);
  Completion first;
  first.id = sent_[1].id;
  pending_.push_back(first);
  ASSERT_TRUE(poll().ok());
  const size_t posted = sent_.size();
  // Not at 30 us after it left, but at srtt + 3 x 100 us.
  clock_.advance_to((1100 + 30) * kNsPerUs);
  ASSERT_TRUE(service().ok());
  clock_.advance_to((1100 + 309) * kNsPerUs);
  ASSERT_TRUE(service().ok());
  EXPECT_EQ(sent_.size(), posted);
  clock_.advance_to((1100 + 310) * kNsPerUs);
  ASSERT_TRUE(service().ok());
  ASSERT_EQ(sent_.size(), posted + 1);
  EXPECT_EQ(sent_header(posted).seq, 1u);
}

TEST_F(LaneTest, AcknowledgesArrivalsWithinAQuarterOfTheMinimumTimeout) {
  arrive(0, 0, data(0));  // below the threshold, no flag
  ASSERT_TRUE(poll().ok());
  ASSERT_TRUE(service().ok());
  EXPECT_TRUE(sent_.empty());
  const TimeNs due = lane_->next_timer_ns(Lane::Watch{});
  EXPECT_EQ(due, config().recovery.min_rto_ns / 4);
  clock_.advance_to(due);
  ASSERT_TRUE(service().ok());
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_header(0).type, FrameType::kAck);
  EXPECT_EQ(sent_header(0).received, 1u);
}

TEST_F(LaneTest, AGapIsReportedAtOnceWithTheFramesHeldBeyondIt) {
  arrive(0, 0, data(1));
  arrive(1, 1, data(3));
  ASSERT_TRUE(poll().ok());
  EXPECT_EQ(lane_->inbox_size(), 0u);
  EXPECT_TRUE(lane_->report_owed());
  ASSERT_TRUE(service().ok());
  ASSERT_EQ(sent_.size(), 1u);
  const FrameHeader h = sent_header(0);
  EXPECT_EQ(h.received, 0u);
  EXPECT_EQ(h.sack, 0b101u);  // numbers 1 and 3 held, 0 and 2 missing
}

TEST_F(LaneTest, ResendsWhatThePeerMissesBeforeTheTimeout) {
  for (uint8_t i = 0; i < 4; ++i) ASSERT_TRUE(send(i).ok());
  complete_sends();
  ASSERT_TRUE(poll().ok());
  FrameHeader gap = ack(0, 0);
  gap.sack = 0b101;  // 1 and 3 arrived: 0 and 2 are missing
  arrive(0, 0, gap);
  ASSERT_TRUE(poll().ok());
  ASSERT_EQ(sent_.size(), 6u);  // at once, without waiting for the timeout
  EXPECT_EQ(clock_.now_ns(), 0);
  EXPECT_EQ(sent_header(4).seq, 0u);
  EXPECT_EQ(sent_header(5).seq, 2u);
  EXPECT_EQ(sent_[4].frame.data()[kHeaderBytes], std::byte{0});
  complete_sends();
  // The same report again resends nothing: those are on their way.
  arrive(1, 1, gap);
  ASSERT_TRUE(poll().ok());
  EXPECT_EQ(sent_.size(), 6u);
  EXPECT_EQ(lane_->stats().retransmitted, 2u);
}

TEST_F(LaneTest, ExhaustedRetriesMakeThePeerUnavailable) {
  ASSERT_TRUE(send(1).ok());
  TimeNs at = 0;
  for (int retry = 0; retry < 3; ++retry) {
    complete_sends();
    ASSERT_TRUE(poll().ok());
    at = lane_->next_timer_ns(Lane::Watch{});
    clock_.advance_to(at);
    ASSERT_TRUE(service().ok()) << "retry " << retry;
  }
  complete_sends();
  ASSERT_TRUE(poll().ok());
  clock_.advance_to(lane_->next_timer_ns(Lane::Watch{}));
  const absl::Status s = service();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(error_place(s)->cause, ErrorCause::kPeerUnavailable);
  EXPECT_EQ(error_place(s)->peer, 1u);
  EXPECT_THAT(std::string(s.message()), HasSubstr("after 3 retransmissions"));
}

TEST_F(LaneTest, ProbesASilentPeerAndAnswersProbes) {
  ASSERT_TRUE(service(/*waiting=*/true).ok());
  EXPECT_TRUE(sent_.empty());  // heard from at connect: not silent yet
  clock_.advance_to(kRtoNs);
  ASSERT_TRUE(service(true).ok());
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_header(0).flags, kFlagProbe);
  EXPECT_FALSE(lane_->silent(kRtoNs));
  complete_sends();
  ASSERT_TRUE(poll().ok());
  // Unanswered probes space out.
  EXPECT_EQ(lane_->next_timer_ns(Lane::Watch{true, kRtoNs}), 3 * kRtoNs);
  clock_.advance_to(2 * kRtoNs);
  EXPECT_TRUE(lane_->silent(kRtoNs));
  // The peer's probe carries its suspect; this side answers at once.
  FrameHeader probe = ack(0, 0);
  probe.flags = kFlagProbe;
  probe.suspect = 4;
  arrive(0, 0, probe);
  ASSERT_TRUE(poll().ok());
  EXPECT_EQ(lane_->peer_suspect(), 4u);
  EXPECT_FALSE(lane_->silent(kRtoNs));
  ASSERT_TRUE(service().ok());
  ASSERT_EQ(sent_.size(), 2u);
  EXPECT_EQ(sent_header(1).type, FrameType::kAck);
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
  arrive(0, 0, data(0));
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

TEST_F(LaneTest, PeerClaimingMoreThanWasSentIsAViolation) {
  arrive(0, 0, ack(1, 0));  // nothing was sent
  EXPECT_THAT(std::string(poll().message()), HasSubstr("protocol violation"));
}

TEST_F(LaneTest, AbortCarriesCauseOriginAndTheBlamedPeer) {
  FrameHeader h;
  h.type = FrameType::kAbort;
  h.cause = static_cast<uint8_t>(ErrorCause::kDeadline);
  h.origin = 5;
  h.blamed = 3;
  const std::string text = "rank 5: peer 3 has been silent";
  std::vector<std::byte> payload(text.size());
  std::memcpy(payload.data(), text.data(), text.size());
  arrive(0, 0, h, payload);
  const absl::Status s = poll();
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(error_place(s)->cause, ErrorCause::kDeadline);
  EXPECT_EQ(error_place(s)->peer, 3u);  // the silent rank, not the messenger
  EXPECT_THAT(std::string(s.message()), HasSubstr("began on rank 5"));
  EXPECT_THAT(std::string(s.message()), HasSubstr(text));
  EXPECT_EQ(lane_->abort_origin(), 5u);
}

TEST_F(LaneTest, SendsAnAbortEvenWithAFullWindow) {
  for (uint8_t i = 0; i < kDepth - kControlReserve; ++i)
    ASSERT_TRUE(send(i).ok());
  lane_->send_abort(ErrorCause::kDeadline, 0, 2, "rank 0: deadline");
  ASSERT_EQ(sent_.size(), kDepth - kControlReserve + 1);
  const FrameHeader h = sent_header(sent_.size() - 1);
  EXPECT_EQ(h.type, FrameType::kAbort);
  EXPECT_EQ(h.cause, static_cast<uint8_t>(ErrorCause::kDeadline));
  EXPECT_EQ(h.blamed, 2u);
  EXPECT_EQ(h.payload_bytes, 16u);
}

// The fixture with frames big enough for the default send queue (1 MiB)
// to bind.
class PacedLaneTest : public LaneTest {
 protected:
  void SetUp() override {
    frame_bytes_ = 512 << 10;
    LaneTest::SetUp();
  }
  absl::Status send_full() {
    const std::vector<std::byte> bytes(frame_bytes_ - kHeaderBytes);
    return lane_->send_data(FrameHeader{}, bytes.data(),
                            static_cast<uint32_t>(bytes.size()));
  }
};

TEST_F(PacedLaneTest, KeepsAboutTwoFullFramesQueuedAndAcksPassThem) {
  ASSERT_EQ(config().send_queue_bytes, uint64_t{1} << 20);
  ASSERT_TRUE(send_full().ok());
  ASSERT_TRUE(lane_->can_send_data());
  ASSERT_TRUE(send_full().ok());
  // Credits remain (a window of 4), but two full frames are queued.
  EXPECT_FALSE(lane_->can_send_data());
  // An acknowledgement owed to the peer does not wait for room.
  arrive(0, 0, data(0, kFlagAckNow));
  ASSERT_TRUE(poll().ok());
  ASSERT_TRUE(service().ok());
  ASSERT_EQ(sent_.size(), 3u);
  EXPECT_EQ(sent_header(2).type, FrameType::kAck);
  // The first frame left: room for one more.
  Completion left;
  left.id = sent_[0].id;
  pending_.push_back(left);
  ASSERT_TRUE(poll().ok());
  EXPECT_TRUE(lane_->can_send_data());
  ASSERT_TRUE(send_full().ok());
  EXPECT_FALSE(lane_->can_send_data());
  EXPECT_EQ(lane_->data_sends_in_flight(), 2u);
}

TEST_F(LaneTest, AfterAGapDataFramesGoOneAtATime) {
  ASSERT_TRUE(send(0).ok());
  EXPECT_TRUE(lane_->can_send_data());  // small frames: many fit the queue
  complete_sends();
  arrive(0, 0, data(1));  // number 0 is missing: a gap
  ASSERT_TRUE(poll().ok());
  // Each of the next kLossyFrames frames is posted alone: none may join
  // it until it left.
  for (uint32_t i = 1; i <= kLossyFrames; ++i) {
    ASSERT_TRUE(lane_->can_send_data()) << i;
    ASSERT_TRUE(send(static_cast<uint8_t>(i)).ok());
    EXPECT_EQ(lane_->can_send_data(), i == kLossyFrames) << i;
    complete_sends();
    arrive(2, i, ack(i + 1, i + 1));  // received and consumed: credit back
    ASSERT_TRUE(poll().ok());
  }
}

// A send queue of one full frame.
class OneFrameQueueLaneTest : public PacedLaneTest {
 protected:
  void SetUp() override {
    send_queue_bytes_ = 512 << 10;
    PacedLaneTest::SetUp();
  }
};

TEST_F(OneFrameQueueLaneTest, SendsOneFullFrameAtATime) {
  ASSERT_TRUE(send_full().ok());
  EXPECT_FALSE(lane_->can_send_data());
  complete_sends();
  ASSERT_TRUE(poll().ok());
  EXPECT_TRUE(lane_->can_send_data());
  // Smaller frames: several fit.
  const std::byte small[1000] = {};
  ASSERT_TRUE(lane_->send_data(FrameHeader{}, small, 1000).ok());
  EXPECT_TRUE(lane_->can_send_data());
}

TEST_F(StrictLaneTest, SequenceGapIsATypedErrorAndNothingIsQueued) {
  arrive(0, 1, data(1));  // 0 was lost
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

TEST_F(StrictLaneTest, DuplicateIsATypedError) {
  arrive(0, 0, data(0));
  arrive(1, 0, data(0));
  const absl::Status s = poll();
  EXPECT_EQ(error_place(s)->cause, ErrorCause::kSequence);
  EXPECT_EQ(lane_->inbox_size(), 1u);  // the first one only
}

TEST_F(StrictLaneTest, NothingIsResent) {
  ASSERT_TRUE(send(1).ok());
  complete_sends();
  ASSERT_TRUE(poll().ok());
  EXPECT_EQ(lane_->next_timer_ns(Lane::Watch{}), kNeverNs);
  clock_.advance_to(100 * kRtoNs);
  ASSERT_TRUE(service().ok());
  EXPECT_EQ(sent_.size(), 1u);
}

}  // namespace
}  // namespace weft::internal
