// What the pieces of a Lane share (lane.h; send_window.h, receive_window.h,
// liveness.h): the lane's configuration, the protocol's constants, and the
// modular arithmetic on data sequence numbers, which wrap at 2^32.
#ifndef WEFT_COLLECTIVES_ENGINE_LANE_PROTOCOL_H_
#define WEFT_COLLECTIVES_ENGINE_LANE_PROTOCOL_H_

#include <bit>
#include <cstdint>

#include "collectives/group_options.h"

namespace weft::collectives::internal {

// Receives kept free of data for acknowledgements and aborts.
inline constexpr uint32_t kControlReserve = 2;
// After a gap, this many data frames are sent one at a time (Pacing).
inline constexpr uint32_t kLossyFrames = 128;
// Frames past the first missing one that an acknowledgement's sack names.
inline constexpr uint32_t kSackFrames = 32;
// No slot: a table entry that holds no frame.
inline constexpr uint32_t kNoSlot = 0xffffffff;

struct LaneConfig {
  uint32_t depth = 8;
  uint32_t max_frame_bytes = 512 << 10;
  RecoveryOptions recovery;
  // Data bytes (headers included) kept posted and not yet sent.
  uint64_t send_queue_bytes = uint64_t{1} << 20;
  // The fabric delivers every message once and in order
  // (Fabric::delivers_reliably()): nothing is ever resent, whatever
  // recovery.enabled says, and a data frame is kept until the peer
  // reports it consumed (its credit report is the acknowledgement).
  bool reliable = false;

  // Lost frames are resent: recovery on, over a fabric that may lose them.
  bool retransmits() const { return recovery.enabled && !reliable; }

  // Data frames the peer may hold at once.
  uint32_t window() const { return depth - kControlReserve; }
  uint32_t report_threshold() const { return window() / 2; }
  // A data frame carries up to max_frame_bytes of payload after its
  // kHeaderBytes header. Bytes of slab one lane needs (the same with
  // headers apart or not): its data frames (frames_bytes(), the depth's
  // receive frames then its send frames), its control frames
  // (control_bytes(): the acknowledgement frame, then, when the endpoint
  // takes two-part messages, a header for each data frame; lane.h) and
  // its abort frame (kAbortFrameBytes, lane.h; written only when the
  // group fails). `split`: headers apart from payloads, so a data frame
  // is its payload alone (page-aligned); else header and payload back to
  // back.
  uint64_t region_bytes() const;
  uint64_t frames_bytes(bool split) const;
  uint64_t control_bytes(bool split) const;
  // Bytes of one data frame in the data range.
  uint32_t slot_bytes(bool split) const;
};

// a is after b, modulo 2^32 (within half the number space).
inline bool seq_after(uint32_t a, uint32_t b) {
  const uint32_t d = a - b;
  return d != 0 && d < 0x80000000u;
}

// Tables indexed by data sequence number have a power-of-two size (at least
// depth, so more than a window) and are indexed by `seq & mask`: exact across
// the wrap at 2^32, and the numbers of one window never share an entry.
inline uint32_t seq_table_mask(uint32_t depth) {
  return std::bit_ceil(depth) - 1;
}

}  // namespace weft::collectives::internal

#endif  // WEFT_COLLECTIVES_ENGINE_LANE_PROTOCOL_H_
