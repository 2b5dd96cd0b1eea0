// What the TCP benchmarks share: a rank of the TCP fabric (fabric, slab,
// endpoints), a connected pair of them over loopback, a connected pair of
// plain loopback sockets for the reference rows, and a wait for one
// completion with a deadline.
#ifndef WEFT_BENCH_TCP_BENCH_SUPPORT_H_
#define WEFT_BENCH_TCP_BENCH_SUPPORT_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "fabric/endpoint.h"
#include "tcp/tcp_fabric.h"

namespace weft::bench {

// No benchmark iteration waits longer than this for one completion.
inline constexpr TimeNs kTcpWaitNs = 60 * kNsPerS;

// One rank: its fabric, one slab, and an endpoint per peer.
struct TcpRank {
  std::unique_ptr<tcp::TcpFabric> fabric;
  Slab* slab = nullptr;
  std::vector<std::unique_ptr<Endpoint>> endpoints;
};

inline absl::StatusOr<TcpRank> open_tcp_rank(uint32_t rank, uint64_t slab_bytes,
                                             tcp::TcpOptions options = {}) {
  options.listen = {"127.0.0.1:0"};
  TcpRank r;
  absl::StatusOr<std::unique_ptr<tcp::TcpFabric>> f =
      tcp::TcpFabric::open(rank, std::move(options));
  if (!f.ok()) return f.status();
  r.fabric = *std::move(f);
  absl::StatusOr<Slab*> slab = r.fabric->create_slab(slab_bytes);
  if (!slab.ok()) return slab.status();
  r.slab = *slab;
  return r;
}

// Opens an endpoint from a to b and from b to a and connects them.
inline absl::Status join_tcp_ranks(uint32_t a, TcpRank& ra, uint32_t b,
                                   TcpRank& rb) {
  absl::StatusOr<std::unique_ptr<Endpoint>> ea =
      ra.fabric->open(ra.fabric->listen_addresses()[0], b);
  if (!ea.ok()) return ea.status();
  absl::StatusOr<std::unique_ptr<Endpoint>> eb =
      rb.fabric->open(rb.fabric->listen_addresses()[0], a);
  if (!eb.ok()) return eb.status();
  absl::StatusOr<Destination> da = (*ea)->destination();
  absl::StatusOr<Destination> db = (*eb)->destination();
  if (!da.ok()) return da.status();
  if (!db.ok()) return db.status();
  if (absl::Status s = (*ea)->connect(*db); !s.ok()) return s;
  if (absl::Status s = (*eb)->connect(*da); !s.ok()) return s;
  ra.endpoints.push_back(*std::move(ea));
  rb.endpoints.push_back(*std::move(eb));
  return absl::OkStatus();
}

// Polls `endpoint` (idling its fabric between polls) until one completion
// arrives or the deadline; false when none came or it failed.
inline bool await_one(TcpRank& rank, Endpoint& endpoint, Completion& out) {
  const Clock& clock = rank.fabric->clock();
  const TimeNs deadline_ns = deadline_after(clock.now_ns(), kTcpWaitNs);
  while (clock.now_ns() < deadline_ns) {
    absl::StatusOr<size_t> n = endpoint.poll({&out, 1});
    if (!n.ok()) return false;
    if (*n == 1) return out.ok();
    rank.fabric->idle(deadline_ns);
  }
  return false;
}

// A connected pair of blocking loopback TCP sockets, TCP_NODELAY.
inline bool plain_pair(int fds[2]) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  bool ok = ::bind(listener, reinterpret_cast<sockaddr*>(&a), len) == 0 &&
            ::listen(listener, 1) == 0 &&
            getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  fds[0] = ::socket(AF_INET, SOCK_STREAM, 0);
  ok = ok && ::connect(fds[0], reinterpret_cast<sockaddr*>(&a), len) == 0;
  fds[1] = ok ? ::accept(listener, nullptr, nullptr) : -1;
  ::close(listener);
  const int one = 1;
  for (int i = 0; i < 2; ++i) {
    setsockopt(fds[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  return ok && fds[1] >= 0;
}

#ifdef MSG_NOSIGNAL
inline constexpr int kSendFlags = MSG_NOSIGNAL;
#else
inline constexpr int kSendFlags = 0;  // macOS: a benchmark peer never closes
#endif

// Writes or reads all of `bytes` on a blocking socket; false on error.
inline bool send_all(int fd, std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), kSendFlags);
    if (n <= 0) return false;
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
  return true;
}
inline bool recv_all(int fd, std::span<std::byte> bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::recv(fd, bytes.data(), bytes.size(), 0);
    if (n <= 0) return false;
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace weft::bench

#endif  // WEFT_BENCH_TCP_BENCH_SUPPORT_H_
