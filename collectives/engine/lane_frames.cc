// Lane: where a frame's parts lie (its header and payload, apart over a
// two-part endpoint), an operation's data frames sent (straight from user
// memory where the endpoint can) and what becomes of those sent from user
// memory, and what a receive posted into user memory holds when it
// completes (lane.h).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/engine/lane.h"

namespace weft::collectives::internal {

void Lane::land_targeted(uint32_t slot, const ReceiveTargets::Target& target,
                         const FrameHeader& h) {
  // A frame carried for a relayed lane is never this lane's own.
  const bool carried =
      !relayed_ && (h.flags & (kFlagRelayTo | kFlagRelayFrom)) != 0;
  if (h.type == FrameType::kData && h.seq == target.seq &&
      h.payload_bytes == target.user.bytes() && !carried) {
    set_in_place(slot, target.user);  // the frame it was posted for
    return;
  }
  // Another message took the receive: its payload (at most the target's
  // size, the receive's capacity less the header) goes where a receive
  // of the lane's own frame would have put it. The target's memory is
  // left for its own frame, which is consumed only after this (see
  // receive_targets.h).
  if (h.payload_bytes > 0) {
    std::memcpy(recv_body(slot).data(), target.user.data(), h.payload_bytes);
    stats_.bytes_moved_aside += h.payload_bytes;
  }
}

std::span<const std::byte> Lane::payload(const Arrival& a) const {
  if (const Frame user = in_place(a.slot); user.slab() != nullptr) {
    return user.span();
  }
  return recv_body(a.slot).span().first(a.header.payload_bytes);
}

absl::Status Lane::send(const DataFrame& f) {
  const uint32_t slot = send_.free_slot();
  const auto bytes = static_cast<uint32_t>(f.payload.size());
  WEFT_ASSERT(bytes <= send_body(slot).bytes(),
              "a payload larger than the send frame");
  FrameHeader header;
  header.op = f.op;
  header.item = f.item;
  header.frame = f.frame;
  if (f.report_now) header.flags |= kFlagReportNow;
  if (f.ack_now && recovery_) header.flags |= kFlagAckNow;
  // Straight from registered user memory: the header from the slot's own
  // frame, the payload from the caller's, as one two-part message. Not
  // over an endpoint that sends one part only (a device without two
  // gather entries).
  if (f.registered != nullptr && bytes > 0 && split_ && !parts_sends_refused_) {
    const absl::StatusOr<Frame> user = f.registered->frame(
        static_cast<uint64_t>(f.payload.data() - f.registered->data()), bytes);
    WEFT_ASSERT(user.ok(),
                "a registered payload lies outside its registration");
    const absl::Status s = post_data(slot, header, *user, bytes);
    if (s.ok()) {
      stats_.bytes_zero_copy += bytes;
      return s;
    }
    // The fabric cannot send from this memory (it takes no two-part
    // sends, or has no memory region left for it): this frame is staged,
    // and with no two-part sends at all, every later one too. Any other
    // error is the queue pair's and stands.
    if (!absl::IsUnimplemented(s) && !absl::IsResourceExhausted(s)) return s;
    if (absl::IsUnimplemented(s)) parts_sends_refused_ = true;
  }
  if (bytes > 0) std::memcpy(send_body(slot).data(), f.payload.data(), bytes);
  stats_.bytes_staged += bytes;
  return post_data(slot, header, Frame(), bytes);
}

void Lane::note_user_payload(uint32_t slot, const Frame& user) {
  const bool had = user_payload(slot).slab() != nullptr;
  const bool has = user.slab() != nullptr;
  user_frames_ = user_frames_ - (had ? 1 : 0) + (has ? 1 : 0);
  if (!has && user_payloads_.empty()) return;
  if (user_payloads_.empty()) user_payloads_.resize(depth_);
  user_payloads_[slot] = user;
}

void Lane::set_in_place(uint32_t slot, const Frame& user) {
  if (user.slab() == nullptr && in_place_.empty()) return;
  if (in_place_.empty()) in_place_.resize(depth_);
  in_place_[slot] = user;
}

bool Lane::detach(const std::byte* begin, const std::byte* end) {
  if (user_frames_ == 0) return true;
  bool all = true;
  for (uint32_t slot = 0; slot < depth_; ++slot) {
    const Frame user = user_payload(slot);
    if (user.slab() == nullptr) continue;
    const std::byte* at = user.data();
    if (begin != nullptr && (at >= end || at + user.bytes() <= begin)) {
      continue;
    }
    if (send_.slot_in_flight(slot)) {
      all = false;  // the fabric may still read it
      continue;
    }
    // Acknowledged already (the slot is free) or waiting for its
    // acknowledgement: a resend goes from the lane's own frame from now on.
    if (send_.slot_unacked(slot) && user.bytes() > 0) {
      std::memcpy(send_body(slot).data(), at, user.bytes());
    }
    note_user_payload(slot, Frame());
  }
  return all;
}

}  // namespace weft::collectives::internal
