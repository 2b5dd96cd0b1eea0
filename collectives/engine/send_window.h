// SendWindow: the sending half of a lane's protocol (lane.h: Credits,
// Pacing, Retransmission). It numbers data frames, keeps the peer's
// counters (what it received and consumed), decides when a data frame may
// be posted, tracks the data send slots and the frames they hold until
// acknowledged, estimates the round trip and says when and what to resend.
// It posts nothing: the Lane posts and tells it what was posted and what
// completed. The Lane's clock is read exactly where the protocol needs the
// time (a frame posted or leaving, a round-trip sample).
//
// Invariants (checked by check_invariants(); numbers modulo 2^32, n =
// next_seq(), r = peer_received(), c = peer_consumed(), "x <= y" meaning
// y - x <= n - c):
//  - Credits: c <= r <= n and n - c <= window: no frame goes into a receive
//    the peer has not posted, and the peer's counters never pass what was
//    sent.
//  - Slots: each data slot has at most one send in flight;
//    sends_in_flight() counts them and queued_bytes() is the sum of their
//    frames' bytes, headers included.
//  - Free list: a slot is free exactly when no send from it is in flight
//    and it holds no unacknowledged frame; no slot is listed twice.
//  - Unacknowledged (recovery on): every number in [r, n) is held by one
//    slot: the table names it, the slot's header carries the number and the
//    slot is marked unacknowledged; no other slot is marked and the table
//    names no slot for a number outside [r, n); a number whose slot has a
//    send in flight has not left yet (no departure time). Over a fabric
//    that delivers reliably the same holds of [c, n): a frame is kept
//    until the peer reports it consumed (a credit report is the
//    acknowledgement), never resent here, for a move to another cable to
//    resend from. Otherwise, with recovery off, no slot holds a frame
//    beyond its send.
//  - Timing: at most kLossyFrames frames left to pace one at a time; at
//    most max_retries retries; the timeout within [min_rto_ns, max_rto_ns]
//    (recovery on, with options RecoveryOptions::validate() accepts);
//    srtt and rttvar not negative.
#ifndef WEFT_COLLECTIVES_ENGINE_SEND_WINDOW_H_
#define WEFT_COLLECTIVES_ENGINE_SEND_WINDOW_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "collectives/engine/frame_header.h"
#include "collectives/engine/lane_protocol.h"
#include "collectives/kernels/cache_lines.h"
#include "fabric/assert.h"
#include "fabric/clock.h"

namespace weft::collectives::internal {

class SendWindow {
 public:
  // What the counters of a frame from the peer said (absorb()).
  enum class Report : uint8_t {
    kAccepted,    // new, or what was known already
    kStale,       // older than what was known (reordered or duplicated)
    kOverclaimed  // beyond what this side sent: a protocol violation
  };

  // Data numbering starts at `first_seq` (0 on a lane; tests start near the
  // wrap). `clock` outlives the window.
  SendWindow(const LaneConfig& config, const Clock& clock,
             uint32_t first_seq = 0);

  // A free slot, a credit and room in the send queue.
  bool can_send() const {
    return free_count_ > 0 && next_seq_ - peer_consumed_ < window_ &&
           queued_bytes_ < queue_limit();
  }
  // The peer has a free receive for the next data frame (the credit part
  // of can_send()).
  bool has_credit() const { return next_seq_ - peer_consumed_ < window_; }
  // The slot the next data frame goes out from. REQUIRES: can_send().
  uint32_t free_slot() const { return free_slots_[free_count_ - 1]; }
  // The data frame numbered next_seq() was posted from free_slot() as the
  // pair's frame `posted_as`; `header` is what it carries (kept for
  // resending). REQUIRES: can_send(), header.seq == next_seq().
  void note_posted(const FrameHeader& header, uint32_t posted_as);
  // A data send from `slot` completed: the frame left.
  void note_left(uint32_t slot);

