// The rounds of tcp_sendrecv: one message from rank 0 to rank 1 through
// weft's Group::send/recv and through a plain TCP stream, interleaved, each
// timed on rank 1 from its "ready" to the whole message and checked there
// byte by byte; and how the result is printed.
#ifndef WEFT_BENCH_TCP_COMPARE_SENDRECV_ROUNDS_H_
#define WEFT_BENCH_TCP_COMPARE_SENDRECV_ROUNDS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/group.h"
#include "fabric/clock.h"
#include "net/socket.h"

namespace weft::bench {

struct RoundsConfig {
  uint64_t bytes = 0;
  uint32_t rounds = 0;  // timed rounds of each path
  // The plain stream's SO_SNDBUF/SO_RCVBUF (0: the kernel's auto-tuning,
  // as TcpOptions' socket_buffer_bytes) and the deadline of each transfer
  // on it and of its setup.
  int socket_buffer_bytes = 0;
  TimeNs deadline_ns = 0;  // > 0
};

struct RoundsResult {
  std::vector<TimeNs> weft_ns;  // one per timed round (rank 1's clock)
  std::vector<TimeNs> plain_ns;
  uint64_t wrong_bytes = 0;  // rank 1's count
  // All three on both ranks: rank 1 sends them to rank 0 at the end.
};

// REQUIRES: `group` has 2 ranks; `stream` (net/stream.h) joins this rank to
// the other.
absl::StatusOr<RoundsResult> run_rounds(Group& group, const net::Socket& stream,
                                        uint32_t rank, const RoundsConfig& c);

// The median of `ns` (the mean of the middle two for an even count).
// REQUIRES: not empty.
double median_ns(std::vector<TimeNs> ns);

// Rank 0's lines: each path's median time and bandwidth, the ratio
// weft/plain, the wrong bytes.
std::string format_rounds(const RoundsConfig& c, const RoundsResult& r);
absl::Status write_rounds_json(const std::string& path, const RoundsConfig& c,
                               const RoundsResult& r);

}  // namespace weft::bench

#endif  // WEFT_BENCH_TCP_COMPARE_SENDRECV_ROUNDS_H_
