// Work completion status: the numeric codes and names of verbs'
// `enum ibv_wc_status`, so every fabric reports failures in the words a
// verbs user already knows ("Work Request Flushed Error", ...).
#ifndef WEFT_FABRIC_WC_STATUS_H_
#define WEFT_FABRIC_WC_STATUS_H_

#include <cstdint>
#include <string_view>

namespace weft {

// Values equal `enum ibv_wc_status` (checked against the real header by the
// verbs layout test).
enum class WcStatus : int32_t {
  kSuccess = 0,
  kLocLenErr = 1,
  kLocQpOpErr = 2,
  kLocEecOpErr = 3,
  kLocProtErr = 4,
  kWrFlushErr = 5,
  kMwBindErr = 6,
  kBadRespErr = 7,
  kLocAccessErr = 8,
  kRemInvReqErr = 9,
  kRemAccessErr = 10,
  kRemOpErr = 11,
  kRetryExcErr = 12,
  kRnrRetryExcErr = 13,
  kLocRddViolErr = 14,
  kRemInvRdReqErr = 15,
  kRemAbortErr = 16,
  kInvEecnErr = 17,
  kInvEecStateErr = 18,
  kFatalErr = 19,
  kRespTimeoutErr = 20,
  kGeneralErr = 21,
  kTmErr = 22,
  kTmRndvIncomplete = 23,
};

inline constexpr int32_t kWcStatusCount = 24;

// The string rdma-core's ibv_wc_status_str() gives for `status`
// ("unknown" outside the enum).
std::string_view wc_status_name(WcStatus status);
std::string_view wc_status_name(int32_t code);

// The enumerator's spelling, for flags and scripted faults: "IBV_WC_LOC_LEN_ERR".
std::string_view wc_status_symbol(WcStatus status);
// Inverse of wc_status_symbol; also accepts the name without "IBV_WC_" and
// any letter case. false when `text` names no status.
bool parse_wc_status(std::string_view text, WcStatus* out);

}  // namespace weft

#endif  // WEFT_FABRIC_WC_STATUS_H_