  // Takes in the counters a frame from the peer carries: frames received
  // in order and consumed. Acknowledged slots are freed, and the round
  // trip sampled from the oldest one (unless it was resent).
  Report absorb(uint32_t received, uint32_t consumed);

  // Bit i set: number peer_received() + i is to be resent at once. `sack`
  // names the frames the peer holds beyond its gap (bit i: number
  // peer_received() + 1 + i) and `heard` is one past the last pair frame
  // it heard (0: none). Missing before a held frame and not resent yet:
  // lost or late after a reorder (the timeout covers a lost copy). Posted
  // before a frame the peer heard: lost, as the cable keeps order.
  uint64_t missing(uint32_t sack, uint32_t heard) const;
  // Number `seq` (unacknowledged) is sent again: returns the slot to post
  // it from, or kNoSlot when its last post has not left yet (that post
  // then stands for the copy).
  uint32_t begin_resend(uint32_t seq);
  // The copy of `seq` begin_resend() asked for was posted as the pair's
  // frame `posted_as`.
  void note_reposted(uint32_t seq, uint32_t posted_as);
  // A gap was seen: the next kLossyFrames data frames go one at a time.
  void note_gap() {
    lossy_frames_left_ = kLossyFrames;
    WEFT_CHECK_INVARIANTS_OF(*this);
  }
  // The timeout fired and the oldest frame was resent: one more retry,
  // and the timeout doubles (up to max_rto_ns).
  void note_timeout();
  bool retries_exhausted() const { return retries_ == max_retries_; }
  // The lane moved to another endpoint (lane.h, "Moving"): no send in
  // flight will complete. Each is taken as done (a frame still queued as
  // having left now); the frames not acknowledged stay held, to be sent
  // again, and the retries start over.
  void forget_in_flight();

  // The oldest unacknowledged frame's departure plus the timeout (at least
  // srtt plus how long the peer's answer may queue); kNeverNs while it
  // still waits in the local send queue, when all was received, or with
  // recovery off.
  TimeNs retransmit_due_ns() const {
    if (!recovery_ || peer_received_ == next_seq_) return kNeverNs;
    const uint32_t at = seq_index(peer_received_);
    const Number& number = numbers_[at];
    if (number.sent_ns == kNeverNs) return kNeverNs;
    return number.sent_ns + std::max(rto_ns_, srtt_ns_ + number.ack_wait_ns);
  }

  uint32_t next_seq() const { return next_seq_; }
  uint32_t peer_received() const { return peer_received_; }
  uint32_t peer_consumed() const { return peer_consumed_; }
  uint32_t unacknowledged() const { return next_seq_ - peer_received_; }
  bool all_received() const { return peer_received_ == next_seq_; }
  bool all_consumed() const { return peer_consumed_ == next_seq_; }
  uint32_t sends_in_flight() const { return sends_in_flight_; }
  uint64_t queued_bytes() const { return queued_bytes_; }
  uint32_t lossy_frames_left() const { return lossy_frames_left_; }
  uint32_t retries() const { return retries_; }
  TimeNs rto_ns() const { return rto_ns_; }
  TimeNs srtt_ns() const { return srtt_ns_; }
  // Data slot `slot` has a send posted and not completed.
  bool slot_in_flight(uint32_t slot) const { return slots_[slot].posts > 0; }
  // Data slot `slot` holds a frame not yet acknowledged (recovery), or
  // not yet reported consumed (a fabric that delivers reliably).
  bool slot_unacked(uint32_t slot) const { return slots_[slot].unacked; }
  // The data number and payload bytes of the frame last posted from data
  // slot `slot` (its header stays encoded in the slot's header frame
  // until the slot is reused).
  uint32_t slot_seq(uint32_t slot) const { return slots_[slot].seq; }
  uint32_t slot_payload_bytes(uint32_t slot) const {
    return slots_[slot].payload_bytes;
  }

  // Asks the cache for the per-slot and per-number records.
  void prefetch() const {
    prefetch_bytes(slots_.data(), slots_.size() * sizeof(Slot));
    prefetch_bytes(numbers_.data(), numbers_.size() * sizeof(Number));
  }

