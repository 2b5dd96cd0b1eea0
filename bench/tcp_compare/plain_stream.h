// A plain blocking TCP stream between two processes: what weft's TCP
// fabric is measured against (tcp_sendrecv.cc). TCP_NODELAY, the kernel's
// buffer auto-tuning unless a size is given (as TcpOptions'
// socket_buffer_bytes), and a send and receive deadline on the socket so a
// peer that stops answering is an error, not a hang.
#ifndef WEFT_BENCH_TCP_COMPARE_PLAIN_STREAM_H_
#define WEFT_BENCH_TCP_COMPARE_PLAIN_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "net/socket.h"

namespace weft::bench {

struct StreamOptions {
  int socket_buffer_bytes = 0;  // 0: the kernel's auto-tuning
  TimeNs deadline_ns = 0;       // per send or receive call; > 0
};

// Binds `ipv4` on a port the system chooses and listens.
absl::StatusOr<net::Socket> listen_stream(const std::string& ipv4,
                                          uint16_t* port);
// The next connection on `listener`, tuned.
absl::StatusOr<net::Socket> accept_stream(const net::Socket& listener,
                                          const StreamOptions& options);
absl::StatusOr<net::Socket> connect_stream(const std::string& ipv4,
                                           uint16_t port,
                                           const StreamOptions& options);

// All of `bytes`, or an error naming what failed (the deadline, a closed
// connection).
absl::Status send_all(const net::Socket& s, std::span<const std::byte> bytes);
absl::Status recv_all(const net::Socket& s, std::span<std::byte> bytes);

}  // namespace weft::bench

#endif  // WEFT_BENCH_TCP_COMPARE_PLAIN_STREAM_H_
