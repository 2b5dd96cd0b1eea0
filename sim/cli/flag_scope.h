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

// InvalidArgument naming the first flag of `args` (normalised,
// "--name[=value]"; argv[0] first) that is defined in none of `files`
// (source paths under sim/cli/, e.g. "world_flags.cc"). absl's own flags
// (--help, --flagfile, ...) are always allowed.
absl::Status check_flag_scope(std::span<const std::string> args,
                              std::span<const std::string_view> files,
                              std::string_view command);

}  // namespace weft::sim::cli

#endif  // WEFT_SIM_CLI_FLAG_SCOPE_H_
