// Lane against a gMock endpoint and a manual clock: every completion is
// checked (status, sequence, header) before its bytes are used; data is
// placed by sequence number, duplicates are discarded and acknowledged; the
// window gates data sends; acknowledgements go out at the threshold and
// when asked for; unacknowledged frames are resent with back-off until the
// retries run out; a silent peer is probed; aborts and counter violations
// become typed errors.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "fabric/assert.h"
#include "fabric/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/collectives/lane_fixture.h"

namespace weft::collectives::internal::lane_test {
namespace {

TEST_F(LaneTest, DataFrameIsCheckedThenQueuedThenReposted) {
  arrive(0, 0, data(0), {std::byte{1}, std::byte{2}, std::byte{3}});
  ASSERT_TRUE(poll().ok());
  ASSERT_EQ(lane_->inbox_size(), 1u);
  const auto payload = lane_->payload(lane_->inbox(0));
  ASSERT_EQ(payload.size(), 3u);
  EXPECT_EQ(payload[2], std::byte{3});
  EXPECT_EQ(recvs_posted_, kDepth);
  ASSERT_TRUE(consume_front(*lane_).ok());
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

// The data, control and abort frames lie where the lane was told (the
// fixture: control frames at 0, the abort frame after them, data frames
// after that), so a group can keep every lane's acknowledgement frames
// together on shared pages and the abort frames, written only on
// failure, apart.
TEST_F(LaneTest, DataAndControlFramesLieWhereTheyWereGiven) {
  const uint64_t control_bytes = config().control_bytes(false);
  for (const Frame& f : recv_frames_) {
    // A one-part endpoint: the header, then max_frame_bytes of payload.
    EXPECT_EQ(f.bytes(), kHeaderBytes + config().max_frame_bytes);
    EXPECT_GE(f.offset(), control_bytes + kAbortFrameBytes);
    EXPECT_LE(f.offset() + f.bytes(), config().region_bytes());
  }
  arrive(0, 0, data(0), {std::byte{1}});
  arrive(1, 1, data(0), {std::byte{1}});  // a duplicate: acknowledged at once
  ASSERT_TRUE(poll().ok());
  ASSERT_TRUE(service().ok());
  ASSERT_EQ(sent_.size(), 1u);
  ASSERT_EQ(sent_header(0).type, FrameType::kAck);
  EXPECT_EQ(sent_[0].frame.offset(), 0u);
  EXPECT_EQ(sent_[0].frame.bytes(), kHeaderBytes);
  EXPECT_EQ(control_bytes, kHeaderBytes);  // one-part: no headers apart
  lane_->send_abort(ErrorCause::kFabric, 0, kNoPeer, "failed");
  ASSERT_EQ(sent_.size(), 2u);
  ASSERT_EQ(sent_header(1).type, FrameType::kAbort);
  EXPECT_EQ(sent_[1].frame.offset(), control_bytes);
  EXPECT_EQ(sent_[1].frame.bytes(), kHeaderBytes + kMaxAbortText);
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
  ASSERT_TRUE(consume_front(*lane_).ok());
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

// try_send() is the runner's one question per frame: without a credit it
// sends nothing, says so without asking for the frame's description, and
// counts one credit stall per wait.
TEST_F(LaneTest, TrySendWithoutRoomSendsNothingAndCountsOneStallPerWait) {
  const std::byte payload[8] = {};
  uint32_t described = 0;
  auto offer = [&] {
    return OpLane(lane_.get()).try_send([&] {
      ++described;
      return DataFrame{.payload = payload};
    });
  };
  for (uint8_t i = 0; i < kDepth - kControlReserve; ++i) {
    ASSERT_EQ(*offer(), SendOutcome::kSent);
  }
  EXPECT_EQ(*offer(), SendOutcome::kNoRoom);
  EXPECT_EQ(*offer(), SendOutcome::kNoRoom);
  EXPECT_EQ(described, kDepth - kControlReserve);
  EXPECT_EQ(sent_.size(), kDepth - kControlReserve);
  EXPECT_EQ(lane_->stats().credit_stalls, 1u);
  complete_sends();
  arrive(0, 0, ack(4, 1));  // one consumed: one credit
  ASSERT_TRUE(poll().ok());
  ASSERT_EQ(*offer(), SendOutcome::kSent);
  EXPECT_EQ(*offer(), SendOutcome::kNoRoom);
  EXPECT_EQ(lane_->stats().credit_stalls, 2u);
  EXPECT_EQ(lane_->stats().data_sent, kDepth - kControlReserve + 1);
}

// The header carries what the DataFrame says; the lane adds its own part:
// type, number, payload length, and kFlagAckNow when asked and recovery is
// on.
TEST_F(LaneTest, TrySendFramesTheDataFrameItIsGiven) {
  const std::byte payload[5] = {std::byte{7}};
  OpIdentity op;
  op.op_seq = 9;
  op.chunk_bytes = 5;
  ASSERT_TRUE(
      try_send(*lane_,
               DataFrame{.op = op, .item = 3, .frame = 2, .payload = payload})
          .ok());
  ASSERT_TRUE(try_send(*lane_, DataFrame{.op = op,
                                         .item = 3,
                                         .frame = 3,
                                         .ack_now = true,
                                         .report_now = true,
                                         .payload = payload})
                  .ok());
  ASSERT_EQ(sent_.size(), 2u);
  const FrameHeader first = sent_header(0);
  EXPECT_EQ(first.type, FrameType::kData);
  EXPECT_TRUE(first.op == op);
  EXPECT_EQ(first.item, 3u);
  EXPECT_EQ(first.frame, 2u);
  EXPECT_EQ(first.seq, 0u);
  EXPECT_EQ(first.payload_bytes, 5u);
  EXPECT_EQ(first.flags, 0);
  EXPECT_EQ(sent_[0].frame.span()[kHeaderBytes], std::byte{7});
  const FrameHeader last = sent_header(1);
  EXPECT_EQ(last.seq, 1u);
  EXPECT_EQ(last.flags, kFlagAckNow | kFlagReportNow);
}

TEST_F(StrictLaneTest, WithoutRecoveryAFrameAsksForNoPromptAck) {
  const std::byte payload[1] = {};
  ASSERT_TRUE(
      try_send(*lane_,
               DataFrame{.ack_now = true, .report_now = true, .payload = payload})
          .ok());
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_header(0).flags, kFlagReportNow);
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
  ASSERT_TRUE(consume_front(*lane_).ok());
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

TEST_F(LaneTest, ResendsWhatWasPostedBeforeAFrameThePeerHeard) {
  ASSERT_TRUE(send(0).ok());  // number 0, frame 0
  ASSERT_TRUE(send(1).ok());  // number 1, frame 1
  arrive(0, 0, data(0, kFlagAckNow));
  ASSERT_TRUE(poll().ok());
  ASSERT_TRUE(service().ok());  // the acknowledgement is frame 2
  ASSERT_EQ(sent_.size(), 3u);
  EXPECT_EQ(sent_header(2).type, FrameType::kAck);
  EXPECT_EQ(sent_header(2).seq, 2u);  // the next data number
  complete_sends();
  ASSERT_TRUE(poll().ok());
  // The peer holds number 0 and last heard frame 0: nothing is known lost.
  FrameHeader report = ack(1, 0);
  report.heard = 1;
  arrive(1, 1, report);
  ASSERT_TRUE(poll().ok());
  EXPECT_EQ(sent_.size(), 3u);
  // It heard frame 2 and still lacks number 1 (frame 1): lost, resent at
  // once, long before any timeout.
  report.heard = 3;
  arrive(2, 2, report);
  ASSERT_TRUE(poll().ok());
  ASSERT_EQ(sent_.size(), 4u);
  EXPECT_EQ(clock_.now_ns(), 0);
  EXPECT_EQ(sent_header(3).seq, 1u);
  EXPECT_EQ(sent_[3].frame.data()[kHeaderBytes], std::byte{1});
  complete_sends();
  ASSERT_TRUE(poll().ok());
  // The same report again: the resend (frame 3) left after what the peer
  // heard, so it is on its way.
  arrive(3, 3, report);
  ASSERT_TRUE(poll().ok());
  EXPECT_EQ(sent_.size(), 4u);
  EXPECT_EQ(lane_->stats().retransmitted, 1u);
}

TEST_F(LaneTest, AnswersAtOnceWhenThePeerSentDataThatDidNotArrive) {
  arrive(0, 4, data(0));
  ASSERT_TRUE(poll().ok());
  EXPECT_FALSE(lane_->report_owed());
  // The peer's acknowledgement (its frame 6) says it sent numbers 0 to 2;
  // its frame 5 (number 1) and number 2 never came.
  FrameHeader peer = ack(0, 0);
  peer.seq = 3;
  arrive(1, 6, peer);
  ASSERT_TRUE(poll().ok());
  EXPECT_TRUE(lane_->report_owed());
  ASSERT_TRUE(service().ok());
  ASSERT_EQ(sent_.size(), 1u);
  const FrameHeader h = sent_header(0);
  EXPECT_EQ(h.type, FrameType::kAck);
  EXPECT_EQ(h.received, 1u);
  EXPECT_EQ(h.heard, 7u);  // one past frame 6
  // An acknowledgement that claims nothing beyond what arrived asks for
  // nothing.
  complete_sends();
  ASSERT_TRUE(poll().ok());
  peer.seq = 1;
  arrive(2, 7, peer);
  ASSERT_TRUE(poll().ok());
  EXPECT_FALSE(lane_->report_owed());
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

// A probe is an acknowledgement: while the acknowledgement frame is in
// flight it cannot go, and its time must not be reported as the lane's
// next timer. Reported (due now, or already past), the engine would ask
// to be stepped again at once, and a simulated world, whose clock moves
// only once every rank waits for a later instant, would step it forever
// at that instant, never delivering the completion that frees the frame.
TEST_F(LaneTest, AProbeDueWhileTheAcknowledgementIsInFlightWaitsForIt) {
  const Lane::Watch waiting{true, kRtoNs};
  arrive(0, 0, data(0), {std::byte{1}});
  arrive(1, 1, data(0), {std::byte{1}});  // a duplicate: acknowledged at once
  ASSERT_TRUE(poll().ok());
  ASSERT_TRUE(service(/*waiting=*/true).ok());
  ASSERT_EQ(sent_.size(), 1u);    // the acknowledgement, not completed
  clock_.advance_to(2 * kRtoNs);  // the probe is due (heard at 0)
  bool advanced = false;
  TimeNs wake_ns = kNeverNs;
  ASSERT_TRUE(lane_
                  ->service_at(
                      clock_.now_ns(), waiting, [] { return kNoPeer; },
                      &advanced, &wake_ns)
                  .ok());
  EXPECT_EQ(sent_.size(), 1u);  // no second frame into the busy one
  EXPECT_FALSE(advanced);
  EXPECT_GT(wake_ns, clock_.now_ns());
  EXPECT_GT(lane_->next_timer_ns(waiting), clock_.now_ns());
  // The completion frees the frame: the probe goes at the next service.
  complete_sends();
  ASSERT_TRUE(poll().ok());
  EXPECT_EQ(lane_->next_timer_ns(waiting), kRtoNs);
  ASSERT_TRUE(service(/*waiting=*/true).ok());
  ASSERT_EQ(sent_.size(), 2u);
  EXPECT_EQ(sent_header(1).flags, kFlagProbe);
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

// An endpoint that reports a send completed twice: the lane's count of
// sends in flight no longer matches its slots, and a Debug build aborts
// rather than go on with it.
using LaneDeathTest = LaneTest;

TEST_F(LaneDeathTest, ASendCompletedTwiceAborts) {
  if constexpr (!kChecksInvariants) {
    GTEST_SKIP() << "invariants are checked in Debug builds only";
  }
  ASSERT_TRUE(send(1).ok());
  complete_sends();
  ASSERT_TRUE(poll().ok());
  Completion again;
  again.id = sent_[0].id;
  pending_.push_back(again);
  EXPECT_DEATH(static_cast<void>(poll()), "more than one send in flight");
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

// Control credits (control_credit.h): a probe to a silent peer asks for
// an answer, and no second one goes until the peer proves the first one's
// receive posted again.
TEST_F(StrictLaneTest, ProbesOneAtATimeUntilAnswered) {
  const Lane::Watch waiting{true, kRtoNs};
  clock_.advance_to(kRtoNs);
  ASSERT_TRUE(service(/*waiting=*/true).ok());
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_header(0).flags, kFlagProbe);
  complete_sends();
  ASSERT_TRUE(poll().ok());
  // Silent for 100 probe intervals: no second probe, and no timer for one.
  EXPECT_EQ(lane_->next_timer_ns(waiting), kNeverNs);
  clock_.advance_to(100 * kRtoNs);
  ASSERT_TRUE(service(/*waiting=*/true).ok());
  EXPECT_EQ(sent_.size(), 1u);
  // The peer's acknowledgement heard frame 0, the probe: the next may go.
  FrameHeader answer = ack(0, 0);
  answer.heard = 1;
  arrive(0, 0, answer);
  ASSERT_TRUE(poll().ok());
  EXPECT_EQ(lane_->next_timer_ns(waiting), 101 * kRtoNs);
  clock_.advance_to(101 * kRtoNs);
  ASSERT_TRUE(service(/*waiting=*/true).ok());
  ASSERT_EQ(sent_.size(), 2u);
  EXPECT_EQ(sent_header(1).flags, kFlagProbe);
}

// A credit report asks for an answer; the peer's question is answered by
// an acknowledgement carrying what this side heard (a data frame does not
// answer), even while this side's own question waits.
TEST_F(StrictLaneTest, CreditReportsAskAndQuestionsAreAnswered) {
  for (uint32_t seq = 0; seq < kDepth / 2; ++seq) {
    arrive(seq, seq, data(seq), {std::byte{1}});
  }
  ASSERT_TRUE(poll().ok());
  for (uint32_t i = 0; i < kDepth / 2; ++i) {
    ASSERT_TRUE(consume_front(*lane_).ok());
  }
  ASSERT_TRUE(service().ok());
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_header(0).type, FrameType::kAck);
  EXPECT_EQ(sent_header(0).flags, kFlagAnswer);
  EXPECT_EQ(sent_header(0).consumed, kDepth / 2);
  EXPECT_EQ(sent_header(0).heard, kDepth / 2);
  complete_sends();
  // The peer asks too, before it heard this side's question.
  FrameHeader question = ack(0, 0);
  question.flags = kFlagAnswer;
  arrive(0, kDepth / 2, question);
  ASSERT_TRUE(poll().ok());
  EXPECT_TRUE(lane_->report_owed());
  ASSERT_TRUE(send(7).ok());  // data carries the counters, not `heard`
  EXPECT_TRUE(lane_->report_owed());
  ASSERT_TRUE(service().ok());
  ASSERT_EQ(sent_.size(), 3u);
  EXPECT_EQ(sent_header(2).type, FrameType::kAck);
  EXPECT_EQ(sent_header(2).flags, 0);  // an answer, not a question
  EXPECT_EQ(sent_header(2).heard, kDepth / 2 + 1);
  EXPECT_FALSE(lane_->report_owed());
}

TEST_F(StrictLaneTest, NothingIsResent) {
  ASSERT_TRUE(send(1).ok());
  ASSERT_EQ(sent_.size(), 1u);
  expect_no_timer_and_nothing_resent();
}

// Over a fabric that delivers reliably, recovery on or not: a frame that
// asks for a prompt acknowledgement goes without the flag, no timer runs
// and nothing is resent.
TEST_F(ReliableLaneTest, NothingIsResentAndNoTimerRuns) {
  const std::byte payload[1] = {};
  ASSERT_TRUE(
      try_send(*lane_, DataFrame{.ack_now = true, .payload = payload}).ok());
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_header(0).flags, 0);
  EXPECT_FALSE(lane_->recovery());
  expect_no_timer_and_nothing_resent();
  EXPECT_EQ(lane_->stats().retransmitted, 0u);
}

}  // namespace
}  // namespace weft::collectives::internal::lane_test
