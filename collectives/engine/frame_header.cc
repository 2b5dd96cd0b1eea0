#include "collectives/engine/frame_header.h"

#include <bit>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "collectives/dtype.h"
#include "collectives/group_options.h"
#include "collectives/internal/op_kind.h"
#include "fabric/assert.h"

namespace weft::collectives::internal {
namespace {

constexpr size_t kCheckOffset = 60;

// Fixed-width little-endian fields: one load or store on a little-endian
// host (the compiler turns the memcpy into a move), bytes otherwise.
template <typename T>
void put(std::byte* p, size_t at, T v) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(p + at, &v, sizeof v);
  } else {
    for (size_t i = 0; i < sizeof v; ++i) p[at + i] = std::byte(v >> (8 * i));
  }
}
template <typename T>
T get(const std::byte* p, size_t at) {
  T v = 0;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&v, p + at, sizeof v);
  } else {
    for (size_t i = 0; i < sizeof v; ++i)
      v |= static_cast<T>(std::to_integer<T>(p[at + i]) << (8 * i));
  }
  return v;
}
void put8(std::byte* p, size_t at, uint8_t v) { p[at] = std::byte{v}; }
void put32(std::byte* p, size_t at, uint32_t v) { put<uint32_t>(p, at, v); }
void put16(std::byte* p, size_t at, uint16_t v) { put<uint16_t>(p, at, v); }
void put48(std::byte* p, size_t at, uint64_t v) {
  put<uint32_t>(p, at, static_cast<uint32_t>(v));
  put<uint16_t>(p, at + 4, static_cast<uint16_t>(v >> 32));
}
uint8_t get8(const std::byte* p, size_t at) {
  return std::to_integer<uint8_t>(p[at]);
}
uint32_t get32(const std::byte* p, size_t at) { return get<uint32_t>(p, at); }
uint16_t get16(const std::byte* p, size_t at) { return get<uint16_t>(p, at); }
uint64_t get48(const std::byte* p, size_t at) {
  return get<uint32_t>(p, at) | (uint64_t{get<uint16_t>(p, at + 4)} << 32);
}

// FNV-1a over the header's first 60 bytes taken as fifteen little-endian
// 32-bit words: catches a frame that is not a header at all (garbage, a
// stale buffer) before any field is trusted, and any change to one word
// (each step is a bijection of the running hash). Word-wise, not bytewise:
// a quarter of the dependent multiplies, for a check run on every frame.
uint32_t checksum(const std::byte* p) {
  constexpr size_t kWord = 4;
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < kCheckOffset; i += kWord) {
    h = (h ^ get32(p, i)) * 16777619u;
  }
  return h;
}

}  // namespace

void FrameHeader::encode(std::span<std::byte, kHeaderBytes> out) const {
  WEFT_ASSERT(op.total_bytes <= kMaxHeaderTotalBytes &&
                  relay_rank <= kMaxRelayRank,
              "a header field past its width");
  std::byte* p = out.data();
  put32(p, 0, kFrameMagic);
  put8(p, 4, kProtocolVersion);
  put8(p, 5, static_cast<uint8_t>(type));
  put8(p, 6, flags);
  put8(p, 7, op.kind);
  put8(p, 8, op.dtype);
  put8(p, 9, op.reduce_op);
  put8(p, 10, op.algorithm);
  put8(p, 11, cause);
  put32(p, 12, op.group_id);
  put32(p, 16, op.op_seq);
  put32(p, 20, type == FrameType::kAck ? heard : op.root);
  put48(p, 24, op.total_bytes);
  put16(p, 30, static_cast<uint16_t>(relay_rank));
  switch (type) {
    case FrameType::kData:
      put32(p, 32, item);
      put32(p, 36, frame);
      break;
    case FrameType::kAck:
      put32(p, 32, suspect);
      put32(p, 36, sack);
      break;
    case FrameType::kAbort:
    case FrameType::kMove:
      put32(p, 32, origin);
      put32(p, 36, blamed);
      break;
  }
  put32(p, 40, payload_bytes);
  put32(p, 44, received);
  put32(p, 48, op.chunk_bytes);
  put32(p, 52, consumed);
  put32(p, 56, seq);
  put32(p, kCheckOffset, checksum(p));
}

