// Lane: moving to another cable (lane.h, "Moving"): the new endpoint, the
// kMove frames that trade its destination, and the switch.
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
#include "absl/strings/str_format.h"
#include "collectives/engine/lane.h"

namespace weft::collectives::internal {

void Lane::begin_move(std::unique_ptr<Endpoint> endpoint, uint32_t carrier,
                      uint32_t via_cable, uint32_t generation) {
  WEFT_ASSERT(pending_ == nullptr && generation > this->generation() &&
                  generation <= kMaxMoves,
              "a move begun while another is under way, or out of turn");
  WEFT_ASSERT((endpoint->max_parts() >= 2) == split_,
              "a lane moved to an endpoint that splits frames otherwise");
  pending_ = std::move(endpoint);
  carrier_ = carrier;
  pending_via_ = via_cable;
  pending_generation_ = generation;
  WEFT_CHECK_INVARIANTS_OF(*this);
}

absl::StatusOr<Destination> Lane::move_destination() const {
  WEFT_ASSERT(pending_ != nullptr, "move_destination() with no move");
  return pending_->destination();
}

absl::Status Lane::finish_move(const Destination& peer, bool resend_now,
                               bool* refused) {
  WEFT_ASSERT(pending_ != nullptr, "finish_move() with no move");
  *refused = false;
  if (absl::Status s = pending_->connect(peer); !s.ok()) {
    abandon_move();
    *refused = true;
    return s;
  }
  via_cable_ = pending_via_;
  move_due_ns_ = 0;
  stats_.moves = pending_generation_;
  return switch_endpoint(std::move(pending_), resend_now);
}

absl::Status Lane::switch_endpoint(std::unique_ptr<Endpoint> endpoint,
                                   bool resend_now) {
  // Nothing more lands in the lane's frames through the old endpoint, and
  // none of its work completes from here on: what it had in flight is
  // forgotten (the frames not acknowledged are sent again below).
  (void)endpoint_->move_to_error();
  endpoint_ = std::move(endpoint);
  send_.forget_in_flight();
  ack_busy_ = false;
  abort_busy_ = false;
  move_busy_ = false;
  relay_busy_ = 0;
  // Every receive not holding an arrival is posted again, on the new
  // endpoint (the old one's receives, user memory's included, are gone).
  posted_recvs_ = 0;
  std::vector<uint8_t> held(depth_, 0);
  for (uint32_t i = 0; i < receive_.window(); ++i) {
    const uint32_t slot = receive_.slot_holding(receive_.consumed() + i);
    if (slot != kNoSlot) held[slot] = 1;
  }
  for (uint32_t slot = 0; slot < depth_; ++slot) {
    if (targets_.targeted(slot)) targets_.cancel(slot);
  }
  for (uint32_t slot = 0; slot < depth_; ++slot) {
    if (held[slot] != 0) continue;
    if (absl::Status s = repost(slot); !s.ok()) return s;
  }
  liveness_.note_heard(clock_.now_ns());
  resend_when_heard_ = !resend_now;
  if (resend_now) {
    if (absl::Status s = resend_unacknowledged(); !s.ok()) return s;
    // The peer hears this side over the new endpoint even when nothing
    // was left to resend, and answers with what it misses.
    if (absl::Status s = send_ack(kFlagProbe, kNoPeer); !s.ok()) return s;
  }
  WEFT_CHECK_INVARIANTS_OF(*this);
  return absl::OkStatus();
}

absl::Status Lane::resend_unacknowledged() {
  if (!recovery()) return absl::OkStatus();
  for (uint32_t seq = send_.peer_received(); seq != send_.next_seq(); ++seq) {
    if (absl::Status s = resend(seq, /*on_timeout=*/false); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Lane::probe_cable() {
  if (ack_busy_) return absl::OkStatus();
  return send_ack(kFlagProbe, kNoPeer);
}

bool Lane::send_move(uint32_t cable, uint32_t generation, uint32_t via_cable,
                     const Destination& own, bool reply) {
  if (move_busy_) return false;
  // The payload: the destination, then the physical cable (little-endian).
  const std::array<uint8_t, Destination::kWireBytes> wire = own.encode();
  std::byte* payload = move_.data() + kHeaderBytes;
  std::memcpy(payload, wire.data(), wire.size());
  for (uint32_t i = 0; i < 4; ++i) {
    payload[wire.size() + i] = static_cast<std::byte>(via_cable >> (8 * i));
  }
  FrameHeader header;
  header.type = FrameType::kMove;
  header.flags = reply ? kFlagMoveReply : 0;
  header.origin = cable;
  header.blamed = generation;
  if (!post(depth_ + 2, header, Frame(), kMovePayloadBytes).ok()) {
    return false;
  }
  move_busy_ = true;
  return true;
}

absl::Status Lane::note_move(uint32_t slot, const FrameHeader& h) {
  if (h.payload_bytes != kMovePayloadBytes) {
    return protocol_error(absl::StrFormat(
        "a move frame of %u payload bytes arrived; it has %u", h.payload_bytes,
        kMovePayloadBytes));
  }
  const std::span<const std::byte> body =
      recv_body(slot).span().first(kMovePayloadBytes);
  absl::StatusOr<Destination> d = Destination::decode(std::span<const uint8_t>(
      reinterpret_cast<const uint8_t*>(body.data()), Destination::kWireBytes));
  if (!d.ok()) {
    return protocol_error(absl::StrFormat(
        "a move frame carries no destination: %s", d.status().message()));
  }
  uint32_t via = 0;
  for (uint32_t i = 0; i < 4; ++i) {
    via |= static_cast<uint32_t>(body[Destination::kWireBytes + i]) << (8 * i);
  }
  moves_in_.push_back(MoveNotice{h.origin, h.blamed, via, *d,
                                 (h.flags & kFlagMoveReply) != 0});
  return repost(slot);
}

}  // namespace weft::collectives::internal
