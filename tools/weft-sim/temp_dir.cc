#include "tools/weft-sim/temp_dir.h"

#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/str_format.h"

namespace weft::tools::weft_sim {

absl::StatusOr<TempDir> TempDir::create() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      absl::StrFormat("%s/weft-sim-XXXXXX", tmp != nullptr ? tmp : "/tmp");
  if (::mkdtemp(pattern.data()) == nullptr) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "cannot create a directory like %s: set TMPDIR to a writable "
        "directory",
        pattern));
  }
  return TempDir(pattern);
}

TempDir::TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)) {
  other.path_.clear();
}

TempDir::~TempDir() {
  if (!path_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
}

std::string TempDir::file(std::string_view name) const {
  return path_ + "/" + std::string(name);
}

absl::StatusOr<std::string> TempDir::write(std::string_view name,
                                           std::string_view text) const {
  const std::string path = file(name);
  std::FILE* f = std::fopen(path.c_str(), "w");
  const bool written = f != nullptr && std::fwrite(text.data(), 1, text.size(),
                                                   f) == text.size();
  const bool closed = f != nullptr && std::fclose(f) == 0;
  if (!written || !closed) {
    return absl::FailedPreconditionError("cannot write " + path);
  }
  return path;
}

}  // namespace weft::tools::weft_sim
