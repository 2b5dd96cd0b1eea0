// Turning a failed verbs call into a status that names the place (rank,
// peer, device), the call, the errno and its meaning, and what to do.
#ifndef WEFT_VERBS_INTERNAL_VERBS_ERROR_H_
#define WEFT_VERBS_INTERNAL_VERBS_ERROR_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "fabric/errors.h"

namespace weft::verbs::internal {

// The errno a verbs call reported. rdma-core returns it (positive) from
// modify_qp and the post_* operations; Apple's library returns it negated
// (-12) or returns -1 and sets errno. `saved_errno` is errno right after the
// call (cleared before it).
int errno_of(int rc, int saved_errno);

// "Cannot allocate memory (errno 12)"; "no errno" for 0.
using ::weft::errno_text;

// A status for "<what> failed: <errno_text>[; <hint>]" at `place`. The code
// follows the errno: resource errnos give ResourceExhausted (cause
// kResource), EINVAL InvalidArgument, timeouts and unreachable hosts
// Unavailable, anything else Internal (cause kFabric).
absl::Status verbs_error(ErrorPlace place, std::string_view what, int err,
                         std::string_view hint = {});

// A status of `code` and `cause` at `place` with `message`.
absl::Status fabric_error(absl::StatusCode code, ErrorPlace place,
                          ErrorCause cause, std::string_view message);

}  // namespace weft::verbs::internal

#endif  // WEFT_VERBS_INTERNAL_VERBS_ERROR_H_
