#include "collectives/engine/send_window.h"

#include <bit>

namespace weft::collectives::internal {

SendWindow::SendWindow(const LaneConfig& config, const Clock& clock,
                       uint32_t first_seq)
    : next_seq_(first_seq),
      peer_received_(first_seq),
      peer_consumed_(first_seq),
      window_(config.window()),
      send_queue_bytes_(config.send_queue_bytes),
      seq_mask_(seq_table_mask(config.depth)),
      rto_ns_(config.recovery.initial_rto_ns),
      min_rto_ns_(config.recovery.min_rto_ns),
      max_rto_ns_(config.recovery.max_rto_ns),
      max_retries_(config.recovery.max_retries),
      recovery_(config.retransmits()),
      keep_until_consumed_(config.reliable),
      clock_(clock),
      slots_(config.depth),
      numbers_(seq_mask_ + 1) {
  // Checked in every build: the free list is inline, kMaxDepth long
  // (GroupOptions::validate() keeps depth within it).
  if (config.depth > free_slots_.size()) {
    fabric::internal::assertion_failed(
        "config.depth <= GroupOptions::kMaxDepth",
        "a lane deeper than its free list holds", __FILE__, __LINE__);
  }
  for (uint32_t i = 0; i < config.depth; ++i) {
    free_push(config.depth - 1 - i);  // slot 0 first
  }
  WEFT_CHECK_INVARIANTS_OF(*this);
}

void SendWindow::count_post(uint32_t slot) {
  Slot& s = slots_[slot];
  ++s.posts;
  ++sends_in_flight_;
  queued_bytes_ += kHeaderBytes + s.payload_bytes;
  s.posted_ns = clock_.now_ns();
  s.queued = sends_in_flight_;
}

void SendWindow::note_posted(const FrameHeader& header, uint32_t posted_as) {
  WEFT_ASSERT(can_send(),
              "a data frame was posted without a credit, a free "
              "slot or room in the send queue");
  WEFT_ASSERT(header.seq == next_seq_, "a data frame posted out of order");
  const uint32_t slot = free_slots_[--free_count_];
  slots_[slot].seq = header.seq;
  slots_[slot].payload_bytes = header.payload_bytes;
  count_post(slot);
  if (lossy_frames_left_ > 0) --lossy_frames_left_;
  if (recovery_ || keep_until_consumed_) {
    slots_[slot].unacked = true;
    Number& number = numbers_[seq_index(next_seq_)];
    number.slot = slot;
    number.sent_ns = kNeverNs;  // queued: the clock starts when it leaves
    number.resent = false;
    number.posted_as = posted_as;
  }
  ++next_seq_;
  WEFT_CHECK_INVARIANTS_OF(*this);
}

void SendWindow::note_left(uint32_t slot) {
  Slot& s = slots_[slot];
  --s.posts;
  --sends_in_flight_;
  queued_bytes_ -= kHeaderBytes + s.payload_bytes;
  // Round trips and timeouts count from when a frame left, not from when it
  // was queued behind others.
  const TimeNs now_ns = clock_.now_ns();
  const TimeNs wire_ns = now_ns - std::max(s.posted_ns, last_send_done_ns_);
  last_send_done_ns_ = now_ns;
  if (recovery_ && s.unacked) {
    Number& number = numbers_[seq_index(s.seq)];
    if (number.slot == slot) {
      number.sent_ns = now_ns;
      // Frames posted behind it count too: the peer sends its burst as
      // this side does.
      number.ack_wait_ns = std::max(s.queued, sends_in_flight_ + 1) * wire_ns;
    }
  }
  if (s.posts == 0 && !s.unacked) free_push(slot);
  WEFT_CHECK_INVARIANTS_OF(*this);
}

void SendWindow::forget_in_flight() {
  const TimeNs now_ns = clock_.now_ns();
  for (uint32_t slot = 0; slot < depth(); ++slot) {
    Slot& s = slots_[slot];
    if (s.posts == 0) continue;
    sends_in_flight_ -= s.posts;
    queued_bytes_ -= uint64_t{s.posts} * (kHeaderBytes + s.payload_bytes);
    s.posts = 0;
    if (s.unacked) {
      Number& number = numbers_[seq_index(s.seq)];
      if (number.slot == slot && number.sent_ns == kNeverNs) {
        number.sent_ns = now_ns;
      }
    } else {
      free_push(slot);
    }
  }
  retries_ = 0;
  WEFT_CHECK_INVARIANTS_OF(*this);
}

SendWindow::Report SendWindow::absorb(uint32_t received, uint32_t consumed) {
  // Counters never pass what this side sent; an older report (reordered or
  // duplicated) says nothing new.
  const uint32_t unacked = next_seq_ - peer_received_;
  const uint32_t unconsumed = next_seq_ - peer_consumed_;
  const bool new_received = seq_after(received, peer_received_);
  const bool new_consumed = seq_after(consumed, peer_consumed_);
  if ((new_received && received - peer_received_ > unacked) ||
      (new_consumed && consumed - peer_consumed_ > unconsumed)) {
    return Report::kOverclaimed;
  }
  const bool stale = !new_received && !new_consumed &&
                     (received != peer_received_ || consumed != peer_consumed_);
  if (new_received) note_received(received);
  if (new_consumed && keep_until_consumed_) release(peer_consumed_, consumed);
  if (new_consumed) peer_consumed_ = consumed;
  // Consumed implies received.
  if (seq_after(peer_consumed_, peer_received_)) note_received(peer_consumed_);
  WEFT_CHECK_INVARIANTS_OF(*this);
  return stale ? Report::kStale : Report::kAccepted;
}

void SendWindow::note_received(uint32_t new_received) {
  if (recovery_) {
    const Number& oldest = numbers_[seq_index(peer_received_)];
    if (!oldest.resent && oldest.sent_ns != kNeverNs) {
      sample_round_trip(clock_.now_ns() - oldest.sent_ns);
    }
    release(peer_received_, new_received);
    retries_ = 0;
  }
  peer_received_ = new_received;
}

void SendWindow::release(uint32_t from, uint32_t to) {
  for (uint32_t s = from; s != to; ++s) {
    Number& number = numbers_[seq_index(s)];
    const uint32_t number_slot = number.slot;
    Slot& held = slots_[number_slot];
    number.slot = kNoSlot;
    held.unacked = false;
    if (held.posts == 0) free_push(number_slot);
  }
}

void SendWindow::sample_round_trip(TimeNs sample_ns) {
  // Jacobson/Karels: srtt += (m - srtt) / 8, rttvar += (|m - srtt| -
  // rttvar) / 4, rto = srtt + 4 rttvar, within [min_rto, max_rto].
  if (srtt_ns_ == 0) {
    srtt_ns_ = std::max<TimeNs>(sample_ns, 1);
    rttvar_ns_ = sample_ns / 2;
  } else {
    const TimeNs err = sample_ns - srtt_ns_;
    srtt_ns_ += err / 8;
    rttvar_ns_ += ((err < 0 ? -err : err) - rttvar_ns_) / 4;
  }
  rto_ns_ = std::clamp(srtt_ns_ + 4 * rttvar_ns_, min_rto_ns_, max_rto_ns_);
}

uint64_t SendWindow::missing(uint32_t sack, uint32_t heard) const {
  // Resending one changes only its own entries, so each is decided alone.
  const uint32_t holds_to =
      sack == 0 ? peer_received_
                : peer_received_ + kSackFrames - std::countl_zero(sack);
  uint64_t resend = 0;
  for (uint32_t s = peer_received_; s != next_seq_; ++s) {
    const uint32_t i = s - peer_received_;
    if (i > kSackFrames) break;  // beyond what the sack can say
    const bool held = i > 0 && ((sack >> (i - 1)) & 1u) != 0;
    if (held) continue;
    const Number& number = numbers_[seq_index(s)];
    const bool before_held = seq_after(holds_to, s) && !number.resent;
    const bool overtaken = heard != 0 && seq_after(heard - 1, number.posted_as);
    if (before_held || overtaken) resend |= uint64_t{1} << i;
  }
  return resend;
}

uint32_t SendWindow::begin_resend(uint32_t seq) {
  Number& number = numbers_[seq_index(seq)];
  number.sent_ns = kNeverNs;  // until the copy leaves
  number.resent = true;
  WEFT_CHECK_INVARIANTS_OF(*this);
  // Still queued: that post stands for the copy.
  return slots_[number.slot].posts > 0 ? kNoSlot : number.slot;
}

void SendWindow::note_reposted(uint32_t seq, uint32_t posted_as) {
  Number& number = numbers_[seq_index(seq)];
  number.posted_as = posted_as;
  count_post(number.slot);
  WEFT_CHECK_INVARIANTS_OF(*this);
}

void SendWindow::note_timeout() {
  ++retries_;
  rto_ns_ = std::min(2 * rto_ns_, max_rto_ns_);
  WEFT_CHECK_INVARIANTS_OF(*this);
}

void SendWindow::check_invariants() const {
  const uint32_t credited = next_seq_ - peer_consumed_;
  WEFT_ASSERT(credited <= window_,
              "more data frames sent than the peer's window holds");
  WEFT_ASSERT(peer_received_ - peer_consumed_ <= credited,
              "the peer's received count is outside [consumed, next]");
  // Slots: at most one send each, and the totals match.
  uint32_t posts = 0;
  uint64_t bytes = 0;
  uint32_t idle = 0;
  uint32_t unacked_slots = 0;
  for (const Slot& s : slots_) {
    WEFT_ASSERT(s.posts <= 1,
                "a data slot has more than one send in flight, or completed "
                "one it never posted");
    posts += s.posts;
    bytes += uint64_t{s.posts} * (kHeaderBytes + s.payload_bytes);
    if (s.posts == 0 && !s.unacked) ++idle;
    if (s.unacked) ++unacked_slots;
  }
  WEFT_ASSERT(posts == sends_in_flight_,
              "sends in flight differ from the slots' posts");
  WEFT_ASSERT(bytes == queued_bytes_,
              "queued bytes differ from the frames in flight");
  // The free list is exactly the idle slots, each once.
  WEFT_ASSERT(free_count_ == idle,
              "the free list and the idle slots differ in number");
  std::vector<bool> listed(depth(), false);
  for (uint32_t i = 0; i < free_count_; ++i) {
    const uint32_t slot = free_slots_[i];
    WEFT_ASSERT(slot < depth(), "a free slot out of range");
    WEFT_ASSERT(!listed[slot], "a slot listed free twice");
    WEFT_ASSERT(slots_[slot].posts == 0 && !slots_[slot].unacked,
                "a busy slot listed free");
    listed[slot] = true;
  }
  // Unacknowledged numbers and the slots holding them.
  const uint32_t kept_from = recovery_              ? peer_received_
                             : keep_until_consumed_ ? peer_consumed_
                                                    : next_seq_;
  const uint32_t unacked = next_seq_ - kept_from;
  WEFT_ASSERT(unacked_slots == unacked,
              "slots marked unacknowledged differ from numbers in flight");
  WEFT_ASSERT(!recovery_ || !keep_until_consumed_,
              "frames resent over a fabric that delivers reliably");
  for (uint32_t i = 0; i <= seq_mask_; ++i) {
    const uint32_t seq = kept_from + i;
    const Number& number = numbers_[seq_index(seq)];
    const uint32_t slot = number.slot;
    if (i >= unacked) {
      WEFT_ASSERT(slot == kNoSlot,
                  "a slot named for a number not unacknowledged");
      continue;
    }
    WEFT_ASSERT(slot < depth(), "an unacknowledged number without a slot");
    WEFT_ASSERT(slots_[slot].unacked && slots_[slot].seq == seq,
                "a slot holds another number than the table says");
    WEFT_ASSERT(slots_[slot].posts == 0 || number.sent_ns == kNeverNs,
                "a number still queued has a departure time");
  }
  WEFT_ASSERT(lossy_frames_left_ <= kLossyFrames,
              "more lossy frames left than kLossyFrames");
  WEFT_ASSERT(retries_ <= max_retries_, "retries past max_retries");
  WEFT_ASSERT(!recovery_ || (rto_ns_ >= min_rto_ns_ && rto_ns_ <= max_rto_ns_),
              "the timeout is outside [min_rto_ns, max_rto_ns]");
  WEFT_ASSERT(srtt_ns_ >= 0 && rttvar_ns_ >= 0,
              "a negative round-trip estimate");
}

}  // namespace weft::collectives::internal