  // WEFT_ASSERTs every invariant above. O(depth).
  void check_invariants() const;

 private:
  uint32_t seq_index(uint32_t seq) const { return seq & seq_mask_; }
  uint32_t depth() const { return static_cast<uint32_t>(slots_.size()); }
  void free_push(uint32_t slot) {
    free_slots_[free_count_++] = static_cast<uint8_t>(slot);
  }
  uint64_t queue_limit() const {
    return lossy_frames_left_ > 0 ? 1 : send_queue_bytes_;
  }
  // A send from `slot` was posted now, behind the others in flight.
  void count_post(uint32_t slot);
  void note_received(uint32_t new_received);
  // Frees the slots holding numbers [from, to).
  void release(uint32_t from, uint32_t to);
  void sample_round_trip(TimeNs sample_ns);

  // The counters every can_send() and service step reads come first.
  // Data numbers [peer_received_, next_seq_) are unacknowledged.
  uint32_t next_seq_;
  uint32_t peer_received_;
  uint32_t peer_consumed_;
  uint32_t sends_in_flight_ = 0;
  uint32_t free_count_ = 0;    // slots listed in free_slots_
  uint64_t queued_bytes_ = 0;  // of the sends in flight
  // Data frames still to send one at a time after a gap (see Pacing).
  uint32_t lossy_frames_left_ = 0;
  uint32_t window_;
  uint64_t send_queue_bytes_;
  uint32_t seq_mask_;  // seq_table_mask(depth)
  uint32_t retries_ = 0;
  TimeNs rto_ns_;
  TimeNs srtt_ns_ = 0;  // smoothed round trip (0: no sample yet)
  TimeNs rttvar_ns_ = 0;
  TimeNs last_send_done_ns_ = 0;  // when the last data send completed
  // RecoveryOptions.
  TimeNs min_rto_ns_;
  TimeNs max_rto_ns_;
  uint32_t max_retries_;
  bool recovery_;             // LaneConfig::retransmits()
  bool keep_until_consumed_;  // LaneConfig::reliable
  const Clock& clock_;

  // Per data slot, one record (a frame's completion reads one line):
  // the data number and payload bytes of the frame last posted from it
  // (for resending and for the bytes its completion frees), sends posted
  // and not completed, when its last post was made and the data sends in
  // flight then (itself included), and whether it holds a frame not yet
  // acknowledged (recovery).
  struct Slot {
    uint32_t seq = 0;
    uint32_t payload_bytes = 0;
    uint32_t posts = 0;
    uint32_t queued = 0;
    TimeNs posted_ns = 0;
    bool unacked = false;
  };
  // Per data number s, at seq_index(s), one record: the slot holding it
  // while unacknowledged; the pair frame number (immediate) of its last
  // post; when it last left (its send completed; kNeverNs while queued);
  // how long the peer's acknowledgement of it may queue behind the peer's
  // own frames (as many as this side had in flight when s was posted or
  // when it left, each as long as s took to leave: collectives send alike
  // both ways; the timeout is at least srtt plus that, so round trips
  // measured on small frames do not fire early on bigger ones); and
  // whether it was resent (Karn: no round trip from a resent one).
  struct Number {
    uint32_t slot = kNoSlot;
    uint32_t posted_as = 0;
    TimeNs sent_ns = 0;
    TimeNs ack_wait_ns = 0;
    bool resent = false;
  };
  static_assert(sizeof(Slot) == 32 && sizeof(Number) == 32,
                "a slot's or a number's record spans two cache lines");
  // Slots free to send from, used last first: inline, read with the
  // counters above by every can_send().
  std::array<uint8_t, GroupOptions::kMaxDepth> free_slots_{};
  std::vector<Slot> slots_;
  std::vector<Number> numbers_;
};

}  // namespace weft::collectives::internal

#endif  // WEFT_COLLECTIVES_ENGINE_SEND_WINDOW_H_
