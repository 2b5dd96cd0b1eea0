// A small logger (Debian's Abseil has no absl/log). Messages go to stderr
// with a level prefix; WEFT_LOG_LEVEL (error, warning, info, debug) filters.
#ifndef WEFT_FABRIC_LOGGING_H_
#define WEFT_FABRIC_LOGGING_H_

#include <string_view>

#include "absl/strings/str_format.h"

namespace weft {

enum class LogLevel { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3 };

bool log_enabled(LogLevel level);
void log_line(LogLevel level, std::string_view message);

template <typename... Args>
void log(LogLevel level, const absl::FormatSpec<Args...>& format,
         const Args&... args) {
  if (log_enabled(level)) log_line(level, absl::StrFormat(format, args...));
}

}  // namespace weft

#endif  // WEFT_FABRIC_LOGGING_H_
