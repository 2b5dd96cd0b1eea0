// Lane: where a frame's parts lie (its header and payload, apart over a
// two-part endpoint) and what a receive posted into user memory holds when
// it completes (lane.h).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "collectives/engine/lane.h"

namespace weft::internal {

void Lane::land_targeted(uint32_t slot, const ReceiveTargets::Target& target,
                         const FrameHeader& h) {
  if (h.type == FrameType::kData && h.seq == target.seq &&
      h.payload_bytes == target.user.bytes()) {
    in_place_[slot] = target.user;  // the frame it was posted for
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
  const Frame& user = in_place_[a.slot];
  if (user.slab() != nullptr) return user.span();
  return recv_body(a.slot).span().first(a.header.payload_bytes);
}

Frame Lane::recv_head(uint32_t slot) const {
  return split_ ? heads_.sub(slot * kHeaderBytes, kHeaderBytes)
                : recv_frames_[slot].sub(0, kHeaderBytes);
}

Frame Lane::recv_body(uint32_t slot) const {
  const Frame& f = recv_frames_[slot];
  return f.sub(split_ ? 0 : kHeaderBytes, f.bytes() - kHeaderBytes);
}

Frame Lane::send_head(uint32_t slot) const {
  if (slot >= depth_) return send_frames_[slot];  // ack, abort: whole
  return split_ ? heads_.sub((depth_ + slot) * kHeaderBytes, kHeaderBytes)
                : send_frames_[slot].sub(0, kHeaderBytes);
}

Frame Lane::send_body(uint32_t slot) const {
  const Frame& f = send_frames_[slot];
  return f.sub(split_ ? 0 : kHeaderBytes, f.bytes() - kHeaderBytes);
}

}  // namespace weft::internal
