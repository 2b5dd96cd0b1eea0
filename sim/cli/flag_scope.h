// Every weft-sim command's flags live in one binary, so absl accepts any of
// them anywhere. A command calls check_flag_scope() to refuse, as bad
// input, a flag some other command defines (`weft-sim --frames=10` is a
// p2p flag given to the study), instead of silently ignoring it.
#ifndef WEFT_SIM_CLI_FLAG_SCOPE_H_
#define WEFT_SIM_CLI_FLAG_SCOPE_H_

#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace weft::sim::cli {

// The flag absl would look up for `arg` (normalised, "--name[=value]";
// "--nofoo" of a boolean --foo is "foo"), or "" for a positional argument.
std::string flag_name(const std::string& arg);

// InvalidArgument naming the first flag of `args` (normalised,
// "--name[=value]"; argv[0] first) that is defined in none of `files`
// (source paths under sim/cli/, e.g. "world_flags.cc"). absl's own flags
// (--help, --flagfile, ...) are always allowed.
absl::Status check_flag_scope(std::span<const std::string> args,
                              std::span<const std::string_view> files,
                              std::string_view command);

}  // namespace weft::sim::cli

#endif  // WEFT_SIM_CLI_FLAG_SCOPE_H_
