// A private temporary directory (mode 0700, under $TMPDIR or /tmp) for
// the files `weft-sim serve` and `weft-sim launch` hand their ranks: the
// server's socket, the device JSON, the TCP hostfile. Removed, with what
// it holds, when the TempDir is destroyed.
#ifndef WEFT_TOOLS_WEFT_SIM_TEMP_DIR_H_
#define WEFT_TOOLS_WEFT_SIM_TEMP_DIR_H_

#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace weft::tools::weft_sim {

class TempDir {
 public:
  // A new directory "weft-sim-XXXXXX"; FailedPrecondition if it cannot be
  // made.
  static absl::StatusOr<TempDir> create();
  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&&) = delete;
  ~TempDir();

  const std::string& path() const { return path_; }
  std::string file(std::string_view name) const;
  // Writes `text` to the file `name` here; its path.
  absl::StatusOr<std::string> write(std::string_view name,
                                    std::string_view text) const;

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace weft::tools::weft_sim

#endif  // WEFT_TOOLS_WEFT_SIM_TEMP_DIR_H_
