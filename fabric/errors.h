// Errors that say where they happened. Every failure weft reports is an
// absl::Status whose message names rank, peer and device, and which carries
// the same facts as a structured payload, so tools (the fault sweep's
// oracles, users' retry logic) can read them without parsing text.
#ifndef WEFT_FABRIC_ERRORS_H_
#define WEFT_FABRIC_ERRORS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace weft {

inline constexpr uint32_t kNoPeer = 0xffff'ffffu;

// What went wrong, coarsely: lets callers and oracles classify errors.
enum class ErrorCause : uint8_t {
  kUnknown = 0,
  kBadInput,         // the caller's arguments
  kCompletionError,  // a work completion with a non-success status
  kSequence,         // a sequence gap, duplicate or reorder
  kMismatch,         // ranks called different collectives
  kDeadline,         // a peer stayed silent past the deadline
  kPeerUnavailable,  // a peer is known to be gone
  kCancelled,        // abort()
  kResource,         // a fabric limit (queue pairs, memory regions, depth)
  kFabric,           // the fabric itself failed (library, device, port)
  kGroupFailed,      // an earlier error poisoned the group
  kRevoked,          // Group::revoke(), on this rank or a peer
  kExcluded,         // Group::shrink() decided a group without this rank
};
// The last cause this version knows; a higher value read off the wire (a
// newer peer's) is reported as kUnknown.
inline constexpr ErrorCause kLastErrorCause = ErrorCause::kExcluded;

std::string_view error_cause_name(ErrorCause cause);

struct ErrorPlace {
  uint32_t rank = kNoPeer;
  uint32_t peer = kNoPeer;  // kNoPeer when no single peer is involved
  std::string device;
  ErrorCause cause = ErrorCause::kUnknown;
};

// "rank 2, peer 3, device rdma_en5: " (parts that are unknown are left out).
std::string error_prefix(const ErrorPlace& place);

// A status of `code` whose message is error_prefix(place) + message, with
// `place` attached as payload.
absl::Status make_error(absl::StatusCode code, const ErrorPlace& place,
                        std::string_view message);

// The place attached by make_error, if any.
std::optional<ErrorPlace> error_place(const absl::Status& status);

// "Connection refused (errno 111)" for a captured errno value; "no errno"
// for 0.
std::string errno_text(int error_number);

}  // namespace weft

#endif  // WEFT_FABRIC_ERRORS_H_
