// Reading a whole text file (a device JSON, a fault plan, a trace) with a
// bound: a file too large for what it claims to be, or a device that never
// ends (/dev/zero), is refused with a message instead of filling memory.
#ifndef WEFT_BASE_TEXT_FILE_H_
#define WEFT_BASE_TEXT_FILE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace weft::base {

// The bytes of `path`, at most `max_bytes` of them. `what` names the file
// in messages ("device JSON", "fault plan"). NotFound when it cannot be
// opened; InvalidArgument when it is larger than `max_bytes` or cannot be
// read (a directory).
absl::StatusOr<std::string> read_text_file(const std::string& path,
                                           size_t max_bytes,
                                           std::string_view what);

}  // namespace weft::base

#endif  // WEFT_BASE_TEXT_FILE_H_
