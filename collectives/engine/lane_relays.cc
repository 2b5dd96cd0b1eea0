// Lane: relaying (lane.h, "Relaying"): the lane whose only cable died
// swaps its endpoint for a relay's, and any lane carries frames of
// relayed lanes in relay frames of its own.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/engine/lane.h"

namespace weft::collectives::internal {

absl::Status Lane::relay(std::unique_ptr<Endpoint> endpoint) {
  WEFT_ASSERT(!relayed_ && pending_ == nullptr,
              "a lane relayed twice, or while it moves");
  WEFT_ASSERT((endpoint->max_parts() >= 2) == split_,
              "a lane relayed over an endpoint that splits frames otherwise");
  relayed_ = true;
  stats_.relayed = 1;
  move_due_ns_ = 0;
  // Nothing to connect: what was not acknowledged goes again at once.
  return switch_endpoint(std::move(endpoint), /*resend_now=*/true);
}

uint32_t Lane::relay_slots() const {
  return std::min(kRelaySlots, Endpoint::kMaxSends - depth_ - 3);
}

void Lane::set_relay_frames(const Frame& frames) {
  WEFT_ASSERT(relay_slots_ == 0 &&
                  frames.bytes() == uint64_t{relay_slots()} * frame_bytes(),
              "a lane's relay frames set twice, or of the wrong size");
  relay_frames_ = frames;
  relay_slots_ = relay_slots();
  WEFT_CHECK_INVARIANTS_OF(*this);
}

bool Lane::forward(std::span<const std::byte> frame, uint8_t flag,
                   uint32_t rank) {
  if (!can_forward() || frame.size() > frame_bytes() ||
      frame.size() < kHeaderBytes) {
    return false;
  }
  const uint32_t i = static_cast<uint32_t>(std::countr_one(relay_busy_));
  const Frame out = relay_frames_.sub(i * frame_bytes(), frame_bytes());
  std::memcpy(out.data(), frame.data(), frame.size());
  // The header is the relayed lane's, checked where it arrived: only the
  // mark changes (and with it the checksum).
  absl::StatusOr<FrameHeader> h =
      FrameHeader::decode(out.span().first(kHeaderBytes), frame.size());
  if (!h.ok()) return false;
  h->flags = static_cast<uint8_t>(
      (h->flags & ~(kFlagRelayTo | kFlagRelayFrom)) | flag);
  h->relay_rank = rank;
  h->encode(out.span().first<kHeaderBytes>());
  const WorkId id{WorkKind::kSend, peer_, depth_ + 3 + i};
  if (!endpoint_
           ->post_send(id, out, static_cast<uint32_t>(frame.size()),
                       send_sequence_.peek())
           .ok()) {
    return false;
  }
  send_sequence_.take();
  relay_busy_ |= 1u << i;
  ++stats_.frames_forwarded;
  stats_.bytes_forwarded += frame.size();
  WEFT_CHECK_INVARIANTS_OF(*this);
  return true;
}

std::vector<std::byte> Lane::relay_probe() {
  FrameHeader header;
  header.type = FrameType::kAck;
  header.flags = kFlagProbe;
  header.suspect = kNoPeer;
  header.seq = send_.next_seq();
  header.heard = receive_.heard();
  header.sack = receive_.sack();
  header.received = receive_.received();
  header.consumed = receive_.consumed();
  std::vector<std::byte> frame(kHeaderBytes);
  header.encode(std::span<std::byte, kHeaderBytes>(frame.data(), kHeaderBytes));
  return frame;
}

absl::Status Lane::keep_relayed(uint32_t slot, const FrameHeader& h) {
  RelayedFrame f;
  f.flag = static_cast<uint8_t>(h.flags & (kFlagRelayTo | kFlagRelayFrom));
  f.rank = h.relay_rank;
  const std::span<const std::byte> head = recv_head(slot).span();
  const std::span<const std::byte> body =
      recv_body(slot).span().first(h.payload_bytes);
  f.bytes.reserve(kHeaderBytes + body.size());
  f.bytes.insert(f.bytes.end(), head.begin(), head.begin() + kHeaderBytes);
  f.bytes.insert(f.bytes.end(), body.begin(), body.end());
  relayed_in_.push_back(std::move(f));
  return repost(slot);
}

}  // namespace weft::collectives::internal
