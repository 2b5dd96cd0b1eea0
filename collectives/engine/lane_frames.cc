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

Frame Lane::recv_frame(uint32_t slot) const {
  return data_.sub(slot * slot_bytes_, slot_bytes_);
}

Frame Lane::send_frame(uint32_t slot) const {
  if (slot == depth_) return control_.sub(0, kHeaderBytes);  // ack
  if (slot == depth_ + 1) return abort_;
  return data_.sub((depth_ + slot) * slot_bytes_, slot_bytes_);
}

Frame Lane::head(uint32_t index) const {
  return control_.sub(kHeaderBytes + index * kHeaderBytes, kHeaderBytes);
}

Frame Lane::recv_head(uint32_t slot) const {
  return split_ ? head(slot) : recv_frame(slot).sub(0, kHeaderBytes);
}

Frame Lane::body(const Frame& frame) const {
  return split_ ? frame : frame.sub(kHeaderBytes, slot_bytes_ - kHeaderBytes);
}

Frame Lane::recv_body(uint32_t slot) const { return body(recv_frame(slot)); }

Frame Lane::send_head(uint32_t slot) const {
  if (slot >= depth_) return send_frame(slot);  // ack, abort: whole
  return split_ ? head(depth_ + slot) : send_frame(slot).sub(0, kHeaderBytes);
}

Frame Lane::send_body(uint32_t slot) const { return body(send_frame(slot)); }

}  // namespace weft::internal
