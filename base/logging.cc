#include "base/logging.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace weft::base {
namespace {

constexpr const char* kNames[] = {"E", "W", "I", "D"};
constexpr int kUnread = -1;

void write_line(LogLevel level, std::string_view message) {
  std::fprintf(stderr, "weft %s %.*s\n", kNames[static_cast<int>(level)],
               static_cast<int>(message.size()), message.data());
}

LogLevel level_from_env() {
  const char* text = std::getenv("WEFT_LOG_LEVEL");
  if (text == nullptr || *text == '\0') return LogLevel::kWarning;
  const std::string value(text);
  if (value == "error") return LogLevel::kError;
  if (value == "warning") return LogLevel::kWarning;
  if (value == "info") return LogLevel::kInfo;
  if (value == "debug") return LogLevel::kDebug;
  write_line(LogLevel::kWarning,
             absl::StrFormat("WEFT_LOG_LEVEL=%s is not a level; use error, "
                             "warning, info or debug. Logging at warning",
                             value));
  return LogLevel::kWarning;
}

// kUnread until the first message asks; then the level.
std::atomic<int> threshold{kUnread};

}  // namespace

bool log_enabled(LogLevel level) {
  int t = threshold.load(std::memory_order_relaxed);
  if (t == kUnread) {
    int unread = kUnread;
    const int read = static_cast<int>(level_from_env());
    // Another thread may have read it first; the warning may then show
    // twice, the level is the same.
    t = threshold.compare_exchange_strong(unread, read) ? read : unread;
  }
  return static_cast<int>(level) <= t;
}

void log_line(LogLevel level, std::string_view message) {
  write_line(level, message);
}

void reload_log_level() {
  threshold.store(static_cast<int>(level_from_env()),
                  std::memory_order_relaxed);
}

}  // namespace weft::base
