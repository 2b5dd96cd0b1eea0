#include "tools/cli/cli_common.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/absl_compat.h"
#include "fabric/assert.h"
#include "harness/outcome.h"
#include "tools/cli/flag_parse.h"

namespace weft::tools::cli {

int bad_input(std::string_view what) {
  return report_line("weft-sim", kExitBadInput, what);
}

int bad_input(const absl::Status& status) {
  return bad_input(base::to_std(status.message()));
}

int verdicts_exit_code(std::span<const uint64_t> by_verdict) {
  WEFT_ASSERT(by_verdict.size() == harness::kVerdictCount,
              "one count per verdict");
  bool time_limit = false;
  for (size_t v = 0; v < by_verdict.size(); ++v) {
    if (by_verdict[v] == 0) continue;
    const auto verdict = static_cast<harness::Verdict>(v);
    if (harness::verdict_failed(verdict)) return kExitFailed;
    time_limit |= harness::verdict_inconclusive(verdict);
  }
  return time_limit ? kExitTimeLimit : kExitOk;
}

absl::StatusOr<bool> parse_on_off(std::string_view flag,
                                  std::string_view text) {
  if (text != "on" && text != "off") {
    return absl::InvalidArgumentError(absl::StrCat("--", base::to_absl(flag),
                                                   "=", base::to_absl(text),
                                                   " is neither on nor off"));
  }
  return text == "on";
}

absl::StatusOr<uint64_t> parse_uint(std::string_view flag,
                                    std::string_view text, uint64_t min,
                                    uint64_t max) {
  uint64_t value = 0;
  if (!absl::SimpleAtoi(base::to_absl(text), &value) || value < min ||
      value > max) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--%s=%s is not a whole number in %u..%u", flag, text, min, max));
  }
  return value;
}

absl::StatusOr<std::vector<std::string>> normalise_flags(int argc,
                                                         char** argv) {
  const std::vector<std::string> args(argv, argv + argc);
  return check_args("weft-sim", args);
}

}  // namespace weft::tools::cli
