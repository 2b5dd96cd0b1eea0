// Internal to the TCP bootstrap: forming the group (rank 0 accepts and
// checks hellos, the others connect with back-off and wait for the welcome)
// and the per-peer channel it yields, with the error wording both phases
// share.
#ifndef WEFT_RENDEZVOUS_INTERNAL_TCP_RENDEZVOUS_H_
#define WEFT_RENDEZVOUS_INTERNAL_TCP_RENDEZVOUS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "net/socket.h"
#include "rendezvous/config.h"
#include "rendezvous/internal/message_reader.h"
#include "rendezvous/internal/wire.h"
#include "rendezvous/tcp_bootstrap.h"

namespace weft::rendezvous::internal {

// How long a best-effort abort may wait for room in a socket's buffer.
inline constexpr TimeNs kAbortSendTimeoutNs = 100 * kNsPerMs;

struct TcpChannel {
  uint32_t rank = 0;  // the peer's rank
  net::Socket socket;
  std::string address;  // the peer's "ip:port" or "[ipv6]:port"
  MessageReader reader;
  // A send failed part-way: the stream may hold half a message, so nothing
  // more may be sent on it.
  bool broken = false;
};

// "the coordinator (rank 0) at 127.0.0.1:5000" or "rank 3 at 10.0.0.4:5123".
std::string describe(const TcpChannel& channel);

// make_error(cause.code(), {self, channel.rank}, "<doing> <describe>: why").
// A closed connection is worded as the rank having left the group.
absl::Status channel_error(uint32_t self, const TcpChannel& channel,
                           std::string_view doing, const absl::Status& cause);

// The error a rank reports when the message in `coordinator`'s reader is
// rank 0's abort: its code and reason, with the culprit as the peer. Resets
// the reader.
absl::Status abort_from(uint32_t self, TcpChannel& coordinator,
                        std::string_view doing);

// Sends `status` as an abort on `channel` unless it is broken, waiting at
// most kAbortSendTimeoutNs; failures are ignored (the peer may be gone).
// Marks the channel broken: nothing may follow an abort.
void send_abort(TcpChannel& channel, const absl::Status& status,
                const Clock& clock);

// Rank 0: accepts on `listen_fd` until ranks 1..size-1 have each said hello
// or config.connect_timeout_ns passes, then welcomes them. The channels
// come back in rank order.
absl::StatusOr<std::vector<TcpChannel>> form_group(
    int listen_fd, const std::string& listen_address, const Config& config,
    const Clock& clock);

// Ranks 1..size-1: connects to config.coordinator with back-off, says
// hello and waits for the welcome, all within config.connect_timeout_ns.
absl::StatusOr<TcpChannel> join_group(const Config& config,
                                      const TcpConnectOptions& options,
                                      const Clock& clock);

}  // namespace weft::rendezvous::internal

#endif  // WEFT_RENDEZVOUS_INTERNAL_TCP_RENDEZVOUS_H_
