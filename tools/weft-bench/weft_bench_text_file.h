// Writes weft-bench's files (--json, --plot) whole, so a failure is one
// error naming the path rather than a half-written file left unnoticed.
#ifndef WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_TEXT_FILE_H_
#define WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_TEXT_FILE_H_

#include <string>

#include "absl/status/status.h"

namespace weft::bench {

// Replaces `path` with `text`. FailedPrecondition naming the path (and the
// system's reason) when it cannot be written.
absl::Status write_text_file(const std::string& path, const std::string& text);

}  // namespace weft::bench

#endif  // WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_TEXT_FILE_H_
