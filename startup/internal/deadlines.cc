#include "startup/internal/deadlines.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "fabric/assert.h"

namespace weft::startup::internal {
namespace {

// Whole seconds past any limit weft accepts still fit in TimeNs once
// multiplied out; longer text is refused before it could overflow.
constexpr size_t kMaxWholeDigits = 9;
constexpr size_t kMaxFractionDigits = 9;  // nanoseconds

// "600", "2.5", "0.000001": decimal seconds to nanoseconds; nullopt for
// anything else (signs, exponents, spaces, empty parts).
std::optional<TimeNs> to_ns(std::string_view text) {
  const size_t point = text.find('.');
  const std::string_view whole = text.substr(0, point);
  const std::string_view fraction = point == std::string_view::npos
                                        ? std::string_view()
                                        : text.substr(point + 1);
  if (whole.empty() || whole.size() > kMaxWholeDigits ||
      fraction.size() > kMaxFractionDigits ||
      (point != std::string_view::npos && fraction.empty())) {
    return std::nullopt;
  }
  TimeNs ns = 0;
  for (char c : whole) {
    if (c < '0' || c > '9') return std::nullopt;
    ns = ns * 10 + (c - '0');
  }
  ns *= kNsPerS;
  TimeNs scale = kNsPerS;
  for (char c : fraction) {
    if (c < '0' || c > '9') return std::nullopt;
    scale /= 10;
    ns += (c - '0') * scale;
  }
  return ns;
}

}  // namespace

absl::StatusOr<TimeNs> parse_seconds(const char* name, std::string_view text,
                                     TimeNs max_ns) {
  const std::optional<TimeNs> ns = to_ns(text);
  if (!ns.has_value() || *ns <= 0 || *ns > max_ns) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s='%s' is not a number of seconds above 0 and up to %d: set it to "
        "decimal seconds (e.g. 600 or 2.5), or unset it for the default",
        name, text, max_ns / kNsPerS));
  }
  return *ns;
}

absl::StatusOr<TimeNs> read_seconds(const EnvLookup& getenv, const char* name,
                                    TimeNs fallback_ns, TimeNs max_ns) {
  const char* text = getenv(name);
  if (text == nullptr) return fallback_ns;
  return parse_seconds(name, text, max_ns);
}

TimeNs unreachable_after_ns(const RecoveryOptions& recovery) {
  TimeNs total_ns = 0;
  TimeNs rto_ns = recovery.min_rto_ns;
  for (uint32_t i = 0; i < recovery.max_retries; ++i) {
    total_ns += rto_ns;
    rto_ns = std::min(2 * rto_ns, recovery.max_rto_ns);
  }
  return total_ns;
}

RecoveryOptions outlast(RecoveryOptions recovery, TimeNs deadline_ns) {
  WEFT_ASSERT(deadline_ns > 0 && deadline_ns <= GroupOptions::kMaxTimeoutNs,
              "deadline outside what GroupOptions accepts");
  // The retries the current ceiling needs, if the limit allows that many.
  uint32_t retries = 0;
  TimeNs total_ns = 0;
  TimeNs rto_ns = recovery.min_rto_ns;
  while (total_ns < deadline_ns && retries <= RecoveryOptions::kMaxRetries) {
    total_ns += rto_ns;
    rto_ns = std::min(2 * rto_ns, recovery.max_rto_ns);
    ++retries;
  }
  if (retries <= RecoveryOptions::kMaxRetries) {
    recovery.max_retries = std::max(recovery.max_retries, retries);
  } else {
    // A higher ceiling, with every retry: the doubling from the floor to the
    // ceiling takes under 40 of the kMaxRetries, and each of the rest waits
    // twice the deadline over kMaxRetries.
    recovery.max_retries = RecoveryOptions::kMaxRetries;
    recovery.max_rto_ns =
        std::max(recovery.max_rto_ns,
                 2 * deadline_ns / RecoveryOptions::kMaxRetries + 1);
  }
  WEFT_ASSERT(unreachable_after_ns(recovery) >= deadline_ns,
              "retransmission gives up before the deadline");
  return recovery;
}

}  // namespace weft::startup::internal
