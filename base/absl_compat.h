// Bridges std::string_view and absl::string_view. Debian 12's Abseil
// (20220623) is built with its own absl::string_view class, so the two are
// different types there (current Abseil makes them the same). weft's API
// speaks std::string_view; convert at calls into Abseil with these.
#ifndef WEFT_BASE_ABSL_COMPAT_H_
#define WEFT_BASE_ABSL_COMPAT_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace weft::base {

inline absl::string_view to_absl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}
inline std::string_view to_std(absl::string_view s) {
  return std::string_view(s.data(), s.size());
}
// A status's message as std::string (for tests and for composing).
inline std::string message_of(const absl::Status& status) {
  return std::string(status.message());
}

}  // namespace weft::base

#endif  // WEFT_BASE_ABSL_COMPAT_H_
