// Shared plumbing for weft-sim's subcommands: the one-line bad-input report
// under weft-sim's name, and parsing of flag values weft reads as text
// (whole numbers in a range, on/off) into exit code 2 with that line.
#ifndef WEFT_TOOLS_CLI_CLI_COMMON_H_
#define WEFT_TOOLS_CLI_CLI_COMMON_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tools/cli/exit_status.h"

namespace weft::tools::cli {

// Prints "weft-sim: <what>" as one line on stderr; returns kExitBadInput.
int bad_input(std::string_view what);
int bad_input(const absl::Status& status);

// The exit code for runs counted by verdict (harness::Verdict order): 1 when
// any run found a problem, else 5 (kExitTimeLimit) when any passed its time
// limit, else 0.
int verdicts_exit_code(std::span<const uint64_t> by_verdict);

// `text` as an integer in [min, max]; InvalidArgument naming `flag`.
absl::StatusOr<uint64_t> parse_uint(std::string_view flag,
                                    std::string_view text, uint64_t min,
                                    uint64_t max);

// "on" as true, "off" as false; InvalidArgument naming `flag` otherwise.
absl::StatusOr<bool> parse_on_off(std::string_view flag, std::string_view text);

// check_args() (tools/cli/flag_parse.h) over weft-sim's argv: the
// arguments as set_flags() takes them ("--check-determinism" as
// "--check_determinism", flag files read), or the bad input.
absl::StatusOr<std::vector<std::string>> normalise_flags(int argc, char** argv);

}  // namespace weft::tools::cli

#endif  // WEFT_TOOLS_CLI_CLI_COMMON_H_
