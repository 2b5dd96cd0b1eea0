// The deadlines of a group started by ProcessGroup: seconds read from
// WEFT_TIMEOUT_S and WEFT_CONNECT_TIMEOUT_S, and recovery limits that keep
// retransmission from calling a silent peer unreachable before the
// operation's deadline does.
#ifndef WEFT_STARTUP_INTERNAL_DEADLINES_H_
#define WEFT_STARTUP_INTERNAL_DEADLINES_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "collectives/group_options.h"
#include "fabric/clock.h"
#include "rendezvous/config.h"

namespace weft::startup::internal {

inline constexpr const char* kTimeoutEnv = "WEFT_TIMEOUT_S";
inline constexpr const char* kConnectTimeoutEnv = "WEFT_CONNECT_TIMEOUT_S";

// `text` as decimal seconds ("600", "2.5"; up to 9 digits after the point)
// in nanoseconds, in 1 ns..max_ns. InvalidArgument naming `name`, `text`
// and the range otherwise.
absl::StatusOr<TimeNs> parse_seconds(const char* name, std::string_view text,
                                     TimeNs max_ns);

// `name` through `getenv` as parse_seconds(); `fallback_ns` when unset.
absl::StatusOr<TimeNs> read_seconds(const EnvLookup& getenv, const char* name,
                                    TimeNs fallback_ns, TimeNs max_ns);

// Time retransmission waits before declaring a silent peer unreachable, at
// worst: the timeout starting at its floor (min_rto_ns) and doubling up to
// max_rto_ns, max_retries times.
TimeNs unreachable_after_ns(const RecoveryOptions& recovery);

// `recovery` with max_retries (and, when kMaxRetries is not enough,
// max_rto_ns) raised so that unreachable_after_ns() >= deadline_ns.
// REQUIRES: 0 < deadline_ns <= GroupOptions::kMaxTimeoutNs, recovery valid.
RecoveryOptions outlast(RecoveryOptions recovery, TimeNs deadline_ns);

}  // namespace weft::startup::internal

#endif  // WEFT_STARTUP_INTERNAL_DEADLINES_H_
