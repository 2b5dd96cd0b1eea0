#include "base/text_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace weft::base {

absl::StatusOr<std::string> read_text_file(const std::string& path,
                                           size_t max_bytes,
                                           std::string_view what) {
  auto too_large = [&] {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s %s is over %u bytes; is it the right file?", what,
                        path, max_bytes));
  };
  // A regular file's size is known before reading it. A directory is
  // refused here: libstdc++ fails reading one, but libc++ (macOS) reads it
  // as an empty file.
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s %s cannot be read (it is a directory); give a readable file",
          what, path));
    }
    if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > max_bytes) {
      return too_large();
    }
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrFormat("%s %s cannot be opened (%s); check the path", what,
                        path, std::strerror(errno)));
  }
  // Read in pieces and bounded: a device such as /dev/zero never ends.
  constexpr size_t kPieceBytes = size_t{64} << 10;
  std::string text;
  std::string piece(kPieceBytes, '\0');
  while (in) {
    in.read(piece.data(), static_cast<std::streamsize>(piece.size()));
    const auto got = static_cast<size_t>(in.gcount());
    if (got > max_bytes - text.size()) return too_large();
    text.append(piece, 0, got);
  }
  if (in.bad()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s %s cannot be read (%s); give a readable file", what,
                        path, std::strerror(errno)));
  }
  return text;
}

}  // namespace weft::base
