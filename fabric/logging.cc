#include "fabric/logging.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace weft {
namespace {
LogLevel level_from_env() {
  const char* text = std::getenv("WEFT_LOG_LEVEL");
  if (text == nullptr) return LogLevel::kWarning;
  const std::string value(text);
  if (value == "error") return LogLevel::kError;
  if (value == "info") return LogLevel::kInfo;
  if (value == "debug") return LogLevel::kDebug;
  return LogLevel::kWarning;
}
constexpr const char* kNames[] = {"E", "W", "I", "D"};
}  // namespace

bool log_enabled(LogLevel level) {
  static const LogLevel threshold = level_from_env();
  return level <= threshold;
}

void log_line(LogLevel level, std::string_view message) {
  std::fprintf(stderr, "weft %s %.*s\n", kNames[static_cast<int>(level)],
               static_cast<int>(message.size()), message.data());
}

}  // namespace weft
