#include "tools/cli/output_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_format.h"

namespace weft::tools::cli {

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
  // Opened for writing, not asked with access(): root passes access() where
  // no file can be made (/proc). A missing file is tried as a probe of this
  // process's own beside it (ranks of one launch may check one path at
  // once), removed again.
  bool writable = false;
  if (std::filesystem::is_directory(dir, ec)) {
    const bool existed = std::filesystem::exists(file, ec);
    const std::string target =
        existed ? path
                : absl::StrFormat("%s.weft-probe-%d", path,
                                  static_cast<int>(::getpid()));
    const int flags = O_WRONLY | (existed ? 0 : O_CREAT | O_EXCL);
    const int fd = ::open(target.c_str(), flags, 0644);
    if (fd >= 0) {
      writable = true;
      ::close(fd);
      if (!existed) ::unlink(target.c_str());
    }
  }
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

}  // namespace weft::tools::cli
