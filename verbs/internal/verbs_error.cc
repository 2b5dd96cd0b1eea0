#include "verbs/internal/verbs_error.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"

namespace weft::verbs::internal {

int errno_of(int rc, int saved_errno) {
  if (rc > 0) return rc;
  if (rc == -1 && saved_errno != 0) return saved_errno;
  return -rc;
}

absl::Status fabric_error(absl::StatusCode code, ErrorPlace place,
                          ErrorCause cause, std::string_view message) {
  place.cause = cause;
  return make_error(code, place, message);
}

absl::Status verbs_error(ErrorPlace place, std::string_view what, int err,
                         std::string_view hint) {
  absl::StatusCode code = absl::StatusCode::kInternal;
  ErrorCause cause = ErrorCause::kFabric;
  switch (err) {
    case ENOMEM:
    case ENOSPC:
    case EAGAIN:
    case EMFILE:
    case ENFILE:
      code = absl::StatusCode::kResourceExhausted;
      cause = ErrorCause::kResource;
      break;
    case EINVAL:
      code = absl::StatusCode::kInvalidArgument;
      break;
    case ETIMEDOUT:
    case EHOSTUNREACH:
    case ENETUNREACH:
      code = absl::StatusCode::kUnavailable;
      break;
    default:
      break;
  }
  std::string message = absl::StrFormat("%s failed: %s", what, errno_text(err));
  if (!hint.empty()) absl::StrAppendFormat(&message, "; %s", hint);
  return fabric_error(code, place, cause, message);
}

}  // namespace weft::verbs::internal
