#include "collectives/engine/receive_window.h"

namespace weft::collectives::internal {

ReceiveWindow::ReceiveWindow(const LaneConfig& config, const Clock& clock,
                             uint32_t first_seq)
    : received_(first_seq),
      consumed_(first_seq),
      received_reported_(first_seq),
      consumed_reported_(first_seq),
      recovery_(config.retransmits()),
      report_threshold_(config.report_threshold()),
      delayed_ack_ns_(config.recovery.min_rto_ns / 4),
      window_(config.window()),
      depth_(config.depth),
      seq_mask_(seq_table_mask(config.depth)),
      held_(seq_mask_ + 1, kNoSlot),
      clock_(clock) {
  WEFT_CHECK_INVARIANTS_OF(*this);
}

ReceiveWindow::Placement ReceiveWindow::place(uint32_t seq, uint32_t slot) {
  const uint32_t offset = seq - consumed_;  // from the oldest in the inbox
  const bool in_window = offset < window_;
  const bool fresh = in_window && offset >= received_ - consumed_ &&
                     held_[seq_index(seq)] == kNoSlot;
  if (!recovery_ && seq != received_) return Placement::kNotNext;
  if (!fresh) {
    if (!in_window && seq_after(seq, consumed_)) {
      return Placement::kBeyondWindow;
    }
    // A copy of a frame already held or passed: the peer resent it, so it
    // missed our acknowledgement.
    ack_now_ = true;
    WEFT_CHECK_INVARIANTS_OF(*this);
    return Placement::kDuplicate;
  }
  // A gap: tell the sender at once which frames arrived past it.
  const bool early = seq != received_;
  if (early) ack_now_ = true;
  held_[seq_index(seq)] = slot;
  advance_received();
  if (recovery_ && unreported_since_ns_ == kNeverNs) {
    unreported_since_ns_ = clock_.now_ns();
  }
  WEFT_CHECK_INVARIANTS_OF(*this);
  return early ? Placement::kEarly : Placement::kNext;
}

void ReceiveWindow::advance_received() {
  while (received_ - consumed_ < window_ &&
         held_[seq_index(received_)] != kNoSlot) {
    ++received_;
  }
}

uint32_t ReceiveWindow::consume_front(bool report_now) {
  WEFT_ASSERT(inbox_size() > 0, "consumed from an empty inbox");
  const uint32_t slot = held_[seq_index(consumed_)];
  held_[seq_index(consumed_)] = kNoSlot;
  // The sender waits for this frame to be acknowledged once consumed.
  if (report_now) report_requested_ = true;
  ++consumed_;
  // A frame held ahead of a gap may now be next in line.
  advance_received();
  WEFT_CHECK_INVARIANTS_OF(*this);
  return slot;
}

uint32_t ReceiveWindow::sack() const {
  uint32_t sack = 0;
  const uint32_t room = window_ - (received_ - consumed_);
  for (uint32_t i = 1; i < room && i <= kSackFrames; ++i) {
    if (held_[seq_index(received_ + i)] != kNoSlot) sack |= 1u << (i - 1);
  }
  return sack;
}

void ReceiveWindow::note_heard(uint32_t frame) {
  if (heard_ == 0 || seq_after(frame + 1, heard_)) heard_ = frame + 1;
  WEFT_CHECK_INVARIANTS_OF(*this);
}

void ReceiveWindow::note_peer_next(uint32_t next_seq) {
  if (recovery_ && seq_after(next_seq, received_) &&
      next_seq - received_ <= window_) {
    ack_now_ = true;
  }
  WEFT_CHECK_INVARIANTS_OF(*this);
}

void ReceiveWindow::note_reported(bool ack) {
  received_reported_ = received_;
  consumed_reported_ = consumed_;
  report_requested_ = false;
  if (ack || recovery_) ack_now_ = false;
  unreported_since_ns_ = kNeverNs;
  WEFT_CHECK_INVARIANTS_OF(*this);
}

void ReceiveWindow::check_invariants() const {
  const uint32_t inbox = received_ - consumed_;
  WEFT_ASSERT(inbox <= window_, "the inbox is larger than the window");
  for (uint32_t i = 0; i <= seq_mask_; ++i) {
    const uint32_t slot = held_[seq_index(consumed_ + i)];
    if (i < inbox) {
      WEFT_ASSERT(slot != kNoSlot, "a number in the inbox is not held");
    } else if (i >= window_) {
      WEFT_ASSERT(slot == kNoSlot, "a frame held beyond the window");
    }
    WEFT_ASSERT(slot == kNoSlot || slot < depth_,
                "a frame held by a receive slot out of range");
  }
  WEFT_ASSERT(inbox == window_ || held_[seq_index(received_)] == kNoSlot,
              "the next number is held but not in the inbox");
  WEFT_ASSERT(!seq_after(received_reported_, received_) &&
                  !seq_after(consumed_reported_, consumed_),
              "reported counters ahead of the counters");
  WEFT_ASSERT(received_reported_ - consumed_reported_ <= window_,
              "reported consumed count ahead of reported received count");
  WEFT_ASSERT(recovery_ || unreported_since_ns_ == kNeverNs,
              "recovery state kept with recovery off");
}

}  // namespace weft::collectives::internal
