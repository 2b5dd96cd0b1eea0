#include "tools/cli/byte_size.h"

#include <cctype>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "base/absl_compat.h"

namespace weft::tools::cli {
namespace {

// The multiplier a suffix names; 0 for an unknown suffix.
uint64_t suffix_scale(std::string suffix) {
  for (char& c : suffix) c = static_cast<char>(std::tolower(c));
  if (suffix.empty() || suffix == "b") return 1;
  constexpr std::string_view kUnits = "kmg";
  const size_t at = kUnits.find(suffix[0]);
  if (at == std::string_view::npos) return 0;
  const std::string tail = suffix.substr(1);
  if (!tail.empty() && tail != "b" && tail != "ib") return 0;
  return uint64_t{1} << (10 * (at + 1));
}

}  // namespace

absl::StatusOr<uint64_t> parse_byte_size(std::string_view flag,
                                         std::string_view text,
                                         uint64_t max_bytes) {
  size_t digits = 0;
  while (digits < text.size() &&
         std::isdigit(static_cast<unsigned char>(text[digits]))) {
    ++digits;
  }
  uint64_t number = 0;
  const uint64_t scale = suffix_scale(std::string(text.substr(digits)));
  const bool parsed =
      digits > 0 && scale != 0 &&
      absl::SimpleAtoi(base::to_absl(text.substr(0, digits)), &number);
  if (!parsed || number > max_bytes / scale) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--%s=%s is not a byte count in 0..%u (a whole number, optionally "
        "with K, M or G)",
        flag, text, max_bytes));
  }
  return number * scale;
}

}  // namespace weft::tools::cli
