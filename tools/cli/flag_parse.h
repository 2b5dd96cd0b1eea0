// Reading a weft tool's command line into its absl flags with every mistake
// reported as weft's bad input (exit 2, one line naming the tool). Left to
// itself, absl::ParseCommandLine prints its own message and exits 1 on an
// unknown flag, a value the flag's type cannot hold (--apple_limits=maybe),
// a flag file it cannot open, or a flag missing its value; neither Debian
// 12's Abseil (20220623) nor current releases (ParseAbseilFlagsOnly too)
// let a program take those errors over. So check_args() finds each of them
// first, through the public flag reflection API both releases have, and
// set_flags() hands absl only arguments it accepts.
#ifndef WEFT_TOOLS_CLI_FLAG_PARSE_H_
#define WEFT_TOOLS_CLI_FLAG_PARSE_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace weft::tools::cli {

// `args` (argv, argv[0] first) checked and rewritten for set_flags():
// "-name" and "--flag-name" become "--flag_name"; "--name value" of a flag
// that is not a boolean becomes "--name=value"; --flagfile=F (one argument
// per line of F, # comments), --fromenv=a,b and --tryfromenv=a,b (the value
// of FLAGS_a in the environment) are replaced by the flags they give; a flag
// --undefok=a,b names is dropped when the tool has no such flag.
// InvalidArgument saying what to write instead, with `program` for --help,
// for: an unknown flag, a value the flag's type cannot hold, a value given
// to a boolean's --noname form, a flag without its value, a flag file that
// cannot be read or has a line that is not a flag, and any positional
// argument. Sets no flag.
absl::StatusOr<std::vector<std::string>> check_args(
    std::string_view program, std::span<const std::string> args);

// absl::ParseCommandLine over check_args()' result: sets the flags, and
// answers absl's usage flags (--helpfull, --helpmatch=...) with weft's
// flags under "weft" rather than the build machine's source paths;
// --helpfull exits 0 whatever the Abseil release.
// REQUIRES: `args` came from check_args().
void set_flags(std::vector<std::string> args);

}  // namespace weft::tools::cli

#endif  // WEFT_TOOLS_CLI_FLAG_PARSE_H_
