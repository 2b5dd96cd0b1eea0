// ReceiveWindow: the receiving half of a lane's protocol (lane.h: Placement,
// Acknowledgements). It places arriving data frames by sequence number,
// holds those that came early until the gap before them fills, hands them
// out in order (the inbox), and keeps what this side owes the peer: the
// counters not reported yet, and whether an acknowledgement is asked for.
// It knows receive slots only by number: the Lane owns the frames, checks
// each arrival first, and posts the receives again.
//
// Invariants (checked by check_invariants(); numbers modulo 2^32, w the
// window):
//  - consumed() <= received() <= consumed() + w: numbers [consumed,
//    received) are the inbox, and every one of them is held.
//  - Frames are held only in [consumed, consumed + w), each by a receive
//    slot below depth; the number received() is not held unless the inbox
//    is full (a frame that completes the order joins the inbox at once).
//  - The counters last reported are ones this side had: not after
//    received() and consumed(), and consumed-reported <= received-reported.
//  - With recovery off nothing is tracked for delayed acknowledgements
//    (unreported_since_ns() is kNeverNs).
#ifndef WEFT_COLLECTIVES_ENGINE_RECEIVE_WINDOW_H_
#define WEFT_COLLECTIVES_ENGINE_RECEIVE_WINDOW_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collectives/engine/lane_protocol.h"
#include "fabric/assert.h"
#include "fabric/clock.h"

namespace weft::collectives::internal {

class ReceiveWindow {
 public:
  // What place() did with an arrival.
  enum class Placement : uint8_t {
    kNext,          // the next number: the inbox grew
    kEarly,         // ahead of a gap: held until the gap fills
    kDuplicate,     // already held or passed: discarded
    kBeyondWindow,  // past consumed + window: a protocol violation
    kNotNext,       // recovery off, and not the next number: a violation
  };

  // Data numbering starts at `first_seq` (0 on a lane; tests start near the
  // wrap). `clock` outlives the window.
  ReceiveWindow(const LaneConfig& config, const Clock& clock,
                uint32_t first_seq = 0);

  // Places data frame number `seq`, which arrived in receive slot `slot`.
  // An early frame or a duplicate makes an acknowledgement owed at once
  // (the sender learns of the gap, or that it missed the last one).
  Placement place(uint32_t seq, uint32_t slot);
  // Data frames that arrived in order and were not consumed yet.
  uint32_t inbox_size() const { return received_ - consumed_; }
  // The receive slot holding the inbox's frame i, oldest first.
  // REQUIRES: i < inbox_size().
  uint32_t inbox_slot(size_t i) const {
    return held_[seq_index(static_cast<uint32_t>(consumed_ + i))];
  }
  // The receive slot holding number `seq`, or kNoSlot.
  // REQUIRES: seq in [consumed(), consumed() + window).
  uint32_t slot_holding(uint32_t seq) const { return held_[seq_index(seq)]; }
  // Consumes the oldest frame of the inbox and returns its receive slot
  // (free to post again). `report_now`: the frame asked for its
  // consumption to be reported at once (kFlagReportNow).
  // REQUIRES: inbox_size() > 0.
  uint32_t consume_front(bool report_now);

  // Bit i: number received() + 1 + i is held (an acknowledgement's sack).
  uint32_t sack() const;
  // The peer's pair frame `frame` arrived (any type) and was handled.
  void note_heard(uint32_t frame);
  // Recovery: the peer's acknowledgement says its next data number is
  // `next_seq`, so it posted everything below before that frame; as a
  // cable keeps order, any of those missing here was lost: answer at once.
  void note_peer_next(uint32_t next_seq);
  // The peer asked for an acknowledgement (kFlagAckNow, kFlagProbe,
  // kFlagAnswer).
  void request_ack() {
    ack_now_ = true;
    WEFT_CHECK_INVARIANTS_OF(*this);
  }
  // A frame carrying the counters was posted: whatever was owed is
  // reported. `ack`: an acknowledgement. With recovery off, an answer the
  // peer asked for is owed until one goes (only it carries heard(); see
  // control_credit.h).
  void note_reported(bool ack);

  // Data frames the peer may send ahead of consumed().
  uint32_t window() const { return window_; }
  uint32_t received() const { return received_; }
  uint32_t consumed() const { return consumed_; }
  // One past the highest pair frame number heard from the peer (0: none
  // yet).
  uint32_t heard() const { return heard_; }
  // True while an acknowledgement this side owes the peer is not sent.
  bool report_owed() const {
    return ack_now_ || (report_requested_ && consumed_ != consumed_reported_);
  }
  // Recovery off: the peer asked for an answer (request_ack()), and a
  // credit report is due (a kFlagReportNow frame's consumption or half a
  // window of consumptions unreported). ack_due() is either.
  bool answer_owed() const { return ack_now_; }
  bool credit_report_due() const {
    return (report_requested_ && consumed_ != consumed_reported_) ||
           consumed_ - consumed_reported_ >= report_threshold_;
  }
  // An acknowledgement is owed now, timers aside: asked for, or half a
  // window of receipts (recovery) or consumptions unreported.
  bool ack_due() const {
    const bool receipts_due =
        recovery_ && received_ - received_reported_ >= report_threshold_;
    return report_owed() || receipts_due ||
           consumed_ - consumed_reported_ >= report_threshold_;
  }
  // When the oldest unreported arrival came (recovery; kNeverNs: none).
  TimeNs unreported_since_ns() const { return unreported_since_ns_; }
  // Arrivals are acknowledged within min_rto_ns / 4 even when fewer than
  // the threshold came (the sender may be waiting for credits or data):
  // round trips then stay close to the wire's, and so the timeout.
  TimeNs delayed_ack_due_ns() const {
    return unreported_since_ns_ == kNeverNs
               ? kNeverNs
               : unreported_since_ns_ + delayed_ack_ns_;
  }

  // WEFT_ASSERTs every invariant above. O(depth).
  void check_invariants() const;

 private:
  uint32_t seq_index(uint32_t seq) const { return seq & seq_mask_; }
  // Frames held ahead of the inbox join it once nothing is missing before
  // them.
  void advance_received();

  // Numbers [consumed_, received_) are the inbox; a number in [received_,
  // consumed_ + window) may be held early. held_[seq_index(s)] is the
  // receive slot holding number s, or kNoSlot.
  uint32_t received_;
  uint32_t consumed_;
  uint32_t received_reported_;
  uint32_t consumed_reported_;
  bool ack_now_ = false;           // a flag or a duplicate asked for an ack
  bool report_requested_ = false;  // consumed a kFlagReportNow frame
  bool recovery_;
  uint32_t report_threshold_;
  // When the oldest unreported arrival came (recovery; kNeverNs: none).
  TimeNs unreported_since_ns_ = kNeverNs;
  TimeNs delayed_ack_ns_;  // min_rto_ns / 4
  // One past the highest pair frame number heard (0: none yet).
  uint32_t heard_ = 0;
  uint32_t window_;
  uint32_t depth_;
  uint32_t seq_mask_;  // seq_table_mask(depth)
  std::vector<uint32_t> held_;
  const Clock& clock_;
};

}  // namespace weft::collectives::internal

#endif  // WEFT_COLLECTIVES_ENGINE_RECEIVE_WINDOW_H_
