// Byte counts as users type them on the command line (weft-sim's --bytes,
// weft-bench's -b/-e/-i): a whole number, optionally followed by K, M or G
// (powers of 1024, as nccl-tests reads them; "KiB", "MiB", "GiB" and lower
// case work too).
#ifndef WEFT_TOOLS_CLI_BYTE_SIZE_H_
#define WEFT_TOOLS_CLI_BYTE_SIZE_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"

namespace weft::tools::cli {

// Largest byte count any tool accepts (one rank's buffer; 16 GiB).
inline constexpr uint64_t kMaxByteSize = uint64_t{16} << 30;

// InvalidArgument naming --`flag` when `text` is not a size in
// [0, max_bytes].
absl::StatusOr<uint64_t> parse_byte_size(std::string_view flag,
                                         std::string_view text,
                                         uint64_t max_bytes = kMaxByteSize);

}  // namespace weft::tools::cli

#endif  // WEFT_TOOLS_CLI_BYTE_SIZE_H_
