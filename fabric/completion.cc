#include "fabric/completion.h"

#include "absl/strings/str_format.h"

namespace weft {

std::string Completion::to_string() const {
  std::string out = absl::StrFormat("%s: %s (%d), %u bytes", id.to_string(),
                                    status_name, static_cast<int>(status),
                                    byte_len);
  if (has_immediate) absl::StrAppendFormat(&out, ", immediate %u", immediate);
  if (from_rdma_write) absl::StrAppendFormat(&out, ", from an RDMA write");
  return out;
}

}  // namespace weft
