// Shared plumbing for weft-sim's subcommands: exit codes, the one-line
// bad-input report, flag-value parsing that turns bad values into exit code
// 2 (absl::flags would exit 1), and argv clean-up before absl parses it.
#ifndef WEFT_TOOLS_CLI_CLI_COMMON_H_
#define WEFT_TOOLS_CLI_CLI_COMMON_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace weft::sim::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;    // the run found a problem
inline constexpr int kExitBadInput = 2;  // the user's input is wrong

// Prints "weft-sim: <what>" as one line on stderr; returns kExitBadInput.
int bad_input(std::string_view what);
int bad_input(const absl::Status& status);

// `text` as an integer in [min, max]; InvalidArgument naming `flag`.
absl::StatusOr<uint64_t> parse_uint(std::string_view flag,
                                    std::string_view text, uint64_t min,
                                    uint64_t max);

// "on" as true, "off" as false; InvalidArgument naming `flag` otherwise.
absl::StatusOr<bool> parse_on_off(std::string_view flag, std::string_view text);

// Prepares argv for absl::ParseCommandLine: "--check-determinism" becomes
// "--check_determinism" (flag names may use either), and a flag no
// subcommand defines is reported as bad input instead of absl's exit 1.
// Returns the rewritten arguments (argv[0] first) or the error.
absl::StatusOr<std::vector<std::string>> normalise_flags(int argc, char** argv);

// absl::ParseCommandLine over `args`; positional arguments (other than the
// program name) are InvalidArgument.
absl::Status parse_flags(std::vector<std::string>& args);

}  // namespace weft::sim::cli

#endif  // WEFT_TOOLS_CLI_CLI_COMMON_H_
