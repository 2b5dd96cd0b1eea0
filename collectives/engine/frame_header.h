// FrameHeader: the 64 bytes at the start of every frame the collectives
// engine sends. It says what the frame is (data, acknowledgement, abort),
// which operation and chunk it belongs to, and carries the reliability and
// flow-control counters, so a receiver can refuse a frame that belongs to a
// different collective (kMismatch) instead of reducing it into the wrong
// buffer, place frames by sequence number and return credits.
//
// Wire layout, little-endian, fixed:
//   0 magic u32 | 4 version u8 | 5 type u8 | 6 flags u8 | 7 kind u8
//   8 dtype u8 | 9 reduce op u8 | 10 algorithm u8 | 11 cause u8
//   12 group id u32 | 16 op sequence u32 | 20 root u32 | 24 total bytes u48
//   30 relay rank u16 | 32 item u32 | 36 frame u32 | 40 payload bytes u32 | 44 received u32
//   48 chunk bytes u32 | 52 consumed u32 | 56 sequence u32 | 60 check u32
// (check: FNV-1a over bytes 0..59 as fifteen little-endian u32 words).
// Frames other than data have no item: bytes 32 and 36 carry the origin and
// the blamed peer (abort), the suspect and the selective acknowledgement
// (acknowledgement), or the cable that moves and the move's generation
// (move). An acknowledgement has no operation either: bytes 20
// carry `heard` and its sequence field the sender's next data number.
// A frame of a lane whose only cable died travels through another rank
// (lane.h, "Relaying"): kFlagRelayTo on its way to the relay, which
// forwards it with kFlagRelayFrom; byte 30 names the rank it is for, then
// the rank it came from (version 6: total bytes shrank to 48 bits for it).
#ifndef WEFT_COLLECTIVES_ENGINE_FRAME_HEADER_H_
#define WEFT_COLLECTIVES_ENGINE_FRAME_HEADER_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "absl/status/statusor.h"
#include "fabric/errors.h"

namespace weft::collectives::internal {

inline constexpr uint32_t kFrameMagic = 0x54464557;  // "WEFT"
inline constexpr uint8_t kProtocolVersion = 6;
inline constexpr uint32_t kHeaderBytes = 64;

// kAck: the counters alone (acknowledgement, credit report, probe reply).
// kMove: the lane of another cable to the same peer moves to the cable this
// frame came over (lane.h, "Moving"); its payload is the sender's new
// endpoint's Destination.
enum class FrameType : uint8_t { kData = 1, kAck = 2, kAbort = 3, kMove = 4 };

// Header flags.
// Data: report `consumed` as soon as this frame is consumed (the sender of
// an operation that receives nothing waits for its frames to be checked).
inline constexpr uint8_t kFlagReportNow = 1;
// Data: acknowledge receipt at once (an agreement's messages, whose
// answers wait on it). An operation's last frame does not ask: the next
// frame the peer sends this side carries the acknowledgement (every frame
// carries `received`), or one goes within min_rto_ns / 4; an
// acknowledgement of its own would take the link's per-message time just
// when the next operation's data starts.
inline constexpr uint8_t kFlagAckNow = 2;
// Any frame: the sender heard nothing for a while; answer with kAck.
inline constexpr uint8_t kFlagProbe = 4;
// kMove: the answer to the peer's kMove (this side connected already).
inline constexpr uint8_t kFlagMoveReply = 8;
// kAck, recovery off: answer with kAck, whose `heard` proves this frame's
// receive was posted again (control_credit.h).
inline constexpr uint8_t kFlagAnswer = 16;
// Any frame of a relayed lane (lane.h, "Relaying"): on its first hop, to
// a relay that forwards it to rank `relay_rank`; on its second, from that
// relay, sent by rank `relay_rank`. Neither belongs to the lane it arrives
// on: its counters and sequence numbers are the relayed lane's.
inline constexpr uint8_t kFlagRelayTo = 32;
inline constexpr uint8_t kFlagRelayFrom = 64;
// The largest total_bytes a header carries (48 bits), and relay_rank.
inline constexpr uint64_t kMaxHeaderTotalBytes = (uint64_t{1} << 48) - 1;
inline constexpr uint32_t kMaxRelayRank = 0xffff;

// What a data frame belongs to: identical on every rank running the same
// operation, so any difference is a mismatch.
struct OpIdentity {
  uint8_t kind = 0;
  uint8_t dtype = 0;
  uint8_t reduce_op = 0;
  uint8_t algorithm = 0;
  uint32_t group_id = 0;
  uint32_t op_seq = 0;
  uint32_t root = 0;
  uint64_t total_bytes = 0;
  uint32_t chunk_bytes = 0;

  friend bool operator==(const OpIdentity&, const OpIdentity&) = default;
};

struct FrameHeader {
  FrameType type = FrameType::kData;
  uint8_t flags = 0;
  OpIdentity op;
  uint32_t item = 0;   // ordinal of the item among the op's items on the lane
  uint32_t frame = 0;  // index of this frame within the item
  uint32_t payload_bytes = 0;
  // kData: the frame's data sequence number on the lane (modulo 2^32).
  // kAck: the number the sender's next data frame will get, so every data
  // frame posted before this acknowledgement is below it.
  uint32_t seq = 0;
  // Reliability and flow control, cumulative modulo 2^32: data frames the
  // sender of this header has received in order (every number below it
  // arrived) and data frames it has consumed.
  uint32_t received = 0;
  uint32_t consumed = 0;
  // kAbort: the error cause, the rank where the failure started and the
  // peer that failure blamed (kNoPeer: none). kMove: `origin` is the cable
  // whose lane moves and `blamed` the move's generation (lane.h).
  uint8_t cause = 0;
  uint32_t origin = kNoPeer;
  uint32_t blamed = kNoPeer;
  // kAck: the rank the sender believes silent (kNoPeer: none), and which
  // data frames after the first missing one arrived: bit i set means
  // number received + 1 + i is held.
  uint32_t suspect = kNoPeer;
  uint32_t sack = 0;
  // kAck: one past the highest frame number (the immediate) the sender
  // has received from the peer, of any frame type; 0: none yet. With
  // recovery, a frame the peer posted before that one and that did not
  // arrive was lost, since a cable delivers in posting order; without, a
  // control frame below it had its receive posted again
  // (control_credit.h).
  uint32_t heard = 0;
  // kFlagRelayTo: the rank the frame is for; kFlagRelayFrom: the rank
  // that sent it. 0 otherwise.
  uint32_t relay_rank = 0;

  // REQUIRES: op.total_bytes <= kMaxHeaderTotalBytes, relay_rank <=
  // kMaxRelayRank.
  void encode(std::span<std::byte, kHeaderBytes> out) const;
  // Checks magic, version, checksum, type and that `frame_bytes` (the bytes
  // that arrived) equals the header plus the payload it announces.
  static absl::StatusOr<FrameHeader> decode(std::span<const std::byte> frame);
  // The same for a frame that arrived in two parts: `header` holds its
  // first bytes (kHeaderBytes, or all of a shorter frame) and
  // `frame_bytes` arrived in all.
  static absl::StatusOr<FrameHeader> decode(std::span<const std::byte> header,
                                            uint64_t frame_bytes);
};

// "all_sum #7 (ring, float32, 4096 bytes, root 0)" for messages.
std::string describe_op(const OpIdentity& op);

}  // namespace weft::collectives::internal

#endif  // WEFT_COLLECTIVES_ENGINE_FRAME_HEADER_H_
