// A small logger (Debian's Abseil has no absl/log). Messages go to stderr,
// one line each: "weft <E|W|I|D> <message>". WEFT_LOG_LEVEL picks how much:
// error, warning (the default), info (connects, GID choices, a group's
// failure, timeline files: a few lines per run) or debug (also every
// retransmission). An unknown value is reported once, with the accepted
// ones, and the default is kept. docs/verbs-macos.md ("When a real cluster
// misbehaves") lists the messages.
#ifndef WEFT_BASE_LOGGING_H_
#define WEFT_BASE_LOGGING_H_

#include <string_view>

#include "absl/strings/str_format.h"

namespace weft::base {

enum class LogLevel { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3 };

bool log_enabled(LogLevel level);
void log_line(LogLevel level, std::string_view message);
// Reads WEFT_LOG_LEVEL again (it is read once, at the first message):
// for programs and tests that set it after starting.
void reload_log_level();

template <typename... Args>
void log(LogLevel level, const absl::FormatSpec<Args...>& format,
         const Args&... args) {
  if (log_enabled(level)) log_line(level, absl::StrFormat(format, args...));
}

}  // namespace weft::base

#endif  // WEFT_BASE_LOGGING_H_
