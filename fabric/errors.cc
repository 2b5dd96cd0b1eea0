#include "fabric/errors.h"

#include <cstring>
#include <vector>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/absl_compat.h"

namespace weft {
namespace {
constexpr absl::string_view kPayloadUrl = "type.weft.dev/ErrorPlace";
}  // namespace

std::string_view error_cause_name(ErrorCause cause) {
  switch (cause) {
    case ErrorCause::kUnknown:
      return "unknown";
    case ErrorCause::kBadInput:
      return "bad input";
    case ErrorCause::kCompletionError:
      return "completion error";
    case ErrorCause::kSequence:
      return "sequence error";
    case ErrorCause::kMismatch:
      return "collective mismatch";
    case ErrorCause::kDeadline:
      return "deadline exceeded";
    case ErrorCause::kPeerUnavailable:
      return "peer unavailable";
    case ErrorCause::kCancelled:
      return "cancelled";
    case ErrorCause::kResource:
      return "resource limit";
    case ErrorCause::kFabric:
      return "fabric failure";
    case ErrorCause::kGroupFailed:
      return "group failed";
    case ErrorCause::kRevoked:
      return "revoked";
    case ErrorCause::kExcluded:
      return "excluded";
  }
  return "unknown";
}

std::string error_prefix(const ErrorPlace& place) {
  std::vector<std::string> parts;
  if (place.rank != kNoPeer) parts.push_back(absl::StrCat("rank ", place.rank));
  if (place.peer != kNoPeer) parts.push_back(absl::StrCat("peer ", place.peer));
  if (!place.device.empty())
    parts.push_back(absl::StrCat("device ", place.device));
  if (parts.empty()) return "";
  return absl::StrCat(absl::StrJoin(parts, ", "), ": ");
}

absl::Status make_error(absl::StatusCode code, const ErrorPlace& place,
                        std::string_view message) {
  absl::Status status(
      code, absl::StrCat(error_prefix(place), base::to_absl(message)));
  // Payload: "rank|peer|cause|device"; the device goes last as it may hold
  // any character but a newline.
  status.SetPayload(kPayloadUrl,
                    absl::Cord(absl::StrFormat(
                        "%u|%u|%u|%s", place.rank, place.peer,
                        static_cast<unsigned>(place.cause), place.device)));
  return status;
}

std::optional<ErrorPlace> error_place(const absl::Status& status) {
  auto payload = status.GetPayload(kPayloadUrl);
  if (!payload.has_value()) return std::nullopt;
  const std::string text(*payload);
  std::vector<absl::string_view> fields =
      absl::StrSplit(text, absl::MaxSplits('|', 3));
  ErrorPlace place;
  unsigned cause = 0;
  if (fields.size() != 4 || !absl::SimpleAtoi(fields[0], &place.rank) ||
      !absl::SimpleAtoi(fields[1], &place.peer) ||
      !absl::SimpleAtoi(fields[2], &cause)) {
    return std::nullopt;
  }
  place.cause = static_cast<ErrorCause>(cause);
  place.device = std::string(fields[3]);
  return place;
}

std::string errno_text(int error_number) {
  if (error_number == 0) return "no errno";
  return absl::StrFormat("%s (errno %d)", std::strerror(error_number),
                         error_number);
}

}  // namespace weft
