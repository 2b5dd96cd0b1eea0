// WorkId: what a posted work request is, typed. Callers choose it when they
// post and get it back in the completion. Fabrics that need a 64-bit wire
// value (verbs' wr_id) convert with encode()/decode() here and nowhere else.
#ifndef WEFT_FABRIC_WORK_ID_H_
#define WEFT_FABRIC_WORK_ID_H_

#include <cstdint>
#include <optional>
#include <string>

namespace weft {

enum class WorkKind : uint8_t { kSend = 1, kRecv = 2 };

const char* work_kind_name(WorkKind kind);

struct WorkId {
  // Largest peer index encode() can carry (24 bits).
  static constexpr uint32_t kMaxPeer = (1u << 24) - 1;

  WorkKind kind = WorkKind::kSend;
  uint32_t peer = 0;  // the rank at the other end; REQUIRES: <= kMaxPeer
  uint32_t slot = 0;  // caller's index, typically the frame's slot

  friend bool operator==(const WorkId&, const WorkId&) = default;

  uint64_t encode() const;
  // nullopt when `wire` was not produced by encode().
  static std::optional<WorkId> decode(uint64_t wire);
  std::string to_string() const;  // "send peer 3 slot 7"
};

}  // namespace weft

#endif  // WEFT_FABRIC_WORK_ID_H_
