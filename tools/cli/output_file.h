// The files the tools write besides their table (weft-bench's --json and
// --plot, weft-sim's --json): checked writable before a run starts, so bad
// input is refused at once and no long run is lost to a wrong path; then
// written whole, so a failure is one error naming the path rather than a
// half-written file left unnoticed.
#ifndef WEFT_TOOLS_CLI_OUTPUT_FILE_H_
#define WEFT_TOOLS_CLI_OUTPUT_FILE_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace weft::tools::cli {

// InvalidArgument naming --`flag` when `path`'s directory is missing or
// not writable, or `path` exists and is not writable.
absl::Status check_writable(std::string_view flag, const std::string& path);

// Replaces `path` with `text`. FailedPrecondition naming the path (and the
// system's reason) when it cannot be written.
absl::Status write_text_file(const std::string& path, const std::string& text);

}  // namespace weft::tools::cli

#endif  // WEFT_TOOLS_CLI_OUTPUT_FILE_H_