absl::StatusOr<FrameHeader> FrameHeader::decode(
    std::span<const std::byte> frame) {
  return decode(frame, frame.size());
}

absl::StatusOr<FrameHeader> FrameHeader::decode(
    std::span<const std::byte> header, uint64_t frame_bytes) {
  if (frame_bytes < kHeaderBytes || header.size() < kHeaderBytes) {
    return absl::DataLossError(absl::StrFormat(
        "a frame of %u bytes arrived, shorter than the %u-byte weft header",
        frame_bytes, kHeaderBytes));
  }
  const std::byte* p = header.data();
  // The version before the checksum: another version may check otherwise.
  if (get32(p, 0) == kFrameMagic && get8(p, 4) != kProtocolVersion) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the peer speaks weft protocol version %u, this rank version %u; run "
        "the same weft version on every rank",
        get8(p, 4), kProtocolVersion));
  }
  if (get32(p, 0) != kFrameMagic || get32(p, kCheckOffset) != checksum(p)) {
    return absl::DataLossError(
        "a frame arrived whose header is not a weft header (bad magic or "
        "checksum); the peer is not speaking weft's protocol");
  }
  FrameHeader h;
  const uint8_t type = get8(p, 5);
  if (type < static_cast<uint8_t>(FrameType::kData) ||
      type > static_cast<uint8_t>(FrameType::kMove)) {
    return absl::DataLossError(
        absl::StrFormat("a frame of unknown type %u arrived", type));
  }
  h.type = static_cast<FrameType>(type);
  h.flags = get8(p, 6);
  h.op.kind = get8(p, 7);
  h.op.dtype = get8(p, 8);
  h.op.reduce_op = get8(p, 9);
  h.op.algorithm = get8(p, 10);
  h.cause = get8(p, 11);
  h.op.group_id = get32(p, 12);
  h.op.op_seq = get32(p, 16);
  if (h.type == FrameType::kAck) {
    h.heard = get32(p, 20);
  } else {
    h.op.root = get32(p, 20);
  }
  h.op.total_bytes = get48(p, 24);
  h.relay_rank = get16(p, 30);
  switch (h.type) {
    case FrameType::kData:
      h.item = get32(p, 32);
      h.frame = get32(p, 36);
      break;
    case FrameType::kAck:
      h.suspect = get32(p, 32);
      h.sack = get32(p, 36);
      break;
    case FrameType::kAbort:
    case FrameType::kMove:
      h.origin = get32(p, 32);
      h.blamed = get32(p, 36);
      break;
  }
  h.payload_bytes = get32(p, 40);
  h.received = get32(p, 44);
  h.op.chunk_bytes = get32(p, 48);
  h.consumed = get32(p, 52);
  h.seq = get32(p, 56);
  if (uint64_t{kHeaderBytes} + h.payload_bytes != frame_bytes) {
    return absl::DataLossError(absl::StrFormat(
        "a frame of %u bytes arrived whose header announces %u payload "
        "bytes; it was cut short or padded",
        frame_bytes, h.payload_bytes));
  }
  return h;
}

std::string describe_op(const OpIdentity& op) {
  return absl::StrFormat(
      "%s #%u (%s, %s, %u bytes, root %u, group %08x, %u-byte chunks)",
      op_kind_name(op.kind, op.reduce_op), op.op_seq,
      algorithm_name(static_cast<Algorithm>(op.algorithm)),
      dtype_name(static_cast<DType>(op.dtype)), op.total_bytes, op.root,
      op.group_id, op.chunk_bytes);
}

}  // namespace weft::collectives::internal
