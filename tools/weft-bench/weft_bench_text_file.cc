#include "tools/weft-bench/weft_bench_text_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_format.h"

namespace weft::bench {

absl::Status write_text_file(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrFormat("cannot write %s: %s", path, std::strerror(errno)));
  }
  const size_t written = std::fwrite(text.data(), 1, text.size(), f);
  const bool closed = std::fclose(f) == 0;
  if (written != text.size() || !closed) {
    return absl::FailedPreconditionError(
        absl::StrFormat("writing %s failed (disk full?)", path));
  }
  return absl::OkStatus();
}

}  // namespace weft::bench
