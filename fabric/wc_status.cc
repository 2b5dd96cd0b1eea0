#include "fabric/wc_status.h"

#include <array>
#include <string>

#include "absl/strings/ascii.h"

namespace weft {
namespace {

struct Entry {
  std::string_view symbol;
  std::string_view name;
};

// Indexed by the numeric code. Names as rdma-core's ibv_wc_status_str().
constexpr std::array<Entry, kWcStatusCount> kEntries = {{
    {"IBV_WC_SUCCESS", "success"},
    {"IBV_WC_LOC_LEN_ERR", "local length error"},
    {"IBV_WC_LOC_QP_OP_ERR", "local QP operation error"},
    {"IBV_WC_LOC_EEC_OP_ERR", "local EE context operation error"},
    {"IBV_WC_LOC_PROT_ERR", "local protection error"},
    {"IBV_WC_WR_FLUSH_ERR", "Work Request Flushed Error"},
    {"IBV_WC_MW_BIND_ERR", "memory management operation error"},
    {"IBV_WC_BAD_RESP_ERR", "bad response error"},
    {"IBV_WC_LOC_ACCESS_ERR", "local access error"},
    {"IBV_WC_REM_INV_REQ_ERR", "remote invalid request error"},
    {"IBV_WC_REM_ACCESS_ERR", "remote access error"},
    {"IBV_WC_REM_OP_ERR", "remote operation error"},
    {"IBV_WC_RETRY_EXC_ERR", "transport retry counter exceeded"},
    {"IBV_WC_RNR_RETRY_EXC_ERR", "RNR retry counter exceeded"},
    {"IBV_WC_LOC_RDD_VIOL_ERR", "local RDD violation error"},
    {"IBV_WC_REM_INV_RD_REQ_ERR", "remote invalid RD request"},
    {"IBV_WC_REM_ABORT_ERR", "aborted error"},
    {"IBV_WC_INV_EECN_ERR", "invalid EE context number"},
    {"IBV_WC_INV_EEC_STATE_ERR", "invalid EE context state"},
    {"IBV_WC_FATAL_ERR", "fatal error"},
    {"IBV_WC_RESP_TIMEOUT_ERR", "response timeout error"},
    {"IBV_WC_GENERAL_ERR", "general error"},
    {"IBV_WC_TM_ERR", "TM error"},
    {"IBV_WC_TM_RNDV_INCOMPLETE", "TM software rendezvous"},
}};

}  // namespace

std::string_view wc_status_name(int32_t code) {
  if (code < 0 || code >= kWcStatusCount) return "unknown";
  return kEntries[static_cast<size_t>(code)].name;
}

std::string_view wc_status_name(WcStatus status) {
  return wc_status_name(static_cast<int32_t>(status));
}

std::string_view wc_status_symbol(WcStatus status) {
  const auto code = static_cast<int32_t>(status);
  if (code < 0 || code >= kWcStatusCount) return "IBV_WC_UNKNOWN";
  return kEntries[static_cast<size_t>(code)].symbol;
}

bool parse_wc_status(std::string_view text, WcStatus* out) {
  std::string upper(text);
  for (char& ch : upper)
    ch = absl::ascii_toupper(static_cast<unsigned char>(ch));
  std::string_view wanted = upper;
  constexpr std::string_view kPrefix = "IBV_WC_";
  if (wanted.substr(0, kPrefix.size()) == kPrefix)
    wanted.remove_prefix(kPrefix.size());
  for (int32_t code = 0; code < kWcStatusCount; ++code) {
    std::string_view symbol = kEntries[static_cast<size_t>(code)].symbol;
    symbol.remove_prefix(kPrefix.size());
    if (symbol == wanted) {
      *out = static_cast<WcStatus>(code);
      return true;
    }
  }
  return false;
}

}  // namespace weft
