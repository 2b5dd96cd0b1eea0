// The pieces of a Lane on their own, with a manual clock and no endpoint:
// the send window's credits, counters, pacing, choice of frames to resend
// and round-trip timing, across the wrap of sequence numbers at 2^32; the
// receive window's placement of early frames and duplicates and what it
// owes the peer; liveness's probe back-off; the control credits' count
// of unproven control frames. In a Debug build, a broken
// invariant aborts.
#include <cstdint>
#include <vector>

#include "collectives/engine/control_credit.h"
#include "collectives/engine/frame_header.h"
#include "collectives/engine/lane_protocol.h"
#include "collectives/engine/liveness.h"
#include "collectives/engine/receive_window.h"
#include "collectives/engine/send_window.h"
#include "fabric/assert.h"
#include "fabric/clock.h"
#include "gtest/gtest.h"

namespace weft::collectives::internal {
namespace {

constexpr uint32_t kDepth = 6;  // a window of 4 data frames
constexpr uint32_t kWindow = kDepth - kControlReserve;
constexpr TimeNs kRtoNs = 100 * kNsPerUs;
constexpr uint32_t kBeforeWrap = 0xfffffffe;  // two numbers before 0

LaneConfig config(bool recovery = true) {
  LaneConfig c{kDepth, 4096};
  c.recovery.enabled = recovery;
  c.recovery.initial_rto_ns = kRtoNs;
  c.recovery.max_rto_ns = 4 * kRtoNs;
  c.recovery.max_retries = 3;
  return c;
}

FrameHeader data(uint32_t seq, uint32_t payload_bytes = 100) {
  FrameHeader h;
  h.seq = seq;
  h.payload_bytes = payload_bytes;
  return h;
}

// Posts the next data frame as pair frame `posted_as`; returns its slot.
uint32_t post(SendWindow& w, uint32_t posted_as, uint32_t bytes = 100) {
  const uint32_t slot = w.free_slot();
  w.note_posted(data(w.next_seq(), bytes), posted_as);
  return slot;
}

TEST(SendWindowTest, CreditsAndCountersAcrossTheWrap) {
  ManualClock clock;
  SendWindow w(config(), clock, kBeforeWrap);
  std::vector<uint32_t> slots;
  for (uint32_t i = 0; i < kWindow; ++i) {
    ASSERT_TRUE(w.can_send()) << i;
    slots.push_back(post(w, i));
    EXPECT_EQ(w.slot_seq(slots.back()), kBeforeWrap + i);
  }
  EXPECT_EQ(w.next_seq(), 2u);
  // Free slots remain, but the peer holds a full window.
  EXPECT_FALSE(w.can_send());
  EXPECT_EQ(w.sends_in_flight(), kWindow);
  EXPECT_EQ(w.queued_bytes(), kWindow * (kHeaderBytes + 100));
  for (const uint32_t slot : slots) w.note_left(slot);
  EXPECT_EQ(w.sends_in_flight(), 0u);
  EXPECT_EQ(w.queued_bytes(), 0u);
  EXPECT_FALSE(w.can_send());
  // Three received (0xfffffffe, 0xffffffff, 0), one consumed: a credit.
  EXPECT_EQ(w.absorb(1, 0xffffffff), SendWindow::Report::kAccepted);
  EXPECT_EQ(w.peer_received(), 1u);
  EXPECT_EQ(w.unacknowledged(), 1u);
  EXPECT_TRUE(w.can_send());
  // More than was sent (2 is next): refused, nothing changes.
  EXPECT_EQ(w.absorb(3, 0xffffffff), SendWindow::Report::kOverclaimed);
  EXPECT_EQ(w.absorb(1, 3), SendWindow::Report::kOverclaimed);
  EXPECT_EQ(w.peer_received(), 1u);
  EXPECT_EQ(w.peer_consumed(), 0xffffffffu);
  // An older report (reordered) says nothing new.
  EXPECT_EQ(w.absorb(0xffffffff, kBeforeWrap), SendWindow::Report::kStale);
  EXPECT_EQ(w.peer_received(), 1u);
  EXPECT_EQ(w.peer_consumed(), 0xffffffffu);
  // Consumed implies received.
  EXPECT_EQ(w.absorb(1, 2), SendWindow::Report::kAccepted);
  EXPECT_TRUE(w.all_received());
  EXPECT_TRUE(w.all_consumed());
  EXPECT_TRUE(w.can_send());
}

TEST(SendWindowTest, AcknowledgedSlotsAreFreedOnceTheirSendLeft) {
  ManualClock clock;
  SendWindow w(config(), clock, kBeforeWrap);
  std::vector<uint32_t> slots;
  for (uint32_t i = 0; i < kWindow; ++i) slots.push_back(post(w, i));
  // All four acknowledged and consumed before their sends completed: their
  // slots stay busy while the sends are in flight.
  EXPECT_EQ(w.absorb(2, 2), SendWindow::Report::kAccepted);
  post(w, 4);
  post(w, 5);
  EXPECT_FALSE(w.can_send());  // credits, but no free slot
  w.note_left(slots[2]);
  ASSERT_TRUE(w.can_send());
  EXPECT_EQ(w.free_slot(), slots[2]);
}

TEST(SendWindowTest, TheQueueBoundsBytesAndAGapPacesOneFrameAtATime) {
  LaneConfig c = config();
  c.send_queue_bytes = 2 * (kHeaderBytes + 1000);
  ManualClock clock;
  SendWindow w(c, clock);
  const uint32_t first = post(w, 0, 1000);
  ASSERT_TRUE(w.can_send());
  const uint32_t second = post(w, 1, 1000);
  EXPECT_FALSE(w.can_send());  // credits remain, the queue is full
  w.note_left(first);
  EXPECT_TRUE(w.can_send());
  // After a gap, nothing joins a frame in the queue.
  w.note_gap();
  EXPECT_EQ(w.lossy_frames_left(), kLossyFrames);
  EXPECT_FALSE(w.can_send());
  w.note_left(second);
  ASSERT_TRUE(w.can_send());
  post(w, 2, 1);
  EXPECT_EQ(w.lossy_frames_left(), kLossyFrames - 1);
  EXPECT_FALSE(w.can_send());  // one byte queued is the limit
}

TEST(SendWindowTest, ChoosesWhatToResendAcrossTheWrap) {
  ManualClock clock;
  SendWindow w(config(), clock, kBeforeWrap);
  std::vector<uint32_t> slots;
  for (uint32_t i = 0; i < kWindow; ++i) slots.push_back(post(w, 10 + i));
  for (const uint32_t slot : slots) w.note_left(slot);
  // The peer holds 0xffffffff and 1: 0xfffffffe and 0 are missing.
  EXPECT_EQ(w.missing(0b101, 0), 0b101u);
  // Nothing held beyond, and it heard frame 11 (number 0xffffffff): frame
  // 10 was posted before, so it was lost.
  EXPECT_EQ(w.missing(0, 12), 0b1u);
  EXPECT_EQ(w.missing(0, 14), 0b111u);  // frame 13 is number 1 itself
  EXPECT_EQ(w.missing(0, 0), 0u);
  // Resent once, a missing frame is not resent again for the same sack.
  for (const uint32_t seq : {kBeforeWrap, 0u}) {
    const uint32_t slot = w.begin_resend(seq);
    ASSERT_NE(slot, kNoSlot);
    EXPECT_EQ(w.slot_seq(slot), seq);
    w.note_reposted(seq, seq == 0 ? 15 : 14);
  }
  EXPECT_EQ(w.sends_in_flight(), 2u);
  EXPECT_EQ(w.missing(0b101, 0), 0u);
  // Unless the peer heard a frame posted after the copy.
  EXPECT_EQ(w.missing(0b101, 15), 0u);
  EXPECT_EQ(w.missing(0b101, 16), 0b1u);
  // A copy still queued is not posted twice.
  EXPECT_EQ(w.begin_resend(kBeforeWrap), kNoSlot);
  EXPECT_EQ(w.sends_in_flight(), 2u);
}

TEST(SendWindowTest, TimesFromDepartureSamplesOnlyFirstCopiesAndBacksOff) {
  ManualClock clock(1000);
  SendWindow w(config(), clock);
  const uint32_t slot = post(w, 0);
  // Queued: no timeout runs yet.
  EXPECT_EQ(w.retransmit_due_ns(), kNeverNs);
  clock.advance_to(2000);
  w.note_left(slot);
  EXPECT_EQ(w.retransmit_due_ns(), 2000 + kRtoNs);
  // A 10 us round trip: srtt 10 us, rttvar 5 us, timeout 30 us.
  clock.advance_to(12'000);
  w.absorb(1, 1);
  EXPECT_EQ(w.srtt_ns(), 10'000);
  EXPECT_EQ(w.rto_ns(), 30'000);
  EXPECT_EQ(w.retransmit_due_ns(), kNeverNs);
  // Karn: the answer to a resent frame is not a sample.
  const uint32_t again = post(w, 1);
  w.note_left(again);
  ASSERT_EQ(w.begin_resend(1), again);
  w.note_reposted(1, 2);
  EXPECT_EQ(w.retransmit_due_ns(), kNeverNs);  // the copy is queued
  clock.advance_to(13'000);
  w.note_left(again);
  clock.advance_to(500'000);
  w.absorb(2, 2);
  EXPECT_EQ(w.srtt_ns(), 10'000);
  // Each timeout doubles up to max_rto_ns; progress resets the retries.
  post(w, 3);
  for (uint32_t i = 0; i < config().recovery.max_retries; ++i) {
    EXPECT_FALSE(w.retries_exhausted());
    w.note_timeout();
  }
  EXPECT_TRUE(w.retries_exhausted());
  EXPECT_EQ(w.rto_ns(), 240'000);  // 30, 60, 120, 240 us
  w.absorb(3, 3);
  EXPECT_EQ(w.retries(), 0u);
  post(w, 4);
  w.note_timeout();
  EXPECT_EQ(w.rto_ns(), 4 * kRtoNs);  // max_rto_ns, not 480 us
}

TEST(SendWindowTest, WithoutRecoveryNothingWaitsForAnAcknowledgement) {
  ManualClock clock;
  SendWindow w(config(/*recovery=*/false), clock);
  const uint32_t slot = post(w, 0);
  w.note_left(slot);
  EXPECT_EQ(w.free_slot(), slot);  // free once sent
  EXPECT_EQ(w.retransmit_due_ns(), kNeverNs);
  EXPECT_FALSE(w.all_received());
}

// Over a fabric that delivers reliably a frame is kept until the peer
// reports it consumed (its credit report is the acknowledgement), and no
// timer runs, recovery on or not.
TEST(SendWindowTest, OverAReliableFabricKeepsFramesUntilConsumed) {
  ManualClock clock;
  LaneConfig c = config(/*recovery=*/true);
  c.reliable = true;
  SendWindow w(c, clock);
  const uint32_t slot = post(w, 0);
  w.note_left(slot);
  EXPECT_TRUE(w.slot_unacked(slot));
  EXPECT_EQ(w.retransmit_due_ns(), kNeverNs);
  EXPECT_EQ(w.absorb(1, 0), SendWindow::Report::kAccepted);
  EXPECT_TRUE(w.slot_unacked(slot));  // received, not consumed: kept
  EXPECT_EQ(w.absorb(1, 1), SendWindow::Report::kAccepted);
  EXPECT_FALSE(w.slot_unacked(slot));
  EXPECT_EQ(w.free_slot(), slot);
}

TEST(ReceiveWindowTest, PlacesEarlyFramesAndDuplicatesAcrossTheWrap) {
  ManualClock clock;
  ReceiveWindow r(config(), clock, 0xffffffff);
  // 1 is two ahead: held until 0xffffffff and 0 arrive.
  EXPECT_EQ(r.place(1, 0), ReceiveWindow::Placement::kEarly);
  EXPECT_EQ(r.inbox_size(), 0u);
  EXPECT_EQ(r.sack(), 0b10u);
  EXPECT_TRUE(r.report_owed());  // the gap is reported at once
  r.note_reported(/*ack=*/true);
  EXPECT_FALSE(r.report_owed());
  EXPECT_EQ(r.place(0xffffffff, 1), ReceiveWindow::Placement::kNext);
  EXPECT_EQ(r.inbox_size(), 1u);
  EXPECT_EQ(r.place(0, 2), ReceiveWindow::Placement::kNext);
  ASSERT_EQ(r.inbox_size(), 3u);  // 0xffffffff, 0, and the early 1
  EXPECT_EQ(r.received(), 2u);
  EXPECT_EQ(r.inbox_slot(0), 1u);
  EXPECT_EQ(r.inbox_slot(1), 2u);
  EXPECT_EQ(r.inbox_slot(2), 0u);
  EXPECT_EQ(r.sack(), 0u);
  EXPECT_FALSE(r.report_owed());
  // A copy of one held: discarded, and the peer missed an answer.
  EXPECT_EQ(r.place(0, 3), ReceiveWindow::Placement::kDuplicate);
  EXPECT_TRUE(r.report_owed());
  EXPECT_EQ(r.inbox_slot(1), 2u);
  // The window is [0xffffffff, 3).
  EXPECT_EQ(r.place(3, 3), ReceiveWindow::Placement::kBeyondWindow);
  EXPECT_EQ(r.consume_front(false), 1u);
  EXPECT_EQ(r.consumed(), 0u);
  // A copy of one consumed: discarded; 3 now fits.
  EXPECT_EQ(r.place(0xffffffff, 3), ReceiveWindow::Placement::kDuplicate);
  EXPECT_EQ(r.place(3, 3), ReceiveWindow::Placement::kEarly);
  EXPECT_EQ(r.inbox_size(), 2u);
  EXPECT_EQ(r.place(2, 1), ReceiveWindow::Placement::kNext);
  EXPECT_EQ(r.inbox_size(), 4u);  // 0 to 3: a full window
  EXPECT_EQ(r.slot_holding(3), 3u);
}

TEST(ReceiveWindowTest, OwesAnAcknowledgementAtTheThresholdOrWhenAsked) {
  ManualClock clock(500);
  ReceiveWindow r(config(), clock);
  EXPECT_EQ(r.delayed_ack_due_ns(), kNeverNs);
  ASSERT_EQ(r.place(0, 0), ReceiveWindow::Placement::kNext);
  EXPECT_FALSE(r.ack_due());  // 1 unreported < window / 2
  // Acknowledged within a quarter of min_rto_ns anyway.
  EXPECT_EQ(r.delayed_ack_due_ns(), 500 + config().recovery.min_rto_ns / 4);
  clock.advance_to(900);
  ASSERT_EQ(r.place(1, 1), ReceiveWindow::Placement::kNext);
  EXPECT_TRUE(r.ack_due());
  EXPECT_EQ(r.delayed_ack_due_ns(), 500 + config().recovery.min_rto_ns / 4);
  r.note_reported(/*ack=*/true);
  EXPECT_FALSE(r.ack_due());
  EXPECT_EQ(r.delayed_ack_due_ns(), kNeverNs);
  // A frame that asks for its consumption to be reported.
  EXPECT_EQ(r.consume_front(/*report_now=*/true), 0u);
  EXPECT_TRUE(r.report_owed());
  r.note_reported(/*ack=*/true);
  EXPECT_FALSE(r.report_owed());
  EXPECT_EQ(r.consume_front(false), 1u);
  EXPECT_FALSE(r.ack_due());
  // The peer says it sent up to 3 and nothing of it came: lost.
  r.note_peer_next(3);
  EXPECT_TRUE(r.report_owed());
  r.note_reported(/*ack=*/true);
  r.note_peer_next(2);                // nothing is missing
  r.note_peer_next(2 + kWindow + 1);  // beyond the window: not believed
  EXPECT_FALSE(r.report_owed());
}

TEST(ReceiveWindowTest, RemembersTheLastFrameHeard) {
  ManualClock clock;
  ReceiveWindow r(config(), clock);
  EXPECT_EQ(r.heard(), 0u);
  r.note_heard(5);
  EXPECT_EQ(r.heard(), 6u);
  r.note_heard(3);  // reordered: older
  EXPECT_EQ(r.heard(), 6u);
  r.note_heard(6);
  EXPECT_EQ(r.heard(), 7u);
}

TEST(ReceiveWindowTest, WithoutRecoveryOnlyTheNextNumberIsPlaced) {
  ManualClock clock;
  ReceiveWindow r(config(/*recovery=*/false), clock);
  EXPECT_EQ(r.place(1, 0), ReceiveWindow::Placement::kNotNext);
  EXPECT_EQ(r.place(0, 0), ReceiveWindow::Placement::kNext);
  EXPECT_EQ(r.place(0, 1), ReceiveWindow::Placement::kNotNext);
  EXPECT_EQ(r.inbox_size(), 1u);
  EXPECT_EQ(r.unreported_since_ns(), kNeverNs);
  r.note_peer_next(3);
  EXPECT_FALSE(r.report_owed());
  // The last frame heard is kept all the same: it proves the peer's
  // control frames' receives posted again (control_credit.h).
  r.note_heard(5);
  EXPECT_EQ(r.heard(), 6u);
}

TEST(ReceiveWindowTest, WithoutRecoveryOnlyAnAcknowledgementAnswers) {
  ManualClock clock;
  ReceiveWindow r(config(/*recovery=*/false), clock);
  r.request_ack();  // the peer asked (kFlagAnswer or a probe)
  EXPECT_TRUE(r.answer_owed());
  EXPECT_FALSE(r.credit_report_due());
  EXPECT_TRUE(r.ack_due());
  // A data frame carries the counters but not `heard`: still owed.
  r.note_reported(/*ack=*/false);
  EXPECT_TRUE(r.answer_owed());
  r.note_reported(/*ack=*/true);
  EXPECT_FALSE(r.answer_owed());
  EXPECT_FALSE(r.ack_due());
  // Half a window of consumptions is a credit report due, not an answer.
  for (uint32_t seq = 0; seq < kWindow / 2; ++seq) {
    ASSERT_EQ(r.place(seq, seq), ReceiveWindow::Placement::kNext);
    r.consume_front(false);
  }
  EXPECT_TRUE(r.credit_report_due());
  EXPECT_FALSE(r.answer_owed());
  r.note_reported(/*ack=*/false);  // a data frame carried it
  EXPECT_FALSE(r.credit_report_due());
}

TEST(ControlCreditTest, OneQuestionAndOneAnswerUnprovenAtMost) {
  ControlCredit c;
  EXPECT_TRUE(c.can_ask());
  c.note_sent(10, /*asks=*/true);
  EXPECT_FALSE(c.can_ask());    // one question at a time
  EXPECT_TRUE(c.can_answer());  // an answer still fits
  c.note_sent(11, /*asks=*/false);
  EXPECT_EQ(c.unproven(), kControlReserve);
  EXPECT_FALSE(c.can_answer());  // the peer's receives for them are taken
  // The peer heard frame 10 (and everything before), not 11.
  c.note_heard(11);
  EXPECT_EQ(c.unproven(), 1u);
  EXPECT_FALSE(c.asking());
  EXPECT_TRUE(c.can_ask());
  c.note_sent(12, /*asks=*/true);
  c.note_heard(12);  // proves 11 only: the question stays
  EXPECT_EQ(c.unproven(), 1u);
  EXPECT_TRUE(c.asking());
  EXPECT_FALSE(c.can_ask());
  c.note_heard(5);  // older: proves nothing new
  EXPECT_EQ(c.unproven(), 1u);
  c.note_heard(13);
  EXPECT_EQ(c.unproven(), 0u);
  EXPECT_TRUE(c.can_ask());
}

TEST(ControlCreditTest, ProofWorksAcrossTheWrap) {
  ControlCredit c;
  c.note_sent(0xffffffff, /*asks=*/true);
  c.note_sent(0, /*asks=*/false);
  c.note_heard(0);  // one past 0xffffffff
  EXPECT_EQ(c.unproven(), 1u);
  EXPECT_FALSE(c.asking());
  c.note_heard(1);
  EXPECT_EQ(c.unproven(), 0u);
}

TEST(LivenessTest, UnansweredProbesSpaceOutAndAnAnswerResetsThem) {
  constexpr TimeNs kProbeNs = 100;
  Liveness l(0);
  EXPECT_EQ(l.probe_due_ns(0), kNeverNs);
  EXPECT_EQ(l.probe_due_ns(kProbeNs), 100);
  l.note_probe(100);
  EXPECT_EQ(l.probe_due_ns(kProbeNs), 300);  // 2 intervals after it
  EXPECT_TRUE(l.silent_at(200, kProbeNs));
  l.note_probe(300);
  EXPECT_EQ(l.probe_due_ns(kProbeNs), 700);  // 4
  l.note_probe(700);
  EXPECT_EQ(l.probe_backoff(), kMaxProbeBackoff);
  EXPECT_EQ(l.probe_due_ns(kProbeNs), 1100);  // still 4
  l.note_heard(750);
  EXPECT_EQ(l.probe_backoff(), 1u);
  EXPECT_FALSE(l.silent_at(800, kProbeNs));
  EXPECT_EQ(l.probe_due_ns(kProbeNs), 850);
}

TEST(LivenessTest, KeepsTheAbortsOriginAndBlame) {
  Liveness l(0);
  EXPECT_FALSE(l.abort_origin().has_value());
  l.note_suspect(7);
  EXPECT_EQ(l.peer_suspect(), 7u);
  l.note_abort(5, 3);
  EXPECT_EQ(l.abort_origin(), 5u);
  EXPECT_EQ(l.abort_blamed(), 3u);
}

TEST(SendWindowDeathTest, ATimeoutAfterTheRetriesRanOutAborts) {
  if constexpr (!kChecksInvariants) {
    GTEST_SKIP() << "invariants are checked in Debug builds only";
  }
  ManualClock clock;
  SendWindow w(config(), clock);
  post(w, 0);
  for (uint32_t i = 0; i < config().recovery.max_retries; ++i) {
    w.note_timeout();
  }
  ASSERT_TRUE(w.retries_exhausted());
  // The Lane reports the peer unavailable here; a caller that retried
  // anyway breaks the window's bound on retries.
  EXPECT_DEATH(w.note_timeout(), "retries past max_retries");
}

}  // namespace
}  // namespace weft::collectives::internal
