#include "tools/cli/output_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_format.h"

namespace weft::sim::cli {

absl::Status check_writable(std::string_view flag, const std::string& path) {
  const std::filesystem::path file(path);
  const std::filesystem::path dir =
      file.has_parent_path() ? file.parent_path() : ".";
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--%s=%s is a directory; name a file in it; checked before running",
        flag, path));
  }
  const bool writable =
      std::filesystem::is_directory(dir, ec) &&
      ::access(dir.c_str(), W_OK) == 0 &&
      (!std::filesystem::exists(file, ec) || ::access(file.c_str(), W_OK) == 0);
  if (writable) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "--%s=%s: cannot write there (is the directory there and writable?); "
      "checked before running",
      flag, path));
}

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

}  // namespace weft::sim::cli
