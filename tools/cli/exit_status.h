// What weft's tools (weft-sim, weft-bench, weft-devices) say when they stop:
// the exit codes they share, and the one stderr line that names the tool
// and what went wrong. Scripts rely on the codes; a person reads the line.
#ifndef WEFT_TOOLS_CLI_EXIT_STATUS_H_
#define WEFT_TOOLS_CLI_EXIT_STATUS_H_

#include <string_view>

namespace weft::tools::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;    // the run found a problem
inline constexpr int kExitBadInput = 2;  // the user's input is wrong
// A simulated run passed its virtual-time limit (--time_limit_ms) and found
// no problem before it: the user's budget ran out, not a defect found. Not
// 3 or 4, which are weft-devices' own.
inline constexpr int kExitTimeLimit = 5;

// Prints "<program>: <what>" on stderr as one line (newlines in `what`
// become spaces); returns `code`.
int report_line(std::string_view program, int code, std::string_view what);

}  // namespace weft::tools::cli

#endif  // WEFT_TOOLS_CLI_EXIT_STATUS_H_
