#include "fabric/work_id.h"

#include "absl/strings/str_format.h"

namespace weft {
namespace {
// Layout of the 64-bit wire value: kind in bits 56..63, peer in 32..55,
// slot in 0..31.
constexpr int kKindShift = 56;
constexpr int kPeerShift = 32;
constexpr uint64_t kPeerMask = WorkId::kMaxPeer;
constexpr uint64_t kSlotMask = 0xffff'ffffull;
}  // namespace

const char* work_kind_name(WorkKind kind) {
  switch (kind) {
    case WorkKind::kSend:
      return "send";
    case WorkKind::kRecv:
      return "recv";
  }
  return "unknown";
}

uint64_t WorkId::encode() const {
  return (static_cast<uint64_t>(kind) << kKindShift) |
         ((static_cast<uint64_t>(peer) & kPeerMask) << kPeerShift) |
         (static_cast<uint64_t>(slot) & kSlotMask);
}

std::optional<WorkId> WorkId::decode(uint64_t wire) {
  const auto kind = static_cast<uint8_t>(wire >> kKindShift);
  if (kind != static_cast<uint8_t>(WorkKind::kSend) &&
      kind != static_cast<uint8_t>(WorkKind::kRecv)) {
    return std::nullopt;
  }
  WorkId id;
  id.kind = static_cast<WorkKind>(kind);
  id.peer = static_cast<uint32_t>((wire >> kPeerShift) & kPeerMask);
  id.slot = static_cast<uint32_t>(wire & kSlotMask);
  return id;
}

std::string WorkId::to_string() const {
  return absl::StrFormat("%s peer %u slot %u", work_kind_name(kind), peer,
                         slot);
}

}  // namespace weft
