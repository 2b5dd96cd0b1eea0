// Fuzzes the 64-byte header every collectives frame carries
// (collectives/engine/frame_header.h). Any bytes must give a header or
// the typed error computed here from the layout alone (DataLoss for short,
// foreign or cut frames, FailedPrecondition for another version), and a
// decoded header must encode back to the same 64 bytes.
//
// A checksum guards the header, so random bytes almost never get past it.
// Each input is therefore decoded three times: as it is; with the magic and
// checksum made right (reaching the version, type and length checks); and
// with the payload length made right too (reaching every field).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/engine/frame_header.h"
#include "tests/fuzz/fuzz_check.h"

namespace weft::collectives::internal {
namespace {

constexpr size_t kMagicAt = 0;
constexpr size_t kVersionAt = 4;
constexpr size_t kTypeAt = 5;
constexpr size_t kPayloadAt = 40;
constexpr size_t kCheckAt = 60;

uint64_t little_endian(std::span<const std::byte> b, size_t at, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    v |= std::to_integer<uint64_t>(b[at + i]) << (8 * i);
  }
  return v;
}

void put32(std::vector<std::byte>& b, size_t at, uint32_t v) {
  for (size_t i = 0; i < 4; ++i) b[at + i] = std::byte(v >> (8 * i));
}

// FNV-1a (32-bit) over the header's first 60 bytes as little-endian
// 32-bit words.
uint32_t fnv1a(std::span<const std::byte> b) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < kCheckAt; i += 4) {
    h = (h ^ static_cast<uint32_t>(little_endian(b, i, 4))) * 16777619u;
  }
  return h;
}

absl::StatusCode expected_code(std::span<const std::byte> b) {
  if (b.size() < kHeaderBytes) return absl::StatusCode::kDataLoss;
  const bool magic = little_endian(b, kMagicAt, 4) == 0x54464557;
  if (magic && little_endian(b, kVersionAt, 1) != kProtocolVersion) {
    return absl::StatusCode::kFailedPrecondition;
  }
  if (!magic || little_endian(b, kCheckAt, 4) != fnv1a(b)) {
    return absl::StatusCode::kDataLoss;
  }
  const uint64_t type = little_endian(b, kTypeAt, 1);
  // kData 1, kAck 2, kAbort 3, kMove 4.
  if (type < 1 || type > 4) return absl::StatusCode::kDataLoss;
  if (kHeaderBytes + little_endian(b, kPayloadAt, 4) != b.size()) {
    return absl::StatusCode::kDataLoss;
  }
  return absl::StatusCode::kOk;
}

void check(std::span<const std::byte> frame) {
  absl::StatusOr<FrameHeader> h = FrameHeader::decode(frame);
  WEFT_FUZZ_CHECK(h.status().code() == expected_code(frame));
  if (!h.ok()) {
    WEFT_FUZZ_CHECK(!h.status().message().empty());
    return;
  }
  WEFT_FUZZ_CHECK(h->payload_bytes == frame.size() - kHeaderBytes);
  // Version 6: total bytes in 48 bits, then the relay rank (u16).
  WEFT_FUZZ_CHECK(h->op.total_bytes == little_endian(frame, 24, 6));
  WEFT_FUZZ_CHECK(h->relay_rank == little_endian(frame, 30, 2));
  WEFT_FUZZ_CHECK(h->received == little_endian(frame, 44, 4));
  WEFT_FUZZ_CHECK(h->consumed == little_endian(frame, 52, 4));
  WEFT_FUZZ_CHECK(h->seq == little_endian(frame, 56, 4));
  // Bytes 32 and 36 mean what the frame's type says.
  const uint64_t at32 = little_endian(frame, 32, 4);
  const uint64_t at36 = little_endian(frame, 36, 4);
  switch (h->type) {
    case FrameType::kData:
      WEFT_FUZZ_CHECK(h->item == at32 && h->frame == at36);
      break;
    case FrameType::kAck:
      WEFT_FUZZ_CHECK(h->suspect == at32 && h->sack == at36);
      break;
    case FrameType::kAbort:
    case FrameType::kMove:
      WEFT_FUZZ_CHECK(h->origin == at32 && h->blamed == at36);
      break;
  }
  std::byte wire[kHeaderBytes];
  h->encode(std::span<std::byte, kHeaderBytes>(wire));
  WEFT_FUZZ_CHECK(std::memcmp(wire, frame.data(), kHeaderBytes) == 0);
  // Error messages describe a received header's operation, whatever its
  // kind, dtype and algorithm bytes hold.
  WEFT_FUZZ_CHECK(!describe_op(h->op).empty());
}

}  // namespace
}  // namespace weft::collectives::internal

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace weft::collectives::internal;
  const auto* bytes = reinterpret_cast<const std::byte*>(data);
  check(std::span<const std::byte>(bytes, size));
  if (size < kHeaderBytes) return 0;
  std::vector<std::byte> fixed(bytes, bytes + size);
  put32(fixed, kMagicAt, kFrameMagic);
  put32(fixed, kCheckAt, fnv1a(fixed));
  check(fixed);
  put32(fixed, kPayloadAt, static_cast<uint32_t>(size - kHeaderBytes));
  put32(fixed, kCheckAt, fnv1a(fixed));
  check(fixed);
  return 0;
}
